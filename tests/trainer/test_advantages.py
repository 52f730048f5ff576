"""The advantage estimators of docs/TRAINING.md on small batches computed by hand.

Every expected number is worked out in the comments next to it, never by the code under
test, so a wrong formula cannot agree with itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from trainer.advantages import (
    ESTIMATORS,
    Alignment,
    TurnBatch,
    advantage_alignment,
    check_estimator,
    dr_mas_advantages,
    estimate_advantages,
    leave_one_out_advantages,
    mars_advantages,
    spiral_role_advantages,
)


def turns(rows: list[tuple[int, int, int, float]], *, game: str = "g", seeds: dict[int, int] | None = None) -> TurnBatch:
    """A batch from (match, player, step, reward) rows; the seed of a match defaults to 0."""
    match, player, step, reward = (list(column) for column in zip(*rows, strict=True))
    seed = [(seeds or {}).get(m, 0) for m in match]
    return TurnBatch(rewards=reward, player=player, match=match, step=step, game=game, seed=seed)


# --- §1 SPIRAL -----------------------------------------------------------------------


def test_role_baseline_is_read_before_it_is_updated() -> None:
    batch = turns(
        [
            (0, 0, 0, 0.0),
            (0, 0, 1, 1.0),  # match 0, seat 0: R = 1
            (0, 1, 0, -1.0),  # match 0, seat 1: R = -1
            (1, 0, 0, -1.0),  # match 1, seat 0: R = -1
            (1, 1, 0, 1.0),  # match 1, seat 1: R = 1
        ]
    )
    start = {("g", 0): 0.5}
    advantages, state = spiral_role_advantages(batch, start, alpha=0.9)
    # match 0 seat 0: A = 1 - 0.5 = 0.5 (not 1 - 0.55, the updated value); b <- 0.9*0.5 + 0.1*1 = 0.55
    # match 0 seat 1: A = -1 - 0 = -1;                                       b <- 0.9*0 + 0.1*(-1) = -0.1
    # match 1 seat 0: A = -1 - 0.55 = -1.55;                                 b <- 0.495 - 0.1 = 0.395
    # match 1 seat 1: A = 1 - (-0.1) = 1.1;                                  b <- -0.09 + 0.1 = 0.01
    assert advantages == pytest.approx([0.5, 0.5, -1.0, -1.55, 1.1])
    assert state == pytest.approx({("g", 0): 0.395, ("g", 1): 0.01})
    assert start == {("g", 0): 0.5}, "the caller's state is not modified"


def test_role_baselines_are_kept_per_game() -> None:
    batch = TurnBatch(rewards=[1.0, 1.0], player=[0, 0], match=[0, 1], step=[0, 0], game=["chess", "go"], seed=0)
    advantages, state = spiral_role_advantages(batch, {("chess", 0): 0.4}, alpha=0.5)
    # chess seat 0: A = 1 - 0.4 = 0.6, b <- 0.2 + 0.5 = 0.7; go seat 0 starts at 0: A = 1, b <- 0.5
    assert advantages == pytest.approx([0.6, 1.0])
    assert state == pytest.approx({("chess", 0): 0.7, ("go", 0): 0.5})


# --- §2 MARS -------------------------------------------------------------------------


def mars_batch() -> TurnBatch:
    """Seat 0's rewards are -1, 1, 1, -1 (mean 0, std 1, so whitening leaves them as they are);
    seat 1 has the same game at ten times the scale, which per-agent whitening must undo."""
    rows: list[tuple[int, int, int, float]] = []
    for player, scale in ((0, 1.0), (1, 10.0)):
        rows += [(0, player, 0, -scale), (0, player, 1, scale), (1, player, 0, scale), (2, player, 0, -scale)]
    return turns(rows)


# Reward-to-go with gamma = 0.5: match 0: A_1 = 1, A_0 = -1 + 0.5*1 = -0.5 (gamma = 1 would give 0);
# match 1: A_0 = 1; match 2: A_0 = -1. So seat 0's values are V = [-0.5, 1, 1, -1].
# mean of all values: 0.5 / 4 = 0.125; mean of the distinct values {-1, -0.5, 1}: -0.5 / 3 = -1/6.
# std of all values: E[V^2] = (0.25 + 1 + 1 + 1) / 4 = 0.8125, var = 0.8125 - 0.125^2 = 0.796875 = 51/64.
STD = 51**0.5 / 8
VALUES = [-0.5, 1.0, 1.0, -1.0]


def test_mars_reward_to_go_is_discounted_and_whitened_per_player() -> None:
    advantages = mars_advantages(mars_batch(), gamma=0.5, normalization="whiten")
    expected = [(v - 0.125) / STD for v in VALUES]  # -0.7003, 0.9803, 0.9803, -1.2604
    assert advantages[:4] == pytest.approx(expected, abs=1e-6)
    assert advantages[4:] == pytest.approx(expected, abs=1e-6), "seat 1's tenfold scale is normalised away"


def test_mars_distinct_variant_centres_on_the_players_distinct_values() -> None:
    advantages = mars_advantages(mars_batch(), gamma=0.5, normalization="distinct")
    expected = [(v + 1 / 6) / STD for v in VALUES]  # the repeated 1 counts once in the centre
    assert advantages[:4] == pytest.approx(expected, abs=1e-6)
    assert advantages[4:] == pytest.approx(expected, abs=1e-6)


def test_mars_distinct_variant_counts_a_value_once_whatever_the_rounding_of_its_sums() -> None:
    # rewards -1, 1, 1, 1 and -1, -1: mean 0, std 1, so r~ = +-u with u = 1 / (1 + 1e-8).
    # To-go in units of u: [2, 3, 2, 1] and [-2, -1]. Summed from the end, the first 2 is
    # u + u + u - u, which floats round differently from the third turn's u + u.
    batch = turns([(0, 0, 0, -1.0), (0, 0, 1, 1.0), (0, 0, 2, 1.0), (0, 0, 3, 1.0), (1, 0, 0, -1.0), (1, 0, 1, -1.0)])
    advantages = mars_advantages(batch, gamma=1.0, normalization="distinct")
    # distinct values {3, 2, 1, -1, -2}: centre 0.6; std of [2, 3, 2, 1, -2, -1] = sqrt(678 / 216)
    std = (678 / 216) ** 0.5
    assert advantages == pytest.approx([(v - 0.6) / std for v in (2, 3, 2, 1, -2, -1)], abs=1e-6)


def test_mars_rejects_an_unknown_normalization() -> None:
    with pytest.raises(ValueError, match="unknown MARS normalization 'mean'"):
        mars_advantages(mars_batch(), normalization="mean")  # type: ignore[arg-type]


# --- §3 Dr. MAS ----------------------------------------------------------------------


def test_dr_mas_normalises_each_agent_with_its_own_mean_and_std() -> None:
    batch = turns(
        [
            (0, 0, 0, 0.0),
            (0, 0, 1, 1.0),  # seat 0 returns: 1, 1, 4 -> mean 2, var (1 + 1 + 4) / 3 = 2
            (1, 0, 0, 1.0),
            (2, 0, 0, 4.0),
            (0, 1, 0, 10.0),  # seat 1 returns: 10, 30 -> mean 20, std 10
            (1, 1, 0, 30.0),
        ]
    )
    advantages = dr_mas_advantages(batch)
    r2 = 2**0.5
    # seat 0: (1 - 2)/sqrt2 twice for match 0's two turns, then match 1, then (4 - 2)/sqrt2; seat 1: -1, 1.
    # One mean over all agents (GRPO) would be 46/5 = 9.2 and give every seat-0 turn a large negative value.
    assert advantages == pytest.approx([-1 / r2, -1 / r2, -1 / r2, 2 / r2, -1.0, 1.0], abs=1e-5)


def test_a_group_of_equal_rewards_gets_no_credit_whatever_their_rounding() -> None:
    # Seven turns that all paid 0.1 carry no information: every advantage is exactly 0 (the
    # turns are then skipped). The mean of seven 0.1s is not 0.1 in floating point; MARS
    # whitened that last-bit difference in its first step, summed it and whitened it again,
    # which handed out advantages of +-0.2. Dr. MAS left +-1e-11, enough to keep the turns.
    batch = turns([(m, 0, k, 0.1) for m, length in ((0, 3), (1, 4)) for k in range(length)])
    for normalization in ("distinct", "whiten"):
        assert mars_advantages(batch, normalization=normalization).tolist() == [0.0] * 7
    returns = turns([(m, 0, 0, 0.1) for m in range(3)])
    assert dr_mas_advantages(returns).tolist() == [0.0] * 3


def test_rewards_equal_but_for_their_last_bit_get_no_credit() -> None:
    # public-goods pays 6.6 and 6.6000000000000005 for the same payoff (random play, 60 seeds):
    # four turns that all earned it carry no information, but MARS whitened the 9e-16 spread
    # twice and handed out advantages of +-0.92
    other = 6.6000000000000005
    batch = turns([(0, 0, 0, 6.6), (0, 0, 1, other), (1, 0, 0, other), (1, 0, 1, 6.6)])
    for normalization in ("distinct", "whiten"):
        assert mars_advantages(batch, normalization=normalization).tolist() == [0.0] * 4
    assert dr_mas_advantages(batch).tolist() == [0.0] * 4


# --- §4 leave-one-out ----------------------------------------------------------------


def test_leave_one_out_excludes_the_rollout_itself() -> None:
    batch = turns(
        [
            (0, 0, 0, 0.0),
            (0, 0, 1, 4.0),  # seed 0, rollout 0: G = [0 + 0.5*4, 4] = [2, 4]
            (1, 0, 0, 2.0),
            (1, 0, 1, 0.0),  # seed 0, rollout 1: G = [2, 0]
            (2, 0, 0, 3.0),  # seed 0, rollout 2: G = [3], and 0 at step 1 (nothing left to collect)
            (3, 0, 0, 1.0),  # seed 1, rollout 3: G = [1]
            (4, 0, 0, 3.0),  # seed 1, rollout 4: G = [3]
        ],
        seeds={3: 1, 4: 1},
    )
    advantages = leave_one_out_advantages(batch, gamma=0.5)
    expected = [
        2 - (2 + 3) / 2,  # -0.5; including itself would give 2 - 7/3
        4 - (0 + 0) / 2,  # 4
        2 - (2 + 3) / 2,  # -0.5
        0 - (4 + 0) / 2,  # -2
        3 - (2 + 2) / 2,  # 1
        1 - 3,  # -2: the seed-1 group is separate from the seed-0 one
        3 - 1,  # 2
    ]
    assert advantages == pytest.approx(expected)


def test_leave_one_out_baseline_counts_what_another_rollout_collects_after_a_step_it_skipped() -> None:
    # simultaneous games where a seat sits out some rounds (coalition bargaining) leave gaps in its steps
    batch = turns([(0, 0, 0, 1.0), (0, 0, 1, 2.0), (1, 0, 0, 3.0), (1, 0, 2, 4.0)])
    advantages = leave_one_out_advantages(batch, gamma=0.5)
    # rollout 0: G_0 = 1 + 0.5*2 = 2, G_1 = 2, G_2 = 0 (its match is over)
    # rollout 1: G_0 = 3 + 0.25*4 = 4, G_1 = 0.5*4 = 2 (no turn at round 1, but round 2 still pays), G_2 = 4
    assert advantages == pytest.approx([2 - 4, 2 - 2, 4 - 2, 4 - 0])


def test_leave_one_out_scales_rewards() -> None:
    batch = turns([(0, 0, 0, 100.0), (1, 0, 0, 300.0)])
    # rewards scaled by 1/100: G = 1 and 3, so A = 1 - 3 = -2 and 3 - 1 = 2
    assert leave_one_out_advantages(batch, reward_scale=0.01) == pytest.approx([-2.0, 2.0])


def test_leave_one_out_gives_a_rollout_left_alone_with_its_seed_no_advantage() -> None:
    """Its group-mates were void, or forfeited before their first turn: it has no baseline.
    Refused with a ValueError, one such group stopped the whole run."""
    batch = turns([(0, 0, 0, 1.0), (1, 0, 0, 2.0), (2, 0, 0, 5.0)], seeds={1: 7, 2: 7})
    assert leave_one_out_advantages(batch) == pytest.approx([0.0, -3.0, 3.0])


def test_leave_one_out_gives_a_seat_no_advantage_when_its_seat_in_the_group_mate_had_no_turn() -> None:
    """Self-play: in match 1 seat 0 moved and seat 1 forfeited before its first turn. Match 0's
    seat 1 has no baseline (its G counted as 0 made its advantage 1); seat 0 still has one
    (found by QA)."""
    batch = turns([(0, 0, 0, -1.0), (0, 1, 0, 1.0), (1, 0, 0, 1.0)])
    assert leave_one_out_advantages(batch) == pytest.approx([-2.0, 0.0, 2.0])


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("leave_one_out", {"reward_scale": -0.01}, "reward_scale must be positive"),  # would train the learner to lose
        ("leave_one_out", {"reward_scale": 0.0}, "reward_scale must be positive"),  # would train nothing
        ("mars", {"eps": float("nan")}, "eps must be positive"),
        ("dr_mas", {"eps": float("inf")}, "eps must be positive"),
    ],
)
def test_parameters_that_would_invert_or_erase_every_advantage_are_refused(name: str, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_estimator(name, params)


@pytest.mark.parametrize("beta", [-2.0, float("nan"), float("inf")])
def test_an_alignment_weight_that_is_negative_or_not_finite_is_refused(beta: float) -> None:
    with pytest.raises(ValueError, match="beta must be"):
        Alignment(beta=beta)


# --- §5 Advantage Alignment ----------------------------------------------------------


def aligned_pair() -> tuple[TurnBatch, np.ndarray]:
    """One iterated match, rounds 0..2: seat 0's advantages A1 = [1, 2, -1], seat 1's A2 = [3, -1, 2]."""
    batch = turns([(0, 0, 0, 0.0), (0, 0, 1, 0.0), (0, 0, 2, 0.0), (0, 1, 0, 0.0), (0, 1, 1, 0.0), (0, 1, 2, 0.0)])
    return batch, np.array([1.0, 2.0, -1.0, 3.0, -1.0, 2.0])


def test_alignment_term_is_zero_at_the_first_round() -> None:
    batch, base = aligned_pair()
    out = advantage_alignment(batch, base, beta=2.0, gamma=0.5)
    # round 0 has no past, so both seats keep their advantage although the co-player's is non-zero
    assert out[0] == 1.0
    assert out[3] == 3.0


def test_alignment_term_matches_the_hand_computed_value_at_later_rounds() -> None:
    batch, base = aligned_pair()
    out = advantage_alignment(batch, base, beta=2.0, gamma=0.5)
    # seat 0, t=1: past = 0.5*1 = 0.5, A2_1 = -1 -> 2 + 2*0.5*(-1) = 1
    # seat 0, t=2: past = 0.25*1 + 0.5*2 = 1.25, A2_2 = 2 -> -1 + 2*1.25*2 = 4
    # seat 1, t=1: past = 0.5*3 = 1.5, co-player's A_1 = 2 -> -1 + 2*1.5*2 = 5
    # seat 1, t=2: past = 0.25*3 + 0.5*(-1) = 0.25, co-player's A_2 = -1 -> 2 + 2*0.25*(-1) = 1.5
    assert out == pytest.approx([1.0, 1.0, 4.0, 3.0, 5.0, 1.5])
    assert base == pytest.approx([1.0, 2.0, -1.0, 3.0, -1.0, 2.0]), "the input is not modified"


def test_alignment_can_divide_the_weight_by_t() -> None:
    batch, base = aligned_pair()
    out = advantage_alignment(batch, base, beta=2.0, gamma=0.5, divide_by_t=True)
    # t=1 is unchanged (divided by 1); seat 0, t=2: -1 + 2*(1.25/2)*2 = 1.5; seat 1, t=2: 2 + 2*(0.25/2)*(-1) = 1.75
    assert out == pytest.approx([1.0, 1.0, 1.5, 3.0, 5.0, 1.75])


def test_alignment_sums_several_co_players() -> None:
    batch = turns([(0, 0, 0, 0.0), (0, 0, 1, 0.0), (0, 1, 0, 0.0), (0, 1, 1, 0.0), (0, 2, 0, 0.0), (0, 2, 1, 0.0)])
    base = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 2.0])
    out = advantage_alignment(batch, base, beta=1.0, gamma=0.5)
    # seat 0, t=1: past = 0.5*1, A2 = 1 + 2 = 3 -> 0 + 1*0.5*3 = 1.5; seats 1 and 2 have a zero past
    assert out == pytest.approx([1.0, 1.5, 0.0, 1.0, 0.0, 2.0])


# --- the registry --------------------------------------------------------------------


def test_estimators_are_chosen_by_name() -> None:
    assert sorted(ESTIMATORS) == ["dr_mas", "leave_one_out", "mars", "spiral"]
    batch = turns([(0, 0, 0, 1.0), (1, 0, 0, 3.0)])
    advantages, state = estimate_advantages("spiral", batch, alpha=0.5)
    # match 0: A = 1 - 0, b <- 0.5; match 1: A = 3 - 0.5 = 2.5, b <- 0.25 + 1.5 = 1.75
    assert advantages == pytest.approx([1.0, 2.5])
    assert state == pytest.approx({("g", 0): 1.75})
    advantages, state = estimate_advantages("leave_one_out", batch, baselines=state, gamma=0.5)
    assert advantages == pytest.approx([-2.0, 2.0])
    assert state == pytest.approx({("g", 0): 1.75}), "stateless estimators pass the baselines through"


def test_alignment_is_applied_on_top_of_a_named_estimator() -> None:
    # two rollouts of seed 0, seats 0 and 1, rounds 0 and 1, gamma 0.5 for the returns:
    # seat 0: rollout 0 rewards [0, 2] -> G [1, 2]; rollout 1 rewards [0, 0] -> G [0, 0] => LOO A: [1, 2], [-1, -2]
    # seat 1: rollout 0 rewards [2, 0] -> G [2, 0]; rollout 1 rewards [0, 0] -> G [0, 0] => LOO A: [2, 0], [-2, 0]
    batch = turns(
        [
            (0, 0, 0, 0.0),
            (0, 0, 1, 2.0),
            (1, 0, 0, 0.0),
            (1, 0, 1, 0.0),
            (0, 1, 0, 2.0),
            (0, 1, 1, 0.0),
            (1, 1, 0, 0.0),
            (1, 1, 1, 0.0),
        ]
    )
    advantages, _ = estimate_advantages("leave_one_out", batch, gamma=0.5, alignment=Alignment(beta=1.0, gamma=0.5))
    # seat 0, t=1: the co-player's A_1 is 0 in both rollouts, so 2 and -2 stay.
    # seat 1, t=1: rollout 0: past = 0.5*2 = 1, co-player's A_1 = 2 -> 0 + 1*1*2 = 2;
    #              rollout 1: past = 0.5*(-2) = -1, co-player's A_1 = -2 -> 0 + 1*(-1)*(-2) = 2
    assert advantages == pytest.approx([1.0, 2.0, -1.0, -2.0, 2.0, 2.0, -2.0, 2.0])


def test_an_unknown_estimator_name_is_a_clear_error() -> None:
    batch = turns([(0, 0, 0, 1.0), (1, 0, 0, 3.0)])
    with pytest.raises(ValueError, match=r"unknown advantage estimator 'marz'; did you mean 'mars'\? \(known: dr_mas, "):
        estimate_advantages("marz", batch)


# --- the batch -----------------------------------------------------------------------


def test_a_batch_rejects_two_turns_of_a_seat_at_one_step() -> None:
    with pytest.raises(ValueError, match="match 0 has two turns of player 1 at step 2"):
        turns([(0, 1, 2, 0.0), (0, 1, 2, 1.0)])


def test_a_batch_rejects_columns_of_different_lengths() -> None:
    with pytest.raises(ValueError, match=r"TurnBatch.player has shape \(1,\); expected \(2,\)"):
        TurnBatch(rewards=[0.0, 1.0], player=[0], match=[0, 0], step=[0, 1], game="g", seed=0)


def test_a_batch_is_read_only() -> None:
    batch = turns([(0, 0, 0, 1.0)])
    with pytest.raises(ValueError, match="read-only"):
        batch.rewards[0] = 2.0

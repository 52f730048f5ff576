"""The opponent pool (docs/TRAINING.md, "Opponents"): records, sampling weights worked out by hand, the snapshot cap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from trainer.opponents import Opponent, OpponentPool, learner_score, model_names


def bots(*names: str) -> list[Opponent]:
    return [Opponent(name, "bot", "random") for name in names]


def play(pool: OpponentPool, name: str, outcomes: str) -> None:
    """Record the learner's results against ``name``: W win, D draw, L loss (returns +1/0/-1)."""
    for letter in outcomes:
        ret = {"W": 1.0, "D": 0.0, "L": -1.0}[letter]
        pool.record(name, ret, -ret, {"W": "win", "D": "draw", "L": "loss"}[letter])


def test_sampling_is_deterministic_in_the_seed_and_the_draw_count() -> None:
    def draws(seed: int) -> list[list[str]]:
        pool = OpponentPool(bots("a", "b", "c", "d"), sampling="uniform", seed=seed)
        return [[entry.name for entry in pool.sample(30)] for _ in range(3)]

    first = draws(7)
    assert first == draws(7)
    assert first != draws(8)
    assert first[0] != first[1], "each draw uses a fresh generator, not the same one again"


def test_pfsp_weights_on_hand_computed_win_rates() -> None:
    pool = OpponentPool(bots("even", "weak", "new", "strong"), sampling="pfsp", seed=0)
    play(pool, "even", "WL")  # w = 0.5 -> (1 - 0.5)^2 = 0.25
    play(pool, "weak", "WWWD")  # w = 3.5 / 4 = 0.875 -> 0.125^2 = 0.015625
    play(pool, "strong", "LL")  # w = 0 -> 1
    # "new" is unseen: w = 0.5 -> 0.25. Sum = 1.515625
    weights = pool.weights()
    assert weights == pytest.approx(
        {"even": 0.25 / 1.515625, "weak": 0.015625 / 1.515625, "new": 0.25 / 1.515625, "strong": 1.0 / 1.515625}
    )
    assert weights["strong"] == pytest.approx(0.659793814)
    counts = Counter(entry.name for entry in pool.sample(20_000))
    for name, weight in weights.items():
        assert counts[name] / 20_000 == pytest.approx(weight, abs=0.015)


def test_pfsp_power_and_falling_back_to_uniform_when_the_learner_beats_everyone() -> None:
    pool = OpponentPool(bots("a", "b"), sampling="pfsp", pfsp_power=1.0)
    play(pool, "a", "W")
    play(pool, "b", "WWWL")  # p = 1: weights 1 - 1 = 0 and 1 - 0.75 = 0.25
    assert pool.weights() == pytest.approx({"a": 0.0, "b": 1.0})
    beaten = OpponentPool(bots("a", "b"), sampling="pfsp")
    play(beaten, "a", "W")
    play(beaten, "b", "WW")
    assert beaten.weights() == pytest.approx({"a": 0.5, "b": 0.5})


def test_nash_mixture_puts_more_mass_on_the_opponent_that_beats_the_learner() -> None:
    pool = OpponentPool(bots("nemesis", "easy1", "easy2"), sampling="nash", nash_floor=0.1)
    play(pool, "nemesis", "WLLLL")  # learner wins 0.2: A[L, nemesis] = -0.3
    play(pool, "easy1", "WWWWWWWWWL")  # 0.9: A[L, easy1] = +0.4
    play(pool, "easy2", "WWWWWWWWWL")  # 0.9: A[L, easy2] = +0.4
    # nemesis beats the learner, so the learner is out of the equilibrium (row nemesis: 0.3 p_L <= 0).
    # Uniform over the pool would let the learner win (-0.3 + 0.4 + 0.4 > 0), so the max-entropy
    # point lies on -0.3 p_n + 0.4 p_1 + 0.4 p_2 = 0 with p_1 = p_2 = t (symmetry), p_n = 1 - 2t:
    # -0.3 + 0.6 t + 0.8 t = 0 -> t = 3/14, p_n = 8/14 = 4/7.
    # With the floor: 0.9 * 4/7 + 0.1/3 = 0.547619 and 0.9 * 3/14 + 0.1/3 = 0.226190.
    assert pool.weights() == pytest.approx(
        {"nemesis": 0.9 * 4 / 7 + 0.1 / 3, "easy1": 0.9 * 3 / 14 + 0.1 / 3, "easy2": 0.9 * 3 / 14 + 0.1 / 3}, abs=1e-6
    )


def test_nash_mixture_is_uniform_while_the_learner_does_not_win_on_average() -> None:
    pool = OpponentPool(bots("a", "b"), sampling="nash", nash_floor=0.0)
    play(pool, "a", "WLLLL")  # 0.2
    play(pool, "b", "WWWLL")  # 0.6: against a uniform pool the learner wins 0.4 < 0.5
    assert pool.weights() == pytest.approx({"a": 0.5, "b": 0.5}, abs=1e-6)
    beaten = OpponentPool(bots("a", "b"), sampling="nash", nash_floor=0.0)
    play(beaten, "a", "W")
    play(beaten, "b", "WW")  # the learner alone is the equilibrium: no signal in the pool, uniform
    assert beaten.weights() == pytest.approx({"a": 0.5, "b": 0.5})


def test_nash_floor_keeps_every_entry_sampled() -> None:
    pool = OpponentPool(bots("nemesis", "easy"), sampling="nash", nash_floor=0.2)
    play(pool, "nemesis", "L")  # A[L, nemesis] = -0.5
    play(pool, "easy", "W")  # A[L, easy] = +0.5
    # row L: -0.5 p_n + 0.5 p_e <= 0 holds for the uniform pool (with equality), so p_n = p_e = 0.5
    assert pool.weights() == pytest.approx({"nemesis": 0.5, "easy": 0.5}, abs=1e-6)
    play(pool, "nemesis", "W")  # nemesis now 0.5 (A = 0), easy still 1.0 (A = +0.5)
    # row L: 0.5 p_e <= 0 forces p_e = 0; the learner and nemesis split the equilibrium, so the
    # pool part is nemesis alone. With the floor: nemesis 0.8 * 1 + 0.1 = 0.9, easy 0 + 0.1 = 0.1
    assert pool.weights() == pytest.approx({"nemesis": 0.9, "easy": 0.1}, abs=1e-6)


def test_snapshot_cap_drops_the_oldest_snapshot_but_never_bots_or_models() -> None:
    pool = OpponentPool([*bots("tft"), Opponent("other", "model", "models/other"), Opponent("me", "self")], max_snapshots=2)
    assert pool.add_snapshot("step-10", "run/ckpt/10") is None
    play(pool, "step-10", "W")
    assert pool.add_snapshot("step-20", "run/ckpt/20") is None
    dropped = pool.add_snapshot("step-30", "run/ckpt/30")
    assert dropped == Opponent("step-10", "snapshot", "run/ckpt/10")
    assert [entry.name for entry in pool.entries] == ["tft", "other", "me", "step-20", "step-30"]
    assert "step-10" not in pool.stats()
    with pytest.raises(ValueError, match="no opponent named 'step-10'"):
        pool.record("step-10", 1.0, -1.0, "win")
    assert pool.add_snapshot("step-40", "run/ckpt/40") == Opponent("step-20", "snapshot", "run/ckpt/20")
    with pytest.raises(ValueError, match="3 snapshots given but max_snapshots is 2"):
        OpponentPool([Opponent(f"s{i}", "snapshot", f"ckpt/{i}") for i in range(3)], max_snapshots=2)


def test_returns_equal_but_for_their_last_bit_score_a_draw_as_in_the_ratings() -> None:
    # public-goods pays 6.6 and 6.6000000000000005 for one payoff; TrueSkill and the leaderboard call it a draw
    assert learner_score(6.6, 6.6000000000000005, "ranked") == 0.5
    assert learner_score(6.6000000000000005, 6.6, "ranked") == 0.5


def test_stats_report_win_rate_returns_and_weight() -> None:
    pool = OpponentPool(bots("a", "b"), sampling="pfsp")
    pool.record("a", 3.0, 1.0, "ranked")  # general-sum: the learner's higher return counts as a win
    pool.record("a", 2.0, 2.0, "ranked")  # equal returns: half
    pool.record("a", -1.0, 1.0, "forfeit")  # the learner forfeited: a loss
    stats = pool.stats()
    # a: w = 1.5 / 3 = 0.5 -> 0.25; b unseen -> 0.25: equal weights
    assert stats["a"] == pytest.approx(
        {"kind": "bot", "matches": 3, "win_rate": 0.5, "mean_return": 4.0 / 3, "mean_opponent_return": 4.0 / 3, "weight": 0.5}
    )
    assert stats["b"] == {
        "kind": "bot",
        "matches": 0,
        "win_rate": None,
        "mean_return": None,
        "mean_opponent_return": None,
        "weight": 0.5,
    }


def test_unknown_sampling_names_the_choices() -> None:
    with pytest.raises(
        ValueError, match=r"unknown opponent sampling 'pfps'; did you mean 'pfsp'\? \(choices: uniform, pfsp, nash\)"
    ):
        OpponentPool(bots("a"), sampling="pfps")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Opponent("x", "robot", "random"), "unknown kind 'robot'"),
        (lambda: Opponent("x", "bot", ""), "needs a bot spec"),
        (lambda: Opponent("x", "snapshot"), "needs a model directory"),
        (lambda: Opponent("x", "self", "ckpt"), "takes no spec"),
        (lambda: Opponent("x", "bot", "alphabeta:depth"), "not key=value"),
        (lambda: Opponent(" ", "bot", "random"), "non-empty name"),
        (lambda: OpponentPool(bots("a", "a")), "already has an entry named 'a'"),
        (lambda: OpponentPool(bots("a")).record("a", 1.0, 0.0, "won"), "unknown match outcome 'won'; did you mean 'win'"),
        (lambda: OpponentPool(bots("a")).record("a", float("nan"), 0.0, "win"), "must be finite"),
        (lambda: OpponentPool(bots("tit-for-tat")).record("tit-for-tta", 1.0, 0.0, "win"), "did you mean 'tit-for-tat'"),
        (lambda: OpponentPool().sample(1), "pool is empty"),
        (lambda: OpponentPool(bots("a")).sample(-1), "negative"),
        (lambda: OpponentPool(bots("a"), nash_floor=1.5), "nash_floor"),
    ],
)
def test_bad_input_gives_a_clear_error(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_model_names_are_the_shortest_path_that_tells_folders_apart() -> None:
    folders = ["/runs/a/checkpoints/final", "/runs/b/checkpoints/final", "models/tiny"]
    assert model_names(folders) == ["a/checkpoints/final", "b/checkpoints/final", "tiny"]
    assert model_names(["/x/final", "/y/x/final"]) == ["/x/final", "y/x/final"]
    assert model_names(["/models/tit-for-tat"], taken={"tit-for-tat"}) == ["models/tit-for-tat"]
    with pytest.raises(ValueError, match=r"'\./m/final' is listed twice"):
        model_names(["m/final", "./m/final"])

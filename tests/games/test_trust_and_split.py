"""Trust-and-Split: hidden hands, values, over-claims, the talk step, and what is revealed when."""

from __future__ import annotations

import collections

import pytest

from games.api import ConfigError, IllegalAction
from games.trust_and_split import PAIRS, TrustAndSplit, split, winner

NO_TALK = {"cheap_talk": False}
SEED0_HANDS = [("scissors", "paper"), ("rock", "paper"), ("rock", "paper"), ("paper", "scissors"), ("paper", "rock")]
"""The hands seed 0 deals, round by round (seat 0's, seat 1's)."""


def test_spec_is_a_simultaneous_social_dilemma_with_chance_and_hidden_hands() -> None:
    spec = TrustAndSplit.spec
    assert (spec.name, spec.category) == ("trust-and-split", "social_dilemma")
    assert spec.simultaneous and spec.chance and spec.hidden_information and not spec.zero_sum
    assert (spec.min_players, spec.max_players) == (2, 2)
    assert spec.default_config.rounds == 5 and spec.default_config.cheap_talk  # type: ignore[attr-defined]
    assert (spec.min_return, spec.max_return) == (0.0, 500.0)
    assert TrustAndSplit.Config(cheap_talk=False).action_space() == tuple(f"take {n}" for n in range(11))


def test_hands_never_tie_and_the_winner_is_the_rock_paper_scissors_winner() -> None:
    assert len(PAIRS) == 6 and all(a != b for a, b in PAIRS)
    assert winner(("rock", "scissors")) == 0 and winner(("rock", "paper")) == 1 and winner(("scissors", "paper")) == 0


def test_over_claims_are_scaled_down_in_proportion() -> None:
    assert split([4, 5], 10) == (4.0, 5.0)
    assert split([10, 10], 10) == (5.0, 5.0)
    assert split([7, 6], 10) == pytest.approx((70 / 13, 60 / 13))
    assert split([0, 0], 10) == (0.0, 0.0)


def test_each_round_deals_every_unequal_pair_about_equally_often() -> None:
    counts = collections.Counter(TrustAndSplit.new(NO_TALK, seed).hands[0] for seed in range(1200))
    assert set(counts) == set(PAIRS)
    assert all(150 <= count <= 250 for count in counts.values()), counts


def test_a_full_match_by_hand() -> None:
    state = TrustAndSplit.new({"rounds": 3}, seed=0)
    assert state.hands == SEED0_HANDS[:1]
    state.step({0: "I have scissors", 1: "Paper here"})
    # Round 1: scissors beats paper, so seat 0 values coins at 10 and seat 1 at 1; claims 7 + 6 = 13 > 10:
    # seat 0 gets 70/13 coins (worth 700/13), seat 1 gets 60/13 (worth 60/13).
    assert state.step({0: "take 7", 1: "6"}) == pytest.approx([700 / 13, 60 / 13])
    state.step({0: "", 1: ""})
    # Round 2: rock loses to paper: seat 1 values at 10. Claims 0 + 10: seat 1 gets all 10 coins.
    assert state.step({0: "0", 1: "10"}) == [0.0, 100.0]
    state.step({0: "", 1: ""})
    # Round 3: rock loses to paper again. Claims 2 + 3 = 5 <= 10: each gets its claim, 5 coins are lost.
    assert state.step({0: "2", 1: "3"}) == [2.0, 30.0]
    assert state.is_over and state.hands == SEED0_HANDS[:3]
    assert state.returns() == pytest.approx((700 / 13 + 2, 60 / 13 + 130))
    data = state.observe(0).data
    assert data["my_moves"] == [7, 0, 2] and data["their_moves"] == [6, 10, 3]
    assert data["my_hands"] == ["scissors", "rock", "rock"] and data["hand"] is None


def test_each_seat_sees_its_own_hand_only_until_the_round_is_over() -> None:
    state = TrustAndSplit.new(None, seed=0)
    assert state.private_info(0) == {"hand": "scissors"} and state.private_info(1) == {"hand": "paper"}
    first, second = state.observe(0), state.observe(1)
    assert "Your hand this round: scissors." in first.text and "Your hand this round: paper." in second.text
    assert first.data["hand"] == "scissors" and second.data["hand"] == "paper"
    other_deal = next(seed for seed in range(100) if TrustAndSplit.new(None, seed).hands[0] == ("scissors", "rock"))
    assert TrustAndSplit.new(None, other_deal).observe(0) == first
    assert "paper" not in str(state.public_view()) and "paper" in str(state.full_view())
    state.step({0: "", 1: ""})
    state.step({0: "5", 1: "5"})
    # Round 1 is over: both its hands are public now; round 2's are not.
    assert [row[0].split()[1] for row in state.public_view()["render"][1]["rows"]] == ["scissors", "paper"]
    assert state.observe(1).data["their_hands"] == ["scissors"] and state.observe(1).data["hand"] == "paper"
    assert "they had scissors and took 5 (5 coins worth 10 each)" in state.observe(1).text


def test_without_talk_each_round_is_one_step() -> None:
    state = TrustAndSplit.new({**NO_TALK, "rounds": 2})
    assert state.legal_actions(0) == tuple(f"take {n}" for n in range(11))
    state.step({0: "5", 1: "5"})
    state.step({0: "5", 1: "5"})
    assert state.is_over and state.step_count == 2 and sum(state.returns()) == 2 * (50 + 5)


def test_the_rules_give_the_talk_step_only_with_cheap_talk_on() -> None:
    """The rules are one text whatever the config: 'each round first has a talk step' was
    false of a match without talk, whose first step asks for the split."""
    assert "With cheap talk on (as by default), each round first has a talk step" in TrustAndSplit.spec.rules
    assert "Now: split of round 1" in TrustAndSplit.new(NO_TALK).observe(0).text


def test_claims_outside_the_coins_are_refused() -> None:
    state = TrustAndSplit.new({**NO_TALK, "coins": 4})
    with pytest.raises(IllegalAction, match="'take 5' is not a move; answer take <n> with n a whole number from 0 to 4"):
        state.validate(0, "take 5")
    with pytest.raises(IllegalAction, match="not a move"):
        state.validate(0, "everything")


def test_custom_values_are_paid() -> None:
    state = TrustAndSplit.new({**NO_TALK, "high_value": 3, "low_value": 0, "coins": 4}, seed=0)
    # Seed 0 round 1: seat 0 (scissors) beats paper.
    assert state.step({0: "1", 1: "3"}) == [3.0, 0.0]
    assert state.config.return_bounds() == (0.0, 5 * 4 * 3.0)


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"coins": 0}, "coins"),
        ({"low_value": -1}, "low_value"),
        ({"high_value": 1}, "high_value"),
        ({"rounds": 0}, "rounds"),
        ({"message_chars": 0}, "message_chars"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        TrustAndSplit.new(values)

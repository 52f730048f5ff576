"""Coalition bargaining: proposals, simultaneous majority votes, the shrinking pie, every ending."""

from __future__ import annotations

import json
import random

import pytest

from games.api import ConfigError, IllegalAction
from games.coalition_bargaining import CoalitionBargaining


def test_spec_is_a_simultaneous_free_text_negotiation_for_three_to_five() -> None:
    spec = CoalitionBargaining.spec
    assert (spec.name, spec.category) == ("coalition-bargaining", "negotiation")
    assert (spec.min_players, spec.max_players) == (3, 5)
    assert spec.simultaneous and spec.free_text and not spec.chance and not spec.hidden_information
    assert (spec.min_return, spec.max_return) == (0.0, 100.0)
    assert CoalitionBargaining.new(None).num_players == 3


@pytest.mark.parametrize(
    ("pie", "shrink", "rounds", "pies"),
    [
        (100, 0.9, 5, (100, 90, 81, 72, 64)),  # 72.9 -> 72, 64.8 -> 64
        (100, 0.7, 5, (100, 70, 49, 34, 23)),  # 34.3 -> 34, 23.8 -> 23
        (100, 0.29, 3, (100, 29, 8)),  # 100 x 0.29 is 28.999... in floating point, still 29
        (10, 1.0, 3, (10, 10, 10)),
        (3, 0.5, 4, (3, 1, 0, 0)),
        (41943050, 0.7, 2, (41943050, 29360135)),  # a slack of 1e-9 was too small here: 29360134 (found by QA)
        (413654000, 0.29, 2, (413654000, 119959660)),
    ],
)
def test_the_pie_shrinks_and_is_rounded_down(pie: int, shrink: float, rounds: int, pies: tuple[int, ...]) -> None:
    assert CoalitionBargaining.Config(pie=pie, shrink=shrink, max_rounds=rounds).pies() == pies


def test_a_full_match_hand_checked() -> None:
    state = CoalitionBargaining.new(None, 0)
    assert state.to_move() == (0,)
    assert state.step({0: "propose 80 10 10: generous enough"}) is None
    assert state.to_move() == (1, 2)
    # Only the proposer's own yes: 1 of 3 fails, the pie shrinks to 90 and seat 1 proposes.
    assert state.step({1: "no: greedy", 2: "no"}) is None
    assert not state.is_over and state.pie() == 90 and state.to_move() == (1,)
    state.step({1: "propose 0 45 45: seat 2, split it with me"})
    assert state.to_move() == (0, 2)
    # Seat 1's yes and seat 2's: 2 of 3 passes.
    assert state.step({0: "no", 2: "yes: deal"}) == (0.0, 45.0, 45.0)
    assert state.is_over and state.returns() == (0.0, 45.0, 45.0)
    data = state.observe(2).data
    assert data["votes"] == [
        {"round": 1, "proposer": 0, "pie": 100, "shares": [80, 10, 10], "votes": ["yes", "no", "no"], "passed": False},
        {"round": 2, "proposer": 1, "pie": 90, "shares": [0, 45, 45], "votes": ["no", "yes", "yes"], "passed": True},
    ]
    assert (data["round"], data["pie"], data["phase"], data["shares"]) == (2, 90, "over", [0, 45, 45])
    assert data["messages"][1] == {"seat": 1, "text": "greedy", "round": 1}
    assert "Agreement in round 2: seat 0 0, seat 1 45, you 45." in state.observe(2).text
    json.dumps(data)


def test_with_four_players_a_majority_is_three_votes() -> None:
    state = CoalitionBargaining.new({"players": 4}, 0)
    state.step({0: "propose 50 50 0 0"})
    state.step({1: "yes", 2: "no", 3: "no"})  # 2 of 4 is no majority
    assert not state.is_over and state.proposer() == 1
    state.step({1: "propose 30 30 30 0"})  # the pie is 90 now
    assert state.step({0: "yes", 2: "yes", 3: "no"}) == (30.0, 30.0, 30.0, 0.0)


def test_proposers_rotate_and_everyone_gets_nothing_when_the_last_round_fails() -> None:
    state = CoalitionBargaining.new({"players": 5, "max_rounds": 6, "pie": 10, "shrink": 1.0}, 0)
    for round_index in range(6):
        proposer = round_index % 5
        assert state.to_move() == (proposer,)
        shares = ["0"] * 5
        shares[proposer] = "10"
        state.step({proposer: f"propose {' '.join(shares)}"})
        assert state.step({seat: "no" for seat in state.to_move()}) is None
    assert state.is_over and state.returns() == (0.0,) * 5
    assert state.shares() is None
    assert "No agreement in 6 rounds: everyone scores 0." in state.observe(0).text


def test_the_last_round_is_announced() -> None:
    state = CoalitionBargaining.new({"max_rounds": 1}, 0)
    assert "this is the last round" in state.observe(0).text
    assert "shrinks to" not in state.observe(0).text


def test_voters_see_the_proposal_and_their_share() -> None:
    state = CoalitionBargaining.new(None, 0)
    state.step({0: "propose 60 40 0: seat 1, join me"})
    voter = state.observe(1)
    assert voter.data["proposal"] == [60, 40, 0] and voter.data["phase"] == "vote"
    assert "Seat 0's proposal: seat 0 60, you 40, seat 2 0. Vote: answer 'yes' or 'no'" in voter.text
    assert state.legal_actions(1) is None and state.legal_actions(0) == ()


@pytest.mark.parametrize(
    ("action", "canonical"),
    [("PROPOSE 40, 30, 30 :  hi  all", "propose 40 30 30: hi all"), ("propose 100 0 0", "propose 100 0 0")],
)
def test_proposals_are_canonicalised(action: str, canonical: str) -> None:
    assert CoalitionBargaining.new(None, 0).validate(0, action) == canonical


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("propose 40 30 20", "add up to 90, but the pie this round is 100"),
        ("propose 50 50", "3 whole numbers"),
        ("propose 50 50 0 0", "3 whole numbers"),
        ("propose 50 -10 60", "3 whole numbers"),
        ("yes", "'yes' is not possible now; you propose this round"),
        ("propse 40 30 30", "did you mean 'propose'"),
    ],
)
def test_illegal_proposals_are_explained(action: str, reason: str) -> None:
    state = CoalitionBargaining.new(None, 0)
    with pytest.raises(IllegalAction, match=reason):
        state.step({0: action})
    assert state.step_count == 0


def test_illegal_votes_are_explained_and_every_voter_must_vote() -> None:
    state = CoalitionBargaining.new({"message_chars": 3}, 0)
    with pytest.raises(IllegalAction, match="not seat 1's turn: waiting for seat 0 to propose"):
        state.validate(1, "yes")
    state.step({0: "propose 40 30 30"})
    with pytest.raises(IllegalAction, match="'propose' is not possible now; vote"):
        state.validate(1, "propose 40 30 30")
    with pytest.raises(IllegalAction, match="after a colon"):
        state.validate(1, "yes please")
    with pytest.raises(IllegalAction, match="not seat 0's turn: waiting for the other seats to vote"):
        state.validate(0, "yes")
    with pytest.raises(IllegalAction, match="4 characters; the limit is 3"):
        state.validate(2, "no: nope")
    with pytest.raises(IllegalAction, match="expected actions for seats"):
        state.step({1: "yes"})
    assert state.validate(2, " YES ") == "yes"
    assert state.step_count == 1


def test_the_public_view_has_a_row_per_round_with_a_live_proposal_shown_unvoted() -> None:
    state = CoalitionBargaining.new(None, 0)
    state.step({0: "propose 80 10 10"})
    state.step({1: "no", 2: "no: x"})
    state.step({1: "propose 0 45 45"})
    grid = next(block for block in state.public_view()["render"] if block["type"] == "grid")
    assert grid["rows"] == [["80 yes", "10 no", "10 no"], ["0 ?", "45 yes", "45 ?"]]
    assert grid["row_labels"] == ["1 (seat 0)", "2 (seat 1)"]
    assert state.full_view() == state.public_view()


@pytest.mark.parametrize("players", [3, 4, 5])
def test_random_free_action_is_always_legal(players: int) -> None:
    rng = random.Random(players)
    for seed in range(20):
        state = CoalitionBargaining.new({"players": players}, seed)
        while not state.is_over:
            actions = {seat: CoalitionBargaining.random_free_action(state.observe(seat), rng) for seat in state.to_move()}
            for seat, action in actions.items():
                assert state.validate(seat, action) == action
            state.step(actions)
        assert sum(state.returns()) in (0.0, *map(float, state.config.pies()))


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"players": 2}, "players"),
        ({"players": 6}, "players"),
        ({"pie": 0}, "pie"),
        ({"shrink": 0.0}, "shrink"),
        ({"shrink": 1.5}, "shrink"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"max_rounds": 10**9}, "max_rounds"),  # its pies took two minutes to work out, and filled every turn
        ({"message_chars": -1}, "message_chars"),
    ],
)
def test_config_errors_name_the_problem(values: dict[str, object], key: str) -> None:
    expected = "3 to 5 players" if key == "players" else f"'{key}'"
    with pytest.raises(ConfigError, match=expected):
        CoalitionBargaining.new(values)

"""Iterated ultimatum: alternating roles, per-round payoffs, the action grammar, the record."""

from __future__ import annotations

import json
import random

import pytest

from games.api import HISTORY_SHOWN, ConfigError, IllegalAction
from games.iterated_ultimatum import IteratedUltimatum


def test_spec_is_a_deterministic_free_text_negotiation() -> None:
    spec = IteratedUltimatum.spec
    assert (spec.name, spec.category) == ("iterated-ultimatum", "negotiation")
    assert spec.free_text and not spec.chance and not spec.hidden_information and not spec.simultaneous
    assert (spec.min_return, spec.max_return) == (0.0, 60.0)
    assert IteratedUltimatum.Config(rounds=3, pie=7).return_bounds() == (0.0, 21.0)


def test_a_full_match_hand_checked() -> None:
    state = IteratedUltimatum.new(None, 0)
    script = [
        # (seat, action, rewards of the step)
        (0, "offer 4: a fair split", None),
        (1, "accept", (6.0, 4.0)),
        (1, "offer 2: take it", None),
        (0, "reject: too little", (0.0, 0.0)),
        (0, "offer 1", None),
        (1, "reject", (0.0, 0.0)),
        (1, "offer 5: friends again?", None),
        (0, "accept: yes", (5.0, 5.0)),
        (0, "offer 0", None),
        (1, "accept", (10.0, 0.0)),
        (1, "offer 10", None),
        (0, "accept", (10.0, 0.0)),
    ]
    for seat, action, rewards in script:
        assert state.to_move() == (seat,)
        assert state.step({seat: action}) == rewards
    assert state.is_over and state.to_move() == ()
    # Seat 0: 6 + 0 + 0 + 5 + 10 + 10 = 31; seat 1: 4 + 0 + 0 + 5 + 0 + 0 = 9.
    assert state.returns() == (31.0, 9.0)
    data = state.observe(1).data
    assert data["results"][:2] == [
        {"round": 1, "proposer": 0, "offer": 4, "accepted": True},
        {"round": 2, "proposer": 1, "offer": 2, "accepted": False},
    ]
    assert (data["my_score"], data["their_score"], data["phase"], data["role"]) == (9.0, 31.0, "over", None)
    assert data["messages"][:2] == [{"seat": 0, "text": "a fair split", "round": 1}, {"seat": 1, "text": "take it", "round": 2}]
    assert "Final score: you 9, them 31." in state.observe(1).text
    json.dumps(data)


def test_roles_alternate_and_the_responder_sees_the_offer() -> None:
    state = IteratedUltimatum.new({"rounds": 2, "pie": 7}, 0)
    first = state.observe(0).data
    assert (first["role"], first["proposer"], first["phase"], first["offer"]) == ("proposer", 0, "offer", None)
    assert state.legal_actions(0) is None and state.legal_actions(1) == ()
    state.step({0: "offer 3"})
    responder = state.observe(1)
    assert (responder.data["role"], responder.data["offer"], responder.data["phase"]) == ("responder", 3, "respond")
    assert "seat 0 offers you 3 of 7 (they would keep 4)" in responder.text
    state.step({1: "reject"})
    assert state.observe(1).data["role"] == "proposer" and state.to_move() == (1,)


def test_a_one_round_game_ends_after_the_answer() -> None:
    state = IteratedUltimatum.new({"rounds": 1}, 0)
    state.step({0: "offer 3"})
    assert not state.is_over
    assert state.step({1: "accept"}) == (7.0, 3.0)
    assert state.is_over


@pytest.mark.parametrize(
    ("action", "canonical"),
    [("OFFER 4 :  hi  there", "offer 4: hi there"), ("offer 0", "offer 0"), ("offer 10:", "offer 10")],
)
def test_offers_are_canonicalised(action: str, canonical: str) -> None:
    assert IteratedUltimatum.new(None, 0).validate(0, action) == canonical


def test_answers_are_canonicalised() -> None:
    state = IteratedUltimatum.new(None, 0)
    state.step({0: "offer 4"})
    assert state.validate(1, " Accept ") == "accept"
    assert state.validate(1, "REJECT: no: never") == "reject: no: never"


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("accept", "'accept' is not possible now; you propose this round"),
        ("offer", "one whole number"),
        ("offer 4 5", "one whole number"),
        ("offer -1", "one whole number"),
        ("offer 11", "cannot offer 11: the pie is 10"),
        ("ofer 4", "did you mean 'offer'"),
        ("", "empty action"),
    ],
)
def test_illegal_offers_are_explained(action: str, reason: str) -> None:
    state = IteratedUltimatum.new(None, 0)
    with pytest.raises(IllegalAction, match=reason):
        state.step({0: action})
    assert state.step_count == 0


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("offer 3", "'offer' is not possible now; you respond to an offer of 4"),
        ("accept please", "after a colon"),
        ("maybe", "'maybe' is not an action"),
    ],
)
def test_illegal_answers_are_explained(action: str, reason: str) -> None:
    state = IteratedUltimatum.new(None, 0)
    state.step({0: "offer 4"})
    with pytest.raises(IllegalAction, match=reason):
        state.validate(1, action)


def test_acting_out_of_turn_overlong_messages_and_finished_games_are_illegal() -> None:
    state = IteratedUltimatum.new({"rounds": 1, "message_chars": 2}, 0)
    with pytest.raises(IllegalAction, match="seat 0's turn, not seat 1's"):
        state.validate(1, "offer 4")
    with pytest.raises(IllegalAction, match="3 characters; the limit is 2"):
        state.validate(0, "offer 4: hey")
    state.step({0: "offer 4: hi"})
    state.step({1: "accept"})
    with pytest.raises(IllegalAction, match="the game is over"):
        state.validate(0, "offer 4")


def test_the_public_view_shows_offers_votes_and_messages() -> None:
    state = IteratedUltimatum.new(None, 0)
    state.step({0: "offer 4: fair"})
    state.step({1: "reject: no"})
    view = state.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert grid["rows"] == [["4 no"]]
    chat = next(block for block in view["render"] if block["type"] == "chat")
    assert chat["messages"] == [{"seat": 0, "text": "(round 1) fair"}, {"seat": 1, "text": "(round 1) no"}]
    assert state.full_view() == view


def test_random_free_action_is_always_legal() -> None:
    rng = random.Random(4)
    for seed in range(30):
        state = IteratedUltimatum.new(None, seed)
        while not state.is_over:
            seat = state.to_move()[0]
            action = IteratedUltimatum.random_free_action(state.observe(seat), rng)
            assert state.validate(seat, action) == action
            state.step({seat: action})
        assert len(state.results) == 6


@pytest.mark.parametrize(
    ("values", "key"),
    [({"rounds": 0}, "rounds"), ({"pie": 0}, "pie"), ({"message_chars": -1}, "message_chars"), ({"pies": 3}, "pies")],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        IteratedUltimatum.new(values)


def test_a_long_match_shows_its_latest_rounds_one_by_one_and_sums_up_the_rest() -> None:
    """Every round and message at every turn made one 1,000-round match's text 176 MB (found by QA)."""
    state = IteratedUltimatum.new({"rounds": 1000, "message_chars": 20})
    for number in range(1, 31):
        proposer = (number - 1) % 2
        state.step({proposer: f"offer {3 - 2 * proposer}: m{number}"})  # seat 0 offers 3, seat 1 offers 1
        state.step({1 - proposer: "accept"})
    text = state.observe(0).text
    first = 30 - HISTORY_SHOWN
    # rounds 1 to 10: seat 0 proposes five times (keeps 7) and answers five (gets 1)
    summed = f"  rounds 1 to {first}, not shown one by one (the observation's data lists every round): you +40, them +60 in all"
    assert summed in text
    assert f"  round {first + 1}: you offered 3 of 10 to seat 1" in text and f"  round {first}: " not in text
    assert f"m{first + 1}" in text and f'"m{first}"' not in text
    assert len(state.observe(0).data["results"]) == 30 and len(state.observe(0).data["messages"]) == 30
    blocks = {block["type"]: block for block in state.public_view()["render"]}
    assert blocks["grid"]["col_labels"][0] == f"{first + 1} (seat 0)" and len(blocks["grid"]["col_labels"]) == HISTORY_SHOWN
    assert blocks["grid"]["title"].endswith(f"; rounds before {first + 1} not shown")
    assert blocks["chat"]["messages"][0]["text"] == f"(round {first + 1}) m{first + 1}"
    lengths = []
    for number in range(31, 1001):
        proposer = (number - 1) % 2
        state.step({proposer: "offer 5: a fair split"})
        state.step({1 - proposer: "accept"})
        if number in (100, 999):
            lengths.append(len(state.observe(0).text))
    assert max(lengths) < 6_000

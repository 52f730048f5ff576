"""Multi-issue negotiation: the weights, scoring packages, logrolling deals, no deals, privacy, grammar."""

from __future__ import annotations

import json
import random

import pytest

from games.api import ConfigError, IllegalAction
from games.multi_issue_negotiation import ISSUE_NAMES, MultiIssueNegotiation, parse_action, utility


def test_spec_is_a_free_text_negotiation_with_chance_and_hidden_information() -> None:
    spec = MultiIssueNegotiation.spec
    assert (spec.name, spec.category) == ("multi-issue-negotiation", "negotiation")
    assert spec.chance and spec.hidden_information and spec.free_text
    assert not spec.simultaneous and not spec.zero_sum
    assert (spec.min_return, spec.max_return) == (0.0, 100.0)


@pytest.mark.parametrize("config", [{}, {"issues": 1}, {"issues": 6, "options": 2}])
def test_weights_are_multiples_of_five_at_least_five_and_sum_to_100(config: dict[str, int]) -> None:
    seen = set()
    for seed in range(100):
        state = MultiIssueNegotiation.new(config, seed)
        for weights in state.weights:
            assert len(weights) == state.config.issues
            assert sum(weights) == 100 and min(weights) >= 5
            assert all(w % 5 == 0 for w in weights)
            seen.add(weights)
    assert len(seen) > 1 or state.config.issues == 1


def test_a_package_scores_each_issue_by_weight_and_closeness_to_the_players_end() -> None:
    # Seat 0 gains from high levels: (20 * 4 + 30 * 2 + 50 * 0) / 4 = 35; seat 1 from low: (20 * 0 + 30 * 2 + 50 * 4) / 4 = 65.
    assert utility((20, 30, 50), (4, 2, 0), 5, 0) == 35.0
    assert utility((20, 30, 50), (4, 2, 0), 5, 1) == 65.0
    assert utility((100,), (1,), 2, 0) == 100.0


def test_a_full_match_hand_checked_where_logrolling_beats_splitting_the_difference() -> None:
    state = MultiIssueNegotiation.new(None, 1)
    assert state.weights == ((5, 70, 25), (40, 25, 35))
    assert state.observe(0).data["my_weights"] == [5, 70, 25]
    assert state.step({0: "propose 4 4 4: all high"}) is None
    assert state.step({1: "propose 0 0 0"}) is None
    assert state.step({0: "propose 0 4 4: delivery matters most to me"}) is None
    assert state.step({1: "propose price=0 delivery=4 warranty=0: then price and warranty are mine"}) is None
    # Seat 0: (5*0 + 70*4 + 25*0) / 4 = 70. Seat 1: (40*4 + 25*0 + 35*4) / 4 = 75.
    assert state.step({0: "accept: deal"}) == (70.0, 75.0)
    assert state.is_over and state.agreed and state.returns() == (70.0, 75.0)
    # Splitting every issue down the middle would have given each exactly 50.
    assert state.utility(0, (2, 2, 2)) == state.utility(1, (2, 2, 2)) == 50.0
    assert state.observe(1).data["deal"] == {"package": [0, 4, 0], "my_utility": 75.0}
    assert "Deal: price 0, delivery 4, warranty 0; worth 75 to you." in state.observe(1).text


def test_accepting_the_first_proposal_pays_it() -> None:
    state = MultiIssueNegotiation.new(None, 1)
    state.step({0: "propose 1 2 3"})
    # Seat 0: (5*1 + 70*2 + 25*3) / 4 = 55; seat 1: (40*3 + 25*2 + 35*1) / 4 = 51.25.
    assert state.step({1: "accept"}) == (55.0, 51.25)


@pytest.mark.parametrize("max_turns", [1, 3, 10])
def test_no_deal_after_max_turns_gives_zero_to_both(max_turns: int) -> None:
    state = MultiIssueNegotiation.new({"max_turns": max_turns}, 2)
    for turn in range(max_turns):
        assert not state.is_over
        state.step({turn % 2: "propose 2 2 2"})
    assert state.is_over and not state.agreed and state.returns() == (0.0, 0.0)
    assert state.observe(0).data["deal"] is None
    assert "No deal" in state.observe(1).text


def test_the_standing_proposal_is_scored_for_each_seat() -> None:
    state = MultiIssueNegotiation.new(None, 1)
    state.step({0: "propose 4 0 2: hi"})
    first, second = state.observe(0), state.observe(1)
    # Seat 0: (5*4 + 0 + 25*2) / 4 = 17.5; seat 1: (0 + 25*4 + 35*2) / 4 = 42.5.
    assert first.data["standing_proposal"] == {"by": 0, "package": [4, 0, 2], "my_utility": 17.5}
    assert second.data["standing_proposal"] == {"by": 0, "package": [4, 0, 2], "my_utility": 42.5}
    assert "Standing proposal (theirs): price 4, delivery 0, warranty 2 (worth 42.5 to you)." in second.text
    assert second.data["prefers"] == "low" and first.data["prefers"] == "high"
    json.dumps(second.data)


@pytest.mark.parametrize(
    ("action", "canonical"),
    [
        ("propose 4 0 2", "propose 4 0 2"),
        ("  Propose 4, 0, 2 :  my   offer ", "propose 4 0 2: my offer"),
        ("propose warranty=2 price = 4 delivery=0", "propose 4 0 2"),
    ],
)
def test_proposals_are_canonicalised(action: str, canonical: str) -> None:
    assert MultiIssueNegotiation.new(None, 1).validate(0, action) == canonical


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("", "empty action"),
        ("propse 1 2 3", "did you mean 'propose'"),
        ("propose 1 2", "3 whole numbers"),
        ("propose 1 2 3 4", "3 whole numbers"),
        ("propose 1 -2 3", "3 whole numbers"),
        ("propose price=1 delivery=2", "missing: warranty"),
        ("propose price=1 delivry=2 warranty=0", "did you mean 'delivery'"),
        ("accept it", "after a colon"),
    ],
)
def test_malformed_actions_are_illegal_with_a_reason(action: str, reason: str) -> None:
    with pytest.raises(IllegalAction, match=reason):
        parse_action(action, ISSUE_NAMES[:3])


def test_illegal_moves_in_play_are_explained_and_change_nothing() -> None:
    state = MultiIssueNegotiation.new({"message_chars": 3}, 1)
    with pytest.raises(IllegalAction, match="no proposal to accept yet"):
        state.step({0: "accept"})
    with pytest.raises(IllegalAction, match="levels run from 0 to 4, but delivery got 5"):
        state.step({0: "propose 0 5 0"})
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        state.validate(1, "propose 0 0 0")
    with pytest.raises(IllegalAction, match="4 characters; the limit is 3"):
        state.validate(0, "propose 0 0 0: hey!")
    assert state.step_count == 0


def test_the_other_players_weights_never_reach_an_observation() -> None:
    for seed in range(10):
        a = MultiIssueNegotiation.new(None, seed)
        b = MultiIssueNegotiation.new(None, seed)
        b.weights = (a.weights[0], tuple(reversed(a.weights[1])))
        if b.weights[1] == a.weights[1]:
            continue
        for action in ({0: "propose 4 4 4: hello"}, {1: "propose 0 1 0"}, {0: "accept"}):
            assert a.observe(0) == b.observe(0)
            assert a.public_view() == b.public_view()
            a.step(action)
            b.step(action)
        assert a.observe(0) == b.observe(0)
        assert a.full_view() != b.full_view()


def test_a_players_own_weights_change_its_observation() -> None:
    a = MultiIssueNegotiation.new(None, 0)
    b = MultiIssueNegotiation.new(None, 0)
    b.weights = ((1, 1, 98), a.weights[1])
    assert a.observe(0) != b.observe(0)
    assert a.observe(1) == b.observe(1)
    assert a.private_info(0) == [35, 55, 10]


def test_other_sizes_work() -> None:
    state = MultiIssueNegotiation.new({"issues": 5, "options": 3}, 4)
    data = state.observe(0).data
    assert data["issues"] == ["price", "delivery", "warranty", "volume", "payment"]
    assert data["options"] == 3
    assert state.validate(0, "propose 2 2 0 1 0") == "propose 2 2 0 1 0"
    with pytest.raises(IllegalAction, match="0 to 2"):
        state.validate(0, "propose 3 2 0 1 0")


def test_random_free_action_is_always_legal() -> None:
    rng = random.Random(2)
    deals = 0
    for seed in range(50):
        state = MultiIssueNegotiation.new(None, seed)
        while not state.is_over:
            seat = state.to_move()[0]
            action = MultiIssueNegotiation.random_free_action(state.observe(seat), rng)
            assert state.validate(seat, action) == action
            state.step({seat: action})
        deals += state.agreed
    assert deals >= 40


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"issues": 0}, "issues"),
        ({"issues": 7}, "issues"),
        ({"options": 1}, "options"),
        ({"options": 12}, "options"),
        ({"max_turns": 0}, "max_turns"),
        ({"message_chars": -5}, "message_chars"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        MultiIssueNegotiation.new(values)

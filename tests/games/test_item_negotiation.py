"""Item negotiation: the deal at setup, the action grammar, deals and no deals, privacy."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest

from games.api import ConfigError, IllegalAction
from games.item_negotiation import MAX_COUNT, MIN_COUNT, ItemNegotiation, parse_action, worth


def test_spec_is_a_free_text_negotiation_with_chance_and_hidden_information() -> None:
    spec = ItemNegotiation.spec
    assert spec.name == "item-negotiation"
    assert spec.category == "negotiation"
    assert spec.chance and spec.hidden_information and spec.free_text
    assert not spec.simultaneous and not spec.zero_sum
    assert (spec.min_return, spec.max_return) == (0.0, 10.0)
    assert spec.action_space is None


@pytest.mark.parametrize("config", [{}, {"total_value": 7}, {"items": ("apples", "pears"), "total_value": 6}])
def test_every_deal_is_worth_the_total_to_both_and_every_item_to_someone(config: dict[str, object]) -> None:
    for seed in range(300):
        state = ItemNegotiation.new(config, seed)
        total = state.config.total_value
        assert len(state.counts) == len(state.config.items)
        assert all(MIN_COUNT <= n <= MAX_COUNT for n in state.counts)
        for values in state.values:
            assert all(v >= 0 for v in values)
            assert worth(values, state.counts) == total
        first, second = state.values
        assert all(a > 0 or b > 0 for a, b in zip(first, second, strict=True))
        assert any(a > 0 and b > 0 for a, b in zip(first, second, strict=True))


def test_a_deal_pays_each_player_its_own_value_of_its_share() -> None:
    state = ItemNegotiation.new(None, 3)
    first, second = state.observe(0).data, state.observe(1).data
    assert first["counts"] == second["counts"] == [2, 1, 1]
    assert first["my_values"] == [2, 1, 5]
    assert second["my_values"] == [3, 4, 0]
    assert state.step({0: "propose 1 0 1: a book and the ball for me"}) is None
    # Seat 0 keeps 1 book and the ball: 1*2 + 1*5 = 7. Seat 1 gets 1 book and the hat: 1*3 + 1*4 = 7.
    assert state.step({1: "accept: deal"}) == (7.0, 7.0)
    assert state.is_over and state.agreed
    assert state.returns() == (7.0, 7.0)
    assert state.observe(1).data["deal"] == {"mine": [1, 1, 0], "theirs": [1, 0, 1]}
    assert "worth 7 to you" in state.observe(1).text


def test_accepting_a_later_proposal_splits_by_its_author() -> None:
    state = ItemNegotiation.new(None, 3)
    state.step({0: "propose 2 1 1"})
    state.step({1: "propose 2 1 0"})
    # Seat 1 keeps both books and the hat (2*3 + 4 = 10); seat 0 gets the ball (5).
    assert state.step({0: "accept"}) == (5.0, 10.0)


def test_accepting_with_no_proposal_standing_is_illegal() -> None:
    state = ItemNegotiation.new(None, 0)
    with pytest.raises(IllegalAction, match="no proposal to accept"):
        state.step({0: "accept"})
    assert state.step_count == 0
    assert "accept" not in state.action_format(0)
    state.step({0: "propose 1 1 1"})
    assert "'accept'" in state.action_format(1)


def test_proposing_more_than_the_pool_is_illegal() -> None:
    state = ItemNegotiation.new(None, 3)
    with pytest.raises(IllegalAction, match="you asked for 3 books but the pool has only 2"):
        state.step({0: "propose 3 0 0"})
    with pytest.raises(IllegalAction, match="2 hats but the pool has only 1"):
        state.validate(0, "propose books=0 hats=2 balls=0")


def test_turns_alternate_from_seat_zero() -> None:
    state = ItemNegotiation.new(None, 0)
    assert state.to_move() == (0,)
    assert state.legal_actions(0) is None and state.legal_actions(1) == ()
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        state.validate(1, "propose 0 0 0")
    state.step({0: "propose 1 1 1"})
    assert state.to_move() == (1,)


@pytest.mark.parametrize("max_turns", [1, 4, 10])
def test_no_deal_after_max_turns_gives_zero_to_both(max_turns: int) -> None:
    state = ItemNegotiation.new({"max_turns": max_turns}, 5)
    for turn in range(max_turns):
        assert not state.is_over
        state.step({turn % 2: "propose 1 1 1"})
    assert state.is_over and not state.agreed and state.to_move() == ()
    assert state.returns() == (0.0, 0.0)
    assert "No deal" in state.observe(0).text
    assert state.observe(0).data["deal"] is None


def test_the_last_turn_is_announced() -> None:
    state = ItemNegotiation.new({"max_turns": 2}, 5)
    state.step({0: "propose 1 1 1"})
    assert "This is the last turn" in state.observe(1).text
    assert "last turn" not in state.observe(0).text


@pytest.mark.parametrize(
    ("action", "canonical"),
    [
        ("propose 2 1 0", "propose 2 1 0"),
        ("  PROPOSE 1, 0, 1 ", "propose 1 0 1"),
        ("propose books=1 hats=0 balls=1", "propose 1 0 1"),
        ("propose balls = 1 books = 1 hats = 0", "propose 1 0 1"),
        ("propose 1 0 1:   I need   the ball ", "propose 1 0 1: I need the ball"),
        ("propose 1 0 1:", "propose 1 0 1"),
    ],
)
def test_proposals_are_canonicalised(action: str, canonical: str) -> None:
    assert ItemNegotiation.new(None, 3).validate(0, action) == canonical


def test_accept_is_canonicalised_with_its_message() -> None:
    state = ItemNegotiation.new(None, 3)
    state.step({0: "propose 1 0 1"})
    assert state.validate(1, " Accept ") == "accept"
    assert state.validate(1, "ACCEPT: it is a deal: thanks") == "accept: it is a deal: thanks"


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("", "empty action"),
        ("propse 1 0 1", "did you mean 'propose'"),
        ("offer 1 0 1", "'offer' is not an action"),
        ("propose 1 0", "3 whole numbers"),
        ("propose 1 0 1 I need the ball", "after a colon"),
        ("propose 1 -1 1", "3 whole numbers"),
        ("propose books=1 hats=0", "missing: balls"),
        ("propose books=1 hats=0 bals=1", "did you mean 'balls'"),
        ("propose books=1 books=0 balls=1", "'books' is given twice"),
        ("propose books=1 hats=x balls=1", "whole number"),
        ("accept now", "after a colon"),
    ],
)
def test_malformed_actions_are_illegal_with_a_reason(action: str, reason: str) -> None:
    with pytest.raises(IllegalAction, match=reason):
        parse_action(action, ("books", "hats", "balls"))


def test_an_overlong_message_is_illegal() -> None:
    state = ItemNegotiation.new({"message_chars": 5}, 3)
    assert state.validate(0, "propose 1 0 1: hello") == "propose 1 0 1: hello"
    with pytest.raises(IllegalAction, match="6 characters; the limit is 5"):
        state.validate(0, "propose 1 0 1: hello!")


def test_the_standing_proposal_is_shown_from_each_players_side() -> None:
    state = ItemNegotiation.new(None, 3)
    state.step({0: "propose 1 0 1: hi"})
    assert state.observe(0).data["standing_proposal"] == {"by": 0, "mine": [1, 0, 1], "theirs": [1, 1, 0]}
    second = state.observe(1)
    assert second.data["standing_proposal"] == {"by": 0, "mine": [1, 1, 0], "theirs": [1, 0, 1]}
    assert second.data["messages"] == [{"seat": 0, "text": "hi"}]
    assert second.data["history"] == [{"seat": 0, "action": "propose 1 0 1: hi"}]
    assert "you get books 1, hats 1, balls 0 (worth 7 to you)" in second.text
    json.dumps(second.data)


def deals_by_counts_and_values(seat: int) -> dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]]:
    """Seeds grouped by (counts, the values of ``seat``)."""
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = defaultdict(list)
    for seed in range(400):
        state = ItemNegotiation.new(None, seed)
        groups[(state.counts, state.values[seat])].append(seed)
    return groups


@pytest.mark.parametrize("seat", [0, 1])
def test_the_other_players_values_never_reach_an_observation(seat: int) -> None:
    pairs = [
        (seeds[0], other)
        for seeds in deals_by_counts_and_values(seat).values()
        for other in seeds[1:]
        if ItemNegotiation.new(None, seeds[0]).values[1 - seat] != ItemNegotiation.new(None, other).values[1 - seat]
    ]
    assert len(pairs) >= 5
    for first, second in pairs:
        a, b = ItemNegotiation.new(None, first), ItemNegotiation.new(None, second)
        for action in ({0: "propose 1 1 1: hello"}, {1: "propose 0 0 1"}):
            assert a.observe(seat) == b.observe(seat)
            assert a.public_view() == b.public_view()
            a.step(action)
            b.step(action)
        assert a.observe(seat) == b.observe(seat)
        assert a.full_view() != b.full_view()


def test_a_players_own_values_change_its_observation() -> None:
    groups: dict[tuple[int, ...], list[ItemNegotiation]] = defaultdict(list)
    for seed in range(100):
        state = ItemNegotiation.new(None, seed)
        groups[state.counts].append(state)
    pairs = [(g[0], other) for g in groups.values() for other in g[1:] if g[0].values[0] != other.values[0]]
    assert pairs
    for a, b in pairs:
        assert a.observe(0) != b.observe(0)


def test_views_hide_values_until_the_full_view() -> None:
    state = ItemNegotiation.new(None, 3)
    state.step({0: "propose 1 0 1: take the hat"})
    public = json.dumps(state.public_view())
    full = json.dumps(state.full_view())
    assert "values" not in public
    assert "take the hat" in public and "proposal by seat 0" in public
    assert "books 2, hats 1, balls 5" in full and "books 3, hats 4, balls 0" in full


def test_random_free_action_is_always_legal() -> None:
    rng = random.Random(7)
    accepted = 0
    for seed in range(100):
        state = ItemNegotiation.new(None, seed)
        while not state.is_over:
            seat = state.to_move()[0]
            action = ItemNegotiation.random_free_action(state.observe(seat), rng)
            assert state.validate(seat, action) == action
            state.step({seat: action})
        accepted += state.agreed
    assert accepted >= 80


def test_other_item_names_work() -> None:
    state = ItemNegotiation.new({"items": "apples,pears", "total_value": 6}, 1)
    assert state.observe(0).data["items"] == ["apples", "pears"]
    assert state.validate(0, "propose pears=1 apples=0") == "propose 0 1"


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"items": ()}, "items"),
        ({"items": ("a", "b", "c", "d", "e", "f")}, "items"),
        ({"items": ("books", "books")}, "items"),
        ({"items": ("Big Books",)}, "items"),
        ({"items": ("hats", "b" * 33)}, "items"),  # a usable name, but longer than MAX_NAME_CHARS
        ({"total_value": 2}, "total_value"),
        ({"total_value": 31}, "total_value"),
        ({"max_turns": 0}, "max_turns"),
        ({"message_chars": -1}, "message_chars"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        ItemNegotiation.new(values)

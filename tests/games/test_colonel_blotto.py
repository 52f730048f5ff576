"""Colonel Blotto: battles and rounds, listed versus free-form allocations, parsing, configs."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.colonel_blotto import (
    ColonelBlotto,
    ColonelBlottoConfig,
    all_allocations,
    allocation_count,
    fields_won,
    random_allocation,
    round_winner,
)


def test_spec_is_a_simultaneous_two_player_zero_sum_game() -> None:
    spec = ColonelBlotto.spec
    assert (spec.name, spec.category) == ("colonel-blotto", "competitive")
    assert spec.simultaneous and spec.zero_sum and not spec.chance
    assert (spec.min_players, spec.max_players) == (2, 2)
    assert (spec.min_return, spec.max_return) == (-1.0, 1.0)
    assert ColonelBlottoConfig(rounds=5).return_bounds() == (-5.0, 5.0)


def test_full_three_round_match_pays_each_round() -> None:
    state = ColonelBlotto.new({"rounds": 3})
    # 5>3, 5>3, 0<4: seat 0 carries two battlefields to one.
    assert tuple(state.step({0: "5,5,0", 1: "3,3,4"})) == (1.0, -1.0)
    # 6>5, 4<5, 0=0: one each, the third to nobody: a draw.
    assert tuple(state.step({0: "6,4,0", 1: "5,5,0"})) == (0.0, 0.0)
    assert not state.is_over
    # 0<6, 5>4, 5>0: seat 0 again, two to one.
    assert tuple(state.step({0: "0,5,5", 1: "6,4,0"})) == (1.0, -1.0)
    assert state.is_over and state.to_move() == ()
    assert state.returns() == (2.0, -2.0)
    assert state.legal_actions(0) == ()
    with pytest.raises(GameOver):
        state.step({0: "4,3,3", 1: "4,3,3"})


def test_seat_1_can_win_and_identical_splits_draw() -> None:
    state = ColonelBlotto.new()
    assert tuple(state.step({0: "10,0,0", 1: "0,5,5"})) == (-1.0, 1.0)
    assert state.is_over and state.returns() == (-1.0, 1.0)
    again = ColonelBlotto.new()
    again.step({0: "4,3,3", 1: "4,3,3"})
    assert again.returns() == (0.0, 0.0)


def test_battles_count_fields_and_ties_go_to_nobody() -> None:
    assert fields_won((5, 5, 0), (3, 3, 4)) == (2, 1)
    assert fields_won((4, 3, 3), (4, 3, 3)) == (0, 0)
    assert fields_won((2, 2, 2, 2, 2), (10, 0, 0, 0, 0)) == (4, 1)
    assert round_winner((6, 4, 0), (5, 5, 0)) is None
    assert round_winner((0, 0, 10), (1, 1, 8)) == 1


def test_small_games_list_every_allocation() -> None:
    state = ColonelBlotto.new()
    legal = state.legal_actions(0)
    assert legal is not None and len(legal) == 66 == allocation_count(10, 3)
    assert legal[:3] == ("0,0,10", "0,1,9", "0,2,8") and legal[-1] == "10,0,0"
    assert len(set(legal)) == 66
    assert state.legal_actions(1) == legal == ColonelBlotto.spec.action_space
    assert all(sum(map(int, a.split(","))) == 10 for a in legal)
    assert all_allocations(2, 2) == ("0,2", "1,1", "2,0")


def test_large_games_take_free_form_allocations() -> None:
    config = {"troops": 20, "fields": 4}  # 1771 allocations, more than max_listed=100
    state = ColonelBlotto.new(config)
    assert state.legal_actions(0) is None
    assert state.config.action_space() is None
    assert "4 non-negative whole numbers" in state.action_format(0) and "exactly 20" in state.action_format(0)
    rng = random.Random(0)
    for _ in range(50):
        action = ColonelBlotto.random_free_action(state.observe(0), rng)
        assert state.validate(0, action) == action
    state.step({0: "5,5,5,5", 1: "20,0,0,0"})
    assert state.returns() == (1.0, -1.0)


def test_max_listed_decides_when_to_list() -> None:
    assert ColonelBlotto.new({"troops": 20, "fields": 4, "max_listed": 2000}).legal_actions(0) is not None
    assert ColonelBlotto.new({"max_listed": 65}).legal_actions(0) is None
    assert ColonelBlotto.new({"max_listed": 66}).legal_actions(0) is not None


def test_random_allocations_are_uniform() -> None:
    rng = random.Random(7)
    counts = Counter(random_allocation(4, 3, rng) for _ in range(15_000))
    assert set(counts) == set(all_allocations(4, 3))  # 15 allocations, about 1000 draws each
    assert max(counts.values()) < 1150 and min(counts.values()) > 850


@pytest.mark.parametrize("spelling", ["4,3,3", "4, 3, 3", " 4 3 3 ", "[4,3,3]", "(4; 3; 3)", "4/3/3", "04,3,3"])
def test_allocations_are_canonicalised(spelling: str) -> None:
    state = ColonelBlotto.new()
    assert state.validate(0, spelling) == "4,3,3"
    state.step({0: spelling, 1: "3,3,4"})
    assert state.history == [{0: "4,3,3", 1: "3,3,4"}]


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("4,3", "you gave 2 numbers; give exactly one per battlefield \\(3\\)"),
        ("4,3,2,1", "you gave 4 numbers"),
        ("4,4,4", "uses 12 troops; it must use exactly 10"),
        ("11,-1,0", "cannot be negative"),
        ("4.5,3,2.5", "not an allocation; answer 3 non-negative whole numbers"),
        ("all in", "not an allocation"),
        ("", "not an allocation"),
    ],
)
def test_bad_allocations_are_rejected_with_the_reason(action: str, reason: str) -> None:
    state = ColonelBlotto.new()
    with pytest.raises(IllegalAction, match=reason):
        state.step({0: action, 1: "4,3,3"})
    assert state.step_count == 0


def test_an_unknown_seat_is_rejected() -> None:
    with pytest.raises(IllegalAction, match="no seat 2"):
        ColonelBlotto.new().validate(2, "4,3,3")


def test_observation_is_from_the_observers_point_of_view() -> None:
    state = ColonelBlotto.new({"rounds": 2})
    state.step({0: "5,5,0", 1: "3,3,4"})
    mine, theirs = state.observe(0), state.observe(1)
    assert mine.data == {
        "seat": 0,
        "round": 2,
        "rounds": 2,
        "phase": "move",
        "message_chars": 200,
        "my_moves": [[5, 5, 0]],
        "their_moves": [[3, 3, 4]],
        "my_score": 1.0,
        "their_score": -1.0,
        "messages": [],
        "troops": 10,
        "fields": 3,
    }
    assert (theirs.data["my_moves"], theirs.data["their_moves"], theirs.data["my_score"]) == ([[3, 3, 4]], [[5, 5, 0]], -1.0)
    json.dumps(mine.data)
    assert "you 5,5,0, they 3,3,4: battlefields 2 to 1, you won" in mine.text
    assert "you 3,3,4, they 5,5,0: battlefields 1 to 2, they won" in theirs.text
    assert "10 troops to split over 3 battlefields" in mine.text
    assert "adding up to exactly 10 (e.g. 4,3,3)" in mine.text


def test_with_cheap_talk_a_round_is_talk_then_allocations() -> None:
    state = ColonelBlotto.new({"cheap_talk": True})
    assert state.legal_actions(0) is None and state.config.action_space() is None
    assert state.step({0: "all on field 1", 1: "4,3,3"}) is None
    assert state.observe(1).data["messages"][0] == {"round": 1, "seat": 0, "text": "all on field 1"}
    assert state.legal_actions(0) == all_allocations(10, 3)
    state.step({0: "10,0,0", 1: "4,3,3"})
    assert state.returns() == (-1.0, 1.0)
    talk = ColonelBlotto.new({"cheap_talk": True}).observe(0)
    assert ColonelBlotto.random_free_action(talk, random.Random(1)) in ColonelBlotto.SAMPLE_MESSAGES


def test_public_view_shows_each_rounds_split() -> None:
    state = ColonelBlotto.new({"rounds": 2})
    state.step({0: "5,5,0", 1: "3,3,4"})
    view = state.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert grid["rows"] == [["5,5,0"], ["3,3,4"]]
    assert "seat 0 1, seat 1 -1" in view["text"]
    assert state.full_view() == view


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"troops": 0}, "'troops' must be 1 to 1000, got 0"),
        ({"troops": 1001}, "'troops' must be 1 to 1000"),
        ({"fields": 1}, "'fields' must be 2 to 20, got 1"),
        ({"fields": 21}, "'fields' must be 2 to 20"),
        ({"rounds": 0}, "'rounds' must be at least 1"),
        ({"max_listed": -1}, "'max_listed' must be 0 to 10000, got -1"),
        ({"max_listed": 10_001}, "'max_listed' must be 0 to 10000"),
        ({"troops": "many"}, "'troops' must be an integer"),
        ({"players": 3}, "played by 2 players, not 3"),
    ],
)
def test_bad_configs_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ColonelBlotto.new(values)

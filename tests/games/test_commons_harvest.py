"""Commons harvest: proportional sharing, logistic regrowth, collapse, the round limit."""

from __future__ import annotations

import pytest

from games.api import ConfigError, IllegalAction
from games.commons_harvest import CommonsHarvest, regrow, share_out

SMALL = {"players": 2, "rounds": 3, "stock": 20, "capacity": 40, "growth_rate": 0.5}


def test_spec_is_a_simultaneous_social_dilemma_for_two_to_eight() -> None:
    spec = CommonsHarvest.spec
    assert (spec.name, spec.category) == ("commons-harvest", "social_dilemma")
    assert spec.simultaneous and not spec.zero_sum
    assert (spec.min_players, spec.max_players, spec.default_config.players) == (2, 8, 4)
    assert spec.action_space == tuple(f"harvest {n}" for n in range(11))
    assert (spec.min_return, spec.max_return) == (0.0, 200.0)


def test_requests_the_stock_covers_are_granted_in_full() -> None:
    assert share_out([3, 0, 5], 8) == (3, 0, 5)


def test_an_overdemanded_stock_is_shared_by_largest_remainder() -> None:
    # 16 units, requests 10 and 7: exact shares 9.41 and 6.59; floors 9 and 6; the spare unit goes to 6.59.
    assert share_out([10, 7], 16) == (9, 7)
    # 10 units, three equal requests: 3.33 each; the spare unit goes to the lowest seat.
    assert share_out([5, 5, 5], 10) == (4, 3, 3)
    assert share_out([0, 9], 4) == (0, 4)


def test_regrowth_is_logistic_rounded_down_and_exact() -> None:
    assert regrow(12, 40, 0.5) == 16  # + floor(0.5 * 12 * 28 / 40) = + floor(4.2)
    assert regrow(50, 100, 0.25) == 56  # + floor(6.25): fastest at half capacity
    assert regrow(100, 100, 0.25) == 100 and regrow(0, 100, 0.25) == 0
    assert regrow(20, 45, 0.09) == 21  # + exactly 1, which binary floating point makes 0.9999...


def test_a_match_that_ends_by_collapse() -> None:
    state = CommonsHarvest.new(SMALL)
    # Round 1: stock 20, both requests granted; 12 left regrow to 16.
    assert state.step({0: "harvest 5", 1: "3"}) == [5.0, 3.0]
    assert state.observe(0).data["stock"] == 16 and not state.is_over
    # Round 2: requests 10 and 7 exceed 16: shared 9 and 7, nothing left: collapse.
    assert state.step({0: "10", 1: "7"}) == [9.0, 7.0]
    assert state.is_over and state.round == 2 < state.config.rounds
    assert state.returns() == (14.0, 10.0)
    data = state.observe(1).data
    assert (data["phase"], data["round"], data["stock"], data["stocks"]) == ("over", 2, 0, [20, 16, 0])
    assert data["moves"] == [[5, 3], [10, 7]] and data["harvests"] == [[5, 3], [9, 7]]
    assert "round 2: stock 16; you took 7, seat 0 took 9 (asked 10); nothing left: the stock collapsed" in state.observe(1).text
    assert state.public_view()["text"].startswith("Game over after 2 rounds: the stock collapsed.")
    grid = next(block for block in state.public_view()["render"] if block["type"] == "grid")
    assert grid["rows"] == [["5", "9/10"], ["3", "7"]]


def test_a_match_that_ends_after_the_last_round() -> None:
    state = CommonsHarvest.new({"players": 2, "rounds": 2})
    state.step({0: "10", 1: "10"})  # 80 left, + floor(0.25 * 80 * 20 / 100) = 4
    state.step({0: "10", 1: "0"})  # 74 left, + floor(0.25 * 74 * 26 / 100) = floor(4.81) = 4
    assert state.is_over and state.returns() == (20.0, 10.0)
    assert state.stocks == [100, 84, 78]
    assert state.public_view()["text"].startswith("Game over after 2 rounds. Score")
    assert "78 of 100" in str(state.public_view()["render"][0])


def test_an_overlarge_harvest_is_refused_with_the_range() -> None:
    state = CommonsHarvest.new()
    with pytest.raises(IllegalAction, match="'harvest 11' is not a move; answer harvest <n> with n a whole number from 0 to 10"):
        state.validate(0, "harvest 11")
    assert state.validate(3, " HARVEST 2 ") == "harvest 2"


def test_the_observation_shows_the_stock_and_the_regrowth_rule() -> None:
    text = CommonsHarvest.new({"stock": 60}).observe(2).text
    assert "round 1 of 20. You are seat 2 of 4." in text
    assert "The shared stock holds 60 units (capacity 100)" in text
    assert "floor(0.25 * stock * (1 - stock / 100))" in text


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"stock": 0}, "stock"),
        ({"stock": 101}, "stock"),
        ({"capacity": 0}, "capacity"),
        ({"growth_rate": 0}, "growth_rate"),
        ({"growth_rate": 1.5}, "growth_rate"),
        ({"max_harvest": 0}, "max_harvest"),
        ({"rounds": 0}, "rounds"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        CommonsHarvest.new(values)

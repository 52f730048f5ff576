"""The iterated stag hunt: its payoff table, move spellings, a full match, config checks."""

from __future__ import annotations

import pytest

from games.api import ConfigError, IllegalAction
from games.iterated_stag_hunt import IteratedStagHunt


def test_spec_is_a_simultaneous_two_player_social_dilemma() -> None:
    spec = IteratedStagHunt.spec
    assert (spec.name, spec.category) == ("iterated-stag-hunt", "social_dilemma")
    assert spec.simultaneous and not spec.zero_sum and not spec.chance
    assert (spec.min_players, spec.max_players) == (2, 2)
    assert spec.action_space == ("stag", "hare")
    assert (spec.min_return, spec.max_return) == (0.0, 40.0)


@pytest.mark.parametrize(
    ("move0", "move1", "paid"),
    [("stag", "stag", (4.0, 4.0)), ("stag", "hare", (0.0, 3.0)), ("hare", "stag", (3.0, 0.0)), ("hare", "hare", (3.0, 3.0))],
)
def test_each_round_pays_the_default_table(move0: str, move1: str, paid: tuple[float, float]) -> None:
    assert tuple(IteratedStagHunt.new().step({0: move0, 1: move1})) == paid


def test_a_full_match_of_four_rounds() -> None:
    state = IteratedStagHunt.new({"rounds": 4})
    for move0, move1 in (("stag", "stag"), ("s", "H"), ("hare", "hare"), ("Hare", "stag")):
        state.step({0: move0, 1: move1})
    # 4 + 0 + 3 + 3 for seat 0; 4 + 3 + 3 + 0 for seat 1.
    assert state.is_over and state.returns() == (10.0, 10.0)
    assert state.history[1] == {0: "stag", 1: "hare"}
    assert state.observe(0).data["their_moves"] == ["stag", "hare", "hare", "stag"]
    grid = next(block for block in state.public_view()["render"] if block["type"] == "grid")
    assert grid["rows"] == [["S", "S", "H", "H"], ["S", "H", "H", "S"]] and grid["title"] == "moves (S stag, H hare)"


def test_custom_payoffs_are_paid_and_bound_the_returns() -> None:
    state = IteratedStagHunt.new({"rounds": 2, "stag_stag": 10, "stag_hare": -2, "hare_stag": 5, "hare_hare": 2})
    assert tuple(state.step({0: "stag", 1: "hare"})) == (-2.0, 5.0)
    assert state.config.return_bounds() == (-4.0, 20.0)
    assert state.observe(0).data["payoffs"] == {"stag_stag": 10.0, "stag_hare": -2.0, "hare_stag": 5.0, "hare_hare": 2.0}


def test_the_observation_shows_the_table_from_the_observers_side() -> None:
    state = IteratedStagHunt.new()
    state.step({0: "stag", 1: "hare"})
    text = state.observe(1).text
    assert "you hare, they stag: 3 / 0" in text
    assert "round 1: you hare, they stag (you +3, they +0)" in text
    assert "Answer stag or hare." in text


def test_a_move_from_another_game_is_refused() -> None:
    with pytest.raises(IllegalAction, match="'cooperate' is not a move; answer stag or hare"):
        IteratedStagHunt.new().validate(0, "cooperate")


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"stag_stag": 3}, "stag_stag"),
        ({"hare_hare": 3.5}, "hare_stag"),
        ({"stag_hare": 3}, "hare_hare"),
        ({"rounds": 0}, "rounds"),
        ({"message_chars": 0}, "message_chars"),
        ({"stag_stag": "lots"}, "stag_stag"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        IteratedStagHunt.new(values)


def test_the_rules_give_the_safe_hare_payoff_as_a_default() -> None:
    """The rules are one text whatever the config: 'hare is safe (3 whatever the other does)'
    was false of a match paying hare 3.5 against a stag hunter and 2 against a hare hunter."""
    assert "Hunting hare is safe (by default it pays 3 whatever the other does)" in IteratedStagHunt.spec.rules
    text = IteratedStagHunt.new({"hare_stag": 3.5, "hare_hare": 2.0}).observe(0).text
    assert "you hare, they stag: 3.5 / 0" in text and "you hare, they hare: 2 / 2" in text

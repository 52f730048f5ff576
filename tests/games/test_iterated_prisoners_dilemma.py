"""The iterated prisoner's dilemma: payoffs per round, round count, cheap talk, validation."""

from __future__ import annotations

import json
import random

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.iterated_prisoners_dilemma import MOVES, IteratedPrisonersDilemma

TALK = {"cheap_talk": True}


def test_spec_is_a_simultaneous_two_player_social_dilemma() -> None:
    spec = IteratedPrisonersDilemma.spec
    assert spec.name == "iterated-prisoners-dilemma"
    assert spec.category == "social_dilemma"
    assert spec.simultaneous and not spec.zero_sum
    assert (spec.min_players, spec.max_players) == (2, 2)
    assert spec.action_space == ("cooperate", "defect")
    assert (spec.min_return, spec.max_return) == (0.0, 50.0)


@pytest.mark.parametrize(
    ("move0", "move1", "paid"),
    [
        ("cooperate", "cooperate", (3.0, 3.0)),
        ("cooperate", "defect", (0.0, 5.0)),
        ("defect", "cooperate", (5.0, 0.0)),
        ("defect", "defect", (1.0, 1.0)),
    ],
)
def test_each_round_pays_the_payoff_table_at_the_move_step(move0: str, move1: str, paid: tuple[float, float]) -> None:
    state = IteratedPrisonersDilemma.new()
    assert state.to_move() == (0, 1)
    assert tuple(state.step({0: move0, 1: move1})) == paid
    assert state.returns() == paid


def test_custom_payoffs_are_paid() -> None:
    state = IteratedPrisonersDilemma.new({"temptation": 7, "reward": 4, "punishment": 2, "sucker": -1})
    assert tuple(state.step({0: "cooperate", 1: "defect"})) == (-1.0, 7.0)
    assert state.config.return_bounds() == (-10.0, 70.0)


def test_without_talk_the_game_is_one_move_step_per_round() -> None:
    state = IteratedPrisonersDilemma.new({"rounds": 4})
    for number in range(1, 5):
        assert not state.is_over
        assert state.legal_actions(0) == MOVES and state.legal_actions(1) == MOVES
        assert state.observe(0).data["round"] == number
        assert state.step({0: "cooperate", 1: "cooperate"}) == (3.0, 3.0)
    assert state.is_over and state.to_move() == ()
    assert state.step_count == 4
    assert state.returns() == (12.0, 12.0)
    assert state.observe(0).data["phase"] == "over"
    with pytest.raises(GameOver):
        state.step({0: "cooperate", 1: "cooperate"})


def test_with_cheap_talk_each_round_is_a_talk_step_then_a_move_step() -> None:
    state = IteratedPrisonersDilemma.new({"rounds": 3, **TALK})
    for number in range(1, 4):
        data = state.observe(1).data
        assert (data["round"], data["phase"]) == (number, "talk")
        assert state.legal_actions(0) is None and state.legal_actions(1) is None
        assert "characters" in state.action_format(0)
        assert state.step({0: "hello", 1: "hi"}) is None
        assert state.observe(1).data["phase"] == "move"
        assert state.legal_actions(0) == MOVES
        assert state.step({0: "defect", 1: "cooperate"}) == (5.0, 0.0)
    assert state.is_over
    assert state.step_count == 6
    assert state.returns() == (15.0, 0.0)


def test_cheap_talk_has_no_fixed_action_space() -> None:
    assert IteratedPrisonersDilemma.Config(cheap_talk=True).action_space() is None


def test_messages_reach_both_players_after_the_talk_step() -> None:
    state = IteratedPrisonersDilemma.new(TALK)
    state.step({0: "  I will   cooperate ", 1: ""})
    expected = [{"round": 1, "seat": 0, "text": "I will cooperate"}, {"round": 1, "seat": 1, "text": ""}]
    for seat in (0, 1):
        observation = state.observe(seat)
        assert observation.data["messages"] == expected
        assert '"I will cooperate"' in observation.text
    assert state.history[0] == {0: "I will cooperate", 1: ""}
    chat = [block for block in state.public_view()["render"] if block["type"] == "chat"]
    assert chat == [{"type": "chat", "messages": [{"seat": 0, "text": "(round 1) I will cooperate"}], "title": "talk"}]


def test_moves_accept_short_forms_in_any_case() -> None:
    state = IteratedPrisonersDilemma.new()
    assert state.validate(0, " C ") == "cooperate"
    assert state.validate(0, "D") == "defect"
    assert state.validate(1, "Defect") == "defect"
    state.step({0: "c", 1: "DEFECT"})
    assert state.history[0] == {0: "cooperate", 1: "defect"}


def test_an_unknown_move_is_illegal_with_the_choices_named() -> None:
    state = IteratedPrisonersDilemma.new()
    with pytest.raises(IllegalAction, match="cooperate or defect"):
        state.step({0: "betray", 1: "cooperate"})
    assert state.step_count == 0


def test_a_message_is_not_a_move() -> None:
    state = IteratedPrisonersDilemma.new(TALK)
    state.step({0: "", 1: ""})
    with pytest.raises(IllegalAction):
        state.validate(0, "I will cooperate")


def test_an_overlong_message_is_rejected_with_the_limit() -> None:
    state = IteratedPrisonersDilemma.new({"message_chars": 10, **TALK})
    assert state.validate(0, "x" * 10) == "x" * 10
    with pytest.raises(IllegalAction, match="11 characters; the limit is 10"):
        state.validate(0, "x" * 11)


def test_an_unknown_seat_is_rejected() -> None:
    with pytest.raises(IllegalAction, match="no seat 2"):
        IteratedPrisonersDilemma.new().validate(2, "cooperate")


def test_observation_is_from_the_observers_point_of_view() -> None:
    state = IteratedPrisonersDilemma.new()
    state.step({0: "defect", 1: "cooperate"})
    mine = state.observe(0).data
    theirs = state.observe(1).data
    assert (mine["my_moves"], mine["their_moves"], mine["my_score"], mine["their_score"]) == (["defect"], ["cooperate"], 5.0, 0.0)
    assert (theirs["my_moves"], theirs["their_moves"], theirs["my_score"], theirs["their_score"]) == (
        ["cooperate"],
        ["defect"],
        0.0,
        5.0,
    )
    assert "you defect, they cooperate (you +5, they +0)" in state.observe(0).text
    assert "you cooperate, they defect (you +0, they +5)" in state.observe(1).text
    json.dumps(mine)


def test_observation_text_shows_payoffs_round_and_what_to_do() -> None:
    text = IteratedPrisonersDilemma.new({"rounds": 7}).observe(0).text
    assert "round 1 of 7" in text
    assert "you cooperate, they defect: 0 / 5" in text
    assert "Answer cooperate or defect" in text


def test_random_free_action_is_a_valid_message() -> None:
    state = IteratedPrisonersDilemma.new(TALK)
    rng = random.Random(0)
    for _ in range(20):
        message = IteratedPrisonersDilemma.random_free_action(state.observe(0), rng)
        assert state.validate(0, message) == message


def test_public_view_shows_moves_and_scores() -> None:
    state = IteratedPrisonersDilemma.new()
    state.step({0: "cooperate", 1: "defect"})
    view = state.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert grid["rows"] == [["C"], ["D"]]
    assert "seat 1 5" in view["text"]
    assert state.full_view() == view


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"temptation": 3}, "temptation"),
        ({"reward": 0.5}, "reward"),
        ({"punishment": 0}, "punishment"),
        ({"temptation": 7}, "reward"),
        ({"rounds": 0}, "rounds"),
        ({"message_chars": 0}, "message_chars"),
        ({"cheap_talk": "maybe"}, "cheap_talk"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        IteratedPrisonersDilemma.new(values)

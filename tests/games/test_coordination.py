"""Rules of pure coordination: simultaneous choices, all-or-nothing payoff, rounds, talk, config."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.coordination import Coordination, CoordinationConfig
from games.iterated import IteratedGame

COLOURS = ("red", "blue", "green", "yellow")


def test_everyone_chooses_at_once_from_the_options() -> None:
    game = Coordination.new()
    assert game.to_move() == (0, 1)
    assert game.legal_actions(0) == game.legal_actions(1) == ("heads", "tails")
    assert Coordination.spec.simultaneous and not Coordination.spec.hidden_information
    assert issubclass(Coordination, IteratedGame)


def test_all_matching_pays_everyone_one_and_ends_a_one_round_game() -> None:
    game = Coordination.new()
    assert game.step({0: "heads", 1: "heads"}) == (1.0, 1.0)
    assert game.is_over and game.to_move() == ()
    assert game.returns() == (1.0, 1.0)
    assert game.legal_actions(0) == ()
    with pytest.raises(GameOver):
        game.step({0: "heads", 1: "heads"})


def test_one_player_off_means_nobody_scores() -> None:
    game = Coordination.new({"players": 3})
    assert game.step({0: "tails", 1: "tails", 2: "heads"}) == (0.0, 0.0, 0.0)
    assert game.returns() == (0.0, 0.0, 0.0)
    assert "round 1: you heads, seat 0 tails, seat 1 tails: no match" in game.observe(2).text


def test_a_full_four_player_match_with_hand_checked_returns() -> None:
    game = Coordination.new({"players": 4, "options": COLOURS, "rounds": 3})
    rewards = [
        game.step({0: "red", 1: "blue", 2: "red", 3: "red"}),  # one off: 0
        game.step({0: "red", 1: "red", 2: "red", 3: "red"}),  # all red: +1
        game.step({0: "green", 1: "green", 2: "green", 3: "green"}),  # all green: +1
    ]
    assert rewards == [(0.0,) * 4, (1.0,) * 4, (1.0,) * 4]
    assert game.is_over
    assert game.returns() == (2.0, 2.0, 2.0, 2.0)
    data = game.observe(1).data
    assert data["moves"] == [["red", "blue", "red", "red"], ["red"] * 4, ["green"] * 4]
    assert data["matched"] == [False, True, True]
    assert data["scores"] == [2.0] * 4
    assert "Game over: everyone matched in 2 of 3 round(s)." in game.public_view()["text"]


def test_the_game_lasts_the_configured_rounds() -> None:
    game = Coordination.new({"rounds": 2})
    game.step({0: "heads", 1: "tails"})
    assert not game.is_over
    assert game.observe(0).data["round"] == 2
    game.step({0: "tails", 1: "tails"})
    assert game.is_over and game.returns() == (1.0, 1.0)


def test_with_cheap_talk_each_round_opens_with_messages() -> None:
    game = Coordination.new({"cheap_talk": True, "rounds": 2})
    assert game.legal_actions(0) is None
    assert game.step({0: "heads, always", 1: "ok"}) is None
    assert game.legal_actions(1) == ("heads", "tails")
    assert game.step({0: "heads", 1: "heads"}) == (1.0, 1.0)
    assert game.observe(1).data["messages"] == [
        {"round": 1, "seat": 0, "text": "heads, always"},
        {"round": 1, "seat": 1, "text": "ok"},
    ]
    assert CoordinationConfig(cheap_talk=True).action_space() is None


# ---- actions ----------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "canonical"), [("HEADS", "heads"), ("  Tails ", "tails"), ("h", "heads"), ("ta", "tails")])
def test_choices_are_canonicalised(action: str, canonical: str) -> None:
    game = Coordination.new()
    assert game.validate(0, action) == canonical
    game.step({0: action, 1: "heads"})
    assert game.history == [{0: canonical, 1: "heads"}]


def test_options_of_several_words_match_with_any_spacing() -> None:
    game = Coordination.new({"options": ("new york", "paris")})
    assert game.validate(1, "New   York") == "new york"


@pytest.mark.parametrize("action", ["edge", "", "headss", "1"])
def test_anything_else_is_rejected_listing_the_options(action: str) -> None:
    game = Coordination.new()
    with pytest.raises(IllegalAction, match="not a move; answer heads or tails"):
        game.step({0: action, 1: "heads"})
    assert game.history == []


def test_an_ambiguous_beginning_is_rejected() -> None:
    game = Coordination.new({"options": ("blue", "black")})
    with pytest.raises(IllegalAction, match="answer blue or black"):
        game.validate(0, "bl")
    assert game.validate(0, "blu") == "blue"


def test_every_seat_must_choose() -> None:
    with pytest.raises(IllegalAction, match="expected actions for seats"):
        Coordination.new().step({0: "heads"})


# ---- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"options": ("heads",)}, "'options' must list 2 to 26 options, got 1"),
        ({"options": tuple(f"o{i}" for i in range(27))}, "'options' must list 2 to 26"),
        ({"options": ("red", "red")}, "'options' lists an option twice"),
        ({"options": ("Red", "blue")}, r"'options' must hold lower-case words of printable ASCII.*write 'red'"),
        ({"options": ("red", " blue")}, "'options' must hold lower-case words of printable ASCII"),
        ({"options": ("red", "")}, "'options' must hold lower-case words of printable ASCII"),
        # an escape sequence, a bidi override, a look-alike twin of 'accept' (found by a QA helper)
        ({"options": ("red", "blue \x1b]0;title\x07")}, "'options' must hold lower-case words of printable ASCII"),
        ({"options": ("left\u202e", "right")}, "'options' must hold lower-case words of printable ASCII"),
        ({"options": ("accept", "\u0430ccept")}, "'options' must hold lower-case words of printable ASCII"),
        ({"options": ("red", "b" * 33)}, "'options': an option is 33 characters, the most is 32"),
        ({"rounds": 0}, "'rounds' must be at least 1"),
        ({"option": ("a", "b")}, "unknown config key 'option'"),
        ({"players": 1}, "2 to 8 players"),
        ({"players": 9}, "2 to 8 players"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Coordination.new(config)


def test_options_can_be_given_as_a_comma_separated_string() -> None:
    game = Coordination.new({"options": "red, blue,green", "players": "8"})
    assert game.legal_actions(7) == ("red", "blue", "green")
    assert game.to_move() == tuple(range(8))


def test_bounds_and_action_space_follow_the_config() -> None:
    assert (Coordination.spec.min_return, Coordination.spec.max_return) == (0.0, 1.0)
    assert Coordination.spec.action_space == ("heads", "tails")
    config = CoordinationConfig(options=COLOURS, rounds=5)
    assert config.return_bounds() == (0.0, 5.0)
    assert config.action_space() == COLOURS


# ---- what players see -------------------------------------------------------------------


def test_observation_tells_each_player_the_whole_record() -> None:
    game = Coordination.new({"players": 3, "rounds": 2})
    game.step({0: "heads", 1: "tails", 2: "heads"})
    observation = game.observe(1)
    assert "Pure coordination, round 2 of 2. You are seat 1 of 3." in observation.text
    assert "Options: heads, tails. Everyone scores 1 for a round only if all 3 players choose the same option" in observation.text
    assert "round 1: you tails, seat 0 heads, seat 2 heads: no match" in observation.text
    assert "Now: choice of round 2. Answer heads or tails." in observation.text
    assert observation.data == {
        "seat": 1,
        "round": 2,
        "rounds": 2,
        "phase": "move",
        "message_chars": 200,
        "players": 3,
        "moves": [["heads", "tails", "heads"]],
        "scores": [0.0, 0.0, 0.0],
        "messages": [],
        "options": ["heads", "tails"],
        "matched": [False],
    }
    assert json.loads(json.dumps(observation.data)) == observation.data


def test_the_view_shows_every_choice_by_round() -> None:
    game = Coordination.new({"rounds": 2})
    game.step({0: "heads", 1: "heads"})
    view = game.public_view()
    grid = view["render"][1]
    assert grid["rows"] == [["heads"], ["heads"]]
    assert grid["row_labels"] == ["seat 0", "seat 1"]
    assert ["matched", "1 of 1"] in view["render"][0]["items"]
    assert game.full_view() == game.public_view()


def test_options_of_printable_ascii_stay_valid_for_the_matches_stored_with_them() -> None:
    """Held to letters and digits, 'go left!' was refused, and a match stored with it could no
    longer be replayed (found by a QA helper)."""
    game = Coordination.new({"options": ("go left!", "go right!")})
    assert game.validate(0, "Go  Left!") == "go left!"

"""The beauty contest: targets, exact ties, shared points, rounds, parsing, configs."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.beauty_contest import GUESSES, BeautyContest, BeautyContestConfig, exact_fraction, score_round


def test_spec_is_a_simultaneous_n_player_social_dilemma() -> None:
    spec = BeautyContest.spec
    assert (spec.name, spec.category) == ("beauty-contest", "social_dilemma")
    assert spec.simultaneous and not spec.zero_sum and not spec.chance and not spec.hidden_information
    assert (spec.min_players, spec.max_players) == (2, 8)
    assert spec.default_config.players == 3
    assert spec.action_space == GUESSES == tuple(str(n) for n in range(101))
    assert (spec.min_return, spec.max_return) == (0.0, 1.0)
    assert BeautyContestConfig(rounds=4).return_bounds() == (0.0, 4.0)


def test_full_two_round_match_with_an_exact_tie() -> None:
    state = BeautyContest.new({"rounds": 2})
    assert state.to_move() == (0, 1, 2)
    # Average 100/3, target 200/9 = 22.2: 20 is closest (2.2 away; 30 is 7.8, 50 is 27.8).
    assert tuple(state.step({0: "50", 1: "30", 2: "20"})) == (0.0, 0.0, 1.0)
    # Average 12, target exactly 8: 6 and 10 are both 2 away and share the point; 20 is 12 away.
    # (With 2/3 taken as the float 0.666..., 6 would be a hair closer and win alone.)
    assert tuple(state.step({0: "6", 1: "10", 2: "20"})) == (0.5, 0.5, 0.0)
    assert state.is_over and state.to_move() == ()
    assert state.returns() == (0.5, 0.5, 1.0)
    assert state.legal_actions(0) == ()
    with pytest.raises(GameOver):
        state.step({0: "1", 1: "1", 2: "1"})


def test_everyone_guessing_alike_share_the_point() -> None:
    state = BeautyContest.new({"players": 4})
    assert tuple(state.step({0: "0", 1: "0", 2: "0", 3: "0"})) == (0.25, 0.25, 0.25, 0.25)


def test_a_single_round_game_ends_after_one_step() -> None:
    state = BeautyContest.new({"players": 2})
    # Average 50, target 33.3: 0 is 33.3 away, 100 is 66.7 away.
    assert tuple(state.step({0: "0", 1: "100"})) == (1.0, 0.0)
    assert state.is_over and state.step_count == 1


def test_other_fractions_move_the_target() -> None:
    state = BeautyContest.new({"fraction": 0.5, "players": 4})
    # Sum 120, average 30, target 15: 10 and 20 are both 5 away.
    assert tuple(state.step({0: "10", 1: "20", 2: "30", 3: "60"})) == (0.5, 0.5, 0.0, 0.0)
    state = BeautyContest.new({"fraction": 1.5, "players": 2})
    # Average 50, target 75: 100 is 25 away, 0 is 75 away.
    assert tuple(state.step({0: "0", 1: "100"})) == (0.0, 1.0)


def test_scoring_is_exact() -> None:
    result = score_round([6, 10, 20], exact_fraction(2 / 3))
    assert result.winners == (0, 1) and result.target == 8.0 and result.average == 12.0
    assert exact_fraction(2 / 3) == Fraction(2, 3)
    assert exact_fraction(0.7) == Fraction(7, 10)
    assert exact_fraction(0.123456789) == Fraction(0.123456789)  # no simple fraction rounds to it


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [("33", "33"), (" 33 ", "33"), ("guess 33", "33"), ("Guess: 7", "7"), ("I guess 100", "100"), ("33.0", "33"), ("0", "0")],
)
def test_guesses_are_canonicalised(spelling: str, canonical: str) -> None:
    state = BeautyContest.new()
    assert state.validate(0, spelling) == canonical
    state.step({0: spelling, 1: "1", 2: "2"})
    assert state.history[0][0] == canonical


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("101", "101 is out of range; guesses go from 0 to 100"),
        ("-3", "-3 is out of range"),
        ("33.5", "33.5 is not a whole number"),
        ("thirty", "'thirty' is not a guess; answer with one whole number from 0 to 100"),
        ("", "is not a guess"),
    ],
)
def test_bad_guesses_are_rejected_with_the_reason(action: str, reason: str) -> None:
    state = BeautyContest.new()
    with pytest.raises(IllegalAction, match=reason):
        state.step({0: action, 1: "1", 2: "2"})
    assert state.step_count == 0


def test_an_unknown_seat_is_rejected() -> None:
    with pytest.raises(IllegalAction, match="no seat 3; the seats are 0 to 2"):
        BeautyContest.new().validate(3, "33")


def test_observation_shows_every_round_to_everyone() -> None:
    state = BeautyContest.new({"rounds": 3})
    state.step({0: "50", 1: "30", 2: "20"})
    obs = state.observe(1)
    assert obs.data == {
        "seat": 1,
        "round": 2,
        "rounds": 3,
        "phase": "move",
        "message_chars": 200,
        "players": 3,
        "moves": [[50, 30, 20]],
        "scores": [0.0, 0.0, 1.0],
        "messages": [],
        "fraction": 2 / 3,
        "averages": [pytest.approx(100 / 3)],
        "targets": [pytest.approx(200 / 9)],
        "winners": [[2]],
    }
    json.dumps(obs.data)
    assert "round 2 of 3. You are seat 1 of 3" in obs.text
    assert "Target: 2/3 of the average" in obs.text
    assert "round 1: you 30, seat 0 50, seat 2 20; average 33.33, target 22.22, won by seat 2" in obs.text
    assert "Answer a whole number from 0 to 100" in obs.text


def test_with_cheap_talk_messages_come_before_guesses() -> None:
    state = BeautyContest.new({"cheap_talk": True})
    assert state.legal_actions(0) is None
    assert state.validate(0, "33.5 sounds right") == "33.5 sounds right"
    state.step({0: "let's all say 0", 1: "", 2: "no"})
    assert state.legal_actions(2) == GUESSES
    state.step({0: "0", 1: "0", 2: "40"})
    assert state.returns() == (0.5, 0.5, 0.0)


def test_public_view_lists_the_guesses() -> None:
    state = BeautyContest.new({"rounds": 2})
    state.step({0: "50", 1: "30", 2: "20"})
    view = state.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert grid["rows"] == [["50"], ["30"], ["20"]]
    facts = dict(next(block for block in view["render"] if block["type"] == "facts")["items"])
    assert facts["fraction"] == "2/3" and facts["seat 2"] == "1"
    assert state.full_view() == view


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"fraction": 0}, "'fraction' must be greater than 0 and at most 2, got 0"),
        ({"fraction": 2.5}, "'fraction' must be greater than 0 and at most 2"),
        ({"fraction": float("nan")}, "'fraction' must be a finite number"),
        ({"fraction": "half"}, "'fraction' must be a number"),
        ({"rounds": 0}, "'rounds' must be at least 1"),
        ({"players": 9}, "played by 2 to 8 players, not 9"),
        ({"players": 1}, "played by 2 to 8 players, not 1"),
    ],
)
def test_bad_configs_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BeautyContest.new(values)

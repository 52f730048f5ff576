"""Nim: taking from one heap, the last object wins, forgiving move syntax, reasons for bad moves."""

from __future__ import annotations

import json

import pytest

from games.api import ConfigError, GameOver, IllegalAction, make_config
from games.nim import Nim, NimConfig, nim_sum


def play(*moves: str, heaps: tuple[int, ...] = (3, 4, 5)) -> Nim:
    """A game after the given moves, seat 0 first, alternating."""
    game = Nim.new({"heaps": heaps})
    for i, move in enumerate(moves):
        game.step({i % 2: move})
    return game


def test_spec_is_a_two_player_zero_sum_competitive_game() -> None:
    spec = Nim.spec
    assert (spec.name, spec.category) == ("nim", "competitive")
    assert spec.zero_sum and not spec.simultaneous and not spec.chance and not spec.hidden_information
    assert (spec.min_players, spec.max_players) == (2, 2)
    assert (spec.min_return, spec.max_return) == (-1.0, 1.0)


def test_action_space_is_every_heap_and_count() -> None:
    assert Nim.spec.action_space == (
        *(f"take {n} from 1" for n in (1, 2, 3)),
        *(f"take {n} from 2" for n in (1, 2, 3, 4)),
        *(f"take {n} from 3" for n in (1, 2, 3, 4, 5)),
    )
    assert NimConfig(heaps=(2, 1)).action_space() == ("take 1 from 1", "take 2 from 1", "take 1 from 2")


def test_full_match_seat_0_takes_the_last_object() -> None:
    # (3,4,5) -> (1,4,5) -> (1,0,5) -> (1,0,1) -> (0,0,1) -> (0,0,0): seat 0 moved last.
    game = play("take 2 from 1", "take 4 from 2", "take 4 from 3", "take 1 from 1")
    assert game.heaps == (0, 0, 1)
    assert not game.is_over and game.to_move() == (0,)
    assert game.legal_actions(0) == ("take 1 from 3",)
    game.step({0: "take 1 from 3"})
    assert game.is_over and game.winner == 0
    assert game.returns() == (1.0, -1.0)
    assert game.to_move() == () and game.legal_actions(0) == () and game.legal_actions(1) == ()
    assert "Seat 0 took the last object and wins." in game.observe(1).text


def test_full_match_seat_1_takes_the_last_object() -> None:
    game = play("take 1 from 1", "take 1 from 2", heaps=(1, 1))
    assert game.is_over and game.winner == 1
    assert game.returns() == (-1.0, 1.0)
    assert game.step_count == 2


def test_legal_moves_are_every_count_of_every_non_empty_heap() -> None:
    game = play("take 3 from 1")
    assert game.to_move() == (1,)
    assert game.legal_actions(0) == ()
    assert game.legal_actions(1) == (
        "take 1 from 2",
        "take 2 from 2",
        "take 3 from 2",
        "take 4 from 2",
        "take 1 from 3",
        "take 2 from 3",
        "take 3 from 3",
        "take 4 from 3",
        "take 5 from 3",
    )


@pytest.mark.parametrize(
    "spelling",
    [
        "take 2 from 3",
        "Take 2 from heap 3",
        " take 2 objects from heap 3 ",
        "2 from 3",
        "3 2",
        "heap 3: 2",
        "3,2",
        "heap 3 take 2",
    ],
)
def test_forgiving_spellings_are_canonicalised(spelling: str) -> None:
    game = Nim.new()
    assert game.validate(0, spelling) == "take 2 from 3"
    game.step({0: spelling})
    assert game.history == [{0: "take 2 from 3"}]
    assert game.heaps == (3, 4, 3)


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("take 1 from 4", "there is no heap 4; the heaps are numbered 1 to 3"),
        ("take 1 from 0", "there is no heap 0"),
        ("take 4 from 1", "heap 1 has only 3 objects; you cannot take 4"),
        ("take 0 from 2", "you must take at least 1 object"),
        ("take all", "not a Nim move; answer like 'take 2 from 3'"),
        ("", "not a Nim move"),
        ("take -1 from 2", "not a Nim move"),
    ],
)
def test_bad_moves_are_rejected_with_the_reason(action: str, reason: str) -> None:
    game = Nim.new()
    with pytest.raises(IllegalAction, match=reason):
        game.step({0: action})
    assert game.step_count == 0 and game.heaps == (3, 4, 5)


def test_an_emptied_heap_cannot_be_taken_from() -> None:
    game = play("take 3 from 1")
    with pytest.raises(IllegalAction, match="heap 1 is empty"):
        game.validate(1, "take 1 from 1")


def test_a_single_object_is_named_in_the_singular() -> None:
    game = play(heaps=(1, 2))
    with pytest.raises(IllegalAction, match="heap 1 has only 1 object; you cannot take 2"):
        game.validate(0, "take 2 from 1")


def test_moving_out_of_turn_is_rejected() -> None:
    game = Nim.new()
    with pytest.raises(IllegalAction, match="seat 0's turn, not seat 1's"):
        game.validate(1, "take 1 from 1")


def test_stepping_a_finished_game_raises() -> None:
    game = play("take 1 from 1", heaps=(1,))
    assert game.returns() == (1.0, -1.0)
    with pytest.raises(GameOver):
        game.step({1: "take 1 from 1"})
    with pytest.raises(IllegalAction, match="the game is over"):
        game.validate(1, "take 1 from 1")


def test_observation_shows_heaps_moves_and_how_to_answer() -> None:
    game = play("take 2 from 1")
    obs = game.observe(1)
    assert obs.data == {"seat": 1, "heaps": [1, 4, 5], "moves": [{"seat": 0, "action": "take 2 from 1"}], "to_move": 1}
    json.dumps(obs.data)
    assert "You are seat 1" in obs.text
    assert "heap 1: 1, heap 2: 4, heap 3: 5" in obs.text
    assert "seat 0 take 2 from 1" in obs.text
    assert "It is your turn" in obs.text and "take 2 from 3" in obs.text
    assert "It is seat 1's turn." in game.observe(0).text


def test_public_view_draws_the_heaps() -> None:
    view = play("take 2 from 1").public_view()
    grid = view["render"][0]
    assert grid["rows"][0] == ["o", "", "", "", ""]
    assert grid["rows"][2] == ["o"] * 5
    assert grid["row_labels"] == ["heap 1", "heap 2", "heap 3"]
    assert "Seat 1 to move." in view["text"]


def test_public_view_lists_the_moves_the_heaps_do_not_show() -> None:
    """Taking 1 then 2 from heap 1 leaves the heaps that taking 2 then 1 does; the players'
    observations tell the two apart, so a spectator's view must too."""
    one_then_two = play("take 1 from 1", "take 2 from 1").public_view()
    two_then_one = play("take 2 from 1", "take 1 from 1").public_view()
    assert one_then_two != two_then_one
    assert one_then_two["render"][-1]["text"] == "Moves so far: seat 0 take 1 from 1; seat 1 take 2 from 1.\nSeat 0 to move."


def test_nim_sum_is_the_xor_of_the_heaps() -> None:
    assert nim_sum((3, 4, 5)) == 2
    assert nim_sum((1, 2, 3)) == 0
    assert nim_sum(()) == 0


def test_heaps_can_be_given_as_text() -> None:
    assert make_config(NimConfig, {"heaps": "1, 2,7"}).heaps == (1, 2, 7)
    assert Nim.new({"heaps": [2, 2]}).heaps == (2, 2)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"heaps": ()}, "'heaps' must list 1 to 10 heap sizes"),
        ({"heaps": (1,) * 11}, "'heaps' must list 1 to 10 heap sizes"),
        ({"heaps": (3, 0)}, "'heaps' must hold sizes from 1 to 100, got 0"),
        ({"heaps": (101,)}, "'heaps' must hold sizes from 1 to 100, got 101"),
        ({"heaps": "3,x"}, "'heaps' must be a comma-separated list.*got '3,x'"),
        ({"players": 3}, "played by 2 players, not 3"),
        ({"heap": (3,)}, "unknown config key 'heap'; did you mean 'heaps'"),
    ],
)
def test_bad_configs_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Nim.new(values)

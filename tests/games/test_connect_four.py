"""Connect Four rules: every kind of four, the full board, full columns, sizes, observations."""

from __future__ import annotations

import json

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.connect_four import ConnectFour

DRAWN = "111111222222533333344444455555666667777776"
"""A full 7x6 board with no four: columns 1, 2, 5, 6 read X, O, X... upwards, columns 3,
4, 7 read O, X, O..., so rows alternate in pairs and no line of four can form."""


def play(columns: str, config: dict[str, int] | None = None) -> ConnectFour:
    """A game after the given moves, one character per move (columns 1 to 9)."""
    game = ConnectFour.new(config)
    for column in columns:
        assert not game.is_over, columns
        game.step({game.to_move()[0]: column})
    return game


def test_new_game_x_moves_first_with_every_column_open() -> None:
    game = ConnectFour.new()
    assert game.to_move() == (0,)
    assert tuple(game.legal_actions(0)) == ("1", "2", "3", "4", "5", "6", "7")
    assert tuple(game.legal_actions(1)) == ()
    assert ConnectFour.spec.action_space == ("1", "2", "3", "4", "5", "6", "7")
    assert (ConnectFour.spec.min_return, ConnectFour.spec.max_return) == (-1.0, 1.0)
    assert ConnectFour.spec.zero_sum


def test_discs_fall_to_the_lowest_empty_cell() -> None:
    game = play("443")
    assert game.observe(0).data["board"] == [".......", ".......", ".......", ".......", "...O...", "..XX..."]
    assert game.to_move() == (1,)


def test_vertical_four_wins() -> None:
    game = play("1212121")
    assert game.is_over
    assert game.winner == 0
    assert game.returns() == (1.0, -1.0)
    assert game.to_move() == ()
    assert tuple(game.legal_actions(0)) == ()


def test_horizontal_four_wins() -> None:
    game = play("1122334")
    assert game.is_over
    assert game.returns() == (1.0, -1.0)


def test_second_player_can_win() -> None:
    game = play("71122334")
    assert game.is_over
    assert game.winner == 1
    assert game.returns() == (-1.0, 1.0)


def test_rising_diagonal_four_wins() -> None:
    game = play("1223343446")
    assert not game.is_over
    game.step({0: "4"})
    assert game.is_over
    assert game.returns() == (1.0, -1.0)
    assert game.observe(0).data["board"][2:] == ["...X...", "..XX...", ".XXO...", "XOOO.O."]


def test_falling_diagonal_four_wins() -> None:
    game = play("76655454424")
    assert game.is_over
    assert game.returns() == (1.0, -1.0)
    assert game.observe(0).data["board"][2:] == ["...X...", "...XX..", "...OXX.", ".O.OOOX"]


def test_discs_split_across_the_top_of_one_column_and_the_bottom_of_the_next_are_no_four() -> None:
    # X ends up at heights 4 and 5 of column 1 and heights 0 and 1 of column 2: adjacent
    # bits were the board packed without a spare row per column.
    game = play("11111313242")
    assert not game.is_over
    assert game.observe(0).data["board"] == ["X......", "X......", "O......", "X......", "OXO....", "XXOO..."]


def test_full_board_without_four_is_a_draw() -> None:
    game = play(DRAWN[:-1])
    assert not game.is_over
    assert tuple(game.legal_actions(1)) == ("6",)
    game.step({1: "6"})
    assert game.is_over
    assert game.winner is None
    assert game.returns() == (0.0, 0.0)
    assert "Draw" in game.observe(0).text
    with pytest.raises(GameOver):
        game.step({0: "1"})


def test_a_full_column_is_rejected_and_leaves_the_legal_moves() -> None:
    game = play("111111")
    assert tuple(game.legal_actions(0)) == ("2", "3", "4", "5", "6", "7")
    with pytest.raises(IllegalAction, match="column 1 is full"):
        game.step({0: "1"})
    assert game.step_count == 6
    assert game.to_move() == (0,)


@pytest.mark.parametrize("action", ["0", "8", "x", "", "4.5"])
def test_actions_that_name_no_column_are_rejected_with_the_range(action: str) -> None:
    with pytest.raises(IllegalAction, match="columns are numbered 1 to 7"):
        ConnectFour.new().validate(0, action)


def test_moving_out_of_turn_is_rejected() -> None:
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        ConnectFour.new().validate(1, "4")


@pytest.mark.parametrize("action", [" 4 ", "column 4", "Col 4", "col4", "COLUMN4"])
def test_forgiving_variants_are_canonicalised(action: str) -> None:
    game = ConnectFour.new()
    assert game.validate(0, action) == "4"
    game.step({0: action})
    assert game.history == [{0: "4"}]


def test_board_size_is_configurable() -> None:
    game = ConnectFour.new({"columns": 9, "rows": 4})
    assert tuple(game.legal_actions(0)) == tuple(str(c) for c in range(1, 10))
    assert ConnectFour.Config(columns=9, rows=4).action_space() == tuple(str(c) for c in range(1, 10))
    data = game.observe(0).data
    assert (data["columns"], data["rows"]) == (9, 4)
    assert data["board"] == ["." * 9] * 4
    game = play("9898989", {"columns": 9, "rows": 4})
    assert game.is_over
    assert game.returns() == (1.0, -1.0)
    game = play("1111", {"columns": 9, "rows": 4})
    assert "1" not in game.legal_actions(0)


def test_a_column_beyond_a_small_board_is_rejected() -> None:
    with pytest.raises(IllegalAction, match="numbered 1 to 5"):
        ConnectFour.new({"columns": 5}).validate(0, "6")


@pytest.mark.parametrize(
    ("config", "key"),
    [({"columns": 3}, "columns"), ({"columns": 13}, "columns"), ({"rows": 3}, "rows"), ({"rows": 20}, "rows")],
)
def test_board_sizes_out_of_range_are_rejected_naming_the_key(config: dict[str, int], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        ConnectFour.new(config)


def test_non_integer_sizes_and_unknown_keys_are_rejected() -> None:
    with pytest.raises(ConfigError, match="'columns' must be an integer"):
        ConnectFour.new({"columns": "wide"})
    with pytest.raises(ConfigError, match="'width'"):
        ConnectFour.new({"width": 8})
    with pytest.raises(ConfigError):
        ConnectFour.new({"players": 3})


def test_observation_names_the_seat_mark_and_turn_and_is_json() -> None:
    game = play("4")
    for seat, mark in ((0, "X"), (1, "O")):
        observation = game.observe(seat)
        assert observation.data["mark"] == mark
        assert observation.data["to_move"] == 1
        assert json.loads(json.dumps(observation.data)) == observation.data
        assert f"playing {mark}" in observation.text
        assert "...X..." in observation.text.replace(" ", "")
        assert "O (seat 1) to move" in observation.text


def test_views_show_the_grid_top_row_first() -> None:
    game = play("45")
    view = game.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert ["".join(row) for row in grid["rows"]] == game.observe(0).data["board"]
    assert grid["col_labels"] == ["1", "2", "3", "4", "5", "6", "7"]
    assert game.full_view() == view
    assert json.loads(json.dumps(view)) == view


def test_replay_rebuilds_the_same_position() -> None:
    game = play("4433221")
    again = ConnectFour.deserialize(json.loads(json.dumps(game.serialize())))
    assert again.observe(0) == game.observe(0)
    assert again.returns() == game.returns()

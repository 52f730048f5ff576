"""Rules of tic-tac-toe: every kind of line wins, a full board draws, bad moves say why."""

from __future__ import annotations

import json

import pytest

from games.api import GameOver, IllegalAction
from games.tic_tac_toe import CELLS, TicTacToe


def play(*cells: str) -> TicTacToe:
    """A game after the given moves, X first, alternating."""
    game = TicTacToe.new()
    for i, cell in enumerate(cells):
        game.step({i % 2: cell})
    return game


@pytest.mark.parametrize(
    ("x_moves", "o_moves"),
    [
        (("a1", "b1", "c1"), ("a2", "b2")),  # top row
        (("a2", "b2", "c2"), ("a1", "b3")),  # middle row
        (("a3", "b3", "c3"), ("a1", "b1")),  # bottom row
        (("a1", "a2", "a3"), ("b1", "b2")),  # left column
        (("b1", "b2", "b3"), ("a1", "c1")),  # middle column
        (("c1", "c2", "c3"), ("a1", "b2")),  # right column
        (("a1", "b2", "c3"), ("a2", "b1")),  # main diagonal
        (("c1", "b2", "a3"), ("a1", "b1")),  # anti-diagonal
    ],
)
def test_x_wins_with_any_line(x_moves: tuple[str, ...], o_moves: tuple[str, ...]) -> None:
    moves = [x_moves[0], o_moves[0], x_moves[1], o_moves[1], x_moves[2]]
    game = play(*moves)
    assert game.is_over
    assert game.winner == 0
    assert game.returns() == (1.0, -1.0)
    assert game.to_move() == ()
    assert game.legal_actions(0) == ()


def test_o_wins_with_a_column() -> None:
    game = play("a1", "b1", "c3", "b2", "a2", "b3")
    assert game.is_over
    assert game.winner == 1
    assert game.returns() == (-1.0, 1.0)


def test_full_board_without_a_line_is_a_draw() -> None:
    game = play("a1", "b2", "c3", "b1", "b3", "a3", "c1", "c2", "a2")
    assert game.is_over
    assert game.winner is None
    assert game.returns() == (0.0, 0.0)
    assert "Draw" in game.observe(0).text


def test_game_is_not_over_before_a_line_or_a_full_board() -> None:
    game = play("a1", "b1", "a2")
    assert not game.is_over
    assert game.to_move() == (1,)
    assert game.legal_actions(1) == ("c1", "b2", "c2", "a3", "b3", "c3")
    assert game.legal_actions(0) == ()


def test_taken_cell_is_rejected_with_the_reason() -> None:
    game = play("b2")
    with pytest.raises(IllegalAction, match="b2 is already taken"):
        game.step({1: "b2"})
    assert game.step_count == 1


@pytest.mark.parametrize("bad", ["d1", "a4", "", "b", "centre", "2b"])
def test_unknown_cell_names_are_rejected_with_the_reason(bad: str) -> None:
    with pytest.raises(IllegalAction, match="not a cell"):
        TicTacToe.new().step({0: bad})


def test_cell_names_are_canonicalised() -> None:
    game = TicTacToe.new()
    game.step({0: " B2 "})
    assert game.history == [{0: "b2"}]


def test_wrong_seat_is_rejected() -> None:
    game = TicTacToe.new()
    with pytest.raises(IllegalAction):
        game.step({1: "a1"})
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        game.validate(1, "a1")


def test_stepping_a_finished_game_raises() -> None:
    game = play("a1", "a2", "b1", "b2", "c1")
    with pytest.raises(GameOver):
        game.step({1: "c3"})


def test_observation_shows_board_and_mark_and_is_json() -> None:
    game = play("a1", "b2")
    obs = game.observe(0)
    assert obs.data == {"board": ["X..", ".O.", "..."], "mark": "X", "to_move": 0}
    assert json.loads(json.dumps(obs.data)) == obs.data
    assert "You are seat 0, playing X" in obs.text
    assert "1  X . ." in obs.text


def test_views_show_the_board() -> None:
    game = play("c3")
    view = game.public_view()
    assert view["render"][0]["rows"][2] == [".", ".", "X"]
    assert game.full_view() == view


def test_action_space_is_the_nine_cells() -> None:
    assert TicTacToe.spec.action_space == CELLS
    assert len(set(CELLS)) == 9

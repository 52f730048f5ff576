"""The perfect tic-tac-toe bot: optimal in every reachable position, checked against an
exhaustive search written here independently of the bot's own."""

from __future__ import annotations

from functools import cache

import pytest

from arena.seats import Turn
from bots.reference.random_bot import RandomBot
from bots.reference.tic_tac_toe import PerfectTicTacToe
from games.tic_tac_toe import TicTacToe

WINNING_LINES = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)


def winner(board: str) -> str | None:
    for a, b, c in WINNING_LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@cache
def game_value(board: str, mover: str) -> int:
    """+1, 0 or -1 for ``mover`` with best play from a position no one has won."""
    if "." not in board:
        return 0
    other = "O" if mover == "X" else "X"
    best = -1
    for i, cell in enumerate(board):
        if cell == ".":
            child = board[:i] + mover + board[i + 1 :]
            value = 1 if winner(child) == mover else -game_value(child, other)
            best = max(best, value)
    return best


def mark(board: str, mover: str, cell: str) -> str:
    """The board after ``mover`` marks ``cell`` (like b2)."""
    i = "123".index(cell[1]) * 3 + "abc".index(cell[0])
    return board[:i] + mover + board[i + 1 :]


def cell_value(board: str, mover: str, cell: str) -> int:
    """+1, 0 or -1 for ``mover`` of marking ``cell`` and then playing on perfectly."""
    child = mark(board, mover, cell)
    return 1 if winner(child) == mover else -game_value(child, "O" if mover == "X" else "X")


def turn_for(game: TicTacToe) -> Turn:
    return Turn.of(game, game.to_move()[0])


@cache
def reachable_positions() -> tuple[TicTacToe, ...]:
    """Every position reachable from the empty board where someone must move, once each
    (computed once; the tests only read them)."""
    seen: set[tuple[str, ...]] = set()
    frontier = [TicTacToe.new()]
    found = []
    while frontier:
        game = frontier.pop()
        key = tuple(game.observe(0).data["board"])
        if key in seen:
            continue
        seen.add(key)
        if game.is_over:
            continue
        found.append(game)
        seat = game.to_move()[0]
        for cell in game.legal_actions(seat):
            child = game.clone()
            child.step({seat: cell})
            frontier.append(child)
    return tuple(found)


def play_match(x_bot: object, o_bot: object, seed: int) -> tuple[float, ...]:
    game = TicTacToe.new(None, seed)
    bots = (x_bot, o_bot)
    while not game.is_over:
        turn = turn_for(game)
        game.step({turn.seat: bots[turn.seat].act(turn)})  # type: ignore[attr-defined]
    return game.returns()


def test_enumeration_reaches_every_live_position() -> None:
    assert len(reachable_positions()) == 4520


def test_every_move_it_considers_best_has_the_position_minimax_value() -> None:
    bot = PerfectTicTacToe("tic-tac-toe", seed=0)
    for game in reachable_positions():
        turn = turn_for(game)
        board = "".join(turn.observation.data["board"])
        mover = turn.observation.data["mark"]
        value = game_value(board, mover)
        best = bot.action_probabilities(turn)
        assert best, board
        assert sum(best.values()) == pytest.approx(1.0)
        for cell in best:
            assert cell_value(board, mover, cell) == value, (board, mover, cell)
        assert bot.act(turn) in best


def test_it_takes_an_immediate_win_whenever_there_is_one() -> None:
    bot = PerfectTicTacToe("tic-tac-toe", seed=0)
    checked = 0
    for game in reachable_positions():
        turn = turn_for(game)
        board = "".join(turn.observation.data["board"])
        mover = turn.observation.data["mark"]
        assert turn.legal_actions is not None
        immediate = {cell for cell in turn.legal_actions if winner(mark(board, mover, cell)) == mover}
        if immediate and any(cell_value(board, mover, cell) == 1 for cell in set(turn.legal_actions) - immediate):
            assert set(bot.action_probabilities(turn)) == immediate, board
            checked += 1
    assert checked > 100


def test_it_breaks_ties_at_random_among_equal_moves() -> None:
    first_moves = {PerfectTicTacToe("tic-tac-toe", seed=s).act(turn_for(TicTacToe.new())) for s in range(40)}
    assert len(first_moves) > 1


def test_perfect_against_perfect_always_draws() -> None:
    for seed in range(30):
        x, o = PerfectTicTacToe("tic-tac-toe", seed=2 * seed), PerfectTicTacToe("tic-tac-toe", seed=2 * seed + 1)
        assert play_match(x, o, seed) == (0.0, 0.0)


def test_perfect_never_loses_to_random_in_either_seat() -> None:
    wins = 0
    for seed in range(100):
        as_x = play_match(PerfectTicTacToe("tic-tac-toe", seed=seed), RandomBot("tic-tac-toe", seed=seed + 1000), seed)
        as_o = play_match(RandomBot("tic-tac-toe", seed=seed + 2000), PerfectTicTacToe("tic-tac-toe", seed=seed), seed)
        assert as_x[0] >= 0.0
        assert as_o[1] >= 0.0
        wins += (as_x[0] > 0) + (as_o[1] > 0)
    assert wins > 100

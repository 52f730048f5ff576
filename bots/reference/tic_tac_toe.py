"""A perfect tic-tac-toe player: the ceiling of the game, which every agent can only draw.

Exhaustive minimax over the two 9-bit masks, memoised (a few thousand positions), so
each move costs a table lookup once warm. Among moves of equal value it prefers faster
wins and slower losses, then picks at random, so its games vary without ever erring.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.tic_tac_toe import CELLS, FULL, MARKS, has_line

_INDEX = {name: i for i, name in enumerate(CELLS)}


@cache
def position_value(mover: int, other: int) -> int:
    """The value for the side to move of a position no one has won yet: positive to win
    (larger the sooner), 0 to draw, negative to lose (more negative the sooner)."""
    empty = FULL & ~(mover | other)
    if not empty:
        return 0
    return max(move_value(mover, other, i) for i in range(9) if empty >> i & 1)


def move_value(mover: int, other: int, index: int) -> int:
    """The value for the mover of marking cell ``index``: a win counts one plus the
    cells left empty, so quicker wins score higher."""
    board = mover | 1 << index
    if has_line(board):
        return 1 + (FULL & ~(board | other)).bit_count()
    return -position_value(other, board)


def masks(rows: Sequence[str], mark: str) -> tuple[int, int]:
    """The (mine, theirs) masks of a board written as rows of X, O and '.'."""
    mine = theirs = 0
    for i, symbol in enumerate("".join(rows)):
        if symbol == mark:
            mine |= 1 << i
        elif symbol in MARKS:
            theirs |= 1 << i
    return mine, theirs


@register
class PerfectTicTacToe(Bot):
    name = "perfect"
    showcase = True
    description = "Minimax over every position: never loses, wins as fast as it can, random among equal moves."
    games = ("tic-tac-toe",)

    def best_moves(self, turn: Turn) -> list[str]:
        data = turn.observation.data
        mine, theirs = masks(data["board"], data["mark"])
        legal = turn.legal_actions or ()
        values = [move_value(mine, theirs, _INDEX[cell]) for cell in legal]
        top = max(values)
        return [cell for cell, value in zip(legal, values, strict=True) if value == top]

    def act(self, turn: Turn) -> str:
        return self.rng.choice(self.best_moves(turn))

    def action_probabilities(self, turn: Turn) -> dict[str, float]:
        best = self.best_moves(turn)
        return {cell: 1.0 / len(best) for cell in best}

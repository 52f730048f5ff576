"""Tic-tac-toe: two players take turns marking a 3x3 grid; three in a row wins.

Solved (a draw with best play), so it checks that an agent can follow simple rules,
read a board from text and never miss an immediate win or block. The board is a pair
of 9-bit masks; legal moves come from a table indexed by the empty-cell mask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from games import render
from games.api import Game, GameConfig, GameSpec, IllegalAction, Observation, View


@dataclass(frozen=True)
class TicTacToeConfig(GameConfig):
    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        return CELLS


COLUMNS = "abc"
CELLS: tuple[str, ...] = tuple(f"{c}{r}" for r in "123" for c in COLUMNS)
"""Cell names, column letter then row number, rows counted from the top: index = 3*row + column."""
_INDEX = {name: i for i, name in enumerate(CELLS)}
FULL = (1 << 9) - 1
LINES: tuple[int, ...] = tuple(
    sum(1 << i for i in cells)
    for cells in ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
)
_LINES_THROUGH: tuple[tuple[int, ...], ...] = tuple(tuple(m for m in LINES if m >> i & 1) for i in range(9))
MARKS = ("X", "O")
_MOVERS = ((0,), (1,))

RULES = """\
Tic-tac-toe. Two players take turns; the first player (seat 0) plays X, the second \
(seat 1) plays O. On your turn, mark one empty cell of the 3x3 board. Cells are named \
by column letter (a, b, c from left to right) and row number (1, 2, 3 from top to \
bottom): a1 is the top-left corner, b2 the centre, c3 the bottom-right corner. The first \
player to get three marks in a row, column or diagonal wins (+1, the other -1). If the \
board fills up with no line, the game is a draw (0 each). Answer with a cell name such as b2."""


@cache
def legal_cells(empty: int) -> tuple[str, ...]:
    """The names of the empty cells of a board, from its empty-cell mask."""
    return tuple(CELLS[i] for i in range(9) if empty >> i & 1)


@cache
def board_rows(x_board: int, o_board: int) -> tuple[str, str, str]:
    """The rows, top first, as strings of X, O and '.': rendered once per board (3^9 at most),
    since every turn and every spectator update shows the board."""
    cells = [MARKS[0] if x_board >> i & 1 else MARKS[1] if o_board >> i & 1 else "." for i in range(9)]
    return ("".join(cells[0:3]), "".join(cells[3:6]), "".join(cells[6:9]))


@cache
def render_board(x_board: int, o_board: int) -> str:
    """The board with its column letters and row numbers, as a player reads it."""
    rows = board_rows(x_board, o_board)
    return "\n".join(["   a b c", *(f"{r + 1}  " + " ".join(row) for r, row in enumerate(rows))])


def has_line(board: int) -> bool:
    return any(board & line == line for line in LINES)


class TicTacToe(Game):
    spec = GameSpec(
        name="tic-tac-toe",
        title="Tic-tac-toe",
        category="competitive",
        description="Three in a row on a 3x3 grid.",
        rules=RULES,
        default_config=TicTacToeConfig(),
        zero_sum=True,
    )
    Config = TicTacToeConfig

    boards: list[int]
    player: int
    winner: int | None

    def _setup(self) -> None:
        self.boards = [0, 0]
        self.player = 0
        self.winner = None

    @property
    def empty(self) -> int:
        return FULL & ~(self.boards[0] | self.boards[1])

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return legal_cells(FULL & ~(self.boards[0] | self.boards[1]))

    def validate(self, seat: int, action: str) -> str:
        index = _INDEX.get(action)
        if index is None:
            index = _INDEX.get(action.strip().lower())
            if index is None:
                raise IllegalAction(f"'{action}' is not a cell; cells are a1 to c3 (column letter, then row)")
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if (self.boards[0] | self.boards[1]) >> index & 1:
            raise IllegalAction(f"cell {CELLS[index]} is already taken")
        return CELLS[index]

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        index = _INDEX[actions[player]]
        board = self.boards[player] | 1 << index
        self.boards[player] = board
        for line in _LINES_THROUGH[index]:
            if board & line == line:
                self.winner = player
                self.is_over = True
                return (1.0, -1.0) if player == 0 else (-1.0, 1.0)
        if board | self.boards[1 - player] == FULL:
            self.is_over = True
        else:
            self.player = 1 - player
        return None

    # ---- rendering ---------------------------------------------------------------------

    def _rows(self) -> tuple[str, str, str]:
        return board_rows(*self.boards)

    def board_text(self) -> str:
        return render_board(*self.boards)

    def _status(self) -> str:
        if not self.is_over:
            return f"{MARKS[self.player]} (seat {self.player}) to move."
        if self.winner is None:
            return "Draw."
        return f"{MARKS[self.winner]} (seat {self.winner}) wins."

    def observe(self, seat: int) -> Observation:
        text = f"You are seat {seat}, playing {MARKS[seat]}.\n{self.board_text()}\n{self._status()}"
        data = {"board": list(self._rows()), "mark": MARKS[seat], "to_move": None if self.is_over else self.player}
        return Observation(text=text, data=data)

    def public_view(self) -> View:
        return render.view(
            f"{self.board_text()}\n{self._status()}",
            render.grid(self._rows(), row_labels="123", col_labels=COLUMNS),
            render.text(self._status()),
        )

    def full_view(self) -> View:
        return self.public_view()

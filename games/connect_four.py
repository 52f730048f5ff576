"""Connect Four: two players drop discs into a vertical grid; four in a line wins.

Solved (the first player wins with perfect play on 7x6), yet deep enough that search
depth shows: it tests planning a few moves ahead, spotting threats and reading a grid
from text. Each player's discs are one integer bitboard in the classic layout (column
by column, ``rows + 1`` bits each, the spare top bit keeping lines from wrapping), so a
four is found with a few shifts; legal moves come from a table keyed by the full columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View

MIN_SIZE = 4
MAX_SIZE = 12
MARKS = ("X", "O")
EMPTY = "."
COLUMN_NAMES: tuple[str, ...] = tuple(str(c + 1) for c in range(MAX_SIZE))
"""Column names, "1" for the leftmost; a board of n columns uses the first n."""
_COLUMN_OF = {name: c for c, name in enumerate(COLUMN_NAMES)}
_MOVERS = ((0,), (1,))
_WIN = ((1.0, -1.0), (-1.0, 1.0))


@dataclass(frozen=True)
class ConnectFourConfig(GameConfig):
    columns: int = 7
    rows: int = 6

    def check(self) -> None:
        super().check()
        for key in ("columns", "rows"):
            value = getattr(self, key)
            if not MIN_SIZE <= value <= MAX_SIZE:
                raise ConfigError(f"config key '{key}' must be between {MIN_SIZE} and {MAX_SIZE}, got {value}")

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        return COLUMN_NAMES[: self.columns]


RULES = """\
Connect Four. Two players take turns; the first player (seat 0) plays X, the second \
(seat 1) plays O. The board is a vertical grid (7 columns wide and 6 rows high by \
default; the board text shows this match's). On your turn, drop one disc into a column \
that is not full: it falls to the lowest empty cell of that column. Columns are numbered \
from 1 (left) to the last column (right; 7 by default); answer with the column number, \
such as 4. The first player to get four \
discs in a line (horizontal, vertical or diagonal) wins (+1, the other -1). If the board \
fills up with no line of four, the game is a draw (0 each). In the board text the top \
row comes first, '.' is an empty cell."""


@dataclass(frozen=True)
class Geometry:
    """The bit layout of one board size, for search code: cell (column, height) is bit
    ``column * stride + height`` with height 0 at the bottom and ``stride = rows + 1``;
    the spare top bit of each column stays clear so that shifted lines never wrap."""

    columns: int
    rows: int
    stride: int
    bottom: int
    """One bit at the bottom of every column: ``(occupied + bottom) & cells`` is the
    next free cell of every column that is not full."""
    cells: int
    """Every playable cell."""
    column_masks: tuple[int, ...]
    centre_first: tuple[int, ...]
    """Column indices from the centre outwards, left of centre first on ties."""


@cache
def geometry(columns: int, rows: int) -> Geometry:
    stride = rows + 1
    bottom = sum(1 << (c * stride) for c in range(columns))
    middle = (columns - 1) / 2
    return Geometry(
        columns=columns,
        rows=rows,
        stride=stride,
        bottom=bottom,
        cells=bottom * ((1 << rows) - 1),
        column_masks=tuple(((1 << rows) - 1) << (c * stride) for c in range(columns)),
        centre_first=tuple(sorted(range(columns), key=lambda c: (abs(c - middle), c))),
    )


def has_four_across(board: int, stride: int) -> bool:
    """Whether a bitboard holds four in a line across the columns: horizontal (shift
    ``stride``) or along either diagonal (``stride - 1`` and ``stride + 1``). A vertical
    four can only end at the disc just dropped, which is cheaper to test on its own."""
    m = board & (board >> stride)
    if m & (m >> 2 * stride):
        return True
    m = board & (board >> (stride - 1))
    if m & (m >> 2 * (stride - 1)):
        return True
    m = board & (board >> (stride + 1))
    return bool(m & (m >> 2 * (stride + 1)))


@cache
def legal_columns(columns: int, full: int) -> tuple[str, ...]:
    """The names of the columns that are not full, from the bitmask of full columns."""
    return tuple(COLUMN_NAMES[c] for c in range(columns) if not full >> c & 1)


def parse_column(action: str) -> int | None:
    """The column index an action names, forgiving case, spaces and a 'column' prefix."""
    text = action.strip().lower().removeprefix("column").removeprefix("col").strip()
    return _COLUMN_OF.get(text)


class ConnectFour(Game):
    spec = GameSpec(
        name="connect-four",
        title="Connect Four",
        category="competitive",
        description="Four in a row on a 7x6 vertical grid.",
        rules=RULES,
        default_config=ConnectFourConfig(),
        zero_sum=True,
    )
    Config = ConnectFourConfig

    columns: int
    rows: int
    stride: int
    boards: list[int]
    """Each seat's discs, one bit per cell in the layout of ``Geometry``."""
    heights: list[int]
    """The bit index of the next free cell of each column."""
    player: int
    full: int
    """Bitmask of the full columns (bit c for column c)."""
    legal: tuple[str, ...]
    winner: int | None

    def _setup(self) -> None:
        cfg = self.config
        assert isinstance(cfg, ConnectFourConfig)  # narrows the type; Game.new built it from Config
        self.columns = cfg.columns
        self.rows = cfg.rows
        self.stride = cfg.rows + 1
        self.boards = [0, 0]
        self.heights = [c * self.stride for c in range(cfg.columns)]
        self.player = 0
        self.full = 0
        self.legal = legal_columns(cfg.columns, 0)
        self.winner = None

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return self.legal

    def validate(self, seat: int, action: str) -> str:
        column = _COLUMN_OF.get(action)
        if column is None or column >= self.columns:
            column = parse_column(action)
            if column is None or column >= self.columns:
                raise IllegalAction(f"'{action}' is not a column; columns are numbered 1 to {self.columns}")
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if self.full >> column & 1:
            raise IllegalAction(f"column {column + 1} is full")
        return COLUMN_NAMES[column]

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        column = _COLUMN_OF[actions[player]]
        heights = self.heights
        index = heights[column]
        heights[column] = index + 1
        board = self.boards[player] | 1 << index
        self.boards[player] = board
        height = index - column * self.stride
        if height == self.rows - 1:
            self.full |= 1 << column
            self.legal = legal_columns(self.columns, self.full)
        # A player's first three discs cannot make four; the history excludes this step yet.
        if len(self.history) >= 6 and ((height >= 3 and board >> (index - 3) & 15 == 15) or has_four_across(board, self.stride)):
            self.winner = player
            self.is_over = True
            return _WIN[player]
        if not self.legal:
            self.is_over = True
        else:
            self.player = 1 - player
        return None

    # ---- rendering ---------------------------------------------------------------------

    def _rows(self) -> list[list[str]]:
        """The cells, top row first."""
        stride = self.stride
        x, o = self.boards
        rows = []
        for height in range(self.rows - 1, -1, -1):
            row = []
            for column in range(self.columns):
                bit = 1 << (column * stride + height)
                row.append(MARKS[0] if x & bit else MARKS[1] if o & bit else EMPTY)
            rows.append(row)
        return rows

    def board_text(self) -> str:
        lines = [" ".join(row) for row in self._rows()]
        lines.append(" ".join(COLUMN_NAMES[: self.columns]))
        return "\n".join(lines)

    def _status(self) -> str:
        if not self.is_over:
            return f"{MARKS[self.player]} (seat {self.player}) to move."
        if self.winner is None:
            return "Draw: the board is full."
        return f"{MARKS[self.winner]} (seat {self.winner}) wins with four in a line."

    def observe(self, seat: int) -> Observation:
        text = (
            f"You are seat {seat}, playing {MARKS[seat]}. The board, {self.columns} columns by {self.rows} rows, "
            f"top row first, column numbers below:\n{self.board_text()}\n{self._status()}"
        )
        return Observation(
            text=text,
            data={
                "board": ["".join(row) for row in self._rows()],
                "mark": MARKS[seat],
                "to_move": None if self.is_over else self.player,
                "columns": self.columns,
                "rows": self.rows,
            },
        )

    def public_view(self) -> View:
        return render.view(
            f"{self.board_text()}\n{self._status()}",
            render.grid(self._rows(), col_labels=COLUMN_NAMES[: self.columns]),
            render.text(self._status()),
        )

    def full_view(self) -> View:
        return self.public_view()

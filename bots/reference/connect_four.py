"""An alpha-beta Connect Four player: a strong, cheap opponent that punishes blunders.

Negamax with alpha-beta pruning over two integers (the mover's discs and all discs),
rebuilt from the observation each turn. Moves are tried centre first, wins are taken
and forced blocks searched past the depth limit, and moves that let the opponent win
at once are never tried. At the depth limit it scores open threes (empty cells that
would complete a four), favouring those on rows the side can claim late in the game,
and discs on cells that lie on many lines. Among moves of equal score it picks at random.

On a clock it searches deeper one ply at a time and keeps the deepest search that
finished within a third of the move's time: depth 12, or depth 10 on a 12x12 board, took
longer than the default move clock, and the bot lost on time. Its moves then depend on
the machine's speed, which they never do when the depth asked for fits in the time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.connect_four import MARKS, Geometry, geometry

WIN = 1_000_000
"""The score of a win on the mover's next disc; a win k plies later scores WIN - k."""
MAX_DEPTH = 12
THREAT = 40
"""The score of an open three, the cell that would complete a four."""
GOOD_THREAT = 20
"""Extra for an open three on a row the side tends to get last: odd rows (counted from
the bottom) for the first player, even rows for the second."""
TIME_SHARE = 1 / 3
"""Of the time left for the move, what the search may spend: the rest covers the way back."""
NODES_PER_CLOCK_CHECK = 1024


class OutOfTime(Exception):
    """The search passed its deadline; the last depth that finished stands."""


@dataclass(frozen=True)
class Tables:
    """Per board size: the geometry plus the masks the evaluation sums over."""

    geo: Geometry
    line_weights: tuple[tuple[int, int], ...]
    """(weight, cells) pairs: the cells that lie on ``weight`` possible fours."""
    odd_rows: int
    """Cells on rows 1, 3, 5... counted from the bottom (heights 0, 2, 4...)."""


@cache
def tables(columns: int, rows: int) -> Tables:
    geo = geometry(columns, rows)
    counts: dict[int, int] = {}
    for column in range(columns):
        for height in range(rows):
            lines = 0
            for dc, dh in ((1, 0), (0, 1), (1, 1), (1, -1)):
                for start in range(-3, 1):
                    cells = [(column + dc * (start + k), height + dh * (start + k)) for k in range(4)]
                    lines += all(0 <= c < columns and 0 <= h < rows for c, h in cells)
            counts[lines] = counts.get(lines, 0) | 1 << (column * geo.stride + height)
    odd_rows = sum(1 << (c * geo.stride + h) for c in range(columns) for h in range(0, rows, 2))
    return Tables(geo, tuple(sorted(counts.items())), odd_rows)


def winning_cells(discs: int, occupied: int, geo: Geometry) -> int:
    """The empty cells where one more of ``discs`` would complete a four."""
    cells = (discs << 1) & (discs << 2) & (discs << 3)
    for shift in (geo.stride, geo.stride - 1, geo.stride + 1):
        pair = (discs << shift) & (discs << 2 * shift)
        cells |= pair & (discs << 3 * shift)
        cells |= pair & (discs >> shift)
        pair = (discs >> shift) & (discs >> 2 * shift)
        cells |= pair & (discs >> 3 * shift)
        cells |= pair & (discs << shift)
    return cells & (geo.cells ^ occupied)


def read_board(rows: Sequence[str], mark: str, geo: Geometry) -> tuple[int, int]:
    """The (mine, occupied) bitboards of a board written as rows, top row first."""
    mine = occupied = 0
    for r, row in enumerate(rows):
        height = geo.rows - 1 - r
        for column, symbol in enumerate(row):
            if symbol in MARKS:
                bit = 1 << (column * geo.stride + height)
                occupied |= bit
                if symbol == mark:
                    mine |= bit
    return mine, occupied


class Search:
    """One alpha-beta search from one position; scores are from the mover's side."""

    def __init__(self, t: Tables, first_player_to_move: bool, deadline: float | None = None) -> None:
        self.t = t
        self.geo = t.geo
        self.first_player_to_move = first_player_to_move
        self.deadline = deadline  # time.monotonic() past which OutOfTime is raised; None: no clock
        self.nodes = 0

    def evaluate(self, me: int, opp: int, my_threats: int, opp_threats: int, ply: int) -> int:
        odd = self.t.odd_rows
        mover_is_first = self.first_player_to_move == (ply % 2 == 0)
        my_rows, opp_rows = (odd, ~odd) if mover_is_first else (~odd, odd)
        score = THREAT * (my_threats.bit_count() - opp_threats.bit_count())
        score += GOOD_THREAT * ((my_threats & my_rows).bit_count() - (opp_threats & opp_rows).bit_count())
        for weight, cells in self.t.line_weights:
            score += weight * ((me & cells).bit_count() - (opp & cells).bit_count())
        return score

    def negamax(self, me: int, occupied: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        self.nodes += 1
        if self.deadline is not None and not self.nodes % NODES_PER_CLOCK_CHECK and time.monotonic() > self.deadline:
            raise OutOfTime
        geo = self.geo
        free = (occupied + geo.bottom) & geo.cells
        if not free:
            return 0
        opp = me ^ occupied
        my_threats = winning_cells(me, occupied, geo)
        if my_threats & free:
            return WIN - ply
        opp_threats = winning_cells(opp, occupied, geo)
        forced = opp_threats & free
        if forced & (forced - 1):
            return -(WIN - ply - 1)
        moves = (forced or free) & ~(opp_threats >> 1)
        if not moves:
            return -(WIN - ply - 1)
        if depth <= 0 and not forced:
            return self.evaluate(me, opp, my_threats, opp_threats, ply)
        best = -WIN
        for column in geo.centre_first:
            bit = moves & geo.column_masks[column]
            if not bit:
                continue
            score = -self.negamax(opp, occupied | bit, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best


@register
class AlphaBetaConnectFour(Bot):
    name = "alphabeta"
    showcase = True
    description = (
        "Negamax with alpha-beta pruning to a fixed depth (on a clock, as deep as a third of the move's time allows),"
        " centre first, threat-aware evaluation."
    )
    games = ("connect-four",)

    def __init__(self, game: str, seed: int = 0, depth: int = 6) -> None:
        super().__init__(game, seed)
        if not 1 <= depth <= MAX_DEPTH:
            raise BotSpecError(f"bot 'alphabeta': option 'depth' must be between 1 and {MAX_DEPTH}, got {depth}")
        self.depth = depth

    def move_scores(self, turn: Turn) -> dict[str, int]:
        """The score of every legal move for the mover: exact for the best moves, and for
        the others an upper bound below the best (the search only proves they are worse).
        Searched to ``depth``, or on a clock to the deepest depth that finished in time."""
        if turn.deadline_ms is None:
            return self._scores(turn, self.depth)
        deadline = time.monotonic() + turn.deadline_ms / 1000 * TIME_SHARE
        scores = self._scores(turn, 1)  # a ply finds every immediate win and block: never skipped
        for depth in range(2, self.depth + 1):
            try:
                scores = self._scores(turn, depth, deadline)
            except OutOfTime:
                break
        return scores

    def _scores(self, turn: Turn, depth: int, deadline: float | None = None) -> dict[str, int]:
        data = turn.observation.data
        t = tables(data["columns"], data["rows"])
        geo = t.geo
        me, occupied = read_board(data["board"], data["mark"], geo)
        search = Search(t, first_player_to_move=data["mark"] == MARKS[0], deadline=deadline)
        free = (occupied + geo.bottom) & geo.cells
        my_threats = winning_cells(me, occupied, geo)
        opp_threats = winning_cells(me ^ occupied, occupied, geo)
        forced = opp_threats & free
        scores: dict[str, int] = {}
        best = -WIN - 1
        for name in sorted(turn.legal_actions or (), key=lambda name: geo.centre_first.index(int(name) - 1)):
            bit = free & geo.column_masks[int(name) - 1]
            if bit & my_threats:
                score = WIN
            elif (forced and not bit & forced) or (bit << 1) & opp_threats:
                score = -(WIN - 1)
            else:
                # A window just below the best so far scores ties exactly, so they can be drawn at random.
                score = -search.negamax(me ^ occupied, occupied | bit, depth - 1, -WIN - 1, -(best - 1), 1)
            scores[name] = score
            best = max(best, score)
        return scores

    def best_moves(self, turn: Turn) -> list[str]:
        scores = self.move_scores(turn)
        top = max(scores.values())
        return [name for name, score in scores.items() if score == top]

    def act(self, turn: Turn) -> str:
        return self.rng.choice(self.best_moves(turn))

    def action_probabilities(self, turn: Turn) -> dict[str, float]:
        best = self.best_moves(turn)
        return {name: 1.0 / len(best) for name in best}

"""What the spectator knows, built from the server's /watch messages: pure data, no drawing.

The lobby (live matches and recent results), one watched match (its view, a move log made
from the deltas, the result), a replay (the full views and the turn records) and the
leaderboards. Every parser checks the fields it uses and raises ``Malformed`` with what
was wrong, which the app reports in its status line instead of crashing.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.protocol import visible

NUMBER = (int, float)
_MISSING = object()


class Malformed(ValueError):
    """A server message without the fields or types the protocol promises."""


def scrub(value: Any) -> Any:
    """The message with control characters in its strings made visible (``arena.protocol.visible``)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    return value


def need(msg: Mapping[str, Any], key: str, types: type | tuple[type, ...], default: Any = _MISSING) -> Any:
    """``msg[key]`` checked against ``types`` (a bool is never taken for a number)."""
    kind = msg.get("t", "message")
    if key not in msg or msg[key] is None:
        if default is not _MISSING:
            return default
        raise Malformed(f"'{kind}' without '{key}'")
    value = msg[key]
    wanted = types if isinstance(types, tuple) else (types,)
    if (isinstance(value, bool) and bool not in wanted) or not isinstance(value, wanted):
        raise Malformed(f"'{kind}.{key}' is a {type(value).__name__}")
    return value


def _names(msg: Mapping[str, Any]) -> list[str]:
    players = need(msg, "players", list)
    return [str(name) for name in players]


def _banks(msg: Mapping[str, Any]) -> list[float]:
    """Every seat's time bank from ``clocks``; an older server sends none (no bank shown)."""
    banks = need(msg, "clocks", list, [])
    if not all(isinstance(ms, NUMBER) and not isinstance(ms, bool) for ms in banks):
        raise Malformed(f"'{msg.get('t', 'message')}.clocks' holds something other than numbers")
    return [float(ms) for ms in banks]


def seat_name(players: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(players):
        return players[seat]
    return f"seat {seat}"


def short_id(match: str) -> str:
    return match[:8]


def seconds(ms: float) -> str:
    """10000 -> '10s', 1500 -> '1.5s', 90000 -> '1m30s'."""
    s = ms / 1000
    if s >= 60:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{s:.1f}s".replace(".0s", "s")


# ---- the lobby -------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveEntry:
    match: str
    game: str
    players: list[str]
    step: int
    started: float | None
    clock: dict[str, Any]
    variant: str  # the key of the players' ratings; older servers send none: the game
    spectators: int | None = None  # sent only by servers that count them
    ratings: list[float | None] | None = None  # likewise

    @classmethod
    def parse(cls, item: Any) -> LiveEntry:
        if not isinstance(item, dict):
            raise Malformed("a live match that is not a map")
        item = {"t": "lobby.live", **item}
        ratings = item.get("ratings")
        game = need(item, "game", str)
        return cls(
            match=need(item, "match", str),
            game=game,
            variant=need(item, "variant", str, game),
            players=_names(item),
            step=need(item, "step", int, 0),
            started=need(item, "started", NUMBER, None),
            clock=need(item, "clock", dict, {}),
            spectators=need(item, "spectators", int, None),
            ratings=ratings if isinstance(ratings, list) else None,
        )

    def clock_text(self) -> str:
        return clock_text(self.clock)


def clock_text(clock: Mapping[str, Any]) -> str:
    move = clock.get("move_ms")
    if not isinstance(move, NUMBER):
        return "-"
    text = f"{seconds(move)}/move"
    if isinstance(clock.get("bank_ms"), NUMBER) and clock["bank_ms"] > 0:
        text += f" +{seconds(clock['bank_ms'])} bank"
    return text


@dataclass(frozen=True)
class Result:
    """How a match ended: from a lobby's ``recent``, a ``result``, an ended snapshot or a replay."""

    match: str
    game: str
    players: list[str]
    status: str
    reason: str
    detail: str = ""
    returns: list[float] | None = None
    outcomes: list[str] | None = None
    ranks: list[int] | None = None
    forfeit_seat: int | None = None
    stored: bool = False  # read from the store (/api/matches), not heard live

    @classmethod
    def parse(cls, msg: Mapping[str, Any], *, stored: bool = False) -> Result:
        if not isinstance(msg, dict):
            raise Malformed("a result that is not a map")
        match = next((msg[k] for k in ("match", "match_id", "id") if isinstance(msg.get(k), str)), None)
        if not isinstance(match, str):
            raise Malformed(f"'{msg.get('t', 'result')}' without a match id")
        returns = need(msg, "returns", list, None)
        if returns is not None and not all(isinstance(r, NUMBER) and not isinstance(r, bool) for r in returns):
            raise Malformed(f"'{msg.get('t', 'result')}.returns' holds a non-number")
        return cls(
            match=match,
            game=need(msg, "game", str),
            players=_names(msg),
            status=need(msg, "status", str),
            reason=need(msg, "reason", str, ""),
            detail=need(msg, "detail", str, ""),
            returns=returns,
            outcomes=need(msg, "outcomes", list, None),
            ranks=need(msg, "ranks", list, None),
            forfeit_seat=need(msg, "forfeit_seat", int, None),
            stored=stored,
        )

    def outcome_text(self) -> str:
        """'bob won', 'draw', 'alice forfeited (timeout)', 'void: the server stopped ...'."""
        if self.status == "void":
            return "void" + (f": {self.detail}" if self.detail else "")
        if not self.outcomes:  # withheld (PROTOCOL.md): how it ended is told once its deal is played out
            return "live" if self.status == "live" else "held while its deal is played at another table"
        names, outcomes = self.players, self.outcomes
        winners = [seat_name(names, i) for i, o in enumerate(outcomes) if o == "win"]
        if self.forfeit_seat is not None:
            text = f"{seat_name(names, self.forfeit_seat)} forfeited ({self.reason})"
            return f"{', '.join(winners)} won; {text}" if winners else text
        if winners:
            text = f"{', '.join(winners)} won"
        elif all(o == "draw" for o in outcomes):
            text = "draw"
        elif self.ranks and len(self.ranks) == len(names):
            order = sorted(range(len(names)), key=lambda i: self.ranks[i])  # type: ignore[index]
            text = ", ".join(f"#{self.ranks[i]} {names[i]}" for i in order)
        else:
            text = ", ".join(f"{name} {o}" for name, o in zip(names, outcomes, strict=False))
        if self.reason and self.reason != "complete":
            text += f" ({self.reason}" + (f": {self.detail}" if self.detail else "") + ")"
        return text

    def returns_text(self) -> str:
        if not self.returns:
            return "-"
        return " / ".join(f"{r:+g}" if r else "0" for r in self.returns)


HEARD_KEPT = 500
"""Results heard from the lobbies kept, newest first: a lobby lists the last 20 only, and more
end between two lobbies on a busy server."""


@dataclass
class Lobby:
    live: list[LiveEntry] = field(default_factory=list)
    recent: list[Result] = field(default_factory=list)  # heard from the server's lobbies, newest first
    missed: bool = False  # the last lobby shared no result with those heard before: some ended unheard
    stored: list[Result] = field(default_factory=list)  # older ones read from /api/matches
    stored_games: list[str] = field(default_factory=list)  # every game with a stored match
    stored_more: bool = False  # the store holds older matches than those read
    waiting: list[dict[str, Any]] = field(default_factory=list)
    waiting_count: int = 0  # seeks waiting in all (of the game asked for): the list holds the newest
    live_games: dict[str, int] = field(default_factory=dict)  # every game with live matches, and how many
    received: bool = False
    stale: bool = False  # the connection dropped: the live list is the last one heard

    def apply(self, msg: Mapping[str, Any]) -> None:
        live = [LiveEntry.parse(item) for item in need(msg, "live", list)]
        recent = [Result.parse(item) for item in need(msg, "recent", list)]
        waiting = [w for w in need(msg, "waiting", list, []) if isinstance(w, dict)]
        counts = need(msg, "live_games", dict, None)
        if counts is None:  # a server that lists every live match and says nothing more
            counts = dict(collections.Counter(entry.game for entry in live))
        elif not all(isinstance(game, str) and type(count) is int for game, count in counts.items()):
            raise Malformed("'lobby.live_games' must map game names to counts")
        self.waiting_count = need(msg, "waiting_count", int, len(waiting))
        told = {result.match for result in recent}  # a lobby's entry replaces the one heard (a withheld result shown)
        self.missed = bool(self.recent and recent) and not any(result.match in told for result in self.recent)
        self.recent = (recent + [result for result in self.recent if result.match not in told])[:HEARD_KEPT]
        self.live, self.waiting, self.live_games = live, waiting, counts
        self.received, self.stale = True, False

    def live_count(self, game: str | None) -> int:
        """Live matches on the server, of ``game`` or of every game: more than are listed on a busy one."""
        return sum(self.live_games.values()) if game is None else self.live_games.get(game, 0)

    def results(self) -> list[Result]:
        """Recent results, then stored ones not already listed."""
        seen = {r.match for r in self.recent}
        return self.recent + [r for r in self.stored if r.match not in seen]

    def games(self) -> list[str]:
        return sorted(set(self.live_games) | {r.game for r in self.results()} | set(self.stored_games))

    def find(self, match: str) -> LiveEntry | Result | None:
        for entry in self.live:
            if entry.match == match:
                return entry
        for result in self.results():
            if result.match == match:
                return result
        return None


# ---- one view --------------------------------------------------------------------------

_MOVER = re.compile(r"\b[Ss]eat (\d+)\)?,? to (?:move|act|propose|offer|respond|vote|make|bid|play|answer|call|choose|send)")
_SIMULTANEOUS = re.compile(r"\b(move|talk) step\b")


def movers(view: Mapping[str, Any], players: int) -> tuple[int, ...] | None:
    """Who is to move, as far as the public view says: the server does not send it, so this
    reads the view's text ('X (seat 0) to move', 'Round 2, move step' for everyone) and its
    facts (a 'to move' item). None when the view does not say."""
    text = view.get("text") if isinstance(view, Mapping) else None
    if not isinstance(text, str):
        return None
    found = {int(m.group(1)) for m in _MOVER.finditer(text)}
    for block in blocks(view):
        if block.get("type") == "facts" and isinstance(block.get("items"), list):
            for item in block["items"]:
                if isinstance(item, list) and len(item) == 2 and str(item[0]).lower() in ("to move", "to act", "turn"):
                    found |= {int(n) for n in re.findall(r"seat (\d+)", str(item[1]))}
    seats = tuple(sorted(s for s in found if s < players))
    if seats:
        return seats
    if _SIMULTANEOUS.search(text):
        return tuple(range(players))
    return None


def blocks(view: Any) -> list[dict[str, Any]]:
    render = view.get("render") if isinstance(view, Mapping) else None
    return [b for b in render if isinstance(b, dict)] if isinstance(render, list) else []


def describe_change(before: Mapping[str, Any], after: Mapping[str, Any], players: Sequence[str]) -> str:
    """One line saying what a step changed, read from two views: changed grid cells, new
    grid rows or columns, new chat messages, changed facts and cards. The view's last line
    when nothing else says it."""
    parts: list[str] = []
    old_blocks = blocks(before)
    for i, block in enumerate(blocks(after)):
        old = old_blocks[i] if i < len(old_blocks) and old_blocks[i].get("type") == block.get("type") else {}
        try:
            parts += _CHANGES.get(str(block.get("type")), _no_change)(old, block, players)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            continue  # a malformed block says nothing here; the view itself shows the text
    if not parts:
        text = after.get("text") if isinstance(after, Mapping) else None
        lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
        parts = lines[-1:] or ["(no change shown)"]
    line = "; ".join(parts)
    return line if len(line) <= 160 else line[:159] + "…"


def _no_change(old: Mapping[str, Any], new: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    return []


def _cell_name(r: int, c: int, row_labels: Sequence[Any], col_labels: Sequence[Any]) -> str:
    row = str(row_labels[r]) if r < len(row_labels) else ""
    col = str(col_labels[c]) if c < len(col_labels) else ""
    if row and col and len(row) <= 2 and len(col) <= 2:
        return f"{col}{row}"
    if row and col:
        return f"{row} {col}"
    return f"col {col}" if col else (f"row {row}" if row else f"({r + 1},{c + 1})")


def _grid_change(old: Mapping[str, Any], new: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    """New cells (a row, or a column added at the end) read per row; changed cells by name. A
    row or column is matched by its label where both grids have labels: a grid showing its
    latest rounds moves them along, and matched by place every cell of it read as changed."""
    rows = [list(r) for r in new.get("rows") or []]
    old_rows = [list(r) for r in old.get("rows") or []]
    row_labels = list(new.get("row_labels") or [])
    col_labels = list(new.get("col_labels") or [])
    old_row = _was_at(old.get("row_labels"), row_labels)
    old_column = _was_at(old.get("col_labels"), col_labels)
    out: list[str] = []
    for r, row in enumerate(rows):
        label = str(row_labels[r]) if r < len(row_labels) else f"row {r + 1}"
        at_row = old_row(r)
        if at_row is None or at_row >= len(old_rows):
            out.append(f"{label}: {' '.join(str(c) for c in row)}")
            continue
        before = old_rows[at_row]
        was = [at if (at := old_column(c)) is not None and at < len(before) else None for c in range(len(row))]
        added = [str(cell) for cell, c in zip(row, was, strict=True) if c is None]
        if added:
            out.append(f"{label} {' '.join(added)}")
        out += [
            f"{_cell_name(r, c, row_labels, col_labels)} {cell}"
            for c, (cell, at) in enumerate(zip(row, was, strict=True))
            if at is not None and before[at] != cell
        ]
    return out


def _was_at(old_labels: Sequence[Any] | None, labels: Sequence[Any]) -> Callable[[int], int | None]:
    """Where the new grid's row or column k was in the old grid (None: it was not): by label
    where both label them (uniquely in the old), else by place."""
    old_labels = list(old_labels or [])
    if not labels or not old_labels or len(set(old_labels)) < len(old_labels):
        return lambda k: k
    placed = {label: k for k, label in enumerate(old_labels)}
    return lambda k: placed.get(labels[k]) if k < len(labels) else k


def _chat_change(old: Mapping[str, Any], new: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    """The messages after those the old chat ended with: a chat showing its latest messages
    drops the first ones as new ones come."""
    messages = list(new.get("messages") or [])
    before = list(old.get("messages") or [])
    dropped = next(k for k in range(len(before) + 1) if before[k:] == messages[: len(before) - k])
    return [f'{seat_name(players, m.get("seat"))}: "{m.get("text", "")}"' for m in messages[len(before) - dropped :]]


COUNTERS = ("turn", "round", "step", "tick")  # facts that change every step and say nothing of the move


_ABSENT = object()  # a fact the view before did not have


def _facts_change(old: Mapping[str, Any], new: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    """Facts changed or new: a negotiation's first offer is a fact the step adds ("offer by
    seat 0 (seller): 55"), and the log showed only the message sent with it."""
    before = {str(k): v for k, v in (old.get("items") or [])}
    return [
        f"{k}: {v}" for k, v in (new.get("items") or []) if before.get(str(k), _ABSENT) != v and str(k).lower() not in COUNTERS
    ]


def _cards_change(old: Mapping[str, Any], new: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    before = {g.get("label"): g.get("cards") for g in old.get("groups") or []}
    return [
        f"{g.get('label')}: {' '.join(str(c) for c in g.get('cards') or []) or '-'}"
        for g in new.get("groups") or []
        if g.get("label") in before and before[g.get("label")] != g.get("cards")
    ]


_CHANGES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], Sequence[str]], list[str]]] = {
    "grid": _grid_change,
    "chat": _chat_change,
    "facts": _facts_change,
    "cards": _cards_change,
}


# ---- one match -------------------------------------------------------------------------


@dataclass(frozen=True)
class LogLine:
    step: int
    text: str


@dataclass(frozen=True)
class ClockReading:
    seat: int
    running: bool
    ms_left: float | None  # None when the clock is unknown


@dataclass
class MatchState:
    """A watched match: a live one (snapshot, deltas, result) or an ended one (its snapshot).

    Clocks are estimates, and say so: the server sends each match's per-move budget
    (``clock.move_ms``) and every seat's bank as the step began (``clocks``), not the time
    left, so the seat to move counts its budget plus its bank down from the moment its step
    began as seen here (the match start for step 0, else the arrival of the delta that
    began the step).
    """

    match: str
    game: str = ""
    players: list[str] = field(default_factory=list)
    status: str = "loading"  # loading, live, finished, void, gone (the server does not know it), unknown (disconnected)
    clock: dict[str, Any] = field(default_factory=dict)
    banks: list[float] = field(default_factory=list)  # every seat's bank (ms) as the step began; none from older servers
    step: int = 0
    view: dict[str, Any] = field(default_factory=dict)
    log: list[LogLine] = field(default_factory=list)
    result: Result | None = None
    step_began: float | None = None  # on the monotonic clock
    config: dict[str, Any] = field(default_factory=dict)
    withheld: bool = False  # the server shows no view: the match's deal is played at another table too

    def apply_snapshot(self, msg: Mapping[str, Any], now: float, wall_now: float) -> None:
        self.game = need(msg, "game", str)
        self.players = _names(msg)
        self.status = need(msg, "status", str)
        view = need(msg, "view", dict, {})
        self.config = need(msg, "config", dict, {})
        if self.status == "live":
            step = need(msg, "step", int, 0)
            if step != self.step or not self.view:
                self.step_began = now
                started = need(msg, "started", NUMBER, None)
                if step == 0 and started is not None:
                    self.step_began = now - max(0.0, wall_now - started)
            if not self.view and step > 0:  # the earlier moves were never sent to this app
                self.log.append(LogLine(step, f"(joined at step {step})"))
            elif self.view and step > self.step:
                self.log.append(
                    LogLine(step, f"(steps {self.step + 1}-{step} while away) " + describe_change(self.view, view, self.players))
                )
            self.step, self.view = step, view
            self.withheld = need(msg, "withheld", bool, False)
            self.clock = need(msg, "clock", dict, {})
            self.banks = _banks(msg)
            self.result = None
        else:
            if view:  # a void match has no final view: keep the last board seen
                self.view = view
            self.result = Result.parse(msg)
            self.step_began = None

    def apply_delta(self, msg: Mapping[str, Any], now: float) -> None:
        step = need(msg, "step", int)
        view = need(msg, "view", dict)
        banks = _banks(msg)
        if step <= self.step:
            return  # heard already: the snapshot or an earlier delta had it
        prefix = f"(steps {self.step + 1}-{step - 1} missed) " if step > self.step + 1 else ""
        self.withheld = need(msg, "withheld", bool, False)
        change = "(the view is withheld)" if self.withheld else describe_change(self.view, view, self.players)
        self.log.append(LogLine(step, prefix + change))
        self.step, self.view, self.step_began, self.banks = step, view, now, banks

    def lose_track(self) -> None:
        """The connection dropped while the match was live: whatever happens now is not heard,
        so its clocks stop and it is shown as unknown until the server answers again."""
        if self.status == "live" and not self.over:
            self.status = "unknown"
            self.step_began = None

    def apply_result(self, msg: Mapping[str, Any]) -> None:
        self.result = Result.parse(msg)
        self.status = self.result.status
        view = need(msg, "view", dict, None)
        if view:  # the full view: hidden information shows only now
            self.view = view
        self.step_began = None

    @property
    def over(self) -> bool:
        return self.result is not None

    def movers(self) -> tuple[int, ...] | None:
        if self.over or self.status != "live":
            return None
        return movers(self.view, len(self.players))

    def clocks(self, now: float) -> list[ClockReading]:
        move_ms = self.clock.get("move_ms")
        to_move = self.movers() or ()
        out = []
        for seat in range(len(self.players)):
            running = seat in to_move
            if not isinstance(move_ms, NUMBER) or self.over:
                left = None
            else:
                budget = move_ms + (self.banks[seat] if seat < len(self.banks) else 0)
                spent = (now - self.step_began) * 1000 if running and self.step_began is not None else 0
                left = float(budget - spent)
            out.append(ClockReading(seat, running, left))
        return out


# ---- a replay --------------------------------------------------------------------------


@dataclass
class ReplayState:
    """A finished match's full views, before the first step and after each step."""

    match: str
    result: Result
    views: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    index: int = 0

    @classmethod
    def parse(cls, msg: Mapping[str, Any]) -> ReplayState:
        views = need(msg, "views", list)
        if not views or not all(isinstance(v, dict) for v in views):
            raise Malformed("'replay.views' must be a non-empty list of views")
        turns = [t for t in need(msg, "turns", list, []) if isinstance(t, dict)]
        return cls(match=need(msg, "match", str), result=Result.parse(msg), views=views, turns=turns)

    @property
    def players(self) -> list[str]:
        return self.result.players

    @property
    def view(self) -> dict[str, Any]:
        return self.views[self.index]

    @property
    def last(self) -> int:
        return len(self.views) - 1

    def go(self, index: int) -> None:
        self.index = max(0, min(self.last, index))

    def log(self) -> list[LogLine]:
        """Per step, the actions taken (from the turn records), else what the view changed."""
        actions: dict[int, list[str]] = {}
        for turn in self.turns:
            if turn.get("accepted") and isinstance(turn.get("step"), int):
                actions.setdefault(turn["step"], []).append(f"{seat_name(self.players, turn.get('seat'))}: {turn.get('action')}")
        lines = [LogLine(0, "(the start)")]
        for step in range(1, len(self.views)):
            text = "; ".join(actions.get(step - 1, [])) or describe_change(self.views[step - 1], self.views[step], self.players)
            lines.append(LogLine(step, text))
        return lines


# ---- leaderboards ----------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    fmt: Callable[[Any], str] = str
    numeric: bool = False


def _num(digits: int) -> Callable[[Any], str]:
    return lambda v: "-" if v is None else f"{v:.{digits}f}"


VARIANT_COLUMNS = (
    Column("rank", "rank", numeric=True),
    Column("bot", "bot"),
    Column("mu", "μ", _num(2), True),
    Column("sigma", "σ", _num(2), True),
    Column("conservative", "μ-3σ", _num(2), True),
    Column("games", "games", numeric=True),
    Column("wins", "W", numeric=True),
    Column("draws", "D", numeric=True),
    Column("losses", "L", numeric=True),
    Column("mean_return", "mean", _num(2), True),  # all a cooperative or ranked game has: no one wins or loses
    Column("nash", "Nash", _num(2), True),
    Column("nash_low", "Nash 95% low", _num(2), True),
    Column("nash_high", "high", _num(2), True),
    Column("mass", "mass", _num(2), True),
)
OVERALL_BOT_COLUMNS = (
    Column("bot", "bot"),
    Column("skill", "skill", _num(3), True),
    Column("mass", "mass", _num(3), True),
    Column("games", "games", numeric=True),
)
OVERALL_GAME_COLUMNS = (
    Column("variant", "game", str),
    Column("difficulty", "difficulty", _num(3), True),
    Column("mass", "mass", _num(3), True),
    Column("informative", "informative", lambda v: "yes" if v else "no"),
)


@dataclass(frozen=True)
class Board:
    """One ``leaderboard`` message: a game's variants, or (game None) the overall tables."""

    game: str | None
    variants: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    bots: list[dict[str, Any]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def parse(cls, msg: Mapping[str, Any]) -> Board:
        game = need(msg, "game", str, None)
        if game is not None:
            variants = need(msg, "variants", dict)
            for name, rows in variants.items():
                if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                    raise Malformed(f"'leaderboard.variants.{name}' must be a list of rows")
            return cls(game, variants=variants)
        bots = need(msg, "bots", list, [])
        games = need(msg, "games", list, [])
        if not all(isinstance(r, dict) for r in bots + games):
            raise Malformed("'leaderboard' rows must be maps")
        return cls(None, bots=bots, games=games)

    def variant_rows(self) -> list[dict[str, Any]]:
        """Every variant's rows; a bot not rated yet shows no TrueSkill: its numbers are the
        prior's, a tie at 25.00 between all such bots as far as anyone could tell."""
        return [
            {"variant": variant, **row, **({} if row.get("rated", True) else UNRATED)}
            for variant, rows in sorted(self.variants.items())
            for row in rows
        ]


UNRATED = dict.fromkeys(("mu", "sigma", "conservative"))


def sort_rows(rows: Sequence[Mapping[str, Any]], key: str | None, reverse: bool) -> list[Mapping[str, Any]]:
    """Rows by ``key``, missing values last either way; the server's order when key is None."""
    if key is None:
        return list(rows)
    present = [r for r in rows if r.get(key) is not None]
    missing = [r for r in rows if r.get(key) is None]

    def order(row: Mapping[str, Any]) -> tuple[int, Any]:
        value = row[key]
        return (0, value) if isinstance(value, NUMBER) else (1, str(value))

    return sorted(present, key=order, reverse=reverse) + missing

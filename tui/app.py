"""``arena watch``: the Textual spectator app.

Screens: the lobby (live matches, recent results), a match (its view drawn from the render
blocks, the players with their clocks, the move log, the result), a replay (the full view
before the first step and after each step, forward and back), the leaderboards (per game
and overall, sortable by column) and a help screen. A status line on every screen says
whether the server is there; when it goes away the app says so and reconnects with
backoff. A message the app cannot read is reported there, never raised.

The app is driven by ``receive(msg)``: the feed calls it for every server message, and
tests call it with fixed messages to draw deterministic screens (``url=None``: no feed).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Static

from arena import protocol as p
from tui.feed import Feed, Status, fetch_matches, fetch_stored_games
from tui.render import DARK, LIGHT, Palette
from tui.state import (
    OVERALL_BOT_COLUMNS,
    OVERALL_GAME_COLUMNS,
    VARIANT_COLUMNS,
    Board,
    Column,
    Lobby,
    LogLine,
    Malformed,
    MatchState,
    ReplayState,
    Result,
    clock_text,
    scrub,
    short_id,
    sort_rows,
)
from tui.widgets import MatchTable, MoveLog, SortTable, StatusLine, ViewPane, players_panel

SERVER_MESSAGES = ("lobby", "snapshot", "delta", "result", "replay", "leaderboard", "pong", "error")
RATINGS_EVERY_S = 10.0  # at most one leaderboard request per game this often, for the lobby's ratings
LOBBY_DRAWN_EVERY_S = 1.0
"""The lobby is drawn at most this often. A busy server sends four lobbies a second, each with
new results: drawn on each, the spectator took 30% of a core and wrote 47 KB/s to the terminal."""
PROBLEM_SHOWN_S = 10.0
"""How long a problem stays on the status line of every screen (unless another replaces it): a
one-off warning ("the match is still on") was still shown long after, on screens it never concerned."""


class WatchApp(App[None]):
    """The spectator. ``url``: the server's base URL (None: no connection, for tests);
    ``match``: open this match's replay first (its live view if it is still playing)."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "arena watch"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("l", "leaderboard", "Leaderboard"),
        Binding("d", "toggle_dark", "Dark/light"),
    ]

    def __init__(
        self,
        url: str | None = None,
        *,
        match: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        tick_s: float = 0.25,
        fetch_stored: bool = True,
        page: int = 50,
        title: str | None = None,
    ) -> None:
        super().__init__()
        self.url = url.rstrip("/") if url else None
        self.first_match = match
        self.clock = clock
        self.wall = wall
        self.tick_s = tick_s
        self.fetch_stored = fetch_stored
        self.page = page
        self.stored_game: str | None = None  # whose matches lobby.stored lists (None: every game's)
        self.stored_asking: object | None = None  # the store's answer still to come, if any
        if title:
            self.title = title
        self.sub_title = self.url or "offline"
        self.lobby = Lobby()
        self.matches: dict[str, MatchState] = {}
        self.replays: dict[str, ReplayState] = {}
        self.failed: dict[str, str] = {}  # match id -> why the server would not show it
        self.boards: dict[str | None, Board] = {}
        self.ratings: dict[tuple[str, str], float] = {}  # (bot, variant) -> TrueSkill mu
        self.rating_asked: dict[str, float] = {}
        self.rating_stale: set[str] = set()  # games with results since their ratings were asked
        self.rating_waiting = False  # the lobby's last ratings request is not answered yet
        self.results_seen: set[str] = set()
        self.pending: list[tuple[str, str]] = []  # (request, match) in the order sent: errors name no match
        self.connection = Status("offline" if url is None else "connecting", self.url or "")
        self.problem: str | None = None
        self.problems = 0  # problems said so far: a timer clears the one it was set for, not a later one
        self.feed: Feed | None = None
        self.received = 0
        self.lobby_redraw = False  # a redraw for the lobby messages that arrived since the last is due
        self.lobby_drawn_at = -LOBBY_DRAWN_EVERY_S  # time.monotonic() of the last
        self.lobby_game: str | None = None  # the game whose lobby the server is asked for; None: every game

    # ---- lifecycle ---------------------------------------------------------------------

    @property
    def palette(self) -> Palette:
        return DARK if self.current_theme.dark else LIGHT

    def on_mount(self) -> None:
        self.push_screen(LobbyScreen())
        if self.first_match:
            self.push_screen(ReplayScreen(self.first_match, fallback_to_live=True))
        if self.url is not None:
            self.feed = Feed(self.url, self.receive, self.connection_changed, self.report)
            self.run_worker(self.feed.run(), name="feed", group="feed", exit_on_error=False)
            self.set_interval(RATINGS_EVERY_S / 3, self._refresh_ratings)

    def send(self, kind: str, **fields: Any) -> bool:
        sent = self.feed is not None and self.feed.send(kind, **fields)
        if sent and kind in ("watch", "replay"):
            self.pending.append((kind, fields["match"]))
        return sent

    def connection_changed(self, status: Status) -> None:
        self.connection = status
        if status.state == "disconnected":
            self.lobby.stale = True
            for state in self.matches.values():
                state.lose_track()
            self.refresh_screens()
        if status.state == "connected":
            self.problem = None
            self.pending.clear()
            self.rating_waiting = False
            self._ask_again()
        self.refresh_status()

    def _ask_again(self) -> None:
        """After (re)connecting: watch again what is open; the lobby comes by itself (of the
        game followed, once asked again)."""
        for screen in self.screen_stack:
            if isinstance(screen, ReplayScreen) and screen.match not in self.replays:
                screen.ask()
            elif isinstance(screen, MatchScreen):
                state = self.matches.get(screen.match)
                if state is not None and not state.over:
                    self.send("watch", match=screen.match)
            elif isinstance(screen, LeaderboardScreen):
                screen.ask()
        if self.fetch_stored and self.url is not None:
            # the work, not a coroutine made for it: one replaced before it starts is never awaited, and Python
            # warned so on the standard error the screen is drawn on (found by a QA helper)
            self.run_worker(self._fetch_stored_games, group="stored-games", exclusive=True, exit_on_error=False)
        self.ask_stored(self.stored_game)
        if self.lobby_game is not None:  # a new connection's lobbies are of every game until asked
            self.send("lobby", game=self.lobby_game)

    def follow_game(self, game: str | None) -> None:
        """Have the server's lobbies list ``game``'s live matches (None: every game's)."""
        if game != self.lobby_game:
            self.lobby_game = game
            self.send("lobby", game=game)

    def ask_stored(self, game: str | None) -> None:
        """Read the store's newest page of ``game``'s matches (None: every game's). Of the game
        listed already it is added to the pages read, which stay: replaced, the list lost its
        older pages at every reconnect, and on a busy server its newest page was mostly of
        matches heard live, so the list grew shorter (found by a QA helper)."""
        self._read_stored(game, None)

    def ask_older(self) -> None:
        """Read the page of stored matches before the oldest listed (once ``stored_asking`` is None:
        before that, the list may be another game's)."""
        self._read_stored(self.stored_game, self.lobby.stored[-1].match if self.lobby.stored else None)

    def _read_stored(self, game: str | None, before: str | None) -> None:
        if self.fetch_stored and self.url is not None:
            asking = self.stored_asking = object()
            work = functools.partial(self._fetch_stored, game, before, asking)  # not a coroutine: see _ask_again
            self.run_worker(work, group="stored", exclusive=True, exit_on_error=False)

    async def _fetch_stored(self, game: str | None, before: str | None, asking: object) -> None:
        assert self.url is not None
        try:
            records = await asyncio.to_thread(fetch_matches, self.url, game=game, limit=self.page, before=before)
        except (OSError, ValueError) as error:
            self.report(f"could not list the stored matches: {error}")
            return
        finally:
            if self.stored_asking is asking:  # not a request replaced by a newer one, still to come
                self.stored_asking = None
        page = []
        for record in records:
            if record.get("status") in ("finished", "void"):
                try:
                    page.append(Result.parse(record, stored=True))
                except Malformed:
                    continue
        more = len(records) >= self.page
        listed = self.lobby.stored if game == self.stored_game else []
        if before is not None:  # an older page: after those listed
            known = {result.match for result in listed}
            self.lobby.stored = listed + [result for result in page if result.match not in known]
        else:  # the newest page: before those listed, which keep the older pages already read
            known = {result.match for result in page}
            self.lobby.stored = page + [result for result in listed if result.match not in known]
            more = more or (bool(listed) and self.lobby.stored_more)
        self.stored_game = game
        self.lobby.stored_more = more
        self.refresh_screens("stored")

    async def _fetch_stored_games(self) -> None:
        assert self.url is not None
        try:
            self.lobby.stored_games = await asyncio.to_thread(fetch_stored_games, self.url)
        except (OSError, ValueError) as error:
            self.report(f"could not list the stored games: {error}")
            return
        self.refresh_screens("stored")

    # ---- messages ----------------------------------------------------------------------

    def receive(self, msg: dict[str, Any]) -> None:
        """Apply one server message; anything unreadable goes to the status line."""
        self.received += 1
        kind = msg.get("t")
        if kind not in SERVER_MESSAGES:
            self.report(f"unknown message type {scrub(str(kind))!r} from the server (ignored)")
            return
        try:
            getattr(self, f"_on_{kind}")(scrub(msg))
        except Malformed as error:
            self.report(f"malformed message: {error}")
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            self.report(f"malformed '{kind}' message ({type(error).__name__}: {error})")
        try:
            self.refresh_screens(kind)
        except Exception as error:  # a drawing bug must not take the connection down with it
            self.report(f"could not draw after a '{kind}' message ({type(error).__name__}: {error})")

    def _on_lobby(self, msg: dict[str, Any]) -> None:
        self.lobby.apply(msg)
        if self.lobby.missed:  # the store has those that ended between two lobbies
            self.ask_stored(self.stored_game)
        for result in self.lobby.recent:
            if result.match not in self.results_seen:
                self.results_seen.add(result.match)
                self.rating_stale.add(result.game)
        self._refresh_ratings()

    def _refresh_ratings(self) -> None:
        """The lobby shows each player's TrueSkill mu, read from the game's leaderboard (the
        lobby itself does not carry ratings): a game's board is asked when the game is first
        seen, and again at most every RATINGS_EVERY_S while its results come. One request at
        a time, and none while a watch or a replay waits: a board of a busy server can take
        seconds to compute, and a server of an earlier release answers a spectator's messages
        in order, where a match opened behind a few boards showed "loading…" for ten seconds
        (found by a QA helper). This server answers boards apart; one at a time spares it."""
        if self.rating_waiting or self.pending:
            return
        now = self.clock()
        new = [game for game in self.lobby.games() if game not in self.rating_asked]
        due = [game for game in sorted(self.rating_stale) if now - self.rating_asked.get(game, -1e9) >= RATINGS_EVERY_S]
        for game in new + due:
            if self.send("leaderboard", game=game):
                self.rating_asked[game] = now
                self.rating_stale.discard(game)
                self.rating_waiting = True
            return

    def _answered(self, kind: str, match: str) -> None:
        """Settle the request this answers. One asked by an id prefix (``--match 86c162b0``,
        which the server resolves) goes by the whole id from now on."""
        asked = [m for k, m in self.pending if k == kind and match.startswith(m)]
        if not asked:
            return
        prefix = match if match in asked else asked[0]
        self.pending.remove((kind, prefix))
        if prefix == match:
            return
        if prefix in self.matches:
            self.matches[match] = self.matches.pop(prefix)
            self.matches[match].match = match
        for screen in self.screen_stack:
            if isinstance(screen, _MatchLike) and screen.match == prefix:
                screen.match = match

    def _on_snapshot(self, msg: dict[str, Any]) -> None:
        match = msg["match"]
        self._answered("watch", match)
        state = self.matches.get(match)
        if state is not None:
            state.apply_snapshot(msg, self.clock(), self.wall())

    def _on_delta(self, msg: dict[str, Any]) -> None:
        state = self.matches.get(msg["match"])
        if state is not None:
            state.apply_delta(msg, self.clock())

    def _on_result(self, msg: dict[str, Any]) -> None:
        match = msg.get("match", msg.get("match_id"))  # older servers name it match_id here
        state = self.matches.get(match) if isinstance(match, str) else None
        if state is not None:
            state.apply_result(msg)

    def _on_replay(self, msg: dict[str, Any]) -> None:
        replay = ReplayState.parse(msg)
        self._answered("replay", replay.match)
        self.replays[replay.match] = replay

    def _on_leaderboard(self, msg: dict[str, Any]) -> None:
        self.rating_waiting = False  # this one or a screen's: either way the server is free for the next
        board = Board.parse(msg)
        self.boards[board.game] = board
        for variant, rows in board.variants.items():
            for row in rows:
                if isinstance(row.get("bot"), str) and isinstance(row.get("mu"), (int, float)):
                    self.ratings[(row["bot"], variant)] = float(row["mu"])
        self._refresh_ratings()  # the next game's, if one is due

    def _on_pong(self, msg: dict[str, Any]) -> None:
        pass

    def _on_error(self, msg: dict[str, Any]) -> None:
        code, text, ref = msg.get("code"), msg.get("message"), msg.get("ref")
        self.report(f"server error {code}: {text}")
        if ref == "leaderboard":
            self.rating_waiting = False
        later = msg.get("retry_after")
        if code == p.COMPUTING and isinstance(later, (int, float)) and isinstance(self.screen, LeaderboardScreen):
            self.set_timer(min(float(later), 60.0), self.screen.ask)  # a big store's board: asked for again
        for kind, match in list(self.pending):
            if kind == ref:
                self.pending.remove((kind, match))
                self.failed[match] = f"{code}: {text}"
                if kind == "watch" and match in self.matches:
                    self.matches[match].status = "gone"
                break

    # ---- drawing -----------------------------------------------------------------------

    def report(self, problem: str) -> None:
        self.problem = problem
        self.problems += 1
        self.refresh_status()
        self.set_timer(PROBLEM_SHOWN_S, functools.partial(self._forget_problem, self.problems))

    def _forget_problem(self, serial: int) -> None:
        """Clear the problem said ``serial``-th, if no other has been said since."""
        if self.problems == serial:
            self.problem = None
            self.refresh_status()

    def status_text(self) -> Text:
        c, pal = self.connection, self.palette
        if c.state == "connected":
            return Text.assemble(("● ", f"bold {pal.seat(2)}"), f"connected to {c.detail}")
        if c.state == "offline":
            return Text.assemble(("○ ", pal.muted), "offline")
        if c.state == "connecting":
            again = f" (attempt {c.attempt + 1})" if c.attempt else ""
            return Text.assemble(("◌ ", pal.warn), f"connecting to {self.url}{again}")
        if c.state == "failed":
            return Text.assemble(("✖ ", f"bold {pal.seat(1)}"), c.detail)
        wait = f"; reconnecting in {c.retry_in:.1f}s (attempt {c.attempt})" if c.retry_in is not None else ""
        return Text.assemble(("✖ ", f"bold {pal.seat(1)}"), ("disconnected: ", "bold"), f"{c.detail}{wait}")

    def refresh_status(self) -> None:
        text = self.status_text()
        for screen in self.screen_stack:
            for line in screen.query(StatusLine):
                line.show(text, self.problem, self.palette)

    def refresh_screens(self, kind: str | None = None) -> None:
        """Redraw the screen on top if ``kind`` (a message type; None: anything) concerns it.
        Lobbies come up to four a second, and a slow terminal may read several at once: those
        that arrive together, or within LOBBY_DRAWN_EVERY_S of the last drawing, are drawn once,
        after the last, or drawing each of them left keys waiting for seconds."""
        screen = self.screen
        if not (isinstance(screen, Refreshable) and (kind is None or kind in screen.KINDS)):
            return
        if kind != "lobby":
            screen.refresh_data()
        elif not self.lobby_redraw:
            self.lobby_redraw = True
            wait = self.lobby_drawn_at + LOBBY_DRAWN_EVERY_S - time.monotonic()
            if wait > 0:
                self.set_timer(wait, functools.partial(self._redraw_after_lobby, screen))
            else:
                self.call_later(self._redraw_after_lobby, screen)

    def _redraw_after_lobby(self, screen: Refreshable) -> None:
        self.lobby_redraw = False
        self.lobby_drawn_at = time.monotonic()
        try:
            if screen is self.screen:  # another one on top draws the lobby when it comes back
                screen.refresh_data()
        except Exception as error:  # as in receive(): a drawing bug must not take the app down
            self.report(f"could not draw after a 'lobby' message ({type(error).__name__}: {error})")

    # ---- actions -----------------------------------------------------------------------

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_leaderboard(self) -> None:
        """The board of the game on screen (a match, a replay), else the overall one."""
        screen = self.screen
        if isinstance(screen, LeaderboardScreen):
            return
        game = None
        if isinstance(screen, MatchScreen) and screen.match in self.matches:
            game = self.matches[screen.match].game or None
        elif isinstance(screen, ReplayScreen) and screen.match in self.replays:
            game = self.replays[screen.match].result.game
        self.push_screen(LeaderboardScreen(game))

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"
        self.refresh_status()
        for screen in self.screen_stack:
            if isinstance(screen, Refreshable):
                screen.refresh_data()

    def open_match(self, match: str) -> None:
        self.matches.setdefault(match, MatchState(match))
        self.failed.pop(match, None)
        self.send("watch", match=match)
        self.push_screen(MatchScreen(match))

    def close_match(self, match: str) -> None:
        state = self.matches.pop(match, None)
        if state is not None and not state.over:
            self.send("unwatch", match=match)

    def open_replay(self, match: str) -> None:
        self.push_screen(ReplayScreen(match))


class Refreshable(Screen[None]):
    """A screen drawn from the app's state: ``refresh_data()`` redraws it, on the messages
    of the types in KINDS ("stored": the store's results arrived)."""

    KINDS: ClassVar[frozenset[str]] = frozenset()

    @property
    def watch_app(self) -> WatchApp:
        app = self.app
        assert isinstance(app, WatchApp)
        return app

    _ready = False

    def on_mount(self) -> None:  # Textual calls this after the subclasses' own on_mount
        self._ready = True
        self.refresh_data()
        self.watch_app.refresh_status()

    def on_screen_resume(self) -> None:
        self.refresh_data()
        self.watch_app.refresh_status()

    def refresh_data(self) -> None:
        if self._ready:
            self.draw()

    def draw(self) -> None:  # pragma: no cover - every screen has its own
        pass


# ---- the lobby ---------------------------------------------------------------------------


class LobbyScreen(Refreshable):
    KINDS = frozenset({"lobby", "leaderboard", "stored"})
    BINDINGS: ClassVar = [
        Binding("g", "next_game", "Game filter"),
        Binding("G", "all_games", "All games", show=False),
        Binding("m", "more", "More results"),
        Binding("r", "replay", "Replay"),
        Binding("tab", "app.focus_next", "Next table", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.game: str | None = None
        self.results_drawn: tuple[int, Palette, list[str]] | None = None  # what the results table shows

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="lobby-body"):  # on a short terminal it scrolls, and the status line stays in view
            yield Static(id="live-title", classes="section")
            yield MatchTable(id="live")
            yield Static(id="recent-title", classes="section")
            yield MatchTable(id="recent")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        live = self.query_one("#live", MatchTable)
        live.add_columns("match", "game", "players (TrueSkill μ)", "step", "clock")
        recent = self.query_one("#recent", MatchTable)
        recent.add_columns("match", "game", "players", "returns", "result")

    def draw(self) -> None:
        app = self.watch_app
        lobby, pal = app.lobby, app.palette
        live = sorted((e for e in lobby.live if self.game in (None, e.game)), key=lambda e: (e.game, e.started or 0.0))
        results = [r for r in lobby.results() if self.game in (None, r.game)]
        table = self.query_one("#live", MatchTable)
        spectators = any(e.spectators is not None for e in lobby.live)
        if spectators and "spectators" not in [str(c.label) for c in table.columns.values()]:
            table.add_column("spectators", key="spectators")
        rows = []
        for e in live:
            players = Text()
            for seat, name in enumerate(e.players):
                if seat:
                    players.append(" vs ", style=pal.muted)
                players.append(name, style=f"bold {pal.seat(seat)}")
                mu = e.ratings[seat] if e.ratings and seat < len(e.ratings) else app.ratings.get((name, e.variant))
                if isinstance(mu, (int, float)):
                    players.append(f" {mu:.1f}", style=pal.muted)
            step = f"{e.step}?" if lobby.stale else str(e.step)
            cells: list[Any] = [short_id(e.match), e.game, players, step, clock_text(e.clock)]
            if spectators:
                cells.append("-" if e.spectators is None else str(e.spectators))
            rows.append((e.match, cells))
        table.fill(rows, squeeze=(2,))
        recent = self.query_one("#recent", MatchTable)
        drawn = (recent.size.width, pal, [r.match for r in results])
        if drawn != self.results_drawn:  # a match's result never changes: only a new one or a new width redraws
            self.results_drawn = drawn
            self._fill_results(recent, results, pal)
        if self.focused is table and table.row_count == 0 and recent.row_count:
            recent.focus()  # nothing live to open: the results are what can be opened or replayed
        which = f"game: {self.game}" if self.game else "all games"
        waiting = f" · {lobby.waiting_count} seek(s) waiting" if lobby.waiting_count else ""
        total = lobby.live_count(self.game)
        shown = f"{len(live)} newest of {total}" if total > len(live) and not lobby.stale else str(len(live))
        loading = "" if lobby.received or app.url is None else " · waiting for the server"
        if lobby.stale and lobby.received:  # never heard (a wrong address): still waiting, not out of date
            loading = " · as last heard before the disconnect: they may have ended"
        self.query_one("#live-title", Static).update(
            Text.assemble(("Live matches", "bold"), f"  {shown} · {which}{waiting}{loading}", style="")
        )
        self.query_one("#recent-title", Static).update(
            Text.assemble(("Recent results", "bold"), f"  {self._results_note(results)}")
        )

    def _fill_results(self, recent: MatchTable, results: list[Result], pal: Palette) -> None:
        """Rebuilt only when the list changes: a busy server sends a lobby on every move, and
        building a thousand stored results for each left no time for keys."""
        recent.fill(
            [
                (
                    r.match,
                    [
                        short_id(r.match),
                        r.game,
                        Text(" vs ".join(r.players)),
                        r.returns_text(),
                        Text(r.outcome_text(), style=pal.muted if r.status == "void" else ""),
                    ],
                )
                for r in results
            ],
            squeeze=(4, 2, 3, 1),  # the result first, the returns of many seats and a long game name last
            newest_first=True,
        )

    def _results_note(self, results: list[Result]) -> str:
        """How many are listed, and whether the store holds older ones (``m`` reads them)."""
        app = self.watch_app
        if not app.lobby.stored_more:
            return str(len(results))
        return f"{len(results)} · older ones stored: m for more"

    def on_resize(self) -> None:
        self.refresh_data()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        match = str(event.row_key.value)
        self.watch_app.open_match(match)  # live: the public view; ended: the full final view and result

    def action_next_game(self) -> None:
        games = self.watch_app.lobby.games()
        if not games:
            self.game = None
        elif self.game not in games:
            self.game = games[0]
        else:
            i = games.index(self.game)
            self.game = games[i + 1] if i + 1 < len(games) else None
        self._filter_changed()

    def action_all_games(self) -> None:
        self.game = None
        self._filter_changed()

    def _filter_changed(self) -> None:
        """The server is asked for that game's lobby, as its newest live matches may not be among
        those of every game it lists; and one game's newest page is read from the store, as the
        newest page of all games may hold none of it. The same filter again (``G`` while every
        game is shown) keeps the pages already read: it went back to the first one (found by a
        QA helper)."""
        app = self.watch_app
        app.follow_game(self.game)
        app.ask_stored(self.game)
        self.refresh_data()

    def action_more(self) -> None:
        app = self.watch_app
        if app.stored_asking is not None:  # another game's page, say, still to come: its first page must be read first
            app.report("the stored matches are still being read: press m again once they are listed")
        elif not app.lobby.stored_more:
            app.report("every stored match is listed")
        else:
            app.ask_older()

    def action_replay(self) -> None:
        """The row under the cursor of the focused table, not some row of the other one."""
        focused = self.focused
        table = focused if isinstance(focused, MatchTable) else self.query_one("#recent", MatchTable)
        match = table.selected_key()
        if match is None:
            self.watch_app.report("no finished match to replay: pick one in Recent results")
            return
        if table.id == "live":
            self.watch_app.report(f"match {short_id(match)} is still on: Enter watches it; a replay comes after its end")
            return
        result = self.watch_app.lobby.find(match)
        if isinstance(result, Result) and result.status != "finished":
            self.watch_app.report(f"match {short_id(match)} was void: nothing to replay")
            return
        self.watch_app.open_replay(match)


# ---- a match -----------------------------------------------------------------------------

CLOCK_NOTE = "clocks: the move budget plus the bank, counted here from the last step seen"
NARROW_BELOW = 80  # columns: a match screen narrower than this stacks its panes


class _MatchLike(Refreshable):
    """The layout shared by a live match and a replay: the view beside the players and moves,
    or above them on a narrow terminal, where the side pane's 30 columns left the board six."""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (NARROW_BELOW, "-wide")]

    def __init__(self, match: str) -> None:
        super().__init__()
        self.match = match
        self.raw = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="match-title", classes="section")
        with Horizontal(id="match-body"):
            yield ViewPane(id="view-pane")
            with Vertical(id="side"):
                yield Static(id="players")
                yield Static("Moves", classes="section")
                yield MoveLog(id="log-pane")
        yield Static(id="result")
        yield StatusLine(id="status")
        yield Footer()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_raw(self) -> None:
        self.raw = not self.raw
        self.refresh_data()

    def _title(self, game: str, what: str) -> Text:
        return Text.assemble((game or "…", "bold"), f"  {short_id(self.match)} · {what}")

    def _result(self, result: Result | None, waiting: str = "") -> None:
        widget = self.query_one("#result", Static)
        pal = self.watch_app.palette
        if result is None:
            widget.update(Text(waiting, style=pal.muted))
            widget.set_class(False, "ended")
            return
        line = Text.assemble(("Result: ", "bold"), (result.outcome_text(), f"bold {pal.accent}"))
        if result.returns:
            line.append(f"   returns {result.returns_text()}", style="")
        if result.reason:
            line.append(f"   reason: {result.reason}", style=pal.muted)
        if result.detail and result.detail not in result.outcome_text():
            line.append(f" ({result.detail})", style=pal.muted)
        widget.update(line)
        widget.set_class(True, "ended")


class MatchScreen(_MatchLike):
    """A live match (public view, deltas) or an ended one (its full final view)."""

    KINDS = frozenset({"snapshot", "delta", "result", "error"})
    BINDINGS: ClassVar = [
        Binding("escape,backspace", "back", "Lobby"),
        Binding("r", "replay", "Replay"),
        Binding("t", "raw", "Text view"),
    ]

    def on_mount(self) -> None:
        self.set_interval(self.watch_app.tick_s, self.tick)

    def tick(self) -> None:
        state = self.watch_app.matches.get(self.match)
        if state is not None and state.status == "live" and not state.over:
            self._players(state)

    def on_unmount(self) -> None:
        self.watch_app.close_match(self.match)

    def _players(self, state: MatchState) -> None:
        app = self.watch_app
        # narrow, the players and the moves share a third of the screen: the note (two rows there) left no move in view
        live = state.status == "live" and not state.over
        note = CLOCK_NOTE if live and not self.has_class("-narrow") else ""
        clocks = state.clocks(app.clock()) if live else None
        panel = players_panel(state.players, clocks, app.palette, result=state.result, clock_note=note)
        self.query_one("#players", Static).update(panel)

    def draw(self) -> None:
        app = self.watch_app
        state = app.matches.get(self.match)
        if state is None:
            return
        pal = app.palette
        ended_as = state.result.status if state.result else state.status
        void = ended_as == "void"
        if state.status == "loading":
            what = "loading…"
        elif state.status == "gone":
            what = f"not available ({app.failed.get(self.match, 'unknown match')})"
        elif state.status == "unknown":
            what = f"state unknown · disconnected at step {state.step}; clocks stopped until the server is back"
        elif state.over and void:
            what = "void: stopped before its end (no replay)"
        elif state.over:
            what = f"{ended_as} · full view"
        else:
            to_move = state.movers()
            if to_move is None:
                mover = "to move: not said by the view"
            else:
                mover = "to move: " + ", ".join(state.players[s] for s in to_move if s < len(state.players))
            what = f"live · step {state.step} · {mover} · {clock_text(state.clock)}"
            if state.withheld:
                what = f"live · step {state.step} · view withheld: its deal is played at another table too"
        self.query_one("#match-title", Static).update(self._title(state.game, what))
        no_view = "(void: no view)" if state.over and void else "(no view yet)"
        self.query_one("#view-pane", ViewPane).show(state.view, state.players, pal, raw=self.raw, empty=no_view)
        self._players(state)
        log: list[LogLine] = state.log
        empty = "(no moves yet)"
        if state.over:  # the app heard of it only as it ended, or watched a match void before its first move
            empty = "(void: its moves are not shown)" if void else "(ended before this app watched: r replays every move)"
        self.query_one("#log-pane", MoveLog).show(log, pal, empty=empty)
        waiting = "" if state.status != "live" else "the result appears here when the match ends"
        self._result(state.result, waiting)

    def action_replay(self) -> None:
        state = self.watch_app.matches.get(self.match)
        if state is not None and state.status == "gone":
            why = self.watch_app.failed.get(self.match, "unknown_match")
            self.watch_app.report(f"no replay: the server does not know match {self.match!r} ({why})")
            return
        if state is None or not state.over:
            self.watch_app.report("the match is still on: a replay comes after its end")
            return
        if state.status != "finished":
            self.watch_app.report("a void match has no replay")
            return
        self.watch_app.open_replay(self.match)


class ReplayScreen(_MatchLike):
    """A finished match, step by step through its full views."""

    KINDS = frozenset({"replay", "error"})
    BINDINGS: ClassVar = [
        Binding("escape,backspace", "back", "Back"),
        Binding("left", "step(-1)", "Step back", priority=True),  # before the view's own scrolling keys
        Binding("right", "step(1)", "Step forward", priority=True),
        Binding("comma", "step(-1)", "Step back", show=False),
        Binding("full_stop,space", "step(1)", "Step forward", show=False),
        Binding("home", "go(0)", "Start", priority=True, show=False),
        Binding("end", "go(-1)", "End", priority=True, show=False),
        Binding("t", "raw", "Text view"),
    ]

    def __init__(self, match: str, *, fallback_to_live: bool = False) -> None:
        super().__init__(match)
        self.fallback_to_live = fallback_to_live

    def on_mount(self) -> None:
        if self.match not in self.watch_app.replays:
            self.ask()

    def ask(self) -> None:
        self.watch_app.failed.pop(self.match, None)
        self.watch_app.send("replay", match=self.match)

    def draw(self) -> None:
        app = self.watch_app
        replay = app.replays.get(self.match)
        pal = app.palette
        if replay is None:
            failed = app.failed.get(self.match)
            if failed and self.fallback_to_live:
                self.fallback_to_live = False
                app.pop_screen()
                app.open_match(self.match)
                return
            what = f"replay not available ({failed})" if failed else "replay · loading…"
            self.query_one("#match-title", Static).update(self._title("", what))
            return
        result = replay.result
        what = f"replay · step {replay.index} of {replay.last}"
        self.query_one("#match-title", Static).update(self._title(result.game, what))
        self.query_one("#view-pane", ViewPane).show(replay.view, replay.players, pal, raw=self.raw)
        panel = players_panel(replay.players, None, pal, result=result if replay.index == replay.last else None)
        self.query_one("#players", Static).update(panel)
        self.query_one("#log-pane", MoveLog).show(replay.log(), pal, current=replay.index, follow=False)
        self._result(result if replay.index == replay.last else None, "the result shows at the last step (End)")

    def action_step(self, delta: int) -> None:
        replay = self.watch_app.replays.get(self.match)
        if replay is not None:
            replay.go(replay.index + delta)
            self.refresh_data()

    def action_go(self, index: int) -> None:
        replay = self.watch_app.replays.get(self.match)
        if replay is not None:
            replay.go(replay.last if index < 0 else index)
            self.refresh_data()


# ---- the leaderboards --------------------------------------------------------------------


class LeaderboardScreen(Refreshable):
    """One game's board (every variant) or the overall agents-versus-games tables."""

    KINDS = frozenset({"leaderboard"})
    BINDINGS: ClassVar = [
        Binding("escape,backspace", "back", "Back"),
        Binding("g", "next_game", "Next game"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, game: str | None = None) -> None:
        super().__init__()
        self.game = game
        self.sorting: dict[str, tuple[str | None, bool]] = {}  # table id -> (column key, descending)
        self._generation = 0  # fresh row keys on every rebuild

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="board-title", classes="section")
        with VerticalScroll(id="boards"):
            yield SortTable(id="board-main")
            yield Static("Games", id="games-title", classes="section")
            yield SortTable(id="board-games")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.ask()
        self.query_one("#board-main", SortTable).focus()

    def ask(self) -> None:
        if self.game is None:
            self.watch_app.send("leaderboard")
        else:
            self.watch_app.send("leaderboard", game=self.game)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_reload(self) -> None:
        self.ask()

    def action_next_game(self) -> None:
        app = self.watch_app
        games = sorted(set(app.lobby.games()) | {g for g in app.boards if g is not None})
        choices: list[str | None] = [None, *games]
        i = choices.index(self.game) if self.game in choices else 0
        self.game = choices[(i + 1) % len(choices)]
        self.sorting.clear()
        self.ask()
        self.refresh_data()

    def _columns(self) -> dict[str, tuple[Column, ...]]:
        board = self.watch_app.boards.get(self.game)
        if self.game is not None:
            columns = VARIANT_COLUMNS
            if board is not None and len(board.variants) > 1:
                columns = (Column("variant", "variant"), *columns)
            return {"board-main": columns}
        return {"board-main": OVERALL_BOT_COLUMNS, "board-games": OVERALL_GAME_COLUMNS}

    def _rows(self, table_id: str) -> list[dict[str, Any]]:
        board = self.watch_app.boards.get(self.game)
        if board is None:
            return []
        if self.game is not None:
            return board.variant_rows()
        return board.bots if table_id == "board-main" else board.games

    def draw(self) -> None:
        board = self.watch_app.boards.get(self.game)
        title = f"Leaderboard · {self.game}" if self.game else "Leaderboard · overall (agents versus games, Nash averaging)"
        state = "" if board is not None else " · loading…"
        empty = board is not None and not self._rows("board-main")
        if empty:
            state = " · no finished matches yet"
        self.query_one("#board-title", Static).update(
            Text.assemble((title, "bold"), state, ("   g: next game · ←/→ + Enter: sort by column", ""))
        )
        columns = self._columns()
        for table_id in ("board-main", "board-games"):
            table = self.query_one(f"#{table_id}", SortTable)
            shown = table_id in columns
            table.display = shown
            if table_id == "board-games":
                self.query_one("#games-title", Static).display = shown
            if shown:
                self._fill(table, columns[table_id], self._rows(table_id))

    def _fill(self, table: SortTable, columns: tuple[Column, ...], rows: list[dict[str, Any]]) -> None:
        """Rebuild a table with fixed column widths (numbers right-aligned), sorted as chosen."""
        key, descending = self.sorting.get(str(table.id), (None, False))
        labels = [c.label + ((" ▼" if descending else " ▲") if c.key == key else "") for c in columns]
        shown = [
            [c.fmt(row[c.key]) if row.get(c.key) is not None else "-" for c in columns]
            for row in sort_rows(rows, key, descending)
        ]
        widths = [max([cell_len(label)] + [cell_len(r[i]) for r in shown]) for i, label in enumerate(labels)]
        cursor = table.cursor_column
        table.clear(columns=True)
        for column, label, width in zip(columns, labels, widths, strict=True):
            table.add_column(Text(label), key=column.key, width=width)
        self._generation += 1
        for i, cells in enumerate(shown):
            aligned = (cell.rjust(w) if c.numeric else cell for cell, c, w in zip(cells, columns, widths, strict=True))
            table.add_row(*(Text(cell) for cell in aligned), key=f"{self._generation}.{i}")
        if columns:
            table.move_cursor(column=min(cursor, len(columns) - 1), animate=False)

    def _sort(self, table: DataTable[Any], key: str) -> None:
        table_id = str(table.id)
        columns = {c.key: c for cs in self._columns().values() for c in cs}
        current, descending = self.sorting.get(table_id, (None, False))
        if current == key:
            self.sorting[table_id] = (key, not descending)
        else:
            column = columns.get(key)
            first_descending = bool(column and column.numeric and key != "rank")
            self.sorting[table_id] = (key, first_descending)
        self.refresh_data()

    def on_data_table_column_selected(self, event: DataTable.ColumnSelected) -> None:
        self._sort(event.data_table, str(event.column_key.value))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self._sort(event.data_table, str(event.column_key.value))


# ---- help --------------------------------------------------------------------------------

HELP = [
    ("Everywhere", [("?", "this help"), ("l", "leaderboards"), ("d", "dark / light colours"), ("q, Ctrl-C", "quit")]),
    (
        "Lobby",
        [
            ("↑ ↓, Tab", "move in a table, switch tables"),
            ("Enter", "open the match (live: its public view; ended: the full view)"),
            ("r", "replay the finished match under the cursor"),
            ("g / G", "show one game at a time / all games"),
            ("m", "more results: the next older page from the store"),
        ],
    ),
    (
        "Match",
        [
            ("Esc, Backspace", "back to the lobby"),
            ("↑ ↓, PgUp PgDn", "scroll the view (click it first) or the moves"),
            ("t", "the view as plain text"),
            ("r", "replay (once the match has ended)"),
        ],
    ),
    (
        "Replay",
        [
            ("← →, , .", "step back / forward (space: forward)"),
            ("Home / End", "first / last step"),
            ("t", "the view as plain text"),
            ("Esc, Backspace", "back"),
        ],
    ),
    (
        "Leaderboard",
        [
            ("g", "next game (overall first)"),
            ("← → Enter, s", "sort by a column; again to reverse"),
            ("r", "reload"),
            ("Esc, Backspace", "back"),
        ],
    ),
]
HELP_NOTES = (
    "Live matches show only the public view; hidden cards appear when the match ends. "
    "Clocks are estimates: the server sends the time per move and each seat's bank left as a step "
    "begins, so the seat to move counts down from the step's arrival here. 'To move' is read from the view's text."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        app = self.app
        pal = app.palette if isinstance(app, WatchApp) else DARK
        text = Text()
        for section, keys in HELP:
            text.append(f"{section}\n", style=f"bold {pal.accent}")
            for key, what in keys:
                text.append(f"  {key:<16}", style="bold")
                text.append(f"{what}\n")
        text.append("\n" + HELP_NOTES, style=pal.muted)
        with VerticalScroll(id="help"):  # scrolls where the terminal is shorter than the keys
            yield Static(Text("arena watch: keys", style="bold"), classes="section")
            yield Static(text)

    def action_close(self) -> None:
        self.dismiss()

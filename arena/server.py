"""The live arena: bots on /bot, spectators on /watch, JSON on plain HTTP.

One trio nursery owns everything: the websocket server, the store's writer task,
one task per live match (each running the project's one match loop, ``play_match``,
with ``RemoteSeat``s) and one writer task per connection. Nothing a client sends can
crash the server: every frame is size-capped, rate-limited, decoded and checked before
it is acted on, and each failure is answered with an ``error`` carrying a code from
``arena.protocol``.
"""

from __future__ import annotations

import array
import collections
import contextlib
import errno
import fcntl
import functools
import gc
import ipaddress
import itertools
import logging
import math
import random
import re
import resource
import sqlite3
import termios
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.trio.server import Server, ServerConnection, serve

import games
from arena import protocol as p
from arena.direct_read import ArenaConnection, reset_on_close
from arena.direct_write import FLUSH, DirectWrite, Flusher
from arena.lobby import Lobby, Seek, config_key
from arena.match import (
    MAX_CLOCK_MS,
    MAX_STEPS,
    Clock,
    Forfeits,
    MatchEvent,
    MatchResult,
    TurnRecord,
    check_max_retries,
    play_match,
)
from arena.ratings.leaderboard import game_leaderboards, overall
from arena.ratings.trueskill import Rating
from arena.seats import Move, RemoteSeat, match_start_fields, resignation
from arena.sessions import Alarms, BotSession, Connection
from arena.store import (
    ADMIN,
    FINISHED,
    LABEL_RULE,
    LIVE,
    VOID,
    Store,
    StoreError,
    hash_token,
    is_damage,
    read,
    serving_lock,
    token_matches,
    valid_bot_name,
    valid_label,
    variant_of,
)
from arena.store_writer import Both, Call, StoreWriter
from games.api import Game, GameError, make_config
from games.catalog import game_entry
from games.registry import UnknownGame
from games.render import count

log = logging.getLogger("arena.server")

BOARD_TTL_S = 5.0
BOARD_WAIT_S = 8.0
"""How long a request waits for a leaderboard being computed before it is told to ask again
(``computing``, with ``retry_after``): the computation goes on, and its board is kept. A big
store's board takes longer than the 10 s websockets gives an HTTP answer, which it then
dropped with an empty reply, and a spectator's later messages waited behind it."""
BOARDS_ASKED = 4
"""How many leaderboard requests of one spectator may wait while another is answered; past
them one is refused (``computing``), as the rate limit alone would let thousands wait."""
BOARD_DUTY = 0.1
BOARD_AGAIN_S = 1.0
"""A computed leaderboard is served again until a match of its game ends on this server, or
for ``BOARD_TTL_S`` (what other writers of the store do goes unseen); and whatever ended, a
game's board is computed again no sooner than ``BOARD_AGAIN_S`` after the last, nor oftener
than keeps its computing to ``BOARD_DUTY`` of the time. A game's Nash bootstrap takes
seconds over tens of thousands of matches, in a thread that shares the interpreter lock
with the event loop: twenty requests at once, which anyone may send, slowed every live
match. Served for a fixed 5 s instead, the board a spectator opened as the match it watched
ended did not have it."""
REPLAYS_AT_ONCE = 2
"""Replays (and HTTP match records) made at once, server-wide. A 1,000-round match's replay is
tens of megabytes, and its objects several times that while it is made: a hundred spectators
asking at once would have held gigabytes, and the threads making them the interpreter lock."""
LOBBY_INTERVAL_S = 0.25
"""Spectators get at most one ``lobby`` message per ``LOBBY_INTERVAL_S``, with the state when it
is sent. Each lists every live match, and on a busy server matches start and end hundreds of
times a second: sent on each change, one spectator took 568 lobby messages a second (23 MB/s,
JSON-encoded for it alone) and the server relayed 39% fewer moves."""
LOBBY_LIST_LIMIT = 100
"""The most live matches, and waiting seeks, one ``lobby`` message lists (the newest), with
their counts beside. Each lobby went to every spectator four times a second listing every live
match: about a megabyte with 4,000 of them, JSON-encoded for each spectator, so that a few
spectators of a big server took the event loop from its bots. A spectator who follows one
game asks for that game's lobby, and sees its newest matches however many others there are."""
LOBBY_RECENT = 20
"""Ended matches a ``lobby`` lists, newest first (of the spectator's game, when it chose one)."""
RECENT_KEPT = 200
"""Ended matches the server keeps for the lobbies: enough that a game played less than the
others still has its last results to show when a spectator follows it."""
SAME_PORT_TRIES = 20
"""Ports picked for a host name of several addresses before ``open_listeners`` gives up
finding one free on all of them and lets each keep its own (a try fails when another program
took the port, and every try when the name lists one address twice)."""
SHUTTING_DOWN = "the server is shutting down"
SHUTDOWN_CLOSE_S = 2.0
"""How long a shutdown waits for the websockets it closes to finish closing: eight spectators
that never answered held SIGTERM's exit for 20 s, a heartbeat."""
TABLE_RETRY_S = 5.0
"""How long the bots of a table that could not start (the store could not record it) are told
to wait before seeking again: they would all be back at once, and fail again while it lasts."""
VOID_RETRY_S = 5.0
"""How often a void the store could not take when its match ended (a full disk) is written
again: left live, the match showed as live on /api after its seats had been told it was void."""
MAX_DETAIL_CHARS = 300
"""A resignation's ``detail`` and an abort's ``reason`` are cut to this many characters: they go
into the match's ``detail``, which every spectator's lobby lists with the recent results
(twenty resignations of 65,000 control characters, escaped six times over in JSON, made each
lobby 7.8 MB)."""


def config_and_variant(game: str, config: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """A game's whole config, and its variant (the game and the keys that differ from its
    defaults): what ratings are kept per, and what a create_match key is held to."""
    made = make_config(games.get(game).Config, config)
    return made.to_dict(), variant_of(game, made.overrides())


def short_detail(text: str) -> str:
    """``text`` cut to ``MAX_DETAIL_CHARS``, its last one then ``…``."""
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


FULL_RETRY_S = 5
"""The ``Retry-After`` (seconds) of a handshake refused because the server holds as many
connections as it may: places free as clients leave, and a client retrying at once would be
refused again while costing the server a handshake each time."""
TOO_MANY_LOGINS = "too many tries to log in failed or are being checked"  # the close reason (1013) of one refused unheard


@dataclass(frozen=True)
class Limits:
    """What one connection may do; sent to every bot in its ``welcome``, the heartbeat beside
    the rest, since it is what the server does rather than what the bot may do."""

    soft_cap: int = 64 * 1024  # bytes: larger frames are answered with an error
    hard_cap: int = 1024 * 1024  # bytes: the websocket layer closes with 1009
    rate: float = 50.0  # messages per second, sustained
    burst: int = 100  # messages at once
    strikes: int = 5  # abusive frames (flood, oversize, undecodable) within strike_window_s close with 1008
    strike_window_s: float = 600.0  # a strike is forgotten this long after it: a bot's rare slips never add up
    hello_timeout_s: float = 10.0
    handshake_s: float = 10.0  # from connecting to the end of the HTTP request and its answer
    grace_ms: int = 30_000  # a disconnected bot may resume within this window
    max_matches: int = 8  # matches one bot may play at once
    max_seeks: int = 32  # seeks one bot may have waiting: each pairing pass walks them all
    max_steps: int = MAX_STEPS  # steps a match may take before it is void (play_match)
    heartbeat_s: float = 20.0
    queue: int = 1_024  # messages waiting for a slow reader before it is dropped
    # What the whole server takes, not one connection (kept off the wire, as the heartbeat):
    # each open websocket holds a file descriptor, two tasks and its buffers
    max_connections: int = 10_000  # open websockets, /bot and /watch together
    max_per_address: int = 1_000  # open websockets from one client address (a proxy's, behind one)
    max_spectators: int = 5_000  # open /watch websockets: spectators need no token, and must leave bots room
    login_attempts: int = 10  # failed tries to log in as one bot from one address, within login_window_s ...
    login_window_s: float = 60.0  # ... of the first: the next ones are refused unchecked until it ends (LoginAttempts)

    def __post_init__(self) -> None:
        # One bound for all, the clock's: the reconnection window is a time as the clock's are,
        # no count comes near it, and every limit is sent in the welcome, which must encode.
        wrong = [
            name
            for name, value in asdict(self).items()
            if not ((value >= 0 if name == "grace_ms" else value > 0) and value <= MAX_CLOCK_MS)
        ]
        if self.hard_cap < self.soft_cap:
            wrong.append("hard_cap")
        if wrong:
            raise ValueError(
                f"limits out of range: {', '.join(f'{name}={getattr(self, name)}' for name in wrong)} "
                f"(grace_ms may be 0, hard_cap must be at least soft_cap, every other limit must be positive; "
                f"none above {MAX_CLOCK_MS:,})"
            )

    def to_wire(self) -> dict[str, Any]:
        limits = asdict(self)
        for server_wide in (
            "heartbeat_s",
            "handshake_s",
            "max_connections",
            "max_per_address",
            "max_spectators",
            "login_attempts",
            "login_window_s",
        ):
            del limits[server_wide]
        return limits


class RateLimit:
    """``rate`` messages a second, ``burst`` at once, as a token bucket would allow (the
    generic cell rate algorithm: ``due`` is when the messages let through so far would have
    been paid for at ``rate``).

    A message is paid for from ``sent_after``, the earliest it can have been sent, and
    checked at ``now``, when it is read: messages that waited unread while the server was
    busy (a long answer, a loaded event loop) count as sent while they waited, not as a
    burst at the moment the server came back to them. Checked on reading alone, a client
    that paced itself was refused and closed whenever the server fell behind. The price:
    ``sent_after`` is only the last moment nothing was unread, so after a quiet spell a
    burst is paid for as if spread over it (about its length times ``rate`` beyond ``burst``)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.interval = 1 / rate
        self.slack = (burst - 1) / rate
        self.due = -math.inf

    def take(self, sent_after: float, now: float) -> float:
        """0 when the message passes, else the seconds until one would."""
        due = max(self.due, sent_after)
        early = due - self.slack - now
        if early > 0:
            return early
        self.due = due + self.interval
        return 0.0


@dataclass
class Tries:
    first: float  # when the window began: at the first try counted in it
    failed: int = 0  # tries whose token was wrong
    pending: int = 0  # tries whose token is being checked


class LoginAttempts:
    """Tries to log in by (client address, bot name), so that a token cannot be guessed at the
    speed of the network: once ``most`` of them failed within ``window_s`` of the first, that
    bot's tries from that address are refused without looking at the token until the window
    ends. A try counts as it arrives, so that guesses sent all at once are capped too; one
    that ends without a verdict on its token (the store failed, the client left, the token
    was rotated meanwhile) is taken back, and logging in clears the count. Keyed by the bot
    as well as the address: a misconfigured bot behind a proxy locks out neither the proxy's
    other bots nor itself from elsewhere.

    Tries that are still being checked hold the next ones back for ``PENDING_WAIT_S`` only:
    a bot logging in many times at once has failed nothing.

    Bot names are the client's to invent, so at most ``tracked`` counts are kept and as many
    locked keys apart. Names tried once cannot push a lock out (only ``tracked`` other locks
    can), and a count is pushed out by ``tracked`` other names only once it has the fewest
    failures of the ``DROP_AMONG`` tried longest ago: made-up names (each a failure) push out
    each other first, and wiping a count of ``n`` failures takes about ``n`` failures for
    each of thousands of names."""

    PENDING_WAIT_S = 1.0
    DROP_AMONG = 32

    def __init__(self, most: int, window_s: float, tracked: int = 10_000) -> None:
        self.most, self.window_s, self.tracked = most, window_s, tracked
        self._tried: dict[tuple[str, str], Tries] = {}  # tried longest ago first
        self._locked: dict[tuple[str, str], float] = {}  # key: when its window ends; locked first, first

    def attempt(self, key: tuple[str, str], now: float) -> tuple[float, Tries | None]:
        """Count a try as ``key``: the count it was added to, to ``settle`` once its token is
        checked; or, refused, the seconds until a try is heard."""
        while self._locked and next(iter(self._locked.values())) <= now:
            del self._locked[next(iter(self._locked))]
        until = self._locked.get(key, now)
        if until > now:
            return until - now, None
        self._locked.pop(key, None)
        tries = self._tried.pop(key, None) or Tries(now)
        if now - tries.first >= self.window_s:  # tries still being checked stay, and fail into the new window
            tries.first, tries.failed = now, 0
        self._tried[key] = tries
        if tries.failed + tries.pending >= self.most:
            return self.PENDING_WAIT_S, None
        tries.pending += 1
        while len(self._tried) > self.tracked:
            oldest = (item for item in itertools.islice(self._tried.items(), self.DROP_AMONG) if item[0] != key)
            del self._tried[min(oldest, key=lambda item: item[1].failed)[0]]
        return 0.0, tries

    def settle(self, key: tuple[str, str], tries: Tries | None, verdict: bool | None) -> None:
        """A try counted in ``tries`` ended: its token was right (True), wrong (False), or not
        decided (None). Nothing is done when ``tries`` is no longer the count of ``key``: it
        was cleared by a login since, or dropped."""
        if tries is None or self._tried.get(key) is not tries:
            return
        if verdict:
            del self._tried[key]
            return
        tries.pending -= 1
        tries.failed += verdict is False
        if tries.failed >= self.most:
            del self._tried[key]
            self._locked[key] = tries.first + self.window_s
            while len(self._locked) > self.tracked:
                del self._locked[next(iter(self._locked))]
        elif not tries.failed and not tries.pending:
            del self._tried[key]


@dataclass
class LoginTry:
    """One try to log in, as ``ArenaServer._login_try`` counts it."""

    refusal: tuple[str, int] | None = None  # why it is refused unheard, and its retry_after
    verdict: bool | None = None  # on its token, once checked: True right, False wrong


class _Intake:
    """What every message read from one connection passes before it is handled, whether its
    handler task reads it (``ArenaServer._frames``) or it is taken where it is parsed
    (``ArenaConnection.take_at_once``): its encoding becomes the one answers are sent in; it
    must come within the rate limit and the soft cap and decode to a map. A failure is
    answered with an error, and ``Limits.strikes`` of them within ``Limits.strike_window_s``
    close the connection (1008)."""

    def __init__(self, limits: Limits, metrics: Metrics, connection: Connection, reply: Callable[..., Any]) -> None:
        self.limits = limits
        self.metrics = metrics
        self.connection = connection
        self.reply = reply
        self.rate = RateLimit(limits.rate, limits.burst)
        self.strikes: collections.deque[float] = collections.deque()  # when each strike still counted came

    def admit(self, frame: bytes | str, sent_after: float, decoded: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The message (``decoded`` when the caller decoded it already); None once refused, and
        for every message once the connection is being closed: it no longer acts."""
        self.metrics.frames_in += 1
        if self.connection.closing is not None:
            return None
        self.connection.binary = isinstance(frame, bytes)
        now = time.monotonic()
        wait = self.rate.take(sent_after, now)
        if wait:
            # up to the millisecond: a wait rounded down is refused again, and one under half a millisecond said 0
            self._refuse(now, p.RATE_LIMITED, "too many messages", retry_after=math.ceil(wait * 1000) / 1000)
            return None
        if (len(frame) if isinstance(frame, bytes) else len(frame.encode())) > self.limits.soft_cap:
            self._refuse(now, p.TOO_LARGE, f"frames are capped at {self.limits.soft_cap} bytes")
            return None
        if decoded is not None:
            return decoded
        try:
            return p.decode(frame)
        except p.ProtocolError as error:
            self._refuse(now, error.code, error.message)
            return None

    def _refuse(self, now: float, code: str, text: str, **extra: Any) -> None:
        self.metrics.errors += 1
        self.reply("error", code=code, message=text, **extra)
        strikes = self.strikes
        while strikes and strikes[0] <= now - self.limits.strike_window_s:
            strikes.popleft()
        strikes.append(now)
        if len(strikes) >= self.limits.strikes:
            self.connection.close(p.CLOSE_POLICY, "too many bad or excessive messages")


@dataclass
class Metrics:
    started: float = field(default_factory=time.time)
    moves_relayed: int = 0
    frames_in: int = 0  # websocket messages, every connection and kind
    frames_out: int = 0
    errors: int = 0
    matches_finished: int = 0
    matches_voided: int = 0
    connections_refused: int = 0  # handshakes answered 503 and websockets closed 1013: the server was full

    def count_frame_out(self) -> None:
        self.frames_out += 1


@dataclass(frozen=True)
class _Computed:
    """A leaderboard as computed, and when (trio time)."""

    board: dict[str, Any]
    began: float
    done: float

    def serves(self, ended_at: float, now: float) -> bool:
        """Whether it is served again, when a match of its game last ended here at ``ended_at``."""
        took = self.done - self.began
        if now < self.done + max(BOARD_AGAIN_S, took * (1 / BOARD_DUTY - 1)):
            return True  # not to be computed again yet
        return now < self.done + BOARD_TTL_S and ended_at < self.began


@dataclass(eq=False)
class _Board:
    """A leaderboard being computed, for every request that waits for it."""

    done: trio.Event = field(default_factory=trio.Event)
    board: dict[str, Any] | None = None
    error: Exception | None = None


@dataclass
class LiveMatch:
    id: str
    game: type[Game]
    bots: tuple[str, ...]
    config: Mapping[str, Any]
    variant: str  # the game plus its non-default config: what ratings are kept under
    seed: int
    clock: Clock
    max_retries: int
    started: float = field(default_factory=time.time)
    step: int = 0
    clocks: list[int] = field(default_factory=list)  # every seat's bank left, as the current step began
    state: Game | None = None
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    void_reason: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)  # what play_match announced at the start
    grouped: bool = False  # one of a duplicate group: its deal is dealt at the group's other tables too
    ended: trio.Event = field(default_factory=trio.Event)  # its end is recorded and told, or it never started
    announced: trio.Event = field(default_factory=trio.Event)  # its match_start is sent, or it never started
    result: MatchResult | None = None  # how it ended; None: stopped by the server (void)
    turns: list[TurnRecord] = field(default_factory=list)  # as play_match takes them: kept if it is stopped
    opened: bool = False  # recorded live in the store, where Store.deals_to_play sees it
    forfeits: Forfeits = field(default_factory=Forfeits)  # its seats that resign off their turn
    view_fault: str | None = None  # why its game could not show spectators its public view, once it failed

    def summary(self) -> dict[str, Any]:
        return {
            "match": self.id,
            "game": self.game.spec.name,
            "variant": self.variant,
            "players": list(self.bots),
            "step": self.step,
            "started": self.started,
            "clock": {"move_ms": self.clock.move_ms, "bank_ms": self.clock.bank_ms},  # never the grace
            "clocks": self.clocks or [self.clock.bank_ms] * len(self.bots),
        }


@dataclass(eq=False)
class Watcher:
    connection: Connection
    drained: Callable[[], Awaitable[bool]]  # until what was sent so far is written (DirectWrite.drained)
    address: str  # the client's (LoginAttempts counts its admin tokens)
    watching: set[str] = field(default_factory=set)
    seq: int = 0
    game: str | None = None  # the game whose lobby it follows (its last `lobby` request said), None: every game
    trusted: bool = False  # it showed the admin token: told how every match ended, withheld ones too

    def send(self, kind: str, **fields: Any) -> None:
        self.seq += 1
        self.connection.put(p.message(kind, seq=self.seq, **fields))

    def send_prepared(self, prepared: p.Prepared) -> None:
        self.seq += 1
        self.connection.put(prepared.framed(self.seq))


class ArenaServer:
    """Start with ``await nursery.start(server.run, listeners)``; stop with ``shutdown()``.

    ``writer_process=False`` keeps the store's writer in a thread of the server's process
    (see ``StoreWriter``)."""

    def __init__(
        self,
        db: str | Path,
        *,
        clock: Clock | None = None,
        max_retries: int = 2,
        limits: Limits | None = None,
        read_only: bool = False,
        admin_token: str | None = None,
        trusted_proxies: Iterable[str] = (),
        writer_process: bool = True,
    ) -> None:
        check_max_retries(max_retries)  # now, not at the first match
        self.trusted_proxies = frozenset(canonical_ip(proxy, strict=True) for proxy in trusted_proxies)
        self._told_unforwarded = False  # warned once that a trusted proxy forwarded for no IP address
        self.db = Path(db)
        self.clock = clock or Clock()
        self.max_retries = max_retries
        self.limits = limits or Limits()
        self.read_only = read_only
        self.writer = None if read_only else StoreWriter(self.db, process=writer_process)
        self.admin_token = admin_token
        self.new_admin_token: str | None = None
        self.sessions: dict[str, BotSession] = {}
        self.alarms = Alarms()  # the clocks of the turns bots are asked
        self._rotations: collections.Counter[str] = collections.Counter()  # tokens rotated here, by bot
        self.watchers: set[Watcher] = set()
        self.live: dict[str, LiveMatch] = {}
        self.recent: list[Ended] = []
        self._held_seeds: collections.Counter[int] = collections.Counter()  # seeds of the held entries of `recent`
        self._unopened_seeds: collections.Counter[int] = collections.Counter()  # of matches reserved, not yet opened
        self._unrecorded_voids: dict[str, tuple[str, list[TurnRecord]]] = {}  # match id -> (reason, turns): the store failed
        self.metrics = Metrics()
        self.skill: dict[tuple[str, str], float] = {}  # (bot, variant) -> TrueSkill mu, for pairing
        # the OS's generator: finished matches publish their seeds and every table its seat order,
        # and a Mersenne Twister's next outputs follow from its past ones, so players could deal
        # future matches or time a seek to move first
        self.rng = random.SystemRandom()
        self.lobby = Lobby(players=self._players_needed, capacity=self._capacity, rating=self._rating, rng=self.rng)
        self._nursery: trio.Nursery | None = None
        self._ws_server: Server | None = None
        self._all_ended = trio.Event()
        self._open: set[Connection] = set()  # connections whose pump still runs
        self._websockets = 0  # open /bot and /watch websockets, counted against Limits.max_connections
        self._spectators = 0  # the /watch ones among them, counted against Limits.max_spectators
        self._per_address: collections.Counter[str] = collections.Counter()  # the same, by client address
        self._logins = LoginAttempts(self.limits.login_attempts, self.limits.login_window_s)
        self._drained = trio.Event()  # set when the last of them ends
        self._closing = False
        self._damaged: str | None = None  # what a read found damaged in the store file (``is_damage``)
        self._pairing = False  # a pairing pass is scheduled
        self._lobby_changed = trio.Event()  # since the last lobby message to spectators
        self._boards: dict[str | None, _Computed] = {}  # game -> its board as last computed
        self._ended_at: dict[str | None, float] = {}  # game (None: any) -> when a match of it last ended here
        self._boards_lock = trio.Lock()  # one board computed at a time
        self._boards_coming: dict[str | None, _Board] = {}  # game -> the computation of its board under way
        self._replays = trio.Semaphore(REPLAYS_AT_ONCE)
        self._flusher = Flusher()  # writes what the connections' DirectWrite held, as each pass of the loop ends

    # ---- lifecycle -----------------------------------------------------------------------

    async def run(
        self, listeners: list[trio.SocketListener], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        logging.getLogger("websockets.server").addFilter(CLIENT_GONE)  # once: a filter is added once
        trio.lowlevel.add_instrument(self._flusher)
        try:
            await self._serve(listeners, task_status)
        finally:
            trio.lowlevel.remove_instrument(self._flusher)

    async def _serve(self, listeners: list[trio.SocketListener], task_status: trio.TaskStatus[None]) -> None:
        with contextlib.nullcontext() if self.writer is None else serving_lock(self.db):
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if self.writer is not None:
                    await nursery.start(self.writer.run)
                    self.new_admin_token = await self.writer.call(Call(Store.ensure_admin_token, self.admin_token))
                    voided = await self.writer.call(Call(Store.void_live_matches, "the server stopped before the match ended"))
                    if voided:
                        log.warning("voided %d match%s left live when the server last stopped", voided, "es" * (voided > 1))
                    for row in await self.writer.call(Call(Store.ratings)):
                        self.skill[(row["bot"], row["variant"])] = row["mu"]
                else:
                    read(self.db, lambda s: s.schema_version())  # fail now, not on the first request
                nursery.start_soon(self._lobby_feed)
                nursery.start_soon(self.alarms.run)
                self._ws_server = await nursery.start(
                    functools.partial(
                        serve,
                        self._route,
                        listeners=listeners,
                        process_request=self._http,
                        max_size=self.limits.hard_cap,
                        open_timeout=None,  # kept by ArenaConnection.handshake
                        ping_interval=self.limits.heartbeat_s,
                        ping_timeout=self.limits.heartbeat_s,
                        close_timeout=self.limits.heartbeat_s,  # a peer that stopped reading never answers the close either
                        server_header="selfplay-arena",
                        create_connection=functools.partial(ArenaConnection, handshake_s=self.limits.handshake_s),
                        compression=None,  # frames are small: deflate costs more CPU than it saves bytes
                    )
                )
                task_status.started()

    async def shutdown(self, reason: str = SHUTTING_DOWN) -> None:
        """Void live matches (recorded), stop accepting, flush the store, stop every task."""
        self._closing = True  # no new match starts from here on
        self._all_ended = trio.Event()
        for live in list(self.live.values()):
            live.void_reason = reason
            live.scope.cancel()
        if self.live:
            await self._all_ended.wait()
        if self._lobby_changed.is_set():  # the voided matches leave the spectators' lobby before the close
            self._send_lobby()
        # Closed by us first, so that what is queued (the voided matches' match_end and result)
        # is written before the close; the websocket server's own close would drop it.
        self._drained = trio.Event()
        for connection in list(self._open):
            connection.close(p.CLOSE_GOING_AWAY, reason)
        # as long as a client that does not read is given (_close_anyway); one whose socket is
        # full may hold the websocket server's close below up to a heartbeat more
        with trio.move_on_after(1):
            if self._open:
                await self._drained.wait()
        if self._ws_server is not None:
            # a client that never answers the close (or never closes its end) was waited for a
            # heartbeat each; cut off after this, with the nursery, as a stopping process must
            with trio.move_on_after(SHUTDOWN_CLOSE_S):
                await self._ws_server.aclose()
        if self.writer is not None:
            await self._record_voids()  # a last try: what is left is voided at the next start
            await self.writer.aclose()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def _spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(fn, *args)

    # ---- HTTP ----------------------------------------------------------------------------

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        url = _request_target(request.path)
        # every Upgrade header: get() raised on two of them, a traceback and a 500 on any path;
        # websockets' handshake then refuses what is not one "websocket"
        upgrade = any(value.strip().lower() == "websocket" for value in request.headers.get_all("Upgrade"))
        if url.path in ("/bot", "/watch") and upgrade and request.method == "GET":  # else answered 405 below, in JSON
            refusal = self._refusal(self._client_address(connection), url.path)
            if refusal is None:
                return None
            self.metrics.connections_refused += 1
            code = p.BUSY if self._closing else p.SERVER_FULL
            response = _json_response(connection, 503, {"error": code, "message": refusal})
            response.headers["Retry-After"] = str(FULL_RETRY_S)
            return response
        if request.method not in ("GET", "HEAD"):  # websockets hands us every method; none of ours changes anything
            message = f"{url.path} answers GET and HEAD only"
            response = _json_response(connection, 405, {"error": "method_not_allowed", "message": message})
            response.headers["Allow"] = "GET, HEAD"
            return response
        try:
            # percent-decoded as the query is: a client may escape any character of a path
            # a blank field is as absent, whichever it is: a form sends `game=` or `status=` for "any"
            query = urllib.parse.parse_qs(url.query)
            status, body = await self._api(url.path, query)
        except (StoreError, sqlite3.Error) as error:  # the store itself: gone, locked, or made by a newer arena
            log.warning("HTTP %s: the store cannot be read: %s", url.path, error)
            status, body = 503, {"error": p.STORE_UNAVAILABLE, "message": self._told(f"the store cannot be read: {error}")}
        except Exception as error:  # a bug of ours: said in JSON as any answer, logged once, the server goes on
            log.exception("HTTP %s failed", request.path)
            status, body = 500, {"error": "internal_error", "message": f"{type(error).__name__}: {error}"}
        response = _json_response(connection, status, body)
        if request.method == "HEAD":  # the GET's headers, Content-Length included, and no body
            response.body = b""
        return response

    async def _api(self, path: str, query: Mapping[str, list[str]]) -> tuple[int, Any]:
        def arg(name: str) -> str | None:
            return query.get(name, [None])[0]

        if path == "/health":
            return await self._health()
        if path == "/metrics":
            return 200, self.metrics_snapshot()
        if path == "/api/leaderboard":
            try:
                return 200, await self._leaderboard(arg("game"))
            except p.ProtocolError as error:  # an unknown game, or one still being computed
                if error.code == p.COMPUTING:
                    return 503, {"error": error.code, "message": error.message, "retry_after": error.retry_after}
                return 404, {"error": error.code, "message": error.message}
        if path == "/api/games":
            return 200, [game.spec.to_dict() for game in games.all()]
        if path.startswith("/api/games/"):
            try:
                return 200, game_entry(games.get(path.removeprefix("/api/games/")))
            except UnknownGame as error:
                return 404, {"error": p.UNKNOWN_GAME, "message": str(error)}
        if path == "/api/bots":
            return 200, await self._read(lambda s: s.bots())
        if path == "/api/matches":
            given = arg("limit")
            if given is not None and not re.fullmatch(r"-?[0-9]+", given):  # int() also takes "1_0" and " 1"
                return 400, {"error": p.BAD_MESSAGE, "message": "limit must be an integer"}
            limit = 50 if given is None else _clamped_int(given)
            status = arg("status")
            if status not in (None, LIVE, FINISHED, VOID):
                return 400, {"error": p.BAD_MESSAGE, "message": f"status must be {LIVE}, {FINISHED} or {VOID}"}

            def page(store: Store) -> tuple[list[dict[str, Any]], set[str]] | StoreError:
                try:
                    found = store.matches(game=arg("game"), bot=arg("bot"), status=status, limit=limit, before=arg("before"))
                except StoreError as error:  # no match `before`: the caller's fault, unlike failing to open the store
                    return error
                return found, store.deals_to_play(record["id"] for record in found)

            answer = await self._read(page)
            if isinstance(answer, StoreError):
                return 400, {"error": p.BAD_MESSAGE, "message": str(answer)}
            found, to_play = answer
            if not found and arg("game"):  # a typo read as "no match yet"
                try:
                    await self._known_game(arg("game"))
                except p.ProtocolError as error:
                    return 404, {"error": error.code, "message": error.message}
            return 200, [self._withheld(record, to_play) for record in found]
        if path.startswith("/api/matches/"):
            try:  # a prefix, as the lobby and the TUI show ids, stands for its match as on /watch
                match_id = await self._resolve(path.removeprefix("/api/matches/"))
            except p.ProtocolError as error:  # a prefix of several
                return 404, {"error": error.code, "message": error.message}
            async with self._replays:  # a match's record, its turns, is a replay's size
                record, to_play = await self._read(lambda s: (s.match(match_id), s.deals_to_play([match_id])))
                if record is None:
                    return 404, {"error": p.UNKNOWN_MATCH, "message": f"no match {match_id!r}"}
                return 200, JsonText(await trio.to_thread.run_sync(p.json_in_pieces, self._withheld(record, to_play)))
        if path in ("/bot", "/watch"):
            return 426, {"error": "upgrade_required", "message": f"{path} speaks websocket"}
        return 404, {"error": "not_found", "message": f"no such path {path!r}"}

    async def _health(self) -> tuple[int, dict[str, Any]]:
        """Healthy: the store can be read and, unless read-only, is still the file being written
        and took the last writes.
        A server whose store file was deleted voids every match that ends, and a monitor that
        was told "ok" all the while had nothing to restart it for."""
        fields = {"protocol": p.PROTOCOL_VERSION, "read_only": self.read_only}
        if self._closing:
            return 503, {"status": "shutting_down", "error": p.BUSY, "message": SHUTTING_DOWN, **fields}
        problem = None
        damaged = self._damaged or (self.writer.damaged if self.writer is not None else None)
        if damaged is not None:
            problem = self._told(f"the store file is damaged ({damaged}): stop the server, and serve a backup of it")
        elif self.writer is not None and not self.writer.writes_to_its_file():
            problem = self._told(str(self.writer.orphaned()))
        elif self.writer is not None and self.writer.failing is not None:
            problem = self._told(f"the store cannot be written: {self.writer.failing}")
        else:
            try:
                await self._read(lambda s: s.schema_version())
            except (StoreError, sqlite3.Error) as error:
                problem = self._told(f"the store cannot be read: {error}")
        if problem is not None:
            return 503, {"status": "unavailable", "error": p.STORE_UNAVAILABLE, "message": problem, **fields}
        return 200, {"status": "ok", **fields}

    def _live_view(self, live: LiveMatch) -> dict[str, Any]:
        """A live match's view for spectators: the public view, but ``{}`` (with ``withheld``)
        while its deal is dealt at another table too (a duplicate group, or a live match of the
        same seed). A showdown, or a public card dealt there before it is dealt here, would tell
        the players at the other table the cards they are still to see; they may watch too."""
        if live.grouped or self._seed_in_play(live.seed, live.id):
            return {"view": {}, "withheld": True}
        return {"view": self._public_view(live), "withheld": False}

    def _public_view(self, live: LiveMatch) -> dict[str, Any]:
        """The live match's public view, or a text saying why its game could not give one. A
        game's bug there is no reason to void a match its players play on: voided, a match's
        result depended on whether anyone watched it (found by a QA helper)."""
        if live.state is None:
            return {}
        try:
            view = live.state.public_view()
            p.check_encodable(view)
        except Exception as error:
            if live.view_fault is None:  # the error's own words stay in the log: they may name a hidden card
                log.warning("match %s (%s): no public view for its spectators", live.id, live.game.spec.name, exc_info=True)
            live.view_fault = type(error).__name__
            return {"text": f"{live.game.spec.name} could not show this match's public view ({live.view_fault})"}
        return view

    def _seed_in_play(self, seed: int | None, besides: str | None) -> bool:
        """Whether a live match other than ``besides`` was dealt from ``seed``."""
        return any(live.seed == seed and live.id != besides for live in self.live.values())

    def _deals_live(self, record: Mapping[str, Any], to_play: AbstractSet[str]) -> bool:
        """Whether an ended match's seed still has cards to deal: to a live match, or to a match
        of its group not finished yet (``to_play``, from ``Store.deals_to_play``, which sees the
        matches recorded live; one reserved and not recorded yet is known here). Until then it
        keeps its seed, full view, turns (every seat's observations: the others' cards) and how
        it ended (a showdown's winner, a rejection naming a partner's card). A tournament plays
        the matches of a duplicate group that share a bot one after another, so when the first
        ends the group's next ones may not even be made yet."""
        return record["status"] != LIVE and (record["id"] in to_play or record.get("seed") in self._unopened_seeds)

    def _withheld(self, record: Mapping[str, Any], to_play: AbstractSet[str]) -> dict[str, Any]:
        if not self._deals_live(record, to_play):
            return _unseeded(record)
        return _without_result({k: v for k, v in record.items() if k not in ("seed", "final_view", "turns")})

    async def _leaderboard(self, game: str | None) -> dict[str, Any]:
        """A game's board as last computed, while it is current or may not be computed again
        yet (``BOARD_DUTY``); else the one being computed, if it comes within ``BOARD_WAIT_S``.
        Boards are computed one at a time, each once however many ask for it, in a task of the
        server's own that outlives them; while another game's is computed or waits to be, the
        last board is served at once (its own is computed after)."""
        game = game or None
        cached = self._boards.get(game)
        if cached is not None and cached.serves(self._ended_at.get(game, -math.inf), trio.current_time()):
            return cached.board
        if game is not None:  # a made-up name (anyone may send one) is answered now, not queued behind real boards
            await self._known_game(game)
        coming = self._boards_coming.get(game)
        if coming is None:
            coming = self._boards_coming[game] = _Board()
            self._spawn(self._compute_board, game, coming)
        if cached is not None and any(other is not coming for other in self._boards_coming.values()):
            return cached.board  # another game's board is being computed, or waits to be: not behind it
        with trio.move_on_after(BOARD_WAIT_S):
            await coming.done.wait()
        if coming.error is not None:
            raise coming.error
        if coming.board is None:  # still coming (or its task was stopped with the server)
            which = "every game's leaderboard" if game is None else f"the leaderboard of {game}"
            later = f"ask again in {BOARD_WAIT_S:g} s"
            raise p.ProtocolError(p.COMPUTING, f"{which} is being computed; {later}", retry_after=BOARD_WAIT_S)
        return coming.board

    def _board_changed(self, game: str) -> None:
        """A match of ``game`` ended: its board, and every game's, lack it."""
        self._ended_at[game] = self._ended_at[None] = trio.current_time()

    async def _known_game(self, game: str) -> None:
        """ProtocolError ``unknown_game`` (with a did-you-mean) for a name neither installed nor
        in the store: a game whose plugin was uninstalled since still has its stored matches."""
        if game in games.names() or await self._read(lambda s: s.has_matches_of(game)):
            return
        try:
            games.get(game)
        except GameError as error:
            raise p.ProtocolError(p.UNKNOWN_GAME, f"{error} (no match of it is stored either)") from None

    async def _compute_board(self, game: str | None, coming: _Board) -> None:
        try:
            async with self._boards_lock:
                began = trio.current_time()
                board = await self._read(functools.partial(leaderboard, game=game))
            self._boards[game] = _Computed(board, began, trio.current_time())  # games _known_game let through
            coming.board = board
        except Exception as error:  # the store unreadable: told to whoever waits, the server goes on
            coming.error = error
        finally:
            del self._boards_coming[game]
            coming.done.set()

    async def _is_admin_token(self, token: str) -> bool:
        """A read-only server given an admin token takes it in place of the store's, which it
        cannot replace: the one given was otherwise ignored without a word."""
        if self.read_only and self.admin_token is not None:
            return token_matches(hash_token(self.admin_token), token)
        return bool(await self._read(lambda s: s.is_admin_token(token)))

    def _told(self, text: str) -> str:
        """``text`` as told to a client: the store's file by its name alone. Where it lies on
        the server's disk is for the log, not for anyone who reaches /health."""
        for spelled in {str(self.db), str(self.db.resolve())}:
            text = text.replace(spelled, self.db.name)
        return text

    async def _read(self, query: Callable[[Store], Any]) -> Any:
        """``query`` on a connection of its own, in a thread a shutdown leaves to finish alone:
        a big store's leaderboard held the server's exit for its whole computation."""
        try:
            return await trio.to_thread.run_sync(read, self.db, query, abandon_on_cancel=True)
        except sqlite3.DatabaseError as error:
            if is_damage(error):
                self._damaged = self._damaged or str(error)
            raise

    def metrics_snapshot(self) -> dict[str, Any]:
        return {
            "bots_connected": sum(1 for s in self.sessions.values() if s.connected and s.bot != ADMIN),
            "spectators": len(self.watchers),
            "live_matches": len(self.live),
            "waiting_seeks": len(self.lobby.seeks),
            "moves_relayed": self.metrics.moves_relayed,
            "frames_in": self.metrics.frames_in,
            "frames_out": self.metrics.frames_out,
            "errors": self.metrics.errors,
            "matches_finished": self.metrics.matches_finished,
            "matches_voided": self.metrics.matches_voided,
            "connections": self._websockets,
            "connections_refused": self.metrics.connections_refused,
            "uptime_s": round(time.time() - self.metrics.started, 1),
        }

    # ---- connections ---------------------------------------------------------------------

    def _client_address(self, connection: ServerConnection) -> str:
        """The client's host, which the per-address limits count: the peer's, unless the peer
        is a proxy trusted with ``trusted_proxies`` that says whom it forwarded for. Behind a
        proxy every peer is the proxy, and one client failing as a bot locked it out for all."""
        peer = _peer_address(connection)
        if peer not in self.trusted_proxies or connection.request is None:
            return peer
        try:
            return _forwarded_for(connection.request.headers.get_all("X-Forwarded-For"), self.trusted_proxies) or peer
        except ValueError as error:
            if not self._told_unforwarded:
                self._told_unforwarded = True
                log.warning("%s; its clients are counted as the proxy itself (said once)", error)
            return peer

    def _refusal(self, address: str, path: str) -> str | None:
        """Why a new websocket from ``address`` to ``path`` is refused, or None when there is room
        for it. A server shutting down takes none: one let in met a seek confirmed that could
        never be paired, and a close without a reason (found by a QA helper)."""
        if self._closing:
            return SHUTTING_DOWN + "; retry later"
        if self._websockets >= self.limits.max_connections:
            held = self.limits.max_connections
            return f"the server holds {count(held, 'connection')}, the most it takes; retry later"
        if path == "/watch" and self._spectators >= self.limits.max_spectators:
            held = self.limits.max_spectators
            return f"the server holds {count(held, 'spectator')}, the most it takes; retry later"
        if self._per_address[address] >= self.limits.max_per_address:
            held = self.limits.max_per_address
            return f"{held} connection{'s are' if held != 1 else ' is'} open from {address}, the most one address may hold"
        return None

    async def _route(self, ws: ServerConnection) -> None:
        """Only /bot and /watch get here: ``_http`` answers every other path before the upgrade.

        ``_http`` refused the handshakes that found the server full; those it let through at
        the same moment are counted here, and any beyond the limits is closed (1013)."""
        address = self._client_address(ws)
        path = _request_target(ws.request.path).path if ws.request else ""
        refusal = self._refusal(address, path)
        if refusal is not None:
            self.metrics.connections_refused += 1
            await ws.aclose(p.CLOSE_GOING_AWAY if self._closing else p.CLOSE_TRY_AGAIN, refusal)
            return
        spectator = path != "/bot"
        self._websockets += 1
        self._spectators += spectator
        self._per_address[address] += 1
        try:
            if spectator:
                await self._watch_connection(ws)
            else:
                await self._bot_connection(ws)
        finally:
            self._websockets -= 1
            self._spectators -= spectator
            self._per_address[address] -= 1
            if not self._per_address[address]:
                del self._per_address[address]

    def _connection(self, ws: ServerConnection, binary: bool) -> tuple[Connection, trio.MemoryReceiveChannel[Any], DirectWrite]:
        send, receive = trio.open_memory_channel[Any](self.limits.queue)
        direct = DirectWrite(ws, send, p.Encoder(), self.metrics.count_frame_out, self._flusher)

        def close(code: int, reason: str) -> None:
            if connection.closing is None:
                connection.closing = (code, reason)
                send.close()  # the pump writes what is queued, then closes with the code
                self._spawn(self._close_anyway, ws, code, reason)
                connection.gone()

        connection = Connection(send, binary, close, send=direct.put)
        return connection, receive, direct

    async def _close_anyway(self, ws: ServerConnection, code: int, reason: str) -> None:
        """A client that does not read its queued messages is closed after a second regardless
        (one whose socket is full waits on its blocked send: the pump cuts it off after a heartbeat)."""
        await trio.sleep(1)
        await ws.aclose(code, reason)

    async def _pump(
        self, ws: ServerConnection, connection: Connection, outgoing: trio.MemoryReceiveChannel[Any], direct: DirectWrite
    ) -> None:
        """Write what ``DirectWrite`` could not hold for the end of the pass, in the encoding the client last spoke."""
        self._open.add(connection)  # here, where the finally below is sure to remove it
        try:
            async for out in outgoing:
                with trio.move_on_after(self.limits.heartbeat_s) as sending:
                    if out is FLUSH:
                        async with ws.send_context():  # writes the protocol's pending bytes, as websockets does
                            pass
                    else:
                        self.metrics.count_frame_out()  # before the send may yield, so a reader of /metrics sees it first
                        await ws.send(direct.encode(out, connection.binary))
                if sending.cancelled_caught:
                    direct.stopped()  # first: what waits for the queue to drain must not take it for written
                    await _cut_off(ws)
                    return
                direct.done()
            if connection.closing is not None:
                with trio.move_on_after(2 * self.limits.heartbeat_s) as closing:  # the handshake itself has heartbeat_s
                    await ws.aclose(*connection.closing)
                if closing.cancelled_caught:
                    await _cut_off(ws)
        except ConnectionClosed:
            pass
        finally:
            direct.stopped()
            self._open.discard(connection)
            if not self._open:
                self._drained.set()

    async def _frames(self, ws: ServerConnection, intake: _Intake) -> AsyncIterator[dict[str, Any]]:
        """Yield the messages ``intake`` admits, in order; once the connection is being closed
        (superseded, dropped, shut down, or too many bad messages), read and drop what still
        comes until it is: it no longer acts, and no answer reaches it."""
        sent_after = time.monotonic()
        while True:
            if not _unread(ws):  # what comes next is sent from now on; else it waited since sent_after at least
                sent_after = time.monotonic()
            try:
                frame = await ws.recv()
            except ConnectionClosed:
                return
            decoded = intake.admit(frame, sent_after)
            if decoded is not None:
                yield decoded
            elif intake.connection.closing is not None:
                await _discard_until_closed(ws)
                return

    # ---- bots ----------------------------------------------------------------------------

    async def _hello(self, ws: ServerConnection) -> tuple[dict[str, Any], bool] | None:
        """Read and check the first message; close the socket and return None if it fails."""
        with trio.move_on_after(self.limits.hello_timeout_s):
            try:
                frame = await ws.recv()
            except ConnectionClosed:
                return None
            self.metrics.frames_in += 1
            binary = isinstance(frame, bytes)
            try:
                hello = p.decode(frame)
                kind = p.check(hello, p.BOT_MESSAGES)
                if kind == "hello" and hello.get("max_matches") is not None and hello["max_matches"] < 1:
                    raise p.ProtocolError(p.BAD_MESSAGE, "'hello.max_matches' must be at least 1")
            except p.ProtocolError as error:
                await self._refuse(ws, p.error(error.code, error.message), binary)
                await ws.aclose(p.CLOSE_NO_HELLO, "the first message must be a valid hello")
                return None
            if kind != "hello":
                await ws.aclose(p.CLOSE_NO_HELLO, "the first message must be hello")
                return None
            if not p.is_version(hello.get("v")):
                await ws.aclose(p.CLOSE_BAD_VERSION, f"this server speaks protocol version {p.PROTOCOL_VERSION}")
                return None
            if self.read_only:
                await self._refuse(
                    ws, p.error(p.READ_ONLY, "this server is read-only: it takes no bots and no admin messages"), binary
                )
                await ws.aclose(p.CLOSE_POLICY, "read-only server")
                return None
            bot, token = hello["bot"], hello["token"]
            assert self.writer is not None
            with self._login_try(self._client_address(ws), bot) as login:
                if login.refusal is not None:
                    why, wait = login.refusal
                    await self._refuse(ws, p.error(p.RATE_LIMITED, why, retry_after=wait, ref="hello"), binary)
                    await ws.aclose(p.CLOSE_TRY_AGAIN, TOO_MANY_LOGINS)
                    return None
                rotations = self._rotations[bot]
                try:
                    ok = await self.writer.call(
                        Call(Store.is_admin_token, token) if bot == ADMIN else Call(Store.authenticate, bot, token)
                    )
                except sqlite3.Error as error:  # the store is gone or broken: one line a try, not a traceback
                    log.warning("bot %s cannot log in: %s", bot, error)
                    await ws.aclose(p.CLOSE_INTERNAL, "the server cannot read its store")
                    return None
                if not ok:
                    login.verdict = False
                    await ws.aclose(p.CLOSE_AUTH_FAILED, "unknown bot or wrong token")
                    return None
                if self._rotations[bot] != rotations:  # checked as the token was rotated: not yet attached, so not closed
                    await ws.aclose(p.CLOSE_AUTH_FAILED, "the token was rotated")
                    return None
                login.verdict = True
            return hello, binary
        await ws.aclose(p.CLOSE_NO_HELLO, f"no hello within {self.limits.hello_timeout_s:g} s")
        return None

    @contextlib.contextmanager
    def _login_try(self, address: str, bot: str) -> Iterator[LoginTry]:
        """A try to log in as ``bot`` from ``address``, counted (``LoginAttempts``) and settled
        when the block ends with the verdict it set on the token: undecided (the store
        failed, the client left, anything raised) unless it set one. Its ``refusal`` says
        why it is refused without its token being looked at, when too many tries failed or
        are being checked. A name no bot can have is not counted: no token opens it, and
        kept, the names a client makes up (a megabyte each) would be the server's memory."""
        key = (address, bot)
        counted = None
        login = LoginTry()
        if bot == ADMIN or valid_bot_name(bot):
            wait, counted = self._logins.attempt(key, trio.current_time())
            if counted is None:
                tries = f"{self.limits.login_attempts} tries to log in as {bot!r} from {address} failed or are being checked"
                login.refusal = (f"{tries}; the next is heard in {math.ceil(wait)} s", math.ceil(wait))
        try:
            yield login
        finally:
            self._logins.settle(key, counted, login.verdict)

    async def _refuse(self, ws: ServerConnection, error: Mapping[str, Any], binary: bool) -> None:
        """Say why before the socket closes: no session exists yet to number the message."""
        self.metrics.frames_out += 1
        await ws.send(p.encode(error, binary))

    async def _bot_connection(self, ws: ServerConnection) -> None:
        opened = await self._hello(ws)
        if opened is None:
            return
        hello, binary = opened
        connection, outgoing, direct = self._connection(ws, binary)
        session = self._login(hello, connection)
        # Closed by the server (token rotated, too many bad messages, not reading): away at once,
        # its seeks withdrawn, not once its socket has closed, which may take a heartbeat.
        connection.gone = functools.partial(self._bot_left, session, connection)
        intake = _Intake(self.limits, self.metrics, connection, session.send)
        if isinstance(ws, ArenaConnection):
            ws.take_at_once = functools.partial(self._move_at_once, session, intake)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, ws, connection, outgoing, direct)
            async for msg in self._frames(ws, intake):
                await self._bot_message(session, msg)
            if connection.closing is None:  # the client left; else the pump closes with the code
                nursery.cancel_scope.cancel()
        self._bot_left(session, connection)

    def _move_at_once(self, session: BotSession, intake: _Intake, frame: bytes | str, sent_after: float) -> bool:
        """Handle a move where it is read (``ArenaConnection.take_at_once``): the match waiting
        for it goes on without the session's task in between. Anything else, and what does not
        decode, is left to the session's task, which answers it in the same way."""
        if intake.connection.closing is not None or len(frame) > intake.limits.soft_cap:  # too large: said there
            return False
        try:
            msg = p.decode(frame)
        except p.ProtocolError:
            return False
        if msg.get("t") != "move":
            return False
        admitted = intake.admit(frame, sent_after, msg)
        if admitted is not None:
            try:
                self._dispatch(session, admitted)
            except Exception as error:
                self._failed(session, msg, error)
        return True

    def _bot_left(self, session: BotSession, connection: Connection) -> None:
        if session.detach(connection):
            self._bot_away(session)
            self._spawn(self._forget_after_grace, session)

    async def _forget_after_grace(self, session: BotSession) -> None:
        await trio.sleep(max(0.0, session.grace_left()))
        self._forget_if_idle(session)

    def _forget_if_idle(self, session: BotSession) -> None:
        """Drop a session away past its reconnection window with no match left (else its last
        match's end does): the server kept every bot that ever connected, with the messages it
        keeps for a resume, for its whole life. One that comes back later starts afresh, as a
        resume too old to replay does."""
        if self.sessions.get(session.bot) is session and not (session.connected or session.matches) and session.grace_left() <= 0:
            del self.sessions[session.bot]

    def _login(self, hello: Mapping[str, Any], connection: Connection) -> BotSession:
        """Attach a connection to the bot's session: resume it, or start afresh and resync."""
        bot = hello["bot"]
        session = self.sessions.get(bot)
        if bot == ADMIN:
            # Its own session for each admin connection: one plays nothing to resume, and a shared
            # one handed the answers to one tool's requests (a new bot's token) to another's.
            session = BotSession(bot, self.limits.grace_ms / 1000)
        elif session is None:
            session = BotSession(bot, self.limits.grace_ms / 1000)
            self.sessions[bot] = session
        elif session.connection is not None:
            old = session.connection
            session.detach(old)
            old.close(p.CLOSE_SUPERSEDED, "another connection logged in with this token")
            # The old connection ends here, and its seeks with it, as any other end does: the
            # bot seeks again after this welcome, and keeping them would seat it twice over.
            self._drop_seeks(session)
        resume = hello.get("resume") or {}
        last_seq = resume.get("last_seq")
        resumed = resume.get("session") == session.id and isinstance(last_seq, int) and session.can_replay_after(last_seq)
        if not resumed:
            session.id = uuid.uuid4().hex
        session.attach(connection)
        session.acks = hello.get("acks", True)
        session.max_matches = hello.get("max_matches")
        told = last_seq if resumed else session.seq
        session.greet(
            session=session.id,
            bot=bot,
            resumed=resumed,
            seq=told,
            heartbeat_s=self.limits.heartbeat_s,
            limits=self.limits.to_wire(),
        )
        if resumed:
            session.replay(last_seq)
        else:
            for match_id, seats in session.matches.items():
                live = self.live.get(match_id)
                if live is not None and live.info:
                    for seat in seats:
                        session.send("match_start", **match_start_fields(live.info, seat))
            session.resend_open_turns()
        for match_id in session.matches:
            self._tell_others(session, match_id, "opponent_back", bot=bot)
        return session

    def _bot_away(self, session: BotSession) -> None:
        self._drop_seeks(session)
        for match_id in session.matches:
            self._tell_others(session, match_id, "opponent_gone", bot=session.bot, ms=session.grace_left_ms())

    def _drop_seeks(self, session: BotSession) -> None:
        """End every seek of the bot, as the end of its connection does: its standing seeks seated
        in a match too, which would otherwise come back for a bot that has to seek again anyway."""
        self.lobby.cancel(session.bot)
        session.standing.clear()

    def _away(self, live: LiveMatch, bot: str) -> list[tuple[str, int]]:
        """The match's other players now disconnected, with the ms each has left to resume."""
        others = (self.sessions[other] for other in dict.fromkeys(live.bots) if other != bot)
        return [(other.bot, other.grace_left_ms()) for other in others if not other.connected]

    def _tell_others(self, session: BotSession, match_id: str, kind: str, **fields: Any) -> None:
        live = self.live.get(match_id)
        if live is None or not live.info:  # not announced yet: its seats start by hearing who is away
            return
        for bot in set(live.bots) - {session.bot}:
            other = self.sessions.get(bot)
            if other is not None:
                other.send(kind, match=match_id, **fields)

    async def _bot_message(self, session: BotSession, msg: dict[str, Any]) -> None:
        try:
            pending = self._dispatch(session, msg)
            if pending is not None:
                await pending
        except Exception as error:
            self._failed(session, msg, error)

    def _dispatch(self, session: BotSession, msg: dict[str, Any]) -> Awaitable[None] | None:
        """Check ``msg`` and call its handler: ``_on_move`` handles a move at once (it may run
        where the move is read, ``_move_at_once``); the others return what is to be awaited."""
        # Who may send it comes before its fields: a bot that sends `register` with no name is
        # told that it is not the admin, which is what it must learn, not which field is missing.
        named = msg.get("t") if isinstance(msg.get("t"), str) else None
        if named in p.ADMIN_TYPES and session.bot != ADMIN:
            raise p.ProtocolError(p.NOT_ADMIN, f"'{named}' needs the admin token")
        if session.bot == ADMIN and named in ("seek", "challenge", "move"):
            raise p.ProtocolError(p.NOT_YOUR_MATCH, "the admin session does not play")
        kind = p.check(msg, p.BOT_MESSAGES)
        handler: Callable[[BotSession, Mapping[str, Any]], Awaitable[None] | None] = getattr(self, f"_on_{kind}")
        return handler(session, msg)

    def _failed(self, session: BotSession, msg: Mapping[str, Any], error: Exception) -> None:
        """Answer a message that failed with ``error`` to its sender; the server goes on.
        Called from an except clause, not a context manager's: every move passes here."""
        self.metrics.errors += 1
        if isinstance(error, p.ProtocolError):
            session.send("error", code=error.code, message=error.message, ref=_ref(msg))
        elif isinstance(error, sqlite3.Error):  # the store, not the message (a full disk, a deleted file): worth a retry
            log.warning("%r from %s: the store failed: %s", _ref(msg), session.bot, error)
            session.send("error", code=p.STORE_UNAVAILABLE, message=self._told(f"the store failed: {error}"), ref=_ref(msg))
        else:  # a shape no check foresaw: the sender gets an error, the server goes on
            log.exception("message %r from %s failed", _ref(msg), session.bot, exc_info=error)
            session.send("error", code=p.BAD_MESSAGE, message=f"this message could not be handled: {error}", ref=_ref(msg))

    async def _on_hello(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        raise p.ProtocolError(p.BAD_MESSAGE, "already logged in")

    async def _on_ping(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        session.send("pong")

    def _check_game(self, name: str, config: Mapping[str, Any] | None) -> dict[str, Any]:
        if config and not all(isinstance(key, str) for key in config):
            raise p.ProtocolError(p.BAD_CONFIG, "config keys must be strings")
        try:
            game = games.get(name)
        except GameError as error:
            raise p.ProtocolError(p.UNKNOWN_GAME, str(error)) from None
        try:
            return game.config_of(config or {}).to_dict()
        except GameError as error:
            raise p.ProtocolError(p.BAD_CONFIG, f"{name}: {error}") from None

    async def _on_seek(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        names = msg["games"]
        if not names or not all(isinstance(n, str) for n in names):
            raise p.ProtocolError(p.BAD_MESSAGE, "'seek.games' must be a non-empty list of game names")
        if self._closing:  # confirmed, it would wait for a pairing that never comes
            raise p.ProtocolError(p.BUSY, f"{SHUTTING_DOWN} and pairs no more seeks")
        given = msg.get("config") or {}
        # each game once: a seek naming one game thousands of times is checked once, not each time
        read = {name: _read(given, self._check_game(name, given)) for name in dict.fromkeys(names)}
        if self.lobby.waiting_of(session.bot) + session.standing_in_play() >= self.limits.max_seeks:
            raise p.ProtocolError(
                p.BUSY,
                f"bot {session.bot!r} has {self.limits.max_seeks} seeks waiting or standing, the most it may; cancel one first",
            )
        shown, self_play, standing = _shown(given, list(read.values())), bool(msg.get("self_play")), bool(msg.get("standing"))
        self.lobby.seek(session.bot, names, shown, self_play, read, standing=standing)
        if session.acks:
            session.send("seeking", games=names)
        self._pair_soon()

    async def _on_cancel(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        names = msg.get("games")
        if names is not None and not all(isinstance(n, str) for n in names):
            raise p.ProtocolError(p.BAD_MESSAGE, "'cancel.games' must be a list of game names")
        count = self.lobby.cancel(session.bot, names) + session.stop_standing(names)
        # a table paired before the cancel came (its seek already taken) is being recorded: its
        # match_start goes first, so that a bot that stops once told "cancelled" leaves none behind
        forming = [live for match_id in session.matches if (live := self.live.get(match_id)) and not live.announced.is_set()]
        if forming:
            self._spawn(self._cancelled_once_announced, session, count, forming)
        else:
            session.send("cancelled", count=count)

    async def _cancelled_once_announced(self, session: BotSession, count: int, forming: list[LiveMatch]) -> None:
        for live in forming:
            await live.announced.wait()
        session.send("cancelled", count=count)

    async def _on_challenge(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        """A challenge takes one of the named bot's waiting seeks: a bot plays only what it asked
        for, so that nobody can push a connected bot (and the model behind it, paid by the
        token) into rated matches of games it never sought."""
        config = self._check_game(msg["game"], msg.get("config"))
        opponent = msg["bot"]
        if opponent == session.bot:
            raise p.ProtocolError(p.BAD_MESSAGE, "a bot cannot challenge itself; seek with self_play instead")
        if self._players_needed(msg["game"], config) != 2:
            raise p.ProtocolError(p.BAD_CONFIG, f"a challenge is for two players; {msg['game']} with this config needs more")
        try:
            self._require_ready([session.bot, opponent])
        except p.ProtocolError as error:  # a name nobody registered (a typo) is said so: it will never connect
            if (
                error.code == p.BOT_OFFLINE
                and opponent not in self.sessions
                and not await self._read(lambda s: s.bot_exists(opponent))
            ):
                raise p.ProtocolError(p.UNKNOWN_BOT, f"no bot named {opponent!r} is registered on this server") from None
            raise
        taken = self.lobby.take(opponent, msg["game"], _read(msg.get("config") or {}, config))
        if taken is None:
            raise p.ProtocolError(
                p.NOT_SEEKING, f"bot {opponent!r} has no seek waiting for {msg['game']} with this config: a challenge takes one"
            )
        bots = [session.bot, opponent]
        self.rng.shuffle(bots)
        live, row = self._reserve(msg["game"], bots, config)
        self._hold_standing(live, [taken])
        try:
            await self._launch(live, row)
        except sqlite3.Error as error:  # a full disk, say: the opponent's seek is spent all the same
            log.warning("could not start %s for %s: %s", live.game.spec.name, live.bots, error)
            self._tell_seek_spent(live, error, [opponent])
            raise p.ProtocolError(p.STORE_UNAVAILABLE, self._told(f"the match could not start: {error}")) from None

    def _on_move(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        match_id, seat = msg["match"], msg["seat"]
        if seat not in session.matches.get(match_id, ()):
            raise p.ProtocolError(p.NOT_YOUR_MATCH, f"{session.bot} holds no seat {seat} in match {match_id}")
        tokens_in, tokens_out, logprobs = p.move_values(msg)
        move = Move(
            action=msg.get("action"),
            raw=msg.get("raw"),
            prompt=msg.get("prompt"),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=msg.get("cost"),
            logprobs=logprobs,
            format_error=bool(msg.get("format_error", False)),
        )
        if session.offer_move(match_id, seat, msg["step"], msg["attempt"], move) is not None:
            raise p.ProtocolError(p.STALE_MOVE, f"no move is asked of seat {seat} at step {msg['step']} attempt {msg['attempt']}")
        self.metrics.moves_relayed += 1

    async def _on_resign(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        match_id = msg["match"]
        if match_id not in session.matches:
            raise p.ProtocolError(p.NOT_YOUR_MATCH, f"{session.bot} does not play match {match_id}")
        session.resign(match_id, short_detail(msg.get("detail", "")))
        live = self.live.get(match_id)
        if live is not None and not any((match_id, seat) in session.slots for seat in session.matches[match_id]):
            # no turn of its own is open to take it: the match would wait for the others' moves first
            seat, cause = session.resigned[match_id]
            live.forfeits.give_up(seat, resignation(session.bot, cause))

    # ---- admin ---------------------------------------------------------------------------

    async def _store(self, work: Callable[[Store], Any]) -> Any:
        assert self.writer is not None
        try:
            return await self.writer.call(work)
        except StoreError as error:
            code = {"exists": p.BOT_EXISTS, "unknown": p.UNKNOWN_BOT, "schedule": p.BAD_CONFIG}.get(error.kind, p.BAD_MESSAGE)
            raise p.ProtocolError(code, str(error)) from None

    async def _on_register(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        name = msg["name"]
        token = await self._store(Call(Store.register_bot, name, msg.get("owner")))
        session.send("registered", name=name, token=token)

    async def _on_rotate(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        name = msg["name"]
        token = await self._store(Call(Store.rotate_token, name, msg.get("owner")))
        self._rotations[name] += 1
        holder = self.sessions.get(name)
        connection = None if holder is None else holder.connection
        if connection is not None:
            connection.close(p.CLOSE_AUTH_FAILED, "the token was rotated")
        # said, so that whoever rotates learns what the bot now stands to lose on time
        playing = 0 if holder is None else len(holder.matches)
        session.send("rotated", name=name, token=token, connected=connection is not None, playing=playing)

    async def _on_create_match(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        config = self._check_game(msg["game"], msg.get("config"))
        bots = msg["bots"]
        _check_players(bots)  # before a known key is answered, as every other field
        needed = self._players_needed(msg["game"], config)
        if len(bots) != needed:
            raise p.ProtocolError(p.BAD_CONFIG, f"{msg['game']} with this config needs {needed} bots, got {len(bots)}")
        given = msg.get("clock", {})
        if not all(key in ("move_ms", "grace_ms", "bank_ms") and type(value) is int for key, value in given.items()):
            raise p.ProtocolError(p.BAD_CONFIG, "clock takes integer move_ms, grace_ms and bank_ms")
        try:
            clock = Clock(**{**self.clock.times(), **given})
        except (TypeError, ValueError) as error:
            raise p.ProtocolError(p.BAD_CONFIG, str(error)) from None
        if msg.get("seed", 0) < 0:
            raise p.ProtocolError(p.BAD_MESSAGE, "'create_match.seed' must be a non-negative integer")
        retries = msg.get("max_retries", self.max_retries)
        try:
            check_max_retries(retries)
        except ValueError as error:
            raise p.ProtocolError(p.BAD_CONFIG, str(error)) from None
        size = msg.get("group_size")
        if size is not None and size < 1:
            raise p.ProtocolError(p.BAD_MESSAGE, "'create_match.group_size' must be at least 1")
        if size is not None and msg.get("group") is None:  # its matches are counted by the group's id
            raise p.ProtocolError(p.BAD_MESSAGE, "'create_match.group_size' needs 'group', the id its matches share")
        key = msg.get("key")
        if key is not None:
            variant = config_and_variant(msg["game"], config)[1]
            existing = await self._store(Call(Store.match_for_key, key, variant, msg.get("group"), msg.get("group_size")))
            if existing is not None:
                session.send("match_created", match=existing["id"], existing=True, key=key)
                return
        self._require_ready(bots, check_capacity=False)
        match_id, existing = await self._launch(
            *self._reserve(
                msg["game"],
                bots,
                config,
                seed=msg.get("seed"),
                clock=clock,
                max_retries=retries,
                extra={
                    "tournament": msg.get("tournament"),
                    "round": msg.get("round"),
                    "group_id": msg.get("group"),
                    "group_size": msg.get("group_size"),
                    "caller_key": key,
                },
            )
        )
        session.send("match_created", match=match_id, existing=existing, key=key)

    async def _on_abort_match(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        live = self.live.get(msg["match"])
        if live is None:
            raise p.ProtocolError(p.UNKNOWN_MATCH, f"no live match {msg['match']!r}")
        # the first cause stands; an empty reason is none
        live.void_reason = live.void_reason or short_detail(msg.get("reason") or "aborted by the admin")
        live.scope.cancel()
        await live.ended.wait()
        if live.result is not None:  # its game had ended, the result on its way to the store: it stands
            status = live.result.status
            raise p.ProtocolError(p.UNKNOWN_MATCH, f"match {live.id} ended ({status}) before it could be aborted")
        session.send("match_aborted", match=live.id)

    async def _on_seed_salt(self, session: BotSession, msg: Mapping[str, Any]) -> None:
        tournament, schedule, configs = msg["tournament"], msg.get("schedule"), msg.get("configs", {})
        for label, config in configs.items():
            if not isinstance(label, str):
                fault = f"a label must be a string, got {p.wire_name(label)}"
            elif not valid_label(label):
                fault = f"a label must be {LABEL_RULE}, got {label!r}"
            elif not isinstance(config, dict) or not all(isinstance(key, str) for key in config):
                fault = f"the config of {label!r} must be a map with strings for keys"
            else:
                continue
            raise p.ProtocolError(p.BAD_MESSAGE, f"'seed_salt.configs': {fault}")
        salt = await self._store(Call(Store.seed_salt, tournament, schedule, configs))
        session.send("seed_salt", tournament=tournament, salt=salt)

    # ---- matches -------------------------------------------------------------------------

    def _players_needed(self, game: str, config: Mapping[str, Any]) -> int:
        return make_config(games.get(game).Config, config).players

    def _rating(self, bot: str, game: str) -> float:
        """The bot's TrueSkill mu in the game's default variant, the prior mean if unrated
        (lobby seeks may carry a config; pairing by the default variant's rating is close enough)."""
        return self.skill.get((bot, game), Rating().mu)

    def _capacity(self, bot: str) -> int:
        """How many more matches the bot may start: its reservations count at once."""
        session = self.sessions.get(bot)
        if session is None or not session.connected or bot == ADMIN:
            return 0
        return self._max_matches(session) - len(session.matches)

    def _max_matches(self, session: BotSession) -> int:
        """The server's limit, or the bot's own if its hello set a lower one."""
        return min(self.limits.max_matches, session.max_matches or self.limits.max_matches)

    def _require_ready(self, bots: Sequence[str], *, check_capacity: bool = True) -> None:
        _check_players(bots)
        for bot in bots:
            session = self.sessions.get(bot)
            if session is None or not session.connected:
                raise p.ProtocolError(p.BOT_OFFLINE, f"bot {bot!r} is not connected")
            if check_capacity and len(session.matches) >= (most := self._max_matches(session)):
                plays = f"{most} match{'es' if most != 1 else ''}"
                raise p.ProtocolError(p.BUSY, f"bot {bot!r} plays {plays} already, the most it may")

    def _pair_soon(self) -> None:
        """Pair the waiting seeks in a task of its own, so that no bot's moves wait on the store.
        One pass serves a burst of seeks and freed seats (it runs once they are all in), and
        each table then starts in its own task, so that their store writes share a commit."""
        if not self._pairing:
            self._pairing = True
            self._spawn(self._pair)

    async def _pair(self) -> None:
        """Start every table the waiting seeks allow; a table that cannot start is dropped, logged.
        All are reserved before any is started, so a bot's limit holds across concurrent pairings."""
        self._pairing = False
        if self._closing:
            return
        try:
            tables = self.lobby.pair()
        except Exception:  # a bug of ours: logged, and the seeks wait; raised here, it stopped the server
            log.exception("pairing the waiting seeks failed")
            return
        reserved = [(self._reserve(table.game, table.bots, table.config), table.seeks) for table in tables]
        for (live, row), seeks in reserved:
            self._hold_standing(live, seeks)
            self._spawn(self._start_table, live, row)

    def _hold_standing(self, live: LiveMatch, seeks: Iterable[Seek]) -> None:
        """Keep the standing seeks among those ``live`` was formed from, for its end (``_seek_again``)."""
        for seek in seeks:
            if seek.standing:
                self.sessions[seek.bot].standing.setdefault(live.id, []).append(seek)

    async def _start_table(self, live: LiveMatch, row: dict[str, Any]) -> None:
        try:
            await self._launch(live, row)
        except (p.ProtocolError, GameError, KeyError, sqlite3.Error) as error:  # sqlite3: a full disk, say
            log.warning("could not start %s for %s: %s", live.game.spec.name, live.bots, error)
            self._tell_seek_spent(live, error, set(live.bots))

    def _tell_seek_spent(self, live: LiveMatch, error: Exception, bots: Iterable[str]) -> None:
        """Tell ``bots``, whose seeks a match that could not start has spent (a table, or a
        challenge), to seek again after ``TABLE_RETRY_S``: unless told, they would wait for ever."""
        code = error.code if isinstance(error, p.ProtocolError) else p.STORE_UNAVAILABLE
        message = f"a {live.game.spec.name} table you were seated at could not start ({error}); your seek is spent"
        for bot in bots:
            session = self.sessions.get(bot)
            if session is not None:
                session.send("error", code=code, message=message, ref="seek", retry_after=TABLE_RETRY_S)

    def _reserve(
        self,
        game_name: str,
        bots: Sequence[str],
        config: Mapping[str, Any],
        *,
        seed: int | None = None,
        clock: Clock | None = None,
        max_retries: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> tuple[LiveMatch, dict[str, Any]]:
        """Take the bots' seats for a new match at once (no await), and the row to record."""
        if self._closing:
            raise p.ProtocolError(p.BUSY, SHUTTING_DOWN)
        whole, variant = config_and_variant(game_name, config)
        live = LiveMatch(
            id=uuid.uuid4().hex,
            game=games.get(game_name),
            bots=tuple(bots),
            config=whole,
            variant=variant,
            seed=self.rng.getrandbits(62) if seed is None else seed,
            clock=clock or self.clock,
            max_retries=self.max_retries if max_retries is None else max_retries,
            grouped=((extra or {}).get("group_size") or 0) > 1,
        )
        row = {
            "id": live.id,
            "game": game_name,
            "variant": live.variant,
            "config": live.config,
            "seed": live.seed,
            "players": list(bots),
            "max_retries": live.max_retries,
            "clock": live.clock.times() | {"reconnect_ms": self.limits.grace_ms},  # every failure rule, recorded
            "source": "server",
            "created_at": live.started,
            **{k: v for k, v in (extra or {}).items() if v is not None},
        }
        self.live[live.id] = live
        self._unopened_seeds[live.seed] += 1
        for seat, bot in enumerate(bots):
            self.sessions[bot].matches.setdefault(live.id, []).append(seat)
        return live, row

    async def _launch(self, live: LiveMatch, row: dict[str, Any]) -> tuple[str, bool]:
        """Record the reserved match as live, then play it; undo the reservation if it cannot start."""
        try:
            existing = await self._store(Call(Store.open_match, row))
        except BaseException:
            self._release(live)
            raise
        self._opened(live)
        if existing is not None:
            self._release(live)
            return existing, True
        self._spawn(self._run_match, live)
        self._broadcast_lobby()
        return live.id, False

    async def _run_match(self, live: LiveMatch) -> None:
        seats = [
            RemoteSeat(self.sessions[bot], self.alarms, live.id, seat, functools.partial(self._away, live, bot))
            for seat, bot in enumerate(live.bots)
        ]
        result: MatchResult | None = None
        with live.scope:
            try:
                result = await play_match(
                    live.game,
                    seats,
                    config=live.config,
                    seed=live.seed,
                    clock=live.clock,
                    max_retries=live.max_retries,
                    match_id=live.id,
                    on_event=functools.partial(self._on_match_event, live),
                    max_steps=self.limits.max_steps,
                    turns=live.turns,
                    forfeits=live.forfeits,
                )
            except Exception as error:  # a fault of ours (the store, the network layer): void, never a result
                if isinstance(error, sqlite3.Error):  # a full disk, a lost file: one line, as at a match's start
                    # said as the store's: another program's lock on it is no fault of the server
                    cause = "the store failed"
                    log.warning("match %s is void: %s: %s", live.id, cause, error)
                else:
                    cause = "server fault"
                    log.exception("match %s failed", live.id)
                live.void_reason = self._told(f"{cause}: {type(error).__name__}: {error}")
        live.result = result
        with trio.CancelScope(shield=True):
            if result is None:  # cancelled (abort, shutdown) or a fault of ours: seats were not told yet
                await self._void(live, live.void_reason or "void")
            self._finish(live)

    def _on_match_event(self, live: LiveMatch, event: MatchEvent) -> Awaitable[None] | None:
        """Relay what play_match reports. Only the end waits (on the store); the events of every
        move are handled at once, without a coroutine to create and await."""
        if event.kind == "step":
            for seat, attempt in event.data["attempts"].items():
                session = self.sessions[live.bots[seat]]
                if session.acks:
                    session.send("move_ack", match=live.id, seat=seat, step=event.step - 1, attempt=attempt)
            live.step, live.clocks = event.step, event.data["clocks"]
            if self.watchers and any(live.id in watcher.watching for watcher in self.watchers):
                self._to_watchers(live.id, "delta", match=live.id, step=event.step, **self._live_view(live), clocks=live.clocks)
        elif event.kind == "rejected":
            seat = event.data["seat"]
            retries_left = live.max_retries - event.data["attempt"]
            self.sessions[live.bots[seat]].send(
                "move_rejected",
                match=live.id,
                seat=seat,
                step=event.step,
                attempt=event.data["attempt"],
                reason=event.data["reason"],
                retries_left=retries_left,
            )
        elif event.kind == "start":
            live.state = event.state  # read for a new spectator's snapshot; play_match owns it
            live.info = event.data
            live.announced.set()  # its seats' match_start go out before play_match next yields
        elif event.kind == "end":
            return self._record_end(live, event.data["result"])
        return None

    async def _record_end(self, live: LiveMatch, result: MatchResult) -> None:
        # Shielded: the writer commits a job even when its caller is cancelled, so an abort or a
        # shutdown landing now would tell the seats "void" about a match stored as finished and rated.
        with trio.CancelScope(shield=True):
            # committed before anyone hears the result
            rated, to_play = await self._store(
                Both(Call(Store.finish_match, result, teams=live.game.spec.teams), Call(Store.deals_to_play, [live.id]))
            )
        self._board_changed(result.game)
        self._rated(rated)
        if result.status == "finished":
            self.metrics.matches_finished += 1
        else:
            self.metrics.matches_voided += 1
        summary = _public_summary(result.summary()) | {"players": result.players}
        held = self._deals_live({"id": live.id, "seed": live.seed, "status": result.status}, to_play)
        if any(live.id in watcher.watching for watcher in self.watchers):  # every live match is looked at only then
            told = summary | {"view": {} if held else result.final_view, "withheld": held}
            hidden = _without_result(told) if held else told
            for watcher in list(self.watchers):
                if live.id in watcher.watching:
                    watcher.send("result", **(told if watcher.trusted else hidden))
        if not held:  # the last of its deal's tables: the others are shown now
            self._show_held(live.seed)
        self._remember(Ended(summary, live.seed, held))
        if held:
            self._spawn(self._recheck_held, live.id, live.seed)

    async def _recheck_held(self, match_id: str, seed: int) -> None:
        """Held by what the store said at its commit, which may have held the match's last twin
        too (both in one batch of the writer); the twin's end, told first, found nothing held."""
        to_play = await self._read(lambda s: s.deals_to_play([match_id]))
        if match_id not in to_play and seed not in self._unopened_seeds:
            self._show_held(seed)

    def _show_held(self, seed: int) -> None:
        if self._held_seeds.pop(seed, None):
            for entry in self.recent:
                if entry.seed == seed:
                    entry.held = False

    def _rated(self, ratings: Mapping[tuple[str, str], Rating]) -> None:
        """What the store rated as a match ended, for pairing by rating."""
        for (bot, variant), rating in ratings.items():
            self.skill[(bot, variant)] = rating.mu

    async def _void(self, live: LiveMatch, reason: str) -> None:
        to_play: AbstractSet[str] = {live.id}  # its deals' hold stays, unless the store says otherwise
        try:
            rated, to_play = await self._store(
                Both(Call(Store.void_match, live.id, reason, live.turns), Call(Store.deals_to_play, [live.id]))
            )
            self._rated(rated or {})
        except sqlite3.Error as error:  # a full disk: written again until it is taken; the seats are told now
            log.warning("could not record match %s as void (tried again every %g s): %s", live.id, VOID_RETRY_S, error)
            if not self._unrecorded_voids:
                self._spawn(self._record_voids_later)
            self._unrecorded_voids[live.id] = (reason, live.turns)
        self._board_changed(live.game.spec.name)  # its twins, held while it was live, are shown now
        self.metrics.matches_voided += 1
        summary = {
            "match": live.id,
            "game": live.game.spec.name,
            "players": list(live.bots),
            "status": "void",
            "reason": "void",
        }
        for seat, bot in enumerate(live.bots):
            session = self.sessions.get(bot)
            if session is not None and live.id in session.matches:
                ended = {"status": "void", "reason": "void", "detail": reason, "returns": None, "outcomes": None, "ranks": None}
                session.send("match_end", match=live.id, seat=seat, forfeit_seat=None, **ended)
        self._to_watchers(live.id, "result", **summary, detail=reason)
        self._remember(Ended(summary | {"detail": reason}, live.seed, held=False))
        if not self._deals_live({"id": live.id, "seed": live.seed, "status": VOID}, to_play):
            self._show_held(live.seed)  # the last of its deal's tables: the others are shown now

    async def _record_voids_later(self) -> None:
        while self._unrecorded_voids:
            await trio.sleep(VOID_RETRY_S)
            await self._record_voids()

    async def _record_voids(self) -> None:
        """Write the voids the store could not take when their matches ended, until one fails again."""
        for match_id, (reason, turns) in list(self._unrecorded_voids.items()):
            try:
                self._rated(await self._store(Call(Store.void_match, match_id, reason, turns)) or {})
            except sqlite3.Error:
                return
            if self._unrecorded_voids.pop(match_id, None) is not None:  # the retry task and a shutdown may both write it
                log.info("recorded match %s as void", match_id)

    def _opened(self, live: LiveMatch) -> None:
        if not live.opened:
            live.opened = True
            self._unopened_seeds[live.seed] -= 1
            if not self._unopened_seeds[live.seed]:
                del self._unopened_seeds[live.seed]

    def _release(self, live: LiveMatch) -> None:
        """Free the match's seats; also for a reserved match that never started, which a
        shutdown waiting for the live matches to end must hear of as well. Seats freed may
        complete waiting tables: a pass that ran while a ``create_match`` held a bot's last
        seat, and found the key's match existed, left its seek waiting (found by a QA helper)."""
        self._opened(live)  # or never will be
        self.live.pop(live.id, None)
        live.ended.set()
        live.announced.set()
        for bot in set(live.bots):
            session = self.sessions.get(bot)
            if session is not None:
                session.matches.pop(live.id, None)
                session.resigned.pop(live.id, None)
                session.standing.pop(live.id, None)  # spent by a table that never started, or back already (_finish)
                self._forget_if_idle(session)
        if not self.live:
            self._all_ended.set()
        self._broadcast_lobby()
        self._pair_soon()

    def _finish(self, live: LiveMatch) -> None:
        self._seek_again(live)
        self._release(live)
        for watcher in self.watchers:
            watcher.watching.discard(live.id)

    def _seek_again(self, live: LiveMatch) -> None:
        """Put the standing seeks ``live`` was formed from back in the lobby, for the pairing its
        release runs: its bots play on without seeking again, one message each a match saved."""
        if self._closing:
            return  # the release drops them
        for bot in dict.fromkeys(live.bots):
            session = self.sessions.get(bot)
            if session is not None:
                for seek in session.standing.pop(live.id, []):
                    self.lobby.again(seek)

    def _remember(self, ended: Ended) -> None:
        """Keep an ended match for the lobby, and log it: the operator's one line per match."""
        summary = ended.summary
        self.recent.insert(0, ended)
        if ended.held:
            self._held_seeds[ended.seed] += 1
        for dropped in self.recent[RECENT_KEPT:]:
            if dropped.held:
                self._held_seeds[dropped.seed] -= 1
                if not self._held_seeds[dropped.seed]:
                    del self._held_seeds[dropped.seed]
        del self.recent[RECENT_KEPT:]
        if log.isEnabledFor(logging.INFO):  # a match's end is the hot path: nothing built for a line not written
            returns = f"{summary.get('reason')}, returns {summary.get('returns')}"
            how = summary.get("detail") if summary["status"] == VOID else returns
            players = " v ".join(summary["players"])
            log.info("match %s %s %s: %s, %s", summary["match"], summary["game"], players, summary["status"], how)

    # ---- spectators ----------------------------------------------------------------------

    def _lobby_fields(self, game: str | None) -> dict[str, Any]:
        """The lobby of one game, or of all (None); built anew for each message, as a busy
        connection encodes it later, after more matches may have ended."""
        live = [match for match in self.live.values() if game in (None, match.game.spec.name)]
        waiting = [seek for seek in self.lobby.waiting() if game is None or game in seek["games"]]
        dealing = collections.Counter(match.seed for match in self.live.values())
        recent = (
            ended.shown(dealt_again=dealing[ended.seed] > (ended.summary["match"] in self.live))
            for ended in self.recent
            if game in (None, ended.summary["game"])
        )
        return {
            "game": game,
            "live": [match.summary() for match in live[-LOBBY_LIST_LIMIT:]],
            "live_count": len(live),
            "live_games": dict(collections.Counter(match.game.spec.name for match in self.live.values())),
            "recent": list(itertools.islice(recent, LOBBY_RECENT)),
            "waiting": waiting[-LOBBY_LIST_LIMIT:],
            "waiting_count": len(waiting),
        }

    def _broadcast_lobby(self) -> None:
        """Tell spectators of the change, with the next lobby message (see ``LOBBY_INTERVAL_S``)."""
        self._lobby_changed.set()

    async def _lobby_feed(self) -> None:
        while True:
            await self._lobby_changed.wait()
            self._send_lobby()
            await trio.sleep(LOBBY_INTERVAL_S)

    def _send_lobby(self) -> None:
        self._lobby_changed = trio.Event()
        lobbies: dict[str | None, dict[str, Any]] = {}  # one per game followed, shared by its spectators
        for watcher in list(self.watchers):
            if watcher.game not in lobbies:
                lobbies[watcher.game] = self._lobby_fields(watcher.game)
            watcher.send("lobby", **lobbies[watcher.game])

    def _to_watchers(self, target: str, kind: str, **fields: Any) -> None:
        for watcher in list(self.watchers):
            if target in watcher.watching:
                watcher.send(kind, **fields)

    async def _watch_connection(self, ws: ServerConnection) -> None:
        connection, outgoing, direct = self._connection(ws, binary=False)
        watcher = Watcher(connection, direct.drained, self._client_address(ws))
        self.watchers.add(watcher)
        # A leaderboard may take seconds to compute (BOARD_WAIT_S): its requests are answered in
        # their own order, by a task of their own, so that the spectator's later messages (a
        # match to watch) are not held behind one
        boards, board_requests = trio.open_memory_channel[Mapping[str, Any]](BOARDS_ASKED)
        try:
            watcher.send("lobby", **self._lobby_fields(watcher.game))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump, ws, connection, outgoing, direct)
                answering = trio.CancelScope()
                nursery.start_soon(self._answer_boards, watcher, board_requests, answering)
                async for msg in self._frames(ws, _Intake(self.limits, self.metrics, connection, watcher.send)):
                    if msg.get("t") != "leaderboard":
                        await self._answer_watcher(watcher, msg)
                        continue
                    try:
                        boards.send_nowait(msg)
                    except trio.WouldBlock:
                        self.metrics.errors += 1
                        later = f"{BOARDS_ASKED + 1} leaderboards asked are still to be answered; ask again in {BOARD_WAIT_S:g} s"
                        watcher.send("error", code=p.COMPUTING, message=later, retry_after=BOARD_WAIT_S, ref=_ref(msg))
                answering.cancel()  # no board is owed to a connection that is done, whoever closed it
                if connection.closing is None:
                    nursery.cancel_scope.cancel()
        finally:
            self.watchers.discard(watcher)

    async def _answer_boards(
        self, watcher: Watcher, requests: trio.MemoryReceiveChannel[Mapping[str, Any]], scope: trio.CancelScope
    ) -> None:
        """Answer the spectator's leaderboard requests in turn, until ``scope`` is cancelled: a
        connection the server closed (a wrong admin token, undecodable frames) kept this task,
        and with it the connection's place among the spectators, for ever (found by a QA helper)."""
        with scope:
            async for msg in requests:
                await self._answer_watcher(watcher, msg)

    async def _answer_watcher(self, watcher: Watcher, msg: Mapping[str, Any]) -> None:
        """Handle one spectator message; what goes wrong is told to the spectator, which stays."""
        try:
            await self._watch_message(watcher, msg)
        except p.ProtocolError as error:
            self.metrics.errors += 1
            later = {} if error.retry_after is None else {"retry_after": error.retry_after}
            watcher.send("error", code=error.code, message=error.message, ref=_ref(msg), **later)
        except (StoreError, sqlite3.Error) as error:  # as HTTP's 503: the spectator stays, and may ask again
            log.warning("spectator's %s: the store cannot be read: %s", _ref(msg), error)
            self.metrics.errors += 1
            message = self._told(f"the store cannot be read: {error}")
            watcher.send("error", code=p.STORE_UNAVAILABLE, message=message, ref=_ref(msg))
        except Exception as error:  # a bug of ours, as for a bot's message: told, logged, the spectator stays
            log.exception("spectator's %r failed", _ref(msg))
            self.metrics.errors += 1
            message = f"this message could not be handled: {error}"
            watcher.send("error", code=p.BAD_MESSAGE, message=message, ref=_ref(msg))

    async def _watch_message(self, watcher: Watcher, msg: Mapping[str, Any]) -> None:
        kind = p.check(msg, p.WATCH_MESSAGES)
        if kind == "ping":
            watcher.send("pong")
        elif kind == "admin":  # a remote tournament scores its duplicate groups' tables as each ends
            with self._login_try(watcher.address, ADMIN) as login:
                if login.refusal is not None:
                    why, wait = login.refusal
                    self.metrics.errors += 1
                    watcher.send("error", code=p.RATE_LIMITED, message=why, retry_after=wait, ref="admin")
                    watcher.connection.close(p.CLOSE_TRY_AGAIN, TOO_MANY_LOGINS)
                    return
                login.verdict = await self._is_admin_token(msg["token"])
            if not login.verdict:  # a guess costs a connection, as a bot's hello does
                self.metrics.errors += 1
                watcher.send(
                    "error", code=p.NOT_ADMIN, message="that is not the admin token; the connection is closed", ref="admin"
                )
                watcher.connection.close(p.CLOSE_AUTH_FAILED, "wrong admin token")
                return
            watcher.trusted = True
            watcher.send("trusted")
        elif kind == "lobby":
            if "game" in msg:  # from now on its lobbies are of this game (null: of every game)
                if msg["game"] is not None:
                    try:
                        games.get(msg["game"])
                    except GameError as error:
                        raise p.ProtocolError(p.UNKNOWN_GAME, str(error)) from None
                watcher.game = msg["game"]
            watcher.send("lobby", **self._lobby_fields(watcher.game))
        elif kind == "unwatch":
            watcher.watching.discard(msg["match"])
        elif kind == "watch":
            match_id = await self._resolve(msg["match"])
            live = self.live.get(match_id)
            if live is not None:
                watcher.watching.add(live.id)
                watcher.send("snapshot", **live.summary(), status=LIVE, **self._live_view(live))
                return
            record, to_play = await self._read(lambda s: (s.match(match_id, turns=False), s.deals_to_play([match_id])))
            if record is None:
                raise p.ProtocolError(p.UNKNOWN_MATCH, f"no match {msg['match']!r}")
            held = self._deals_live(record, to_play)
            told = _finished_summary(record) | {"view": {} if held else record.get("final_view") or {}, "withheld": held}
            watcher.send("snapshot", **(_without_result(told) if held and not watcher.trusted else told))
        elif kind == "replay":
            # One replay at a time per spectator: the next is made once the last was written.
            # A long match's replay is tens of megabytes: made whenever asked, a spectator that
            # does not read piled them up in its queue (gigabytes) until it was cut off.
            if not await watcher.drained():
                return  # cut off, its unread requests still to come: none is made for nobody
            binary = watcher.connection.binary
            match_id = await self._resolve(msg["match"])
            async with self._replays:
                replay = await self._replay(match_id)
                watcher.send_prepared(await trio.to_thread.run_sync(p.prepare, p.message("replay", **replay), binary))
        elif kind == "leaderboard":
            watcher.send("leaderboard", **await self._leaderboard(msg.get("game")))

    async def _resolve(self, match_id: str) -> str:
        """The id a spectator means: the lobby shows ids cut to 8 characters, so a unique
        prefix of a live or stored id stands for it; an ambiguous one is refused naming
        the candidates. Anything else is returned as given (and is then unknown)."""
        if match_id in self.live or not _ID_PREFIX.fullmatch(match_id):
            return match_id
        sql = "SELECT id FROM matches WHERE id GLOB ? ORDER BY id LIMIT 4"  # a hex prefix holds no GLOB wildcard
        stored = await self._read(lambda s: [row[0] for row in s.conn.execute(sql, (match_id + "*",))])
        found = sorted({*stored, *(live for live in self.live if live.startswith(match_id))})
        if len(found) > 1:
            shown = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
            raise p.ProtocolError(p.UNKNOWN_MATCH, f"match id prefix {match_id!r} is ambiguous: {shown}")
        return found[0] if found else match_id

    async def _replay(self, match_id: str) -> dict[str, Any]:
        record, to_play = await self._read(lambda s: (s.match(match_id), s.deals_to_play([match_id])))
        if record is None or record["status"] != FINISHED:
            raise p.ProtocolError(p.UNKNOWN_MATCH, f"no finished match {match_id!r} to replay")
        if self._deals_live(record, to_play):
            raise p.ProtocolError(p.UNKNOWN_MATCH, f"match {match_id!r} can be replayed once the matches dealt its cards end")
        views = await trio.to_thread.run_sync(_replay_views, record)
        return {**_finished_summary(record), "views": views, "turns": record["turns"]}


class ClientGone(logging.Filter):
    """websockets logs two ordinary ways a client goes as internal errors, with a traceback
    each: hanging up while bytes that ``DirectWrite`` left websockets to flush were pending
    (websockets writes them at the end of the stream, expecting none there: on a TLS or other
    wrapped stream, read by websockets' own loop; ``ArenaConnection._send_last`` lets it go on
    a socket), and no longer answering pings (the keepalive's close then fails on the socket
    the client left full). Said in one line at INFO instead; any other error keeps its traceback."""

    GONE = (trio.BrokenResourceError, ConnectionClosed)
    MESSAGES = ("unexpected internal error", "keepalive ping failed")

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, self.GONE) and record.msg in self.MESSAGES:
            record.msg, record.args = "a client went (%s): %s", (record.msg, error)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


CLIENT_GONE = ClientGone()


def _unread(ws: ServerConnection) -> bool:
    """Whether a message the server has not read yet may wait: in websockets' frame queue; in
    its reader task, which keeps the frames of what it last read while it takes the send lock
    (to write first any answer of its own they call for, a pong) and queues them after; or in
    the kernel's socket buffer, where they stay until the reader task comes back to them (the
    event loop stood still, or websockets stopped reading while its queue was full)."""
    if ws.recv_messages.recv_frames.statistics().current_buffer_used or ws.send_lock.locked():
        return True
    if not isinstance(ws.stream, trio.SocketStream):
        return False
    waiting = array.array("i", [0])
    try:
        fcntl.ioctl(ws.stream.socket.fileno(), termios.FIONREAD, waiting)
    except (OSError, ValueError):  # closed: nothing more will be read (ValueError: closed in this process, fd -1)
        return False
    return waiting[0] > 0


async def _discard_until_closed(ws: ServerConnection) -> None:
    """Read and drop what the client still sends while the close is under way. Waiting
    without reading would not do: once its queue of unread messages is full, websockets
    stops reading the socket, so it would never see the client's close frame nor its
    disconnect, and the connection (and with it the server's shutdown) would hang."""
    with contextlib.suppress(ConnectionClosed):
        async for _ in ws:
            pass


async def _cut_off(ws: ServerConnection) -> None:
    """End a connection whose peer stopped reading while its socket is full. websockets cannot:
    its pings and its close frame wait forever behind the blocked send, so neither the heartbeat
    nor a close ends it, nor then the server's shutdown. Close the socket (``ArenaConnection``
    wakes its reader if it waits for room), with a reset."""
    reset_on_close(ws.stream)
    await ws.close_stream()


def _ref(msg: Mapping[str, Any]) -> str | None:
    """The type of the message an error answers. Only a string is echoed: anything else the
    client sent there may not survive the other encoding when the error is replayed on resume
    (an integer over 64 bits in msgpack, a bytes map key in JSON)."""
    kind = msg.get("t")
    return kind if isinstance(kind, str) else None


_ID_PREFIX = re.compile(r"[0-9a-f]{1,31}")  # match ids are 32 hex digits (uuid4().hex)


def _read(given: Mapping[str, Any], checked: Mapping[str, Any]) -> dict[str, Any]:
    """The keys a seek or challenge set, with the values a game reads them as (``"3"`` is 3,
    ``5`` is 5.0 for a number): pairing compares these, game by game, so that a bot sending
    text for a number sits with one sending the number."""
    return {key: checked[key] for key in given}


def _shown(given: Mapping[str, Any], reads: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A seek's config as the lobby shows it: as its games read it, or as sent where they read a
    key differently (``"1"`` is 1.0 for one game and True for another)."""
    return dict(reads[0]) if len({config_key(read) for read in reads}) == 1 else dict(given)


def _clamped_int(text: str) -> int:
    """A decimal integer, past a billion read as a billion (of its sign): int() refuses a number
    of over 4,300 digits, leading zeros included, and a query's limit is clamped far below."""
    digits = text.lstrip("-").lstrip("0") or "0"
    return (-1 if text.startswith("-") else 1) * (int(digits) if len(digits) < 10 else 10**9)


def _unseeded(record: Mapping[str, Any]) -> dict[str, Any]:
    """A live match's seed would reveal every deal still to come, and its grace is the server's
    own margin: both are shown only after the end."""
    if record["status"] != LIVE:
        return dict(record)
    hidden = {k: v for k, v in record.items() if k != "seed"}
    hidden["clock"] = {k: v for k, v in (record.get("clock") or {}).items() if k != "grace_ms"}
    return hidden


DEALT_RESULT = ("reason", "detail", "returns", "outcomes", "ranks", "forfeit_seat")
"""How a match ended, which its deal decided: who won a showdown, which partner's card a
rejected hint named. Null, like its view, while the deal is still played at another table."""


def _without_result(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {**fields, **dict.fromkeys(DEALT_RESULT)}


@dataclass
class Ended:
    """An ended match as the lobbies list it: ``held`` while its deal is played at another
    table, shown then without how it ended, until the last of those tables ends."""

    summary: dict[str, Any]
    seed: int
    held: bool

    def shown(self, dealt_again: bool) -> dict[str, Any]:
        """``dealt_again``: a live match deals from its seed since it ended (an admin's seed, twice),
        which withholds its record again too (``Store.deals_to_play``)."""
        return _without_result(self.summary) if self.held or dealt_again else self.summary


def _public_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A result as spectators get it: the match id under ``match``, as in every other message."""
    return {"match": summary["match_id"], **{k: v for k, v in summary.items() if k != "match_id"}}


def _finished_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("game", "players", "status", "reason", "detail", "returns", "outcomes", "ranks", "config", "forfeit_seat")
    return {"match": record["id"], **{key: record.get(key) for key in keys}}


def _replay_views(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The full view before the first step and after every step, rebuilt from the actions by
    the game, which must be installed here: one whose plugin was uninstalled keeps its record
    (``/api/matches/{id}``) but has nothing to rebuild its views with."""
    try:
        game = games.get(record["game"])
    except UnknownGame:
        raise p.ProtocolError(
            p.UNKNOWN_GAME,
            f"match {record['id']} is of {record['game']}, which is not installed on this server: it cannot be"
            f" replayed, and its record is at /api/matches/{record['id']}",
        ) from None
    state = game.new(record["config"], record["seed"])
    views = [state.full_view()]
    steps: dict[int, dict[int, str]] = {}
    for turn in record["turns"]:
        if turn["accepted"]:
            steps.setdefault(turn["step"], {})[turn["seat"]] = turn["action"]
    for step in sorted(steps):
        if state.is_over or set(steps[step]) != set(state.to_move()):
            # the last, when a seat forfeited while another's move was already taken: never applied
            break
        state.step(steps[step])
        views.append(state.full_view())
    return views


def _request_target(target: str) -> urllib.parse.SplitResult:
    """The path and query of an HTTP request's target. A path (origin form) is not read as a
    URL, where ``//health`` is the host "health" and no path; a whole URL (absolute form,
    ``http://host/health``, as some proxies and clients send and a server must take: RFC 9112,
    3.2.2) gives its own path. The path is percent-decoded, as a client may escape any of its
    characters: the upgrade to /%62ot was refused as a plain request to /bot (426)."""
    if target[:8].lower().startswith(("http://", "https://")):
        with contextlib.suppress(ValueError):  # not a URL (http://[::1/health): read as a path, as it was
            url = urllib.parse.urlsplit(target)
            return urllib.parse.SplitResult("", "", urllib.parse.unquote(url.path) or "/", url.query, "")
    path, _, query = target.partition("?")
    return urllib.parse.SplitResult("", "", urllib.parse.unquote(path), query, "")


def _check_players(bots: Sequence[Any]) -> None:
    if not all(isinstance(bot, str) for bot in bots):
        raise p.ProtocolError(p.BAD_MESSAGE, "'create_match.bots' must be a list of bot names")
    if ADMIN in bots:
        raise p.ProtocolError(p.BAD_MESSAGE, "the admin session does not play")


def _peer_address(connection: ServerConnection) -> str:
    """The peer's host (an IP address as ``canonical_ip`` spells it), or "" once its socket is
    gone (a peer that left mid-handshake)."""
    try:
        host = str(connection.remote_address[0])
    except (OSError, TypeError, IndexError):  # not connected any more; or a socket family without a host
        return ""
    return canonical_ip(host) or host


_PORT = re.compile(r"[0-9]{1,5}")


def canonical_ip(text: str, *, strict: bool = False) -> str | None:
    """One spelling per IP address, so that limits per address count a client once: an IPv4
    address mapped into IPv6 (a dual-stack socket's peer) as IPv4, without a zone, a port or
    brackets (``[2001:db8::1]:443``, ``192.0.2.1:80``, as some proxies write them). None
    when ``text`` is no IP address; ValueError instead when ``strict``."""
    host, port = text.strip(), None
    if host.startswith("["):
        host, _, after = host[1:].partition("]")
        if after:
            port = after[1:] if after[0] == ":" else ""  # "[::1]80" is no address with a port
    elif host.count(":") == 1:  # IPv4 with a port
        host, _, port = host.partition(":")
    try:
        if port is not None and not _PORT.fullmatch(port):  # "1.2.3.4:abc" is no address with its port dropped
            raise ValueError(port)
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        if strict:
            raise ValueError(f"{text!r} is no IP address") from None
        return None
    return str(getattr(address, "ipv4_mapped", None) or address)


def _forwarded_for(headers: Sequence[str], trusted: AbstractSet[str]) -> str | None:
    """The client a trusted proxy forwarded for, from its ``X-Forwarded-For`` headers: the
    rightmost entry that is not a trusted proxy itself (those to its left are the client's to
    write). None when there is none; ValueError when that entry is no IP address."""
    for entry in reversed([entry for value in headers for entry in value.split(",") if entry.strip()]):
        address = canonical_ip(entry)
        if address is None:
            raise ValueError(f"a trusted proxy forwarded for {entry.strip()[:80]!r}, no IP address")
        if address not in trusted:
            return address
    return None


@dataclass(frozen=True)
class JsonText:
    """An HTTP answer already encoded (off the event loop: ``p.json_in_pieces``)."""

    text: str


def _json_response(connection: ServerConnection, status: int, body: Any) -> Response:
    response = connection.respond(status, body.text if isinstance(body, JsonText) else p.dumps(body, default=str))
    del response.headers["Content-Type"]  # respond() sets text/plain; headers append, they do not replace
    response.headers["Content-Type"] = "application/json"
    return response


def leaderboard(store: Store, game: str | None, resamples: int = 100) -> dict[str, Any]:
    """What /api/leaderboard and the spectators' ``leaderboard`` carry: one game's variants
    (TrueSkill, record, Nash with intervals), or without a game the agents-versus-games table."""
    if game:
        return {"game": game, "variants": game_leaderboards(store, game, resamples=resamples)}
    whole = overall(store)
    return {"game": None, "bots": [] if whole is None else whole.rows(), "games": [] if whole is None else whole.game_rows()}


def tune_gc_for_serving() -> None:
    """Collect garbage less often in a process that serves, from its start on.

    With the default threshold (a young-generation pass every 700 net allocations) a busy
    server collects every few messages, and each pass walks the objects allocated since:
    the collector took about a quarter of the event loop's time in ``bench.server``.
    Freezing what exists at startup (modules, games, the server) keeps it out of every pass.

    A young pass walks the young objects still alive: on a busy server the live matches'
    turns and the sessions' kept messages, which a pass at 20,000 net allocations found
    48,000 of, 20 ms a pass, about one a second at full load (``bench.server``). Nearly
    everything a match allocates is freed as it goes, so the net count grows slowly: at
    100,000, passes came about once in 20 s, and the server relayed about 4% more moves a
    second over twelve alternated runs (from 4% fewer to 15% more in one run). The last
    threshold is 4 where it was 20, so a full collection comes after as many net
    allocations as before (8 million): the cycles a closed connection leaves, which live
    in the old generation, wait no longer for it.
    Cycles that survived one young pass wait for up to 2 million (400,000 before)."""
    gc.freeze()
    gc.set_threshold(100_000, 20, 4)


OPEN_FILES_WANTED = 1 << 16
OPEN_FILES_SPARE = 64  # files the server holds besides its websockets: listeners, the store, its readers


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files towards its hard limit.

    Every connection is a file, and the usual soft limit of 1,024 (where the hard limit is
    usually far higher) would refuse bots past about a thousand, the server's accept loop
    then failing with EMFILE until some leave. As far as ``OPEN_FILES_WANTED`` (65,536) is
    enough for a server on one event loop; an operator's higher soft limit is kept, and so is
    the soft limit where the system refuses more (macOS caps it below an unlimited hard one).
    Returns the soft limit now in force, for the caller to set against its connection limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES_WANTED)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return OPEN_FILES_WANTED if soft == resource.RLIM_INFINITY else soft


async def open_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """Bind ourselves, so that port 0 gives a real port we can print.

    A name with several addresses (``localhost``: ::1 and 127.0.0.1 on most systems) is
    served on one port on all of them: with port 0 each got a port of its own, and the one
    printed reached only one address (found by a QA helper). So the port the first address
    got is taken on every address, and another is picked while that one is taken elsewhere."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    for _ in range(SAME_PORT_TRIES):
        if len({listener.socket.getsockname()[1] for listener in listeners}) == 1:  # always, but with port 0
            return listeners
        chosen = bound_port(listeners)
        for listener in listeners:
            await listener.aclose()
        try:
            return await trio.open_tcp_listeners(chosen, host=host)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
        listeners = await trio.open_tcp_listeners(0, host=host)
    return listeners  # an address listed twice (a hosts file's repeated line) never takes one port twice


def bound_port(listeners: Sequence[trio.SocketListener]) -> int:
    return int(listeners[0].socket.getsockname()[1])

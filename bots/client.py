"""The bot SDK: connect any policy to an arena server.

``run_bot(policy, url, name, token, games=[...])`` says hello, seeks matches, answers
every ``turn`` by calling ``policy(turn)`` (sync or async) with the whole turn, and
reconnects with ``resume`` after a dropped connection, so the server replays what was
missed. A policy returns an action string or a ``Move`` carrying the extras (raw reply,
prompt, tokens, cost, log-probs, format error); None is a reply that held no action (a
format error: the turn is asked again, as an illegal answer's is), and is logged, since a
policy that forgot its ``return`` says it too. Ctrl-C ends ``run_bot`` with a plain
``KeyboardInterrupt``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.trio.client import connect

from arena import protocol as p
from arena.match import CRASH
from arena.seats import Move, SeatForfeit, Turn, as_move, in_worker_thread, match_end_fields, policy_callable
from games.api import Observation
from games.render import count

log = logging.getLogger("arena.bot")

Policy = Callable[[Turn], "str | Move | Awaitable[str | Move]"]
UNANSWERED_HELLOS = 3
"""Connections a run that was never welcomed lets the server close before it stops: a
websocket server that is no arena's closed every one, and the bot retried for ever."""
FATAL_CLOSES = {p.CLOSE_AUTH_FAILED: "the server refused the token", p.CLOSE_BAD_VERSION: "protocol version mismatch"}
FATAL_REFUSALS = frozenset({p.UNKNOWN_GAME, p.BAD_CONFIG, p.BAD_MESSAGE, p.UNKNOWN_BOT})
"""A seek or challenge refused for one of these would be refused again: waiting for a match is
pointless. A challenge refused for another reason (the opponent not connected, not seeking the
game, or busy) is sent again, as the opponent may come back to the lobby at any moment."""


CHALLENGE_RETRY_S, CHALLENGE_RETRY_MOST_S = 0.5, 5.0
"""The first wait before a refused challenge is sent again, and the longest."""
CHALLENGE_QUIET_S = 2.0
"""How long a challenger is refused before it says why: between two matches an opponent is
busy or not seeking for a moment, and a line each time was noise."""

STABLE_S = 1.0
"""A connection that stayed up this long after its welcome was a working one: the reconnection
backoff and the stopping run's count of time away start anew after it. One cut sooner (a server
in a crash loop, a proxy that drops what it lets through) would otherwise be retried ten times a
second for ever, and a stopping run never gave up."""

WELCOME_WAIT_S = 30.0
"""How long a connection waits for the answer to its hello: an arena answers at once (it has
10 s to read the hello), and a server that says nothing is not one, or not working."""


class BotStopped(Exception):
    """The server will not take this bot (a bad token, another login, a protocol mismatch,
    a read-only server, a seek it can never pair) or cannot be reached at all. ``close_code``
    is the server's close code where a close said so."""

    def __init__(self, message: str, close_code: int | None = None) -> None:
        super().__init__(message)
        self.close_code = close_code


def backoff(first: float = 0.1, most: float = 5.0) -> Iterator[float]:
    """Doubling delays, each drawn between half and one and a half of its step: bots dropped
    together (a server restart) came back at every step in the same millisecond, thousands
    of handshakes at once against a server's connection limit."""
    delay = first
    while True:
        yield delay * random.uniform(0.5, 1.5)
        delay = min(most, delay * 2)


RESULTS_KEPT = 1_000
"""The match ends a run with no number of matches keeps (the last ones, and up to as many
more): it kept every one, a kilobyte each, for as long as the bot ran."""


@dataclass
class BotRun:
    """What a run of the SDK saw: its matches' ends (every one when the run has a number of
    matches, else the last ``RESULTS_KEPT`` at least), how many ended, the matches lost while
    the bot was away whose end no message brought and no record on the server showed (one
    forfeited past the reconnection window, or voided by a restarted server, is read from its
    record into the results), and the errors it sent."""

    results: list[dict[str, Any]] = field(default_factory=list)
    ended: int = 0
    lost: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    reconnects: int = 0
    keep_all: bool = True

    @property
    def played(self) -> int:
        """The matches this run is done with, ended or lost: what ``matches`` counts."""
        return self.ended + len(self.lost)

    def played_said(self) -> str:
        """The matches ended, and those lost while away, which "after 0 matches" left out."""
        said = count(self.ended, "match", "matches")
        return f"{said} and {len(self.lost)} lost while away" if self.lost else said

    def record(self, end: dict[str, Any]) -> None:
        self.ended += 1
        self.results.append(end)
        if not self.keep_all and len(self.results) > 2 * RESULTS_KEPT:
            del self.results[:-RESULTS_KEPT]


@dataclass
class _State:
    matches: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # live match id -> its match_start
    seats: dict[str, set[int]] = field(default_factory=dict)  # match id -> this bot's seats not yet told it ended
    answered: set[tuple[str, int, int, int]] = field(default_factory=set)
    # answers not yet known to have arrived, by turn: sent again after a resume
    unsent: dict[tuple[str, int, int, int], tuple[str, dict[str, Any]]] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)  # live before a refused resume, not heard of since: its seat
    session: str | None = None
    welcomes: int = 0  # connections logged in so far
    welcomed_at: float = 0.0  # when the last welcome came
    last_seq: int = 0
    seeking: bool = False
    challenging: bool = False  # a challenge sent whose match_start or refusal has not come yet
    challenge_waits: bool = False  # a refused challenge waits to be sent again: nothing else sends one
    challenge_delays: Iterator[float] | None = None  # waits between refused challenges; reset by a match
    refused_since: float | None = None  # when challenges began to be refused, since the last match began
    refusals_said: set[str] = field(default_factory=set)  # the reasons said since then, each once
    server_max: int | None = None  # the most matches the server lets a bot play at once (its welcome says)
    stopping: bool = False  # told to stop: no new match, the ones in play are played out
    cancels: int = 0  # sent and not yet answered: a match paired from a seek before it comes first
    replaying: bool = False  # a welcome came: the server's replay is read once the ping sent then is answered
    pacer: Pacer | None = None  # made from the server's limits in its welcome
    soft_cap: int = 64 * 1024  # bytes: the server drops a longer message; its welcome says
    grace_s: float = 30.0  # the server's reconnection window; its welcome says
    hello_wait: float = 0.0  # what the server's refusal of the last hello asked to wait (its retry_after)
    at_once: int | None = None  # the most matches in play at once (None: the server's limit)
    send: Callable[..., Awaitable[None]] | None = None  # on the connection now open, if any
    url: str = ""  # the server's, whose match records tell how a match ended while the bot was away
    thinking: dict[tuple[str, int, int, int], trio.CancelScope] = field(default_factory=dict)  # policies at work


class Pacer:
    """A token bucket under the server's own (rate, burst), from its ``welcome``: a message
    over it is dropped and counts as a strike against the connection (a dropped move then
    loses on time), so this side waits instead.

    Messages go in the order they came to wait (trio's Lock is fair): woken all at once, the
    waiters raced for each token, and one move of a self-play match lost the race for 16 s,
    past its deadline, while the mean wait was 1.4 s (found by a QA helper)."""

    def __init__(self, limits: Mapping[str, Any]) -> None:
        self.rate = 0.8 * float(limits.get("rate", 50.0))
        self.burst = max(1.0, int(limits.get("burst", 100)) / 2)
        self.tokens = self.burst
        self.stamp = trio.current_time()
        self._turn = trio.Lock()

    async def wait(self) -> None:
        async with self._turn:
            while True:
                now = trio.current_time()
                self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await trio.sleep((1 - self.tokens) / self.rate)


async def run_bot(
    policy: Policy,
    url: str,
    name: str,
    token: str,
    *,
    games: Sequence[str],
    config: Mapping[str, Any] | None = None,
    matches: int | None = None,
    at_once: int | None = None,
    self_play: bool = False,
    challenge: str | None = None,
    delay_ms: int = 0,
    binary: bool = True,
    retry_delays: Callable[[], Iterator[float]] = backoff,
    on_message: Callable[[dict[str, Any]], None] | None = None,
    stop: trio.Event | None = None,
) -> BotRun:
    """Play until ``matches`` matches have ended (forever if None), or until the policy is
    exhausted (its ``exhausted`` is true, as an LLM bot's at its spending cap) and its last
    match has ended; returns what happened.

    Setting ``stop`` winds the run down the same way: the seek waiting is cancelled, no new
    one is made, the matches in play are played out, and then run_bot returns (at once if
    none is in play). Leaving them instead would make every opponent wait out the server's
    reconnection window, and then score them as forfeits. Cut off from the server for longer
    than that window, a stopping run gives them up and returns: they are lost already.

    With no ``games`` the bot seeks nothing and plays the matches made for it (by an
    admin's ``create_match``; a challenge takes one of its seeks, so it never meets one).

    ``challenge`` names a bot to play instead of seeking: each match is a ``challenge`` of it in
    the one game of ``games``, which takes one of its waiting seeks. A challenge refused because
    that bot is not connected, not seeking the game or busy is sent again a few seconds later
    (why is logged once refusals have lasted two seconds): a bot between two matches seeks
    again at once.

    ``url`` is the server's base URL (``ws://host:port``). ``delay_ms`` waits before each
    move, so a person can follow (at most half the move's time left, which the policy is
    then told it no longer has). ``binary`` speaks msgpack (else JSON). Messages are paced
    under the rate limit the server's ``welcome`` gives, so a fast game is slowed, never cut.
    A move longer than the welcome's ``soft_cap`` (a reasoning model's long reply) keeps its
    action: log-probs that no frame of that size holds go first, then a prompt that does not
    fit even with no raw reply, then the head of the raw reply (which then starts with
    ``CUT``); each is logged.
    ``at_once`` caps the matches in play at once (None: as many as the server lets a bot
    play); a bot with a spending cap plays one, so that the cap is passed by one reply at most.
    The server's pairing holds ``at_once`` (the hello's ``max_matches``); ``matches`` holds the
    bot's seeks, and its two seeks when playing itself may be paired apart, one match more.
    An admin's ``create_match`` may seat the bot beyond either. ``on_message`` sees every message
    the server sends; an exception it raises is logged, and the bot plays on.
    """
    if isinstance(games, str):  # one name, not its letters (each was sought as a game of its own)
        games = [games]
    if challenge is not None and (len(games) != 1 or self_play):
        raise ValueError("a challenge is for one game (give games=[its name]) against another bot (not self_play)")
    try:
        p.http_base(url)
    except ValueError as error:
        raise BotStopped(str(error)) from None
    run = BotRun(keep_all=matches is not None)
    state = _State(at_once=at_once, url=url)
    policy, is_async = policy_callable(policy)
    delays = retry_delays()

    def done() -> bool:
        return _finished(policy, run, state, matches)

    async def wind_down(stop: trio.Event, playing: trio.CancelScope) -> None:
        await stop.wait()
        state.stopping = True
        await _withdraw(policy, state)
        if done():
            playing.cancel()

    reached = False  # a server that was never reached is a wrong URL or a server not started: say so
    unanswered = 0  # connections closed before this run's first welcome
    wait = 0.0  # what a full server asked the next attempt to wait (its Retry-After)

    async def play(policies: trio.Nursery) -> None:
        nonlocal reached, wait, delays, unanswered
        lost_at = trio.current_time()  # when the bot was last connected: reset by each working session
        while not done():
            welcomes = state.welcomes
            why = ""
            try:
                async with connect(p.endpoint(url, p.BOT_PATH), max_size=None, proxy=None) as ws:
                    reached = True
                    await _session(
                        ws,
                        state,
                        run,
                        policy,
                        is_async,
                        name,
                        token,
                        games,
                        config,
                        matches,
                        self_play,
                        challenge,
                        delay_ms,
                        binary,
                        on_message,
                        policies,
                    )
                    if done():
                        return
                    why = closed_by(ws.close_code, ws.close_reason)  # a close iteration ends quietly on: 1000, 1001
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
                reason = closed.rcvd.reason if closed.rcvd else ""
                if code in FATAL_CLOSES:
                    left = len(state.matches)  # forfeited as their clocks run out, unless it logs in again
                    lost = f"; its {left} match{'es' * (left != 1)} in play will be forfeited" if left else ""
                    raise BotStopped(f"{FATAL_CLOSES[code]} of bot {name!r} ({reason}){lost}", code) from None
                if code == p.CLOSE_SUPERSEDED:
                    raise BotStopped("another connection logged in with this token") from None
                why = closed_by(code, reason)
                if not state.welcomes and code != p.CLOSE_TRY_AGAIN:  # a full arena says 1013, and is waited for
                    unanswered += 1
                    if code == p.CLOSE_NO_HELLO or unanswered >= UNANSWERED_HELLOS:  # it retried for ever
                        times = "once" if unanswered == 1 else f"{unanswered} times"
                        said = f"the server at {url} closed the connection {times} without answering the hello{why}"
                        raise BotStopped(f"{said}: is it an arena server?") from None
            except (OSError, InvalidHandshake, InvalidURI, trio.BrokenResourceError) as error:
                if isinstance(error, InvalidURI):
                    raise BotStopped(f"bad server URL {url!r}: {error}") from None
                full = p.server_full_wait(error)
                if full is not None:
                    reached = True  # a server that is there, with no room yet: wait as it asks
                    wait = max(wait, full * random.uniform(1, 1.5))  # spread, as the backoff: all were told alike
                if not reached:
                    raise BotStopped(f"cannot reach {url}: {connect_failure(error)}") from None
                log.warning("connection to %s failed: %s", url, connect_failure(error))
            if done():
                return
            if state.welcomes > welcomes and trio.current_time() - state.welcomed_at >= STABLE_S:
                delays = retry_delays()  # it worked: the next failure is a new one
                lost_at = trio.current_time()
            if state.stopping and trio.current_time() - lost_at > state.grace_s:
                # the server has forfeited (or, restarted, voided) what was in play: nothing to play out,
                # and said as lost (they were in neither the results nor the lost matches)
                for match in sorted(state.matches):
                    log.warning("match %s is lost: the server was away past the reconnection window", match)
                    run.lost.append(match)
                state.matches.clear()
                return
            run.reconnects += 1
            if state.hello_wait:  # spread, as a full server's wait
                wait, state.hello_wait = max(wait, state.hello_wait * random.uniform(1, 1.5)), 0.0
            delay, wait = max(next(delays), wait), 0.0
            log.warning("bot %s reconnects to %s in %.1f s%s", name, url, delay, why)
            await trio.sleep(delay)

    stopped: BotStopped | None = None
    try:
        # Policies run here, not in a connection's nursery: one still thinking when the connection
        # drops answers after the resume, which does not replay a turn the bot had already read.
        async with trio.open_nursery() as policies:
            try:
                with trio.CancelScope() as playing:
                    if stop is not None:
                        policies.start_soon(wind_down, stop, playing)
                    await play(policies)
            except BotStopped as error:  # raised after the nursery, not wrapped in its exception group
                stopped = error
            policies.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # trio hands Ctrl-C to whichever task was running, wrapped by every nursery above it:
        # the caller's `except KeyboardInterrupt` around trio.run missed it (found by a QA helper)
        if group.split(KeyboardInterrupt)[1] is not None:
            raise
        raise KeyboardInterrupt from None
    if stopped is not None:
        raise stopped
    return run


def closed_by(code: int | None, reason: str) -> str:
    """How a connection ended, as the reconnect line says it: the server's close code and reason
    (a restart says 1001 and why), or that it was lost with no close at all."""
    return f" (closed: {code} {reason})".replace(" )", ")") if code is not None else " (connection lost)"


def connect_failure(error: BaseException) -> str:
    """Why a connection could not be opened. A wss:// URL whose TLS handshake fails (a server
    without TLS, say) raises trio's BrokenResourceError, which says nothing by itself."""
    if isinstance(error, trio.BrokenResourceError):
        return f"the TLS handshake failed ({error.__cause__ or 'the connection broke'})"
    if isinstance(error, InvalidStatus):  # the server's own reason, as a full one says which limit
        with contextlib.suppress(ValueError, TypeError, KeyError):  # not JSON, or not the arena's
            said = json.loads(error.response.body or b"")["message"]
            return f"{error}: {said}"
    return str(error)


def _exhausted(policy: Callable[..., Any]) -> bool:
    """Whether the policy says it can play no more (an LLM bot at its spending cap); for a
    bound ``act``, its bot says."""
    return bool(getattr(getattr(policy, "__self__", policy), "exhausted", False))


def _winding_down(policy: Callable[..., Any], state: _State) -> bool:
    """Whether the bot takes no new match: it was told to stop, or its policy is exhausted."""
    return state.stopping or _exhausted(policy)


async def _withdraw(policy: Callable[..., Any], state: _State) -> None:
    """A run winding down takes no new match: the seek still waiting is cancelled. A match may
    be on its way from it already; the answer to the cancel comes after that one's start."""
    if state.seeking and state.send is not None and _winding_down(policy, state):
        state.seeking = False
        await _cancel(state)


async def _cancel(state: _State) -> None:
    """Cancel the seeks waiting; until the answer, a match paired from one may still come."""
    state.cancels += 1
    with contextlib.suppress(ConnectionClosed):
        await state.send("cancel")


def _finished(policy: Callable[..., Any], run: BotRun, state: _State, matches: int | None) -> bool:
    """The run is over once no match is in play and its matches are played, or it winds
    down: such a bot seeks no more, and waiting on would hold the command forever."""
    if state.matches or state.seats or state.cancels or state.replaying or state.challenging:  # a match may come or end
        return False
    # A void end counts: a scheduled run of N matches must end, whatever the server does
    return _winding_down(policy, state) or (matches is not None and run.played >= matches)


async def _session(
    ws: Any,
    state: _State,
    run: BotRun,
    policy: Policy,
    is_async: bool,
    name: str,
    token: str,
    games: Sequence[str],
    config: Mapping[str, Any] | None,
    matches: int | None,
    self_play: bool,
    challenge: str | None,
    delay_ms: int,
    binary: bool,
    on_message: Callable[[dict[str, Any]], None] | None,
    policies: trio.Nursery,
) -> None:
    async def send(kind: str, **fields: Any) -> None:
        if state.pacer is not None:
            await state.pacer.wait()
        await ws.send(p.encode(p.message(kind, **fields), binary))

    async def send_now(kind: str, **fields: Any) -> None:
        """Send on whichever connection is open now: a policy may answer on a later one."""
        if state.send is None:
            raise ConnectionClosed(None, None)
        await state.send(kind, **fields)

    hello: dict[str, Any] = {"bot": name, "token": token, "acks": False}  # a move's fate shows in what comes next
    if state.at_once is not None:  # held by the server's pairing: two seeks of a bot playing itself may pair apart
        hello["max_matches"] = state.at_once
    if state.session is not None:
        hello["resume"] = {"session": state.session, "last_seq": state.last_seq}
    await send("hello", **hello)

    def wanted() -> int:
        """How many more matches to seek: one seat each (two when playing itself); none once
        the run winds down (told to stop, or an LLM bot at its spending cap)."""
        if _winding_down(policy, state):
            return 0
        in_play = len(state.matches.keys() | state.missing.keys())  # a match the replay may still bring back is in play
        room = 1 if matches is None else matches - run.played - in_play
        for most in (state.at_once, state.server_max):  # past the server's, a challenge is only refused (busy)
            if most is not None:
                room = min(room, most - in_play)
        return max(0, room)

    async def seek(new_match: bool = False) -> None:
        """A seek the closing connection cannot take is moot (the server drops seeks with it,
        and the next welcome seeks again): the messages still to read are read. A challenge
        stands in for the seek of a bot that names its opponent: one at a time, answered at
        once by the match it starts or by its refusal."""
        with contextlib.suppress(ConnectionClosed):
            if challenge is not None:
                if new_match:  # its answer, or an admin's match: the next challenge is sent now
                    state.challenging, state.challenge_delays, state.refused_since = False, None, None
                    state.refusals_said.clear()
                # after a refusal, the wait is not cut short by a match's end; after a replay, the pong seeks
                if not (state.challenging or state.challenge_waits or state.replaying) and wanted() > 0:
                    state.challenging = True
                    await send("challenge", bot=challenge, game=games[0], config=dict(config or {}))
                return
            if new_match and state.seeking:
                # the match may not have come from the seek (an admin's match): one
                # left waiting would seat the bot in more matches than it asked for
                state.seeking = False
                await _cancel(state)
            if games and not state.seeking and wanted() > 0:
                state.seeking = True
                for _ in range(2 if self_play else 1):
                    await send("seek", games=list(games), config=dict(config or {}), self_play=self_play)

    async def answer(msg: Mapping[str, Any]) -> None:
        key = (msg["match"], msg["seat"], msg["step"], msg["attempt"])
        with trio.CancelScope() as scope:
            state.thinking[key] = scope
            try:
                await think(msg)
            finally:
                if state.thinking.get(key) is scope:
                    del state.thinking[key]

    async def think(msg: Mapping[str, Any]) -> None:
        key = (msg["match"], msg["seat"], msg["step"], msg["attempt"])
        start = state.matches.get(msg["match"], {})
        deadline_ms = msg.get("deadline_ms")
        # the pause is for people watching: at most half the time left, and off the policy's time
        pause_ms = delay_ms if deadline_ms is None else min(delay_ms, deadline_ms // 2)
        if pause_ms:
            await trio.sleep(pause_ms / 1000)
        turn = Turn(
            match_id=msg["match"],
            game=start.get("game", ""),
            seat=msg["seat"],
            step=msg["step"],
            attempt=msg["attempt"],
            observation=Observation(msg["observation"]["text"], msg["observation"].get("data") or {}),
            legal_actions=None if msg.get("legal") is None else tuple(msg["legal"]),
            action_format=msg.get("format"),
            deadline_ms=None if deadline_ms is None else deadline_ms - pause_ms,
            clocks=tuple(msg.get("clocks") or ()),
            retry_reason=msg.get("reason"),
            rules=start.get("rules", ""),
            players=tuple(start.get("players", ())),
            config=start.get("config", {}),
        )
        try:
            answer = await policy(turn) if is_async else await in_worker_thread(policy, turn)
            if answer is None:  # a reply with no action, as documented; most often a forgotten return
                log.warning("the policy returned None on %s step %s: sent as no action", msg["match"], msg["step"])
            move = on_the_wire(turn, as_move(answer))
        except Exception as error:  # the policy gives up (a spending cap, say) or fails: resign, saying why
            if not isinstance(error, SeatForfeit):  # its bug is its loss, as in play_match, not a format error
                log.exception("policy failed on %s step %s", msg["match"], msg["step"])
                error = SeatForfeit(CRASH, f"{type(error).__name__}: {error}")
            log.info("resigning %s: %s", msg["match"], error)
            await _withdraw(policy, state)
            await deliver("resign", {"match": msg["match"], "detail": str(error)}, key)
            return
        await _withdraw(policy, state)
        await deliver("move", move, key)

    def on_the_wire(turn: Turn, move: Move) -> dict[str, Any]:
        """The ``move`` message's fields, checked as the server will check them: a move it would
        refuse (a wrong type) or that cannot be encoded is the policy's failure, not a wait
        for the clock to run out or a traceback that ends the run."""
        fields = {"match": turn.match_id, "seat": turn.seat, "step": turn.step, "attempt": turn.attempt}
        extras = move.extras()
        cost = extras.get("cost")
        if isinstance(cost, float) and not math.isfinite(cost):
            extras.pop("cost")
        wire = {"action": move.action, **fields, **extras}
        p.check(p.message("move", **wire), p.BOT_MESSAGES)
        p.move_values(wire)
        return _within_cap(wire, binary, state.soft_cap)

    async def deliver(kind: str, fields: dict[str, Any], key: tuple[str, int, int, int]) -> None:
        """Send a turn's answer, a move or a resignation. It is kept until a later message of its
        match and seat shows that it arrived (with acks off nothing else does): one lost with
        the connection, even once written to the socket, is sent again after the resume, which
        does not replay a turn the bot had already read. One that had arrived is answered
        ``stale_move``, and ignored. A match that has ended takes no answer."""
        if key[0] not in state.matches:
            return
        state.unsent[key] = (kind, fields)
        with contextlib.suppress(ConnectionClosed):
            await send_now(kind, **fields)

    async def after_welcome() -> None:
        """Seek once the server's replay after a welcome is read, which the answer to a ping
        sent now follows: sought at once, the bot did not yet know of the matches replayed,
        and sought more than it asked for."""
        state.replaying = True
        with contextlib.suppress(ConnectionClosed):  # closing: what is still to read is read
            await send("ping")

    ended: ConnectionClosed | BotStopped | None = None
    async with trio.open_nursery() as nursery:
        state.send = send
        try:
            finished = functools.partial(_finished, policy, run, state, matches)
            await _receive(ws, state, run, nursery, policies, seek, after_welcome, answer, deliver, finished, on_message)
        except (ConnectionClosed, BotStopped) as error:  # raised after the nursery, not wrapped in its exception group
            ended = error
        finally:
            state.send = None
            state.replaying = False  # a replay cut off is read after the next welcome, if any
        nursery.cancel_scope.cancel()
    if ended is not None:
        raise ended


CUT = "(cut) "
"""What starts a raw reply whose head was cut to fit the server's ``soft_cap``."""


def _within_cap(move: dict[str, Any], binary: bool, cap: int) -> dict[str, Any]:
    """The move's fields, its frame within ``cap`` bytes: the server drops a longer one and the
    seat loses on time, so the audit trail gives way, never the action: first the head of the
    raw reply (a model ends it with its action), then the prompt; a prompt too long even with
    no raw reply left goes first, so that the raw reply loses only what it must. Log-probs that
    alone overflow it (a long reply's, in 8 bytes each) go whole, before either: the frame's
    limit is the server's soft cap, below the 16,384 the protocol allows. ValueError if still
    over."""

    def over(move: dict[str, Any]) -> int:
        frame = p.encode(p.message("move", **move), binary)
        return len(frame if isinstance(frame, bytes) else frame.encode()) - cap

    def without(move: dict[str, Any], key: str) -> dict[str, Any]:
        return {k: v for k, v in move.items() if k != key}

    def tail(move: dict[str, Any], keep: int) -> dict[str, Any]:
        raw = move["raw"]
        return {**move, "raw": CUT + raw[len(raw) - keep :]} if keep else without(move, "raw")

    def said(what: str) -> None:  # the audit trail is short of it: the bot's author is told
        log.warning("match %s step %s: %s, for the move to fit the soft cap of %s bytes", move["match"], move["step"], what, cap)

    excess = over(move)  # one encoding for a move that fits, as nearly every one does
    if excess > 0 and "logprobs" in move and over(without(without(move, "raw"), "prompt")) > 0:
        said(f"its {len(move['logprobs']):,} log-probs are left out")
        move = without(move, "logprobs")
        excess = over(move)
    if excess > 0 and "prompt" in move and over(without(move, "raw")) > 0:
        said(f"its prompt ({len(move['prompt']):,} characters) is left out")
        move = without(move, "prompt")
        excess = over(move)
    if excess > 0 and move.get("raw"):
        # the longest tail that fits, found by halving: a character takes one to six bytes
        fits, too_many = 0, len(move["raw"]) + 1
        while too_many - fits > 1:
            middle = (fits + too_many) // 2
            fits, too_many = (middle, too_many) if over(tail(move, middle)) <= 0 else (fits, middle)
        said(f"its raw reply is cut to its last {fits:,} of {len(move['raw']):,} characters")
        move = tail(move, fits)
        excess = over(move)
    if excess > 0:
        raise ValueError(f"the move is {excess} bytes over the server's soft cap of {cap} bytes, even without raw and prompt")
    return move


RECORD_TIMEOUT_S = 5.0
"""How long the SDK waits for the record of a match that ended while it was away."""


def end_said(end: Mapping[str, Any]) -> str:
    """How a ``match_end`` says the match ended: its status and reason (with the detail), or,
    for one made from the record of a group's match before the group is played out, that the
    result is withheld (PROTOCOL.md section 11): its fields are null then."""
    if end.get("reason") is None:
        return f"{end['status']}; its result is withheld until the rest of its group is played"
    detail = f" ({end['detail']})" if end.get("detail") else ""
    return f"{end['status']}, {end['reason']}{detail}"


async def _end_on_record(url: str, match: str, seat: int) -> dict[str, Any] | None:
    """The ``match_end`` the seat would have been sent, made from the match's record on the
    server (``/api/matches/{id}``, section 12): a match forfeited while the bot was away past
    the reconnection window, or voided by a restart, whose end no message will bring. None
    when the record cannot be read or shows no end."""
    try:
        record = await trio.to_thread.run_sync(p.get_json, url, f"/api/matches/{match}", RECORD_TIMEOUT_S)
    except (OSError, ValueError) as error:  # HTTPError and URLError are OSErrors; ValueError: not JSON
        log.warning("the record of match %s could not be read: %s", match, error)
        return None
    if not isinstance(record, dict) or record.get("status") not in ("finished", "void"):
        return None
    return p.message("match_end", match=match, seat=seat, **match_end_fields(record))


async def _seek_after(seconds: float, seek: Callable[..., Awaitable[None]]) -> None:
    """Seek afresh once a match that could not start has spent a seek: its seeks still waiting
    are withdrawn first (``new_match``), since the one spent need not be the one waiting now."""
    await trio.sleep(seconds)
    with contextlib.suppress(ConnectionClosed):  # the next welcome seeks anyway
        await seek(new_match=True)


async def _challenge_again(state: _State, refusal: Mapping[str, Any], seek: Callable[..., Awaitable[None]]) -> None:
    """Challenge again after a wait that grows while the refusals go on. Why is said once the
    refusals have lasted ``CHALLENGE_QUIET_S``, each reason once until a match begins."""
    now, code = trio.current_time(), str(refusal.get("code"))
    if state.refused_since is None:
        state.refused_since = now
    if now - state.refused_since >= CHALLENGE_QUIET_S and code not in state.refusals_said:
        state.refusals_said.add(code)
        log.warning("challenge refused (%s): %s; trying again every few seconds", code, refusal.get("message"))
    if state.challenge_delays is None:
        state.challenge_delays = backoff(CHALLENGE_RETRY_S, CHALLENGE_RETRY_MOST_S)
    try:
        await trio.sleep(max(float(refusal.get("retry_after") or 0), next(state.challenge_delays)))
    finally:  # cut off with its connection: the next welcome challenges
        state.challenge_waits = False
    with contextlib.suppress(ConnectionClosed):
        await seek()


async def _receive(
    ws: Any,
    state: _State,
    run: BotRun,
    nursery: trio.Nursery,
    policies: trio.Nursery,
    seek: Callable[..., Awaitable[None]],
    after_welcome: Callable[[], Awaitable[None]],
    answer: Callable[[Mapping[str, Any]], Awaitable[None]],
    deliver: Callable[[str, dict[str, Any], tuple[str, int, int, int]], Awaitable[None]],
    finished: Callable[[], bool],
    on_message: Callable[[dict[str, Any]], None] | None,
) -> None:
    """Dispatch the server's messages until the connection ends or the work is done."""

    def tell(msg: dict[str, Any]) -> None:
        if on_message is not None:
            try:
                on_message(msg)
            except Exception:  # the caller's hook, not the game: said, and the matches in play go on
                log.exception("the on_message hook failed on a %r message; the bot plays on", msg.get("t"))

    async def handle(msg: dict[str, Any]) -> bool:
        """Act on one message; True when the run's work is done."""
        seq = int(msg.get("seq", 0))
        # a welcome says where the numbering stands (it restarts with a restarted server)
        state.last_seq = seq if msg.get("t") == "welcome" else max(state.last_seq, seq)
        tell(msg)
        kind = msg.get("t")
        if kind == "welcome":
            state.session = msg["session"]
            state.welcomes += 1
            if state.welcomes > 1:  # the reconnect line said the bot was away: this one says it is back
                kept = "its session resumed" if msg.get("resumed") else "in a new session (the server forgot the old one)"
                log.warning("bot %s is back on %s, %s", msg.get("bot"), state.url, kept)
            state.welcomed_at = trio.current_time()
            limits = msg.get("limits") or {}
            state.pacer = Pacer(limits)
            state.soft_cap = int(limits.get("soft_cap", state.soft_cap))
            state.server_max = limits.get("max_matches")
            state.grace_s = float(limits.get("grace_ms", state.grace_s * 1000)) / 1000
            state.seeking, state.cancels = False, 0  # the server drops a bot's seeks when its connection ends
            if msg.get("resumed"):
                for key, (kind, fields) in list(state.unsent.items()):
                    nursery.start_soon(deliver, kind, fields, key)
            else:  # the server lost our session: it sends every live match and open turn again
                # ended while away, or lost, unless the replay brings them back
                state.missing |= {match: start["seat"] for match, start in state.matches.items()}
                for scope in state.thinking.values():
                    scope.cancel()
                state.matches.clear()
                state.seats.clear()
                state.answered.clear()
                state.unsent.clear()
            await after_welcome()
        elif kind == "pong":
            if state.replaying:
                state.replaying = False
                state.challenging = False  # unanswered in the replay: it never reached the server
                for match, seat in sorted(state.missing.items()):
                    if match in state.matches:
                        continue
                    end = await _end_on_record(state.url, match, seat)
                    if end is None:
                        log.warning(
                            "match %s is lost: the server has it in play no more, and no record of its end"
                            " could be read (/api/matches/%s)",
                            match,
                            match,
                        )
                        run.lost.append(match)
                        continue
                    log.warning("match %s ended while this bot was away: %s", match, end_said(end))
                    run.record(end)
                    tell(end)
                state.missing.clear()
                if finished():  # stopped while away, and the replay brought no match
                    return True
                await seek()
        elif kind == "cancelled":
            state.cancels = max(0, state.cancels - 1)  # one replayed from before a welcome counts for nothing
            if finished():
                return True
        elif kind == "match_start":
            new_match = msg["match"] not in state.matches  # playing itself, a bot is told once per seat
            state.matches[msg["match"]] = msg
            state.seats.setdefault(msg["match"], set()).add(msg["seat"])
            await seek(new_match)
        elif kind == "turn":
            key = (msg["match"], msg["seat"], msg["step"], msg["attempt"])
            for arrived in [sent for sent in state.unsent if sent[:2] == key[:2] and sent[2:] < key[2:]]:
                del state.unsent[arrived]  # a later turn of its seat: the answer was taken
            if key not in state.answered:
                state.answered.add(key)
                policies.start_soon(answer, msg)
        elif kind == "match_end":
            match = msg["match"]
            for arrived in [sent for sent in state.unsent if sent[0] == match]:
                del state.unsent[arrived]
            for key, scope in state.thinking.items():  # an answer now would only be refused (a paid reply, wasted)
                if key[0] == match:
                    scope.cancel()
            if state.matches.pop(match, None) is not None:  # its first seat told: one result a match
                run.record(msg)
                state.answered = {k for k in state.answered if k[0] != match}
            seats = state.seats.get(match, set())
            seats.discard(msg["seat"])
            if not seats:  # playing itself, the bot reads every seat's end before it leaves
                state.seats.pop(match, None)
            if finished():
                return True
            await seek()
        elif kind == "error":
            run.errors.append(msg)
            if msg.get("code") == p.READ_ONLY or (msg.get("ref") in ("seek", "challenge") and msg.get("code") in FATAL_REFUSALS):
                what = msg.get("ref") or "hello"
                raise BotStopped(f"the server refused this bot's {what} ({msg.get('code')}): {msg.get('message')}")
            if msg.get("ref") == "hello" and msg.get("retry_after") is not None:  # too many failed logins from here
                state.hello_wait = float(msg["retry_after"])
            elif msg.get("ref") == "seek" and msg.get("retry_after") is not None:
                # A match that could not start spent a seek, not always the one waiting now: the
                # error may be replayed after a resume whose welcome sought again, or come after
                # an admin's match made the bot seek again. Marked as still seeking, the bot
                # withdraws what waits and seeks afresh after the wait (it sought once more on
                # top, and was seated in more matches than it asked for).
                nursery.start_soon(_seek_after, float(msg["retry_after"]), seek)
            elif msg.get("ref") == "seek":
                state.seeking = False
            elif msg.get("ref") == "challenge":
                state.challenging = False  # nothing is on its way: a stopping run need not wait
                if not state.challenge_waits:  # one wait at a time: every refusal started one, and they overlapped
                    state.challenge_waits = True
                    nursery.start_soon(_challenge_again, state, msg, seek)
        return False

    with trio.move_on_after(WELCOME_WAIT_S) as waiting:
        first = _greeting(await ws.recv())
    if waiting.cancelled_caught:
        if not state.welcomes:  # never answered in this run: the address is not an arena's
            raise BotStopped(f"no answer to the hello within {WELCOME_WAIT_S:g} s: is it an arena server?")
        raise ConnectionClosed(None, None)  # a server that answered before: try again, as for a dropped one
    if await handle(first):
        return
    async for frame in ws:
        try:
            msg = p.decode(frame)
        except p.ProtocolError as error:  # the server's fault, not the bot's: said, and the rest read on
            log.warning("a malformed message from the server was dropped: %s", error.message)
            continue
        if await handle(msg):
            return


def _greeting(frame: str | bytes) -> dict[str, Any]:
    """The answer to the hello, as an arena sends it: a welcome, or the error before a refusal.
    Anything else (an echo of the hello, text that is no message, a welcome without a session)
    is not an arena's, and no retry will change it."""
    try:
        msg = p.decode(frame)
    except p.ProtocolError as error:
        raise BotStopped(f"the server is not an arena: its answer to the hello is not a message ({error.message})") from None
    kind = msg.get("t")
    if kind == "error" or (kind == "welcome" and isinstance(msg.get("session"), str)):
        return msg
    said = "a welcome without a session" if kind == "welcome" else f"{str(kind)[:40]!r}"
    raise BotStopped(f"the server is not an arena: it answered the hello with {said}")

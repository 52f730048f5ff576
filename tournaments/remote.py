"""Play a tournament through a live arena server: every match made by the server's
``create_match``, every result in the server's one store.

The schedule, its concurrency, Swiss pairing and progress are the in-process runner's
(``runner.drive``); only how one match is played differs. The admin session asks
``create_match`` with the match's stable key (and its tournament, round, group, seed,
clock and failure rules), so a restarted run is answered with the match already made
under a key (``existing``) instead of a second one; a spectator connection watches each
match to its end, which also yields the returns Swiss pairs by. The seeds are made with
the tournament's secret salt, which the admin session asks of the server (``seed_salt``):
the server's store keeps it, so every rerun deals the same cards and no player can.

In-process participants (registry specs) are registered on the server under a valid bot
name (``server_name``) as owned by tournaments, and connected from this process through
the bot SDK, seeking nothing and answering the matches the server starts. A name that a
tournament registered before gets a fresh token by ``rotate`` (so a stopped run resumes);
one that someone else registered stops the run before it plays: it is never taken over.
``remote:NAME`` participants are registered and connected by their owners; one that is
not stops the run with an error naming it, unless it played in this run already: then it is
waited for (``REMOTE_BACK_S``), as a restarted server's bots come back. A run that stops
early aborts the matches it made and left unfinished: void, so the next run plays them.

Both connections keep what they send under the rate in the server's ``welcome`` (five
rate-limited messages close a connection) and reconnect when dropped, asking again what
was unanswered: ``create_match`` is idempotent on the key, and a ``watch`` of a match that
has ended answers with its record.
"""

from __future__ import annotations

import contextlib
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import trio
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.trio.client import ClientConnection, connect

from arena import protocol as p
from arena.seats import Turn
from bots.base import Bot
from bots.client import BotStopped, Pacer, connect_failure, run_bot
from bots.registry import make_bot, secret_seed
from tournaments.config import TournamentConfig, TournamentConfigError, remote_name, schedule_id
from tournaments.formats import ScheduledMatch
from tournaments.runner import Played, Progress, Summary, check_same_config, drive, game_configs

OWNER = "tournament"  # the owner of the bots runs register: any run may reuse them, none touches another's
CONNECT_TIMEOUT_S = 30.0
ABORT_TIMEOUT_S = 10.0


class RemoteTournamentError(RuntimeError):
    """The server cannot play this tournament: the message names the bot or the fault."""


class RemoteUsageError(RemoteTournamentError):
    """The run as asked cannot start, and only another command line or file fixes it (a
    wrong admin token, a bad URL): the CLI's usage error, not a failure while playing."""


class AdminError(Exception):
    """The server answered an admin request with an ``error``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


REMOTE_BACK_S = 30.0
"""How long a bot is waited for when a match finds it offline, if it is one this run plays
itself or a remote participant that played in this run: after a server restart their SDK
reconnects within seconds (backoff up to 5 s)."""
REMOTE_RETRY_S = 0.5
RECONNECT_S = REMOTE_BACK_S
"""How long the run's own connections (admin, spectator) are opened again after they drop
before it gives up: a server restarted within it loses the run nothing."""


def server_name(participant: str) -> str:
    """The bot name a participant plays under on the server: ``remote:NAME`` is NAME; a bot
    spec becomes a valid bot name (``alphabeta:depth=4`` is ``alphabeta.depth-4``), cut to
    64 characters with a checksum of the whole spec when longer."""
    remote = remote_name(participant)
    if remote is not None:
        return remote
    name = participant.lower().replace(":", ".").replace("=", "-").replace(",", ".")
    name = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    return name if len(name) <= 64 else f"{name[:55]}.{zlib.crc32(participant.encode()):08x}"


def http_base(url: str) -> str:
    try:
        return p.http_base(url)
    except ValueError as error:
        raise RemoteUsageError(str(error)) from None


class _Reconnects:
    """One of the run's own connections (admin, spectator) and its drops in a row: ``opened``
    each time it is up, ``served`` each time it did its work (the drops start again)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connected = False  # it was up once
        self.drops = 0
        self.dropped_at = 0.0  # trio time of the first drop in a row

    def opened(self) -> bool:
        """Whether this is the first time it is up."""
        first, self.connected = not self.connected, True
        return first

    def served(self) -> None:
        self.drops = 0

    async def after(self, error: BaseException) -> None:
        """Raise the run's error for a connection that failed, unless it may be opened again;
        then wait before it is (a backoff up to 5 s)."""
        url = self.url
        if isinstance(error, InvalidURI):
            raise RemoteUsageError(f"bad server URL {url!r}: {error}") from None
        if isinstance(error, ConnectionClosed) and error.rcvd is not None and error.rcvd.code == p.CLOSE_AUTH_FAILED:
            raise RemoteUsageError(f"{url} refused the admin token") from None
        if not self.connected:
            raise RemoteTournamentError(f"cannot reach {url}: {connect_failure(error)}") from None
        if self.drops == 0:
            self.dropped_at = trio.current_time()
        self.drops += 1
        if trio.current_time() - self.dropped_at > RECONNECT_S:
            raise RemoteTournamentError(f"lost the connection to {url} for {RECONNECT_S:g} s: {connect_failure(error)}") from None
        await trio.sleep(min(5.0, 0.25 * 2**self.drops))


def _open(url: str, path: str) -> Any:
    return connect(p.endpoint(url, path), proxy=None, max_size=None, compression=None)


Request = tuple[dict[str, Any], str, trio.MemorySendChannel[dict[str, Any] | AdminError]]


class Admin:
    """The admin session. Requests go one at a time, each answered before the next is sent
    (the server handles one session's messages in order), so an ``error`` belongs to the
    request just sent. ``created`` holds the matches this run made that have not been seen
    to end, ``asked`` the keys of ``create_match`` requests sent and not answered (the run
    may stop before the answer comes); ``limits`` are the server's, from its welcome."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.limits: dict[str, Any] = {}
        self.created: set[str] = set()
        self.asked: set[str] = set()
        self._send, self._inbox = trio.open_memory_channel[Request](0)

    async def request(self, kind: str, answer: str, **fields: Any) -> dict[str, Any]:
        """Send one admin message and return the server's ``answer``; AdminError for an ``error``."""
        reply_send, reply = trio.open_memory_channel[dict[str, Any] | AdminError](1)
        await self._send.send((p.message(kind, **fields), answer, reply_send))
        got = await reply.receive()
        if isinstance(got, AdminError):
            raise got
        return got

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the connection: log in, then send the requests; log in again when it drops."""
        with self._inbox:  # closed when this ends, so that a request made after fails at once
            await self._serve(task_status)

    async def _serve(self, task_status: trio.TaskStatus[None]) -> None:
        pending: Request | None = None
        reconnects = _Reconnects(self.url)
        while True:
            try:
                async with _open(self.url, p.BOT_PATH) as ws:
                    await ws.send(p.encode(p.message("hello", bot="admin", token=self.token), True))
                    welcome = p.decode(await ws.recv())
                    if welcome.get("t") == "error" and welcome.get("code") == p.RATE_LIMITED and welcome.get("ref") == "hello":
                        # too many failed admin logins from this address (not all ours, maybe): its token is heard later
                        await trio.sleep(float(welcome.get("retry_after", 1.0)))
                        continue
                    if welcome.get("t") != "welcome":
                        raise RemoteTournamentError(f"{self.url} answered the admin's hello with {welcome}")
                    self.limits = welcome.get("limits") or {}
                    pacer = Pacer(self.limits)
                    if reconnects.opened():
                        task_status.started()
                    while True:
                        if pending is None:
                            pending = await self._inbox.receive()
                        message, answer, reply = pending
                        await pacer.wait()
                        if message["t"] == "create_match":
                            self.asked.add(message["key"])
                        await ws.send(p.encode(message, True))
                        got = await self._answer(ws, answer)
                        if isinstance(got, AdminError) and got.code == p.RATE_LIMITED:
                            continue  # sent again once the pacer allows
                        if message["t"] == "create_match":
                            self.asked.discard(message["key"])
                            if not isinstance(got, AdminError) and not got["existing"]:
                                self.created.add(got["match"])
                        with contextlib.suppress(trio.BrokenResourceError):  # the requester was cancelled
                            reply.send_nowait(got)
                        pending = None
                        reconnects.served()
            except (ConnectionClosed, OSError, InvalidHandshake, InvalidURI, trio.BrokenResourceError) as error:
                await reconnects.after(error)

    async def _answer(self, ws: ClientConnection, answer: str) -> dict[str, Any] | AdminError:
        while True:
            msg = p.decode(await ws.recv())
            if msg.get("t") == answer:
                return msg
            if msg.get("t") == "error":
                if msg.get("code") == p.RATE_LIMITED:
                    await trio.sleep(float(msg.get("retry_after", 1.0)))
                return AdminError(str(msg.get("code")), str(msg.get("message")))


@dataclass
class _Waiter:
    ended: trio.Event = field(default_factory=trio.Event)
    message: dict[str, Any] = field(default_factory=dict)


class Results:
    """A spectator connection that watches each match it is asked about until it ends. It
    shows the admin token first: a duplicate group's table that ends while another table
    still deals its cards is told to other spectators without how it ended."""

    def __init__(self, url: str, admin_token: str) -> None:
        self.url = url
        self.admin_token = admin_token
        self.waiting: dict[str, _Waiter] = {}
        self._send, self._todo = trio.open_memory_channel[str](math.inf)

    async def outcome(self, match_id: str) -> dict[str, Any]:
        """The match's ``result`` (or the snapshot of its record if it had ended): status, returns."""
        waiter = self.waiting.setdefault(match_id, _Waiter())
        self._send.send_nowait(match_id)
        await waiter.ended.wait()
        self.waiting.pop(match_id, None)
        return waiter.message

    async def run(self, limits: Mapping[str, Any], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        reconnects = _Reconnects(self.url)
        while True:
            try:
                async with _open(self.url, p.WATCH_PATH) as ws:
                    await ws.send(p.encode(p.message("admin", token=self.admin_token), True))  # read before any watch
                    if reconnects.opened():
                        task_status.started()
                    else:  # watches sent on the lost connection may be unanswered: ask again
                        self._ask_again()
                    reconnects.served()
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._watch, ws, Pacer(limits))
                        closed = await self._read(ws)
                        nursery.cancel_scope.cancel()
                    raise closed
            except (ConnectionClosed, OSError, InvalidHandshake, InvalidURI, trio.BrokenResourceError) as error:
                await reconnects.after(error)

    def _ask_again(self) -> None:
        for match_id, waiter in self.waiting.items():
            if not waiter.ended.is_set():
                self._send.send_nowait(match_id)

    async def _watch(self, ws: ClientConnection, pacer: Pacer) -> None:
        async for match_id in self._todo:
            waiter = self.waiting.get(match_id)
            if waiter is not None and not waiter.ended.is_set():
                await pacer.wait()
                try:
                    await ws.send(p.encode(p.message("watch", match=match_id), True))
                except ConnectionClosed:
                    return  # the reader sees the close too, and the watch is sent again on the next connection

    async def _read(self, ws: ClientConnection) -> ConnectionClosed:
        """Settle the waiters as their matches end, until the connection closes (returned, so
        that it does not reach the caller wrapped in the nursery's exception group)."""
        while True:
            try:
                msg = p.decode(await ws.recv())
            except ConnectionClosed as closed:
                return closed
            kind = msg.get("t")
            if kind in ("snapshot", "result") and msg.get("status") != "live":
                waiter = self.waiting.get(msg.get("match", ""))
                if waiter is not None and not waiter.ended.is_set():
                    waiter.message = msg
                    waiter.ended.set()
            elif kind == "error":
                if msg.get("code") == p.UNKNOWN_TYPE and msg.get("ref") == "admin":
                    continue  # a server from before withheld results, which it tells every spectator whole
                if msg.get("code") != p.RATE_LIMITED:
                    raise RemoteTournamentError(f"{self.url} would not show a match: {msg.get('code')}: {msg.get('message')}")
                await trio.sleep(float(msg.get("retry_after", 1.0)))
                self._ask_again()  # which watch was refused is not said: ask for every open one


async def _connect_bot(nursery: trio.Nursery, url: str, name: str, spec: str, token: str) -> None:
    """Connect an in-process participant as an SDK bot; return once the server welcomed it.

    It seeks nothing: it plays the matches the admin makes for it, one bot per (match,
    seat), seeded as ``arena bot run`` seeds them (``secret_seed``)."""
    welcomed = trio.Event()
    players: dict[tuple[str, int], Bot] = {}

    def policy(turn: Turn) -> Any:
        key = (turn.match_id, turn.seat)
        bot = players.get(key)
        if bot is None:
            bot = players[key] = make_bot(spec, turn.game, secret_seed())
        return bot.act(turn)

    def seen(msg: dict[str, Any]) -> None:
        if msg.get("t") == "welcome":
            welcomed.set()
        elif msg.get("t") == "match_end":
            players.pop((msg["match"], msg["seat"]), None)

    async def serve() -> None:
        try:
            await run_bot(policy, url, name, token, games=[], on_message=seen)
        except BotStopped as stopped:
            if stopped.close_code == p.CLOSE_AUTH_FAILED:  # the SDK's own words would say its matches are forfeited
                raise RemoteTournamentError(
                    f"in-process participant {spec!r} ({name}) lost its token to another run of a tournament with this"
                    f" bot (or a rotate of {name!r}): this run stops, and the matches it made and left unfinished end"
                    " void, played by the next run"
                ) from None
            raise RemoteTournamentError(f"in-process participant {spec!r} ({name}) was stopped: {stopped}") from None

    nursery.start_soon(serve)
    with trio.move_on_after(CONNECT_TIMEOUT_S):
        await welcomed.wait()
    if not welcomed.is_set():
        raise RemoteTournamentError(f"in-process participant {spec!r} ({name}) could not log in to {url}")


async def _seed_salt(admin: Admin, config: TournamentConfig) -> str:
    """The tournament's secret from the server's store, which its seeds are made with: the
    seeds of this run and of every rerun, wherever it is started from, come from the one kept.
    The server refuses it to a file whose schedule changed since the tournament's first run,
    or that gives a game another config than its matches in the store were played with."""
    try:
        answer = await admin.request(
            "seed_salt", "seed_salt", tournament=config.name, schedule=schedule_id(config), configs=game_configs(config)
        )
    except AdminError as error:
        if error.code == p.BAD_CONFIG:
            raise RemoteUsageError(error.message) from None
        raise RemoteTournamentError(f"{admin.url} would not give the seeds' secret of {config.name!r}: {error.message}") from None
    return str(answer["salt"])


async def _token(admin: Admin, name: str) -> str:
    """A token for an in-process participant: its bot registered now, or, when a tournament
    registered it before (this one stopped part-way, or another with the same bot), given a
    fresh one, as the token of the earlier run is not kept. A bot of that name registered
    by anyone else is never touched: a new token would lock its owner out."""
    try:
        return str((await admin.request("register", "registered", name=name, owner=OWNER))["token"])
    except AdminError as error:
        if error.code != p.BOT_EXISTS:
            raise RemoteTournamentError(f"cannot register {name!r}: {error.message}") from None
    try:
        return str((await admin.request("rotate", "rotated", name=name, owner=OWNER))["token"])
    except AdminError as error:
        if error.code != p.BOT_EXISTS:
            raise RemoteTournamentError(f"cannot get a token for {name!r}: {error.message}") from None
    raise RemoteUsageError(
        f"{admin.url} has a bot named {name!r} that no tournament registered, and a tournament never takes over "
        f"a bot: list it as remote:{name} for its owner to connect, or play on a server where the name is free"
    )


async def _get(url: str, path: str, *, retry_for: float = 0.0, **params: str) -> Any:
    """GET a JSON answer; ``retry_for`` seconds of retries while the server cannot be reached,
    and asked again for as long as the server says the answer is still being computed (a big
    store's leaderboard)."""
    deadline = trio.current_time() + retry_for
    async with httpx.AsyncClient(base_url=http_base(url), timeout=60) as client:
        while True:
            try:
                response = await client.get(path, params=params)
                later = _computing(response)
                if later is not None:
                    await trio.sleep(later)
                    continue
                response.raise_for_status()
                return response.json()
            except httpx.HTTPError as error:  # a status is an answer; no answer may come in a moment
                if not isinstance(error, httpx.TransportError) or trio.current_time() >= deadline:
                    raise RemoteTournamentError(f"cannot read {path} from {url}: {error}") from None
            await trio.sleep(REMOTE_RETRY_S)


def _computing(response: httpx.Response) -> float | None:
    """The seconds to wait when ``response`` says its answer is still being computed."""
    if response.status_code != 503:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    later = body.get("retry_after") if isinstance(body, dict) and body.get("error") == p.COMPUTING else None
    return float(later) if isinstance(later, (int, float)) and 0 <= later < 3600 else None


def names_on_server(config: TournamentConfig) -> dict[str, str]:
    """Each participant's bot name on the server; two participants may not share one."""
    names: dict[str, str] = {}
    taken: dict[str, str] = {}
    for participant in config.participants:
        name = server_name(participant)
        if name in taken:
            raise TournamentConfigError(
                f"{config.path}: participants {taken[name]!r} and {participant!r} would both play as {name!r} on the server"
            )
        names[participant] = taken[name] = name
    return names


async def run_remote_async(
    config: TournamentConfig, url: str, admin_token: str, progress: Callable[[Progress], None] | None = None
) -> Summary:
    """Play every scheduled match the server has not made yet; wait for those it is playing."""
    http_base(url)  # a URL no connection can be made to is said now, in one line
    names = names_on_server(config)
    remote = {names[p] for p in config.remote}
    if remote:
        registered = {bot["name"] for bot in await _get(url, "/api/bots")}
        for participant in config.remote:
            if names[participant] not in registered:
                raise RemoteUsageError(  # fixed by registering it or by another config: a usage error (status 2)
                    f"remote participant {participant!r} is not a bot registered on {url}: register it"
                    f" (arena bot register {names[participant]} --url ... --admin-token ...) or fix the config"
                )
    admin = Admin(url, admin_token)
    results = Results(url, admin_token)
    played: set[str] = set()  # bots seated in a match of this run: connected once, so waited for

    async def play(match: ScheduledMatch) -> Played:
        request = {
            "game": match.game,
            "bots": [names[seat] for seat in match.seats],
            "config": dict(match.config),
            "seed": match.seed,
            "clock": config.clock.times(),
            "max_retries": config.max_retries,
            "tournament": config.name,
            "round": match.round,
            "group": match.group_id,
            "group_size": match.group_size,
            "key": match.key,
        }
        waited_until = trio.current_time() + REMOTE_BACK_S
        while True:
            try:
                made = await admin.request("create_match", "match_created", **{k: v for k, v in request.items() if v is not None})
                break
            except AdminError as error:
                offline = [n for n in request["bots"] if f"'{n}'" in error.message]
                if not (error.code == p.BOT_OFFLINE and offline):
                    raise RemoteTournamentError(f"{url} would not make {match.key}: {error}") from None
                # After a server restart the bots come back: this run's own, and a remote one that
                # played in it, are waited for (the run died when its own were slower than it)
                back = all(n not in remote or n in played for n in offline)
                if back and trio.current_time() < waited_until:
                    await trio.sleep(REMOTE_RETRY_S)
                    continue
                waited = f" (waited {REMOTE_BACK_S:g} s for it)" if back else ""
                absent = [n for n in offline if n in remote]
                if not absent:
                    raise RemoteTournamentError(f"{url} would not make {match.key}: {error}{waited}") from None
                raise RemoteTournamentError(
                    f"remote participant 'remote:{absent[0]}' is not connected to {url}{waited}: connect it, then run again"
                ) from None
        played.update(request["bots"])
        ended = await results.outcome(made["match"])
        admin.created.discard(made["match"])
        if made["existing"] and "config" in ended:  # an ended match's snapshot; a result does not say
            check_same_config(match, ended["config"])
        finished = ended["status"] == "finished"
        returns = tuple(ended["returns"]) if finished else None
        seat, detail = ended.get("forfeit_seat"), ended.get("detail") or ""
        return Played(ended["status"], returns, fresh=not made["existing"], forfeit_seat=seat, detail=detail)

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(admin.run)
            await nursery.start(results.run, admin.limits)
            salt = await _seed_salt(admin, config)  # first: a refused schedule rotates no token of a run in progress
            tokens = {name: await _token(admin, name) for name in names.values() if name not in remote}
            async with trio.open_nursery() as bots:
                for participant, name in names.items():
                    if name in tokens:
                        await _connect_bot(bots, url, name, participant, tokens[name])
                summary = await drive(config, play, progress, salt)
                bots.cancel_scope.cancel()
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        ours, _ = group.split((RemoteTournamentError, TournamentConfigError))
        if ours is None:
            raise
        raise _first(ours) from None
    finally:
        if admin.created or admin.asked:
            with trio.CancelScope(shield=True), trio.move_on_after(ABORT_TIMEOUT_S):
                await _abort(url, admin_token, admin.created, admin.asked)
    return summary


async def _abort(url: str, admin_token: str, made: set[str], asked: set[str]) -> None:
    """Abort the matches a stopped run made and left unfinished: void, so the next run plays
    them, and no bot forfeits for the runner's stop. The matches of requests left unanswered
    are found by their keys among the newest; a fresh admin session does it, as the run's own
    was stopped with the run."""
    admin = Admin(url, admin_token)
    try:
        found = await _get(url, "/api/matches", limit="1000") if asked else []
        left = made | {r["id"] for r in found if r.get("caller_key") in asked and r.get("status") == "live"}
        async with trio.open_nursery() as nursery:
            await nursery.start(admin.run)
            for match_id in sorted(left):
                with contextlib.suppress(AdminError):  # it ended meanwhile
                    await admin.request("abort_match", "match_aborted", match=match_id, reason="the tournament run stopped")
            nursery.cancel_scope.cancel()
    except* RemoteTournamentError:
        pass  # the server is gone: it voids its live matches when it starts again


def _first(group: BaseExceptionGroup) -> BaseException:
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error


def run_remote(
    config: TournamentConfig, url: str, admin_token: str, progress: Callable[[Progress], None] | None = None
) -> Summary:
    """Play the tournament through the server at ``url`` (``ws://host:port``) with its admin token."""
    return trio.run(run_remote_async, config, url, admin_token, progress)


def remote_leaderboards(config: TournamentConfig, url: str) -> dict[str, list[dict[str, Any]]]:
    """The server's leaderboard of each game variant of the tournament, by variant."""

    async def read() -> dict[str, list[dict[str, Any]]]:
        boards: dict[str, list[dict[str, Any]]] = {}
        for game in dict.fromkeys(entry.name for entry in config.games):
            # read after the run, which may have outlived a server restart: a moment to come back
            boards |= (await _get(url, "/api/leaderboard", retry_for=REMOTE_BACK_S, game=game))["variants"]
        return {variant: boards.get(variant, []) for variant in dict.fromkeys(entry.variant for entry in config.games)}

    return trio.run(read)

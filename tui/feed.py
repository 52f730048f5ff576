"""The spectator's connection: websockets' asyncio client on ``/watch``, JSON text frames.

``Feed(url, on_message, on_status).run()`` connects, hands every decoded message to
``on_message``, and when the server goes away reports it through ``on_status`` and
reconnects with exponential backoff, for ever (until cancelled). A frame that is not a
JSON map is reported as a problem, never raised. ``send()`` queues a message for the open
connection; what is queued when the connection drops is discarded, since the app asks
again for what it needs once connected (the server sends a fresh ``lobby`` by itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from arena import protocol as p

API_PAGE = 1000  # the most matches /api/matches answers at once
LOBBY_WAIT_S = 10.0
"""An arena sends a ``lobby`` the moment a spectator connects: a websocket server that sent
none in this time is something else (showed as connected for ever, waiting)."""


@dataclass(frozen=True)
class Status:
    """``state``: connecting, connected, disconnected, failed (a bad URL: no retry)."""

    state: str
    detail: str = ""
    retry_in: float | None = None
    attempt: int = 0


def backoff(first: float = 0.25, most: float = 5.0) -> Iterator[float]:
    delay = first
    while True:
        yield delay
        delay = min(most, delay * 2)


class Feed:
    def __init__(
        self,
        url: str,
        on_message: Callable[[dict[str, Any]], None],
        on_status: Callable[[Status], None],
        on_problem: Callable[[str], None],
        *,
        delays: Callable[[], Iterator[float]] = backoff,
        open_timeout: float = 5.0,
        lobby_wait_s: float = LOBBY_WAIT_S,
    ) -> None:
        self.url = url.rstrip("/")
        self.on_message = on_message
        self.on_status = on_status
        self.on_problem = on_problem
        self.delays = delays
        self.open_timeout = open_timeout
        self.lobby_wait_s = lobby_wait_s
        self.connected = False
        self._outbox: asyncio.Queue[str] | None = None

    def send(self, kind: str, **fields: Any) -> bool:
        """Queue a message; False (and dropped) while not connected."""
        if not self.connected or self._outbox is None:
            return False
        self._outbox.put_nowait(p.encode(p.message(kind, **fields), False))  # type: ignore[arg-type]
        return True

    async def run(self) -> None:
        delays = self.delays()
        attempt = 0
        address = p.endpoint(self.url, p.WATCH_PATH)
        wait = 0.0  # what a full server asked the next attempt to wait (its Retry-After)
        while True:
            self.on_status(Status("connecting", self.url, attempt=attempt))
            try:
                async with connect(address, proxy=None, max_size=None, open_timeout=self.open_timeout) as ws:
                    greeted = await self._session(ws)
                reason = (
                    "the server closed the connection"
                    if greeted
                    else f"{self.url} sent no lobby within {self.lobby_wait_s:g} s: is it an arena server's address?"
                )
            except (InvalidURI, ValueError) as error:  # ValueError: a port out of range, a broken IPv6 address
                self.on_status(Status("failed", f"bad server URL {self.url!r}: {error}"))
                return
            except InvalidStatus as error:
                if error.response.status_code == 404:  # a URL with a path: retrying cannot help
                    self.on_status(Status("failed", f"{self.url} has no /watch: give the server's address, ws://host:port"))
                    return
                full = p.server_full_wait(error)
                if full is not None:
                    reason, wait = f"{self.url} is full (it holds as many connections as it takes)", full
                else:
                    reason = f"{self.url} refused the spectator: HTTP {error.response.status_code}"
            except ConnectionClosed as error:
                reason = (
                    f"connection lost ({error.rcvd.code} {error.rcvd.reason})".replace(" )", ")")
                    if error.rcvd
                    else "connection lost"
                )
            except (OSError, InvalidHandshake, TimeoutError) as error:
                reason = f"cannot reach {self.url}: {str(error) or type(error).__name__}"
            finally:
                if self.connected:  # an arena was there, however the connection ended: the next failure is a new one
                    delays, attempt = self.delays(), 0
                self.connected = False
                self._outbox = None
            attempt += 1
            delay, wait = max(next(delays), wait), 0.0
            self.on_status(Status("disconnected", reason, retry_in=delay, attempt=attempt))
            await asyncio.sleep(delay)

    async def _session(self, ws: Any) -> bool:
        """Hand on what the server sends until it closes; False when it sent no lobby in time
        (and was closed for it). Connected once the first lobby comes: a websocket server that
        is no arena showed as connected, all but a blink every 10 s, and the attempts counted
        from 1 again each time (found by a QA helper)."""
        self._outbox = asyncio.Queue()
        writer = asyncio.create_task(self._write(ws, self._outbox))
        greeted = asyncio.Event()
        watchdog = asyncio.create_task(self._expect_lobby(ws, greeted))
        try:
            async for frame in ws:
                try:
                    msg = p.decode(frame)
                except p.ProtocolError as error:
                    self.on_problem(f"malformed frame from the server: {error.message}")
                    continue
                if msg.get("t") == "lobby" and not greeted.is_set():
                    greeted.set()
                    self.connected = True
                    self.on_status(Status("connected", self.url))
                try:
                    self.on_message(msg)
                except Exception as error:  # the app's fault, not the server's: keep listening
                    self.on_problem(f"could not handle a {str(msg.get('t'))[:20]!r} message: {type(error).__name__}: {error}")
        finally:
            writer.cancel()
            watchdog.cancel()
        return greeted.is_set()

    async def _expect_lobby(self, ws: Any, greeted: asyncio.Event) -> None:
        try:
            await asyncio.wait_for(greeted.wait(), self.lobby_wait_s)
        except TimeoutError:
            await ws.close(1000, "no lobby: not an arena's /watch")

    @staticmethod
    async def _write(ws: Any, outbox: asyncio.Queue[str]) -> None:
        while True:
            frame = await outbox.get()
            try:
                await ws.send(frame)
            except ConnectionClosed:
                return


def fetch_matches(
    url: str, *, game: str | None = None, limit: int = 50, before: str | None = None, timeout: float = 5.0
) -> list[dict[str, Any]]:
    """The server's newest ``limit`` ended match records (``GET /api/matches``), newest
    first; with ``before`` (a match id), the newest of those older than that match.
    Blocking: call it in a thread. It lets the lobby list results older than this
    connection, and the results of a read-only server, which hears of no live match. The
    server answers at most API_PAGE matches at a time: the rest are read page by page,
    each page after the last id of the one before. Live matches are paged past, not
    counted (the feed shows them; on a busy server they filled most of a page). A server
    older than paging ignores ``before`` and answers the first page again: no new id ends
    the listing there."""
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    last = before
    while len(records) < limit:
        want = min(limit - len(records), API_PAGE)
        after = {"before": last} if last else {}
        data = p.get_json(url, f"/api/matches?{urlencode({'limit': want} | ({'game': game} if game else {}) | after)}", timeout)
        if not isinstance(data, list):
            raise ValueError("/api/matches did not answer a list")
        page = [r for r in data if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"] not in seen]
        if not page:
            break
        seen.update(record["id"] for record in page)
        last = page[-1]["id"]
        records += [record for record in page if record.get("status") != "live"]
        if len(data) < want:
            break
    return records


def fetch_stored_games(url: str, timeout: float = 5.0) -> list[str]:
    """The games with at least one stored match. Blocking: call it in a thread. The newest
    page of matches may hold only a few games; the game filter must reach every one, and
    the server has no count per game, so each game it knows is asked for its newest match."""
    specs = p.get_json(url, "/api/games", timeout)
    if not isinstance(specs, list):
        raise ValueError("/api/games did not answer a list")
    names = [spec["name"] for spec in specs if isinstance(spec, dict) and isinstance(spec.get("name"), str)]
    return [name for name in names if fetch_matches(url, game=name, limit=1, timeout=timeout)]

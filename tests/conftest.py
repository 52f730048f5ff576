"""Fixtures that start a real arena server on loopback, with a real SQLite file; the tiny model.

``arena_factory(**options)`` starts a server (options go to ArenaServer; ``limits`` to
Limits; ``db`` reuses a store, a fresh one by default) in the test's nursery and returns
an ``Arena`` handle: its URL, store path, admin token, and helpers to register bots and
to speak the protocol over a raw websocket.
"""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.trio.client import ClientConnection, connect
from websockets.uri import parse_uri

import games
from arena import protocol as p
from arena.match import Clock, MatchResult, outcomes_of
from arena.seats import Turn
from arena.server import ArenaServer, Limits, bound_port, open_listeners
from arena.store import Store
from arena.store_writer import Call
from bots.base import Bot
from bots.registry import make_bot

ADMIN_TOKEN = "test-admin-token"

WITHOUT_TORCH = importlib.util.find_spec("torch") is None


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Without torch, tests/trainer is left out, named or not: every one of them runs the tiny
    model or imports torch."""
    trainer = Path(__file__).parent / "trainer"
    return True if WITHOUT_TORCH and collection_path.is_relative_to(trainer) else None


def pytest_report_header() -> str | None:
    """Said, as the tests of the model are left out without torch (the train extra)."""
    return "torch is not installed: tests/trainer is left out, the other tests of the tiny model skip" if WITHOUT_TORCH else None


@dataclass
class Arena:
    server: ArenaServer
    url: str
    db: Path
    admin_token: str = ADMIN_TOKEN

    async def register(self, name: str) -> str:
        assert self.server.writer is not None
        return await self.server.writer.call(Call(Store.register_bot, name))

    async def connected(self, names: Sequence[str]) -> None:
        """Until every named bot has a live session: a test's bots, started in a nursery,
        log in at their own pace."""
        with trio.fail_after(10):
            while not all(name in self.server.sessions and self.server.sessions[name].connected for name in names):
                await trio.sleep(0.01)

    async def moves(self, match_id: str, bot: str) -> list[str]:
        """The actions the server accepted from ``bot`` in a match, in order."""
        assert self.server.writer is not None
        record = await self.server.writer.call(Call(Store.match, match_id))
        seat = record["players"].index(bot)
        return [t["action"] for t in record["turns"] if t["seat"] == seat and t["accepted"]]

    @asynccontextmanager
    async def socket(self, path: str = "/bot") -> AsyncIterator[ClientConnection]:
        async with connect(self.url + path, proxy=None, max_size=None) as ws:
            yield ws

    async def raw_bot(self, name: str) -> tuple[trio.SocketStream, ClientProtocol]:
        """A bot logged in over a bare socket with websockets' sans-IO protocol: the test
        decides when anything is read or written (a frozen process, a burst already in
        flight), which a websocket client library does not let it do."""
        token = await self.register(name)
        protocol = ClientProtocol(parse_uri(self.url + "/bot"))
        host, port = self.url.removeprefix("ws://").split(":")
        stream = await trio.open_tcp_stream(host, int(port))
        protocol.send_request(protocol.connect())
        await stream.send_all(b"".join(protocol.data_to_send()))
        with trio.fail_after(10):
            while protocol.state is not State.OPEN:
                protocol.receive_data(await stream.receive_some())
            protocol.events_received()  # the handshake's response
            protocol.send_binary(p.encode(p.message("hello", bot=name, token=token), True))
            await stream.send_all(b"".join(protocol.data_to_send()))
            while not any(_is_welcome(frame) for frame in protocol.events_received()):
                protocol.receive_data(await stream.receive_some())
        return stream, protocol

    @asynccontextmanager
    async def bot(self, name: str, token: str | None = None, *, binary: bool = True, **hello: Any) -> AsyncIterator[Client]:
        """A logged-in raw protocol client (registers the bot first unless a token is given);
        ``hello`` adds fields to its hello."""
        token = token if token is not None else await self.register(name)
        async with self.socket() as ws:
            client = Client(ws, binary)
            await client.send("hello", bot=name, token=token, **hello)
            client.welcome = await client.expect("welcome")
            yield client

    @asynccontextmanager
    async def admin(self) -> AsyncIterator[Client]:
        async with self.bot("admin", self.admin_token) as client:
            yield client


class Foresight:
    """The policy of a bot that, at each of its turns in a two-seat game, first draws its
    opponent's move from the generator of a ``spec`` bot seeded by ``seed(match id, seat)``:
    what it foresees is what such an opponent plays if that is how it was seeded."""

    def __init__(self, spec: str, seed: Callable[[str, int], int], answer: str) -> None:
        self.spec, self.seed, self.answer = spec, seed, answer
        self.guessers: dict[str, Bot] = {}
        self.foreseen: dict[str, list[str]] = {}

    def __call__(self, turn: Turn) -> str:
        if turn.match_id not in self.guessers:
            self.guessers[turn.match_id] = make_bot(self.spec, turn.game, self.seed(turn.match_id, 1 - turn.seat))
        self.foreseen.setdefault(turn.match_id, []).append(self.guessers[turn.match_id].act(turn))
        return self.answer


class Client:
    """One raw websocket speaking the protocol: what a bot in another language would do."""

    def __init__(self, ws: ClientConnection, binary: bool = True) -> None:
        self.ws = ws
        self.binary = binary
        self.welcome: dict[str, Any] = {}
        self.seen: list[dict[str, Any]] = []

    async def send(self, kind: str, **fields: Any) -> None:
        await self.ws.send(p.encode(p.message(kind, **fields), self.binary))

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        with trio.fail_after(timeout):
            msg = p.decode(await self.ws.recv())
        self.seen.append(msg)
        return msg

    async def expect(self, kind: str, timeout: float = 10, **match: Any) -> dict[str, Any]:
        """Read until a message of ``kind`` (whose fields equal ``match``) arrives."""
        with trio.fail_after(timeout):
            while True:
                msg = await self.receive(timeout)
                if msg["t"] == kind and all(msg.get(k) == v for k, v in match.items()):
                    return msg

    @property
    def last_seq(self) -> int:
        return max((m.get("seq", 0) for m in self.seen), default=0)


async def http_raw(url: str, path: str, method: str = "GET", headers: str = "") -> bytes:
    """Request ``path`` of the server at ``url`` (its ws:// base) over a plain socket, with
    ``headers`` (lines ending in CRLF) besides Host: the whole response, head and body, as
    the server wrote it."""
    host, port = url.removeprefix("ws://").split(":")
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        headers = headers or "Connection: close\r\n"
        await stream.send_all(f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}\r\n".encode())
        data = b""
        while chunk := await stream.receive_some():
            data += chunk
    return data


async def http_get(url: str, path: str) -> tuple[int, Any]:
    """GET a JSON endpoint of the server at ``url``: status and body."""
    head, _, body = (await http_raw(url, path)).partition(b"\r\n\r\n")
    assert b"application/json" in head
    return int(head.split()[1]), json.loads(body)


def execute(store: Store, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """A statement run on the writer's own connection, as a job: ``Call(execute, sql)``."""
    return [tuple(row) for row in store.conn.execute(sql, args)]


ArenaFactory = Callable[..., Awaitable[Arena]]


@pytest.fixture
def arena_factory(tmp_path: Path, nursery: trio.Nursery, request: pytest.FixtureRequest) -> ArenaFactory:
    # a test that changes the Store's methods changes them in this process only
    in_thread = request.node.get_closest_marker("writer_in_thread") is not None

    async def start(*, limits: Limits | None = None, clock: Clock | None = None, db: Path | None = None, **options: Any) -> Arena:
        db = db or tmp_path / f"arena-{len(list(tmp_path.glob('arena-*.db')))}.db"
        options.setdefault("admin_token", ADMIN_TOKEN)
        options.setdefault("writer_process", not in_thread)
        server = ArenaServer(db, clock=clock or Clock(move_ms=5_000), limits=limits or Limits(), **options)
        listeners = await open_listeners("127.0.0.1", 0)
        await nursery.start(server.run, listeners)
        return Arena(server, f"ws://127.0.0.1:{bound_port(listeners)}", db)

    return start


@pytest.fixture
async def arena(arena_factory: ArenaFactory) -> AsyncIterator[Arena]:
    started = await arena_factory()
    yield started
    await started.server.shutdown()


def _is_welcome(frame: Frame) -> bool:
    return frame.opcode is Opcode.BINARY and p.decode(bytes(frame.data))["t"] == "welcome"


class ServeProcess:
    """`arena serve --port 0 ARGS` as a real process, the way an operator runs it.

    ``await start()`` reads its stdout up to the line naming its URL (``lines`` keeps what
    came before, such as a first-start admin token); ``await stop()`` sends SIGINT and
    returns the exit status; ``kill()`` (SIGKILL) belongs in a ``finally``.
    """

    def __init__(self, *args: str, **popen: Any) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--port", "0", *args],
            cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )
        self.url = ""
        self.lines: list[str] = []
        self.log = ""  # its stderr, read by ``stop``

    async def start(self, timeout: float = 20) -> str:
        assert self.proc.stdout is not None
        with trio.fail_after(timeout):
            while True:
                line = await trio.to_thread.run_sync(self.proc.stdout.readline, abandon_on_cancel=True)
                if not line:
                    code = await trio.to_thread.run_sync(self.proc.wait)
                    raise AssertionError(f"arena serve exited with {code}: {self.proc.stderr.read() if self.proc.stderr else ''}")
                self.lines.append(line)
                found = re.search(r"serving on (ws://[\d.]+:\d+)", line)
                if found:
                    self.url = found.group(1)
                    return self.url

    async def stop(self, timeout: float = 15, signals: Sequence[int] = (signal.SIGINT,)) -> int:
        """SIGINT, as Ctrl-C does (or ``signals``, one after the other at once); the exit status.
        The rest of stdout lands in ``lines``, stderr in ``log``."""
        for signum in signals:
            self.proc.send_signal(signum)
        out, self.log = await trio.to_thread.run_sync(lambda: self.proc.communicate(timeout=timeout))
        self.lines.extend(out.splitlines(keepends=True))
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()


# ---- the tiny model: built once per test session; the trainer's and the nightly's tests share it


@pytest.fixture(scope="session")
def one_torch_thread() -> Iterator[None]:
    """Run torch on one thread while the model tests run.

    The tiny model's matrices are too small for intra-op parallelism to pay, and on a
    shared two-core machine torch's threads wait on each other: scoring sixty rows one by
    one took 11 s on two threads and 1 s on one. Without torch (the train extra), the tests
    of the model are skipped.
    """
    torch = pytest.importorskip("torch", reason="the tiny model needs torch: pip install torch==2.13.0")

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Path:
    """A ``from_pretrained`` folder holding the seeded tiny Qwen2 model and its tokenizer.

    Building it (training the tokenizer, initialising the weights) takes seconds, so every
    test that runs a network shares it; tests only read the folder, and a test that trains
    saves elsewhere."""
    from trainer.tiny_model import init_model

    return init_model(tmp_path_factory.mktemp("tiny-model"))


# ---- match records written straight to a store, with the result a test chooses


def _match_record(
    game: str, players: list[str], returns: list[float], *, forfeit: int | None = None, status: str = "finished"
) -> MatchResult:
    """A match record as play_match makes it; outcomes and ranks by the match loop's own rule."""
    outcomes, ranks = outcomes_of(games.get(game), returns, forfeit)
    now = time.time()
    return MatchResult(
        match_id=uuid.uuid4().hex,
        game=game,
        config=games.get(game).spec.default_config.to_dict(),
        seed=0,
        players=players,
        status=status,
        reason="complete" if forfeit is None else "timeout",
        detail="",
        returns=returns,
        outcomes=outcomes,
        ranks=ranks,
        forfeit_seat=forfeit,
        actions=[],
        turns=[],
        max_retries=2,
        clock=Clock(),
        started_at=now,
        ended_at=now,
    )


@pytest.fixture
def match_record() -> Callable[..., MatchResult]:
    """``match_record(game, players, returns, forfeit=None, status="finished")``: a record to store."""
    return _match_record

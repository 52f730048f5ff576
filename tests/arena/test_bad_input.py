"""Bad input on /bot: every malformed frame gets its documented error or close code, and
the server keeps serving everyone else (a normal match between two other bots completes).
A server configured out of range refuses to start.

Real server on loopback, real SQLite file; raw websockets speak the protocol the way a
bot written in another language would, including the ways it can get it wrong.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as sync_connect
from websockets.trio.client import ClientConnection, connect

from arena import protocol as p
from arena import server as server_module
from arena.match import Clock
from arena.server import ArenaServer, Limits, Metrics, bound_port, open_listeners
from arena.sessions import Connection
from arena.store import Store
from arena.store_writer import Call
from bots.client import run_bot
from bots.registry import make_bot
from tests.conftest import Arena, ArenaFactory, Client, http_get

# ---- helpers ---------------------------------------------------------------------------


async def close_code(ws: ClientConnection, timeout: float = 5) -> int | None:
    """Read until the server closes the connection; the close code it sent."""
    with trio.fail_after(timeout):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None


async def a_normal_match_completes(
    url: str, db: Path, register: Callable[[str], Any], tag: str, game: str = "tic-tac-toe"
) -> None:
    """Two fresh SDK bots seek ``game`` and play one match to its end, recorded in the store."""
    names = [f"{tag}-first", f"{tag}-second"]
    tokens = [await register(name) for name in names]
    ends: dict[int, dict[str, Any]] = {}

    async def play(seat: int) -> None:
        bot = make_bot("random", game, seed=seat)
        run = await run_bot(bot.act, url, names[seat], tokens[seat], games=[game], matches=1, binary=seat == 0)
        ends[seat] = run.results[0]

    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            for seat in range(2):
                nursery.start_soon(play, seat)
    assert ends[0]["match"] == ends[1]["match"]
    assert ends[0]["status"] == "finished" and ends[0]["reason"] == "complete", ends[0]
    record = Store(db, read_only=True).match(ends[0]["match"])
    assert record is not None and record["status"] == "finished" and record["turns"]


async def still_serving(arena: Arena, tag: str) -> None:
    await a_normal_match_completes(arena.url, arena.db, arena.register, tag)


async def start_direct_match(arena: Arena, game: str, names: list[str], **fields: Any) -> str:
    async with arena.admin() as admin:
        await admin.send("create_match", bots=names, game=game, **fields)
        return (await admin.expect("match_created"))["match"]


async def play_out(client: Client, match: str, seat: int, pending: dict[str, Any] | None = None) -> dict[str, Any]:
    """Answer every turn of ``seat`` (``pending`` first, a turn already read) with its first
    legal action until the match ends."""
    while True:
        msg, pending = pending or await client.receive(), None
        if msg["t"] == "match_end" and msg["match"] == match:
            return msg
        if msg["t"] == "turn" and msg["match"] == match:
            await client.send("move", match=match, seat=seat, step=msg["step"], attempt=msg["attempt"], action=msg["legal"][0])


def json_frame(**fields: Any) -> str:
    return json.dumps(fields)


def packed(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


MOVE = {"t": "move", "v": 1, "match": "m", "seat": 0, "step": 0, "attempt": 0, "action": "a1"}


def nested(depth: int) -> Any:
    """A list ``depth`` lists deep."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# ---- malformed frames ------------------------------------------------------------------

MALFORMED = [
    pytest.param(b"\xc1\xc1", p.BAD_FRAME, id="binary frame that is not msgpack"),
    pytest.param(b"\x93\x01", p.BAD_FRAME, id="truncated msgpack"),
    pytest.param('{"t": "ping"', p.BAD_FRAME, id="text frame that is not JSON"),
    pytest.param(packed([1, 2, 3]), p.BAD_FRAME, id="msgpack list instead of a map"),
    pytest.param(packed("ping"), p.BAD_FRAME, id="msgpack string instead of a map"),
    pytest.param("42", p.BAD_FRAME, id="JSON number instead of a map"),
    pytest.param('["ping"]', p.BAD_FRAME, id="JSON list instead of a map"),
    pytest.param(r'{"t": "ping", "note": "\ud800"}', p.BAD_FRAME, id="JSON with a lone surrogate, which is not text"),
    pytest.param('{"t": "ping", "note": NaN}', p.BAD_FRAME, id="a NaN literal, which JSON has not"),
    pytest.param('{"t": "ping", "note": -Infinity}', p.BAD_FRAME, id="an -Infinity literal, which JSON has not"),
    pytest.param('{"t": "ping", "note": 1e999}', p.BAD_FRAME, id="a number past a double, which Python reads as infinity"),
    pytest.param(json_frame(v=1, games=["nim"]), p.BAD_MESSAGE, id="missing t"),
    pytest.param(packed({"t": 7, "v": 1}), p.BAD_MESSAGE, id="t not a string"),
    pytest.param(json_frame(**{**MOVE, "step": "0"}), p.BAD_MESSAGE, id="move.step as a string"),
    pytest.param(packed({**MOVE, "attempt": True}), p.BAD_MESSAGE, id="move.attempt as a boolean"),
    pytest.param(packed({k: v for k, v in MOVE.items() if k != "match"}), p.BAD_MESSAGE, id="move without its match"),
    pytest.param(json_frame(t="seek", v=1, games="tic-tac-toe"), p.BAD_MESSAGE, id="seek.games as a string"),
    pytest.param(json_frame(t="seek", v=1, games=[1, 2]), p.BAD_MESSAGE, id="seek.games of numbers"),
    pytest.param(json_frame(**{**MOVE, "tokens_in": 2**70}), p.BAD_MESSAGE, id="an integer no store can hold"),
    pytest.param(
        packed({"t": "seek", "v": 1, "games": ["nim"], "config": {"piles": nested(1020)}}),
        p.BAD_FRAME,
        id="a config a thousand lists deep, past Python's recursion limit",
    ),
    pytest.param(json_frame(t="seek", v=1, games=["nim"], config={"piles": nested(31)}), p.BAD_FRAME, id="a message 33 deep"),
    pytest.param(packed({"t": "teleport", "v": 1}), p.UNKNOWN_TYPE, id="unknown type"),
    pytest.param(json_frame(t="seek", v=1, games=["tic-tac-to"]), p.UNKNOWN_GAME, id="unknown game"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("frame", "code"), MALFORMED)
async def test_malformed_input_gets_its_error_code_and_the_server_keeps_serving(
    arena: Arena, frame: bytes | str, code: str
) -> None:
    async with arena.bot("garbler") as garbler:
        await garbler.ws.send(frame)
        error = await garbler.expect("error")
        assert error["code"] == code, error
        assert error["message"]
        await garbler.send("ping")
        await garbler.expect("pong")  # one bad frame is answered, not punished
        await still_serving(arena, "after")
    assert arena.server.metrics.errors >= 1


@pytest.mark.parametrize("number", ["1e999", "-1e999", "2E+400"])
def test_a_json_number_past_a_double_is_refused_not_read_as_infinity(number: str) -> None:
    with pytest.raises(p.ProtocolError, match="beyond a double's range") as raised:
        p.decode(f'{{"t": "move", "cost": {number}}}')
    assert raised.value.code == p.BAD_FRAME
    assert p.decode('{"t": "ping", "tiny": 1e-999, "large": 1.5e300}') == {"t": "ping", "tiny": 0.0, "large": 1.5e300}


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"t": "hello", "v": 1, "bot": "b", "token": "t", "resume": None}, "'hello.resume' must be a map, got null"),
        (
            {"t": "hello", "v": 1, "bot": "b", "token": "t", "resume": {"session": None, "last_seq": 0}},
            "'hello.resume.session' must be a string, got null",
        ),
        ({**MOVE, "step": [0]}, "'move.step' must be an integer, got a list"),
        ({**MOVE, "action": b"a1"}, "'move.action' must be a string or null, got binary data"),
        ({**MOVE, "attempt": True}, "'move.attempt' must be an integer, got a boolean"),
        ({**MOVE, "match": 1.5}, "'move.match' must be a string, got a number"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_as_json_and_msgpack_name_it(message: dict[str, Any], said: str) -> None:
    with pytest.raises(p.ProtocolError) as refused:
        p.check(message, p.BOT_MESSAGES)
    assert refused.value.code == p.BAD_MESSAGE and refused.value.message == said


@pytest.mark.trio
async def test_the_error_answers_in_the_encoding_it_was_spoken_to(arena: Arena) -> None:
    async with arena.bot("speaker") as speaker:
        await speaker.ws.send(json_frame(t="teleport", v=1))
        answer = await speaker.ws.recv()
        assert isinstance(answer, str) and json.loads(answer)["code"] == p.UNKNOWN_TYPE
        await speaker.ws.send(packed({"t": "teleport", "v": 1}))
        answer = await speaker.ws.recv()
        assert isinstance(answer, bytes) and msgpack.unpackb(answer)["code"] == p.UNKNOWN_TYPE


@pytest.mark.trio
async def test_an_error_about_an_odd_message_survives_a_resume_in_the_other_encoding(arena: Arena) -> None:
    # The error is kept in the session's outbox and replayed on resume: whatever the bot
    # sent in place of a type must not make the replay unencodable in the other encoding.
    token = await arena.register("switcher")
    async with arena.bot("switcher", token, binary=False) as text:
        session, after = text.welcome["session"], text.welcome["seq"]
        await text.ws.send(json_frame(t=2**70, v=1))  # an integer msgpack cannot carry
        assert (await text.expect("error"))["code"] == p.BAD_MESSAGE
    async with arena.socket() as ws:
        packing = Client(ws, binary=True)
        await packing.send("hello", bot="switcher", token=token, resume={"session": session, "last_seq": after})
        assert (await packing.expect("welcome"))["resumed"] is True
        assert (await packing.expect("error"))["code"] == p.BAD_MESSAGE
        after = packing.last_seq
        await ws.send(packed({"t": {b"raw-key": 1}, "v": 1}))  # a map key JSON cannot carry
        assert (await packing.expect("error"))["code"] == p.BAD_MESSAGE
    async with arena.socket() as ws:
        texting = Client(ws, binary=False)
        await texting.send("hello", bot="switcher", token=token, resume={"session": session, "last_seq": after})
        assert (await texting.expect("welcome"))["resumed"] is True
        assert (await texting.expect("error"))["code"] == p.BAD_MESSAGE
        await texting.send("ping")
        await texting.expect("pong")
    await still_serving(arena, "resumed")


# ---- moves -------------------------------------------------------------------------------


@pytest.mark.trio
async def test_a_move_for_a_match_the_bot_is_not_in_is_not_your_match(arena: Arena) -> None:
    async with arena.bot("outsider") as outsider, arena.bot("p-one") as one, arena.bot("p-two") as two:
        match = await start_direct_match(arena, "tic-tac-toe", ["p-one", "p-two"], seed=3)
        turn = await one.expect("turn", match=match)
        for target in (match, "no-such-match"):
            await outsider.send("move", match=target, seat=0, step=turn["step"], attempt=0, action="b2")
            assert (await outsider.expect("error"))["code"] == p.NOT_YOUR_MATCH
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_out, one, match, 0, turn)
            nursery.start_soon(play_out, two, match, 1)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished"
    first_step = [(t["seat"], t["action"]) for t in record["turns"] if t["step"] == 0]
    assert first_step == [(0, turn["legal"][0])]  # the outsider's b2 was never applied
    await still_serving(arena, "after-outsider")


@pytest.mark.trio
async def test_a_repeated_move_is_stale_and_never_applied_twice(arena: Arena) -> None:
    async with arena.bot("eager") as eager, arena.bot("calm") as calm:
        match = await start_direct_match(arena, "tic-tac-toe", ["eager", "calm"], seed=5)
        await eager.expect("turn", match=match, step=0)
        move = {"match": match, "seat": 0, "step": 0, "attempt": 0, "action": "b2"}
        await eager.send("move", **move)
        await eager.send("move", **move)  # sent again before any answer: a retrying client
        kinds = {(await eager.expect("move_ack")).get("t"), (await eager.expect("error", code=p.STALE_MOVE))["t"]}
        assert kinds == {"move_ack", "error"}
        await eager.send("move", **{**move, "action": "a1"})  # the same step again, after the ack
        stale = await eager.expect("error")
        assert stale["code"] == p.STALE_MOVE and stale["ref"] == "move"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_out, eager, match, 0)
            nursery.start_soon(play_out, calm, match, 1)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished" and record["reason"] == "complete"
    first_step = [t for t in record["turns"] if t["step"] == 0]
    assert [(t["seat"], t["action"], t["accepted"]) for t in first_step] == [(0, "b2", True)]
    steps = [t["step"] for t in record["turns"] if t["accepted"]]
    assert steps == sorted(set(steps))  # one accepted turn per step, in order
    await still_serving(arena, "after-stale")


@pytest.mark.trio
async def test_a_move_whose_text_cannot_be_stored_is_refused_and_cannot_void_the_match(arena: Arena) -> None:
    # A lone surrogate cannot be written to SQLite (or msgpack): had it reached the store,
    # committing the result would fail and the losing bot would have voided its loss.
    async with arena.bot("sly", binary=False) as sly, arena.bot("fair") as fair:
        match = await start_direct_match(arena, "tic-tac-toe", ["sly", "fair"], seed=8)
        turn = await sly.expect("turn", match=match, step=0)
        fields = {"t": "move", "v": 1, "match": match, "seat": 0, "step": 0, "attempt": 0}
        await sly.ws.send(json.dumps({**fields, "action": turn["legal"][0]})[:-1] + r', "raw": "\udc80"}')
        assert (await sly.expect("error"))["code"] == p.BAD_FRAME
        await sly.ws.send(json.dumps({**fields, "action": "b2"})[:-1] + r', "prompt": "\ud83d"}')
        assert (await sly.expect("error"))["code"] == p.BAD_FRAME
        await sly.ws.send(json.dumps({**fields, "action": "b2", "tokens_out": 2**64}))
        assert (await sly.expect("error"))["code"] == p.BAD_MESSAGE
        for tokens in (2**63 - 1, -1):  # two such turns overflowed the leaderboard's sum, for good
            await sly.ws.send(json.dumps({**fields, "action": "b2", "tokens_in": tokens}))
            refused = await sly.expect("error")
            assert refused["code"] == p.BAD_MESSAGE and "'move.tokens_in' must be from 0 to 1,000,000,000" in refused["message"]
        await sly.ws.send(json.dumps({**fields, "action": "b2", "logprobs": [10**400]}))
        assert (await sly.expect("error"))["code"] == p.BAD_MESSAGE
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_out, sly, match, 0, turn)
            nursery.start_soon(play_out, fair, match, 1)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished" and record["reason"] == "complete"


# ---- size and rate limits ------------------------------------------------------------------


@pytest.mark.trio
async def test_a_frame_over_the_soft_cap_is_too_large_and_the_connection_lives(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(soft_cap=512))
    async with arena.bot("wordy") as wordy:
        await wordy.send("ping", pad="x" * 1_000)
        error = await wordy.expect("error")
        assert error["code"] == p.TOO_LARGE and "512" in error["message"]
        await wordy.send("ping", pad="x" * 100)
        await wordy.expect("pong")
        await still_serving(arena, "after-wordy")
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_frame_over_the_hard_cap_closes_the_connection_with_1009(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(soft_cap=512, hard_cap=2_048))
    async with arena.bot("huge") as huge:
        await huge.ws.send(b"\x00" * 10_000)
        assert await close_code(huge.ws) == p.CLOSE_TOO_BIG
    await still_serving(arena, "after-huge")
    await arena.server.shutdown()


async def flood_until_closed(flood: Client, kind: str, **fields: Any) -> list[dict[str, Any]]:
    """Send 20 messages of ``kind`` at once; what the server answered until it closed with 1008."""
    try:
        for _ in range(20):
            await flood.send(kind, **fields)
    except ConnectionClosed:
        pass  # closed while still sending
    seen: list[dict[str, Any]] = []
    with trio.fail_after(5):
        try:
            while True:
                seen.append(await flood.receive())
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == p.CLOSE_POLICY
    return seen


@pytest.mark.trio
async def test_flooding_is_rate_limited_then_closed_with_1008(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(rate=1, burst=8, strikes=3))  # a burst that still lets a normal bot play
    async with arena.bot("flood") as flood:
        seen = await flood_until_closed(flood, "ping")
    kinds = [msg["t"] for msg in seen]
    assert kinds[:8] == ["pong"] * 8, kinds  # the burst passes
    limited = [msg for msg in seen if msg["t"] == "error"]
    assert len(limited) == 3, kinds  # every strike is told why, the last one too, before the close
    assert all(msg["code"] == p.RATE_LIMITED and msg["retry_after"] > 0 for msg in limited)
    assert kinds.count("pong") <= 9  # nothing after the close was answered
    await still_serving(arena, "after-flood")
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_flood_already_in_flight_is_closed_at_once_and_the_server_still_stops(arena_factory: ArenaFactory) -> None:
    """More frames wait unread than websockets queues: the server must read through them
    to see the client's answer to its close; once it waited without reading, the close took
    a heartbeat and the connection, and so the server's shutdown, never ended."""
    arena = await arena_factory(limits=Limits(rate=1, burst=8, strikes=3))
    stream, protocol = await arena.raw_bot("burst")
    for _ in range(80):
        protocol.send_binary(p.encode(p.message("ping"), True))
    await stream.send_all(b"".join(protocol.data_to_send()))  # all in flight before the server reads the first
    with trio.fail_after(5):
        while protocol.close_rcvd is None:
            protocol.receive_data(await stream.receive_some())
        await stream.send_all(b"".join(protocol.data_to_send()))  # the answer to the close, behind 69 unread pings
        while await stream.receive_some():  # the server hangs up once it has read the answer
            pass
    await stream.aclose()
    assert protocol.close_rcvd.code == p.CLOSE_POLICY
    with trio.fail_after(5):
        await arena.server.shutdown()


@pytest.mark.parametrize(("early", "told"), [(0.0002, 0.001), (0.0123, 0.013), (0.5, 0.5)])
def test_retry_after_is_the_wait_rounded_up_to_the_millisecond(
    monkeypatch: pytest.MonkeyPatch, early: float, told: float
) -> None:
    """Rounded to the nearest, a wait under half a millisecond was told as 0.0 (found by QA), and
    any wait rounded down was refused again when kept to."""
    replies: list[dict[str, Any]] = []
    intake = server_module._Intake(
        Limits(),
        Metrics(),
        Connection(outgoing=None),
        lambda kind, **fields: replies.append(fields),  # type: ignore[arg-type]
    )
    monkeypatch.setattr(server_module.time, "monotonic", lambda: 100.0)
    intake.rate.due = 100.0 + intake.rate.slack + early
    assert intake.admit(p.encode(p.message("ping"), True), 100.0) is None
    assert replies[0]["code"] == p.RATE_LIMITED and replies[0]["retry_after"] == pytest.approx(told)


@pytest.mark.trio
async def test_strikes_older_than_the_window_are_forgotten(arena_factory: ArenaFactory) -> None:
    """Strikes counted over a connection's whole life: a bot up for weeks was closed 1008 for
    its fifth slip (an LLM's oversized reply, say), however far apart they came."""
    arena = await arena_factory(limits=Limits(strikes=3, strike_window_s=1.5))  # room for a slow machine's round trips
    async with arena.bot("slips") as slips:
        assert slips.welcome["limits"]["strike_window_s"] == 1.5

        async def slip() -> None:
            await slips.ws.send(b"\xc1")
            await slips.expect("error", code=p.BAD_FRAME)

        await slip()
        await slip()
        await trio.sleep(1.6)  # both forgotten
        await slip()
        await slip()
        await slips.send("ping")
        await slips.expect("pong")
        await slip()  # the third within the window
        with trio.fail_after(5), pytest.raises(ConnectionClosed) as closed:
            await slips.ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == p.CLOSE_POLICY
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_rate_limited_bot_may_go_on_after_waiting_retry_after(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(rate=20, burst=2, strikes=3))
    async with arena.bot("patient") as patient:
        for _ in range(3):
            await patient.send("ping")
        error = await patient.expect("error", code=p.RATE_LIMITED)
        await trio.sleep(error["retry_after"] + 0.05)
        await patient.send("ping")
        await patient.expect("pong")
    await arena.server.shutdown()


@pytest.mark.trio
async def test_messages_that_waited_while_the_server_was_busy_are_not_taken_for_a_flood(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client within the rate kept sending while the server took 2 s over one answer; read
    all at once afterwards, its messages were charged as one burst: refused, then closed 1008."""
    arena = await arena_factory(limits=Limits(rate=20, burst=5, strikes=3))

    async def slow_resolve(match_id: str) -> str:
        await trio.sleep(2)
        return match_id

    async def answers(ws: ClientConnection, count: int) -> list[str]:
        """The kinds of the next ``count`` answers (the lobbies every spectator is sent aside)."""
        kinds: list[str] = []
        with trio.fail_after(5):
            while len(kinds) < count:
                kind = p.decode(await ws.recv())["t"]
                kinds += [] if kind == "lobby" else [kind]
        return kinds

    monkeypatch.setattr(arena.server, "_resolve", slow_resolve)
    async with arena.socket("/watch") as ws:
        await ws.send(p.encode(p.message("watch", match="f00d"), True))
        for _ in range(30):  # 15 a second, while the server is busy looking for the match
            await ws.send(p.encode(p.message("ping"), True))
            await trio.sleep(1 / 15)
        assert await answers(ws, 31) == ["error"] + ["pong"] * 30  # the match is unknown
    async with arena.socket("/watch") as ws:  # a flood is still a flood
        # the third refusal closes the connection, which a loaded machine may let the server
        # reach before the last pings are sent; what it answered before closing is still read
        with contextlib.suppress(ConnectionClosed):
            for _ in range(10):
                await ws.send(p.encode(p.message("ping"), True))
        assert await answers(ws, 8) == ["pong"] * 5 + ["error"] * 3


@pytest.mark.trio
async def test_messages_read_while_the_event_loop_stood_still_are_not_taken_for_a_flood(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole event loop stood still for 2 s (here a blocking call; a process starved of
    CPU is the same). Back, websockets read the client's paced messages all at once and held
    them while it took its send lock: in neither its queue nor the kernel, they were seen as
    nothing unread and charged as one burst, refused, then closed 1008."""
    arena = await arena_factory(limits=Limits(rate=20, burst=5, strikes=3))

    async def blocking_leaderboard(game: str | None) -> dict[str, Any]:
        time.sleep(2)
        return {"game": game, "variants": []}

    def paced_client() -> list[str]:
        """From a thread of its own, which keeps its pace while the server's loop stands still."""
        with sync_connect(arena.url + "/watch", proxy=None) as ws:
            ws.send(p.encode(p.message("leaderboard"), True))
            for _ in range(30):
                ws.send(p.encode(p.message("ping"), True))
                time.sleep(1 / 15)
            kinds: list[str] = []
            while len(kinds) < 31:
                kind = p.decode(ws.recv(timeout=5))["t"]
                kinds += [] if kind == "lobby" else [kind]
            return kinds

    monkeypatch.setattr(arena.server, "_leaderboard", blocking_leaderboard)
    answers = await trio.to_thread.run_sync(paced_client)
    assert sorted(answers) == ["leaderboard"] + ["pong"] * 30  # a board is answered apart: in any order with the pongs


@pytest.mark.trio
async def test_a_seek_whose_config_holds_a_number_no_encoding_carries_is_a_bad_config(arena: Arena) -> None:
    """Accepted, it went into the lobby every spectator is sent, and packing that lobby in
    msgpack for one spectator raised out of the lobby's task and stopped the server."""
    async with arena.bot("huge-seeker", binary=False) as seeker, arena.socket("/watch") as ws:
        await ws.send(p.encode(p.message("ping"), True))  # this spectator now reads msgpack
        await seeker.ws.send('{"t": "seek", "v": 1, "games": ["pig"], "config": {"target": 18446744073709551616}}')
        refused = await seeker.expect("error")
        assert refused["code"] == p.BAD_CONFIG and "config key 'target'" in refused["message"]
        assert arena.server.lobby.seeks == []
    await still_serving(arena, "after-huge-seek")


@pytest.mark.trio
async def test_a_message_its_encoding_cannot_carry_closes_that_connection_not_the_server(arena: Arena) -> None:
    """Whatever bug of ours makes one (msgpack holds no integer past 64 bits), the task that
    sent it (a match, the lobby's) must not fail with it: that stopped every match."""
    async with arena.bot("unlucky") as unlucky:
        arena.server.sessions["unlucky"].send("pong", huge=2**64)
        assert await close_code(unlucky.ws) == p.CLOSE_INTERNAL
    await still_serving(arena, "after-unencodable")


# ---- connections -----------------------------------------------------------------------------


async def refused_handshake(url: str, stream: trio.SocketStream | None = None) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(url, proxy=None, stream=stream):
            pass
    return refused.value


@pytest.mark.trio
async def test_a_full_server_refuses_new_websockets_with_503_and_serves_those_it_holds(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(max_connections=2))
    async with arena.bot("holder") as holder, arena.socket("/watch") as watching:
        for path in ("/bot", "/watch"):
            refused = await refused_handshake(arena.url + path)
            assert refused.response.status_code == 503 and refused.response.headers["Retry-After"] == "5"
            body = json.loads(refused.response.body)
            assert body["error"] == p.SERVER_FULL and "2 connections" in body["message"]
        await holder.send("ping")  # those it holds are served as before, plain HTTP too
        await holder.expect("pong")
        assert json.loads(await watching.recv())["t"] == "lobby"
        status, metrics = await http_get(arena.url, "/metrics")
        assert status == 200 and metrics["connections"] == 2 and metrics["connections_refused"] == 2
    with trio.fail_after(5):  # each place is free again once its websocket has closed
        while arena.server.metrics_snapshot()["connections"]:
            await trio.sleep(0.01)
    await still_serving(arena, "after-full")
    await arena.server.shutdown()


@pytest.mark.trio
async def test_spectators_may_hold_max_spectators_websockets_and_bots_still_log_in(arena_factory: ArenaFactory) -> None:
    """Found by a security review: spectators, who need no token, could take every place
    (10,000 /watch sockets from ten addresses), and then no bot could log in."""
    arena = await arena_factory(limits=Limits(max_connections=4, max_spectators=2))
    async with arena.socket("/watch"), arena.socket("/watch"):
        refused = await refused_handshake(arena.url + "/watch")
        assert refused.response.status_code == 503
        assert "2 spectators, the most it takes" in json.loads(refused.response.body)["message"]
        async with arena.bot("still-room") as bot:
            await bot.send("ping")
            await bot.expect("pong")
    with trio.fail_after(5):
        while arena.server.metrics_snapshot()["connections"]:
            await trio.sleep(0.01)
    async with arena.socket("/watch") as again:  # a place is free once a spectator has gone
        assert json.loads(await again.recv())["t"] == "lobby"
    await arena.server.shutdown()


@pytest.mark.trio
async def test_one_address_may_hold_max_per_address_websockets_and_another_address_more(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(max_per_address=1))
    host, port = arena.url.removeprefix("ws://").split(":")
    async with arena.socket("/watch"):
        refused = await refused_handshake(arena.url + "/watch")
        assert refused.response.status_code == 503
        assert "1 connection is open from 127.0.0.1" in json.loads(refused.response.body)["message"]
        neighbour = await trio.open_tcp_stream(host, int(port), local_address="127.0.0.2")  # Linux routes all of 127/8 to lo
        async with connect(arena.url + "/watch", proxy=None, stream=neighbour) as other:
            assert json.loads(await other.recv())["t"] == "lobby"
    await arena.server.shutdown()


@pytest.mark.trio
async def test_handshakes_racing_for_the_last_place_get_it_once_and_the_rest_are_refused(arena_factory: ArenaFactory) -> None:
    """Handshakes in flight together all pass the check before the upgrade; those past the
    limit when their websocket opens are closed with 1013 instead of the 503."""
    arena = await arena_factory(limits=Limits(max_connections=1))
    outcomes: list[str] = []
    opened = trio.Event()

    async def knock() -> None:
        try:
            async with connect(arena.url + "/watch", proxy=None) as ws:
                try:
                    await ws.recv()
                except ConnectionClosed as closed:
                    assert closed.rcvd is not None
                    outcomes.append(f"closed {closed.rcvd.code}")
                    return
                outcomes.append("open")
                opened.set()
                await trio.sleep_forever()
        except InvalidStatus as refused:
            outcomes.append(f"refused {refused.response.status_code}")

    async with trio.open_nursery() as nursery:
        for _ in range(12):
            nursery.start_soon(knock)
        with trio.fail_after(10):
            await opened.wait()
            while len(outcomes) < 12:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert outcomes.count("open") == 1, outcomes
    assert all(each in ("open", "refused 503", f"closed {p.CLOSE_TRY_AGAIN}") for each in outcomes), outcomes
    assert arena.server.metrics.connections_refused == 11
    await arena.server.shutdown()


@pytest.mark.trio
async def test_the_sdk_waits_for_a_place_on_a_full_server_and_then_plays(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arena.server.FULL_RETRY_S", 0)  # what a server may say; the test need not wait 5 s
    arena = await arena_factory(limits=Limits(max_connections=2))
    names = ["late", "other"]
    tokens = [await arena.register(name) for name in names]
    runs: dict[str, Any] = {}

    async def play(name: str, token: str) -> None:
        bot = make_bot("random", "nim", seed=len(name))
        runs[name] = await run_bot(bot.act, arena.url, name, token, games=["nim"], matches=1)

    async with trio.open_nursery() as nursery:
        async with arena.socket("/watch"):  # both places taken before the first bot comes
            async with arena.socket("/watch"):
                nursery.start_soon(play, names[0], tokens[0])
                with trio.fail_after(10):
                    while not arena.server.metrics.connections_refused:
                        await trio.sleep(0.01)
            await arena.connected(names[:1])  # it took the place freed, at its next try
        nursery.start_soon(play, names[1], tokens[1])
    assert runs["late"].reconnects >= 1 and runs["late"].results[0]["match"] == runs["other"].results[0]["match"]
    await arena.server.shutdown()


# ---- the handshake ---------------------------------------------------------------------------


@pytest.mark.trio
@pytest.mark.parametrize(
    "first",
    [
        pytest.param(p.encode(p.message("ping"), True), id="a ping"),
        pytest.param(p.encode(p.message("seek", games=["nim"]), False), id="a seek"),
        pytest.param(b"\xc1", id="a bad frame"),
        pytest.param(json_frame(t="hello", v=1, bot="x"), id="a hello without its token"),
        pytest.param(json_frame(t="hello", v=1, bot="x", token="t", resume={}), id="a resume without its fields"),
        pytest.param(
            json_frame(t="hello", v=1, bot="x", token="t", resume={"session": 5, "last_seq": 0}), id="a resume's session a number"
        ),
        pytest.param(
            packed({"t": "hello", "v": 1, "bot": "x", "token": "t", "resume": {"session": "s", "last_seq": True}}),
            id="a resume's last_seq a boolean",
        ),
    ],
)
async def test_a_first_message_that_is_not_a_hello_closes_with_4004(arena: Arena, first: bytes | str) -> None:
    async with arena.socket() as ws:
        await ws.send(first)
        assert await close_code(ws) == p.CLOSE_NO_HELLO
    await still_serving(arena, "after-rude")


@pytest.mark.trio
@pytest.mark.parametrize(
    ("version", "binary"),
    [(p.PROTOCOL_VERSION + 1, True), (1.0, True), (1.0, False), (True, False), ("1", False)],
    ids=["the next version", "a msgpack float 1.0", "a JSON 1.0", "a boolean", "a string"],
)
async def test_a_wrong_protocol_version_closes_with_4003(arena: Arena, version: Any, binary: bool) -> None:
    token = await arena.register("oldtimer")
    async with arena.socket() as ws:
        await ws.send(p.encode({"t": "hello", "v": version, "bot": "oldtimer", "token": token}, binary))
        assert await close_code(ws) == p.CLOSE_BAD_VERSION
    await still_serving(arena, "after-version")


@pytest.mark.trio
async def test_no_hello_within_the_timeout_closes_with_4004(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(hello_timeout_s=0.2))
    async with arena.socket() as ws:
        started = trio.current_time()
        assert await close_code(ws) == p.CLOSE_NO_HELLO
        assert trio.current_time() - started < 3
    await still_serving(arena, "after-silent")
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_second_login_with_the_same_token_supersedes_the_first_with_4002(arena: Arena) -> None:
    token = await arena.register("twin")
    async with arena.bot("twin", token) as first, arena.bot("twin", token) as second:
        assert await close_code(first.ws) == p.CLOSE_SUPERSEDED
        await second.send("ping")
        await second.expect("pong")
        assert arena.server.sessions["twin"].connected
    await still_serving(arena, "after-twin")


# ---- random frames (hypothesis) ------------------------------------------------------------


@dataclass
class ThreadedArena:
    server: ArenaServer
    url: str
    db: Path
    trio_token: trio.lowlevel.TrioToken

    def call(self, work: Callable[[Store], Any]) -> Any:
        assert self.server.writer is not None
        return trio.from_thread.run(self.server.writer.call, work, trio_token=self.trio_token)


@contextmanager
def arena_in_a_thread(db: Path, limits: Limits, clock: Clock) -> Iterator[ThreadedArena]:
    """One server for every hypothesis example: its own trio loop in a thread."""
    started: list[ThreadedArena] = []
    ready = threading.Event()

    async def serve() -> None:
        server = ArenaServer(db, clock=clock, limits=limits, admin_token="fuzz-admin")
        listeners = await open_listeners("127.0.0.1", 0)
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run, listeners)
            url = f"ws://127.0.0.1:{bound_port(listeners)}"
            started.append(ThreadedArena(server, url, db, trio.lowlevel.current_trio_token()))
            ready.set()

    thread = threading.Thread(target=lambda: trio.run(serve), daemon=True)
    thread.start()
    assert ready.wait(10), "the server did not start"
    try:
        yield started[0]
    finally:
        trio.from_thread.run(started[0].server.shutdown, trio_token=started[0].trio_token)
        thread.join(10)
        assert not thread.is_alive()


FINAL_GAME = "nim"  # never in the fuzzer's vocabulary, so no stray seek can take a seat in the final match
WORDS = st.sampled_from(["tic-tac-toe", "kuhn-poker", "connect-four", "fuzzer", "admin", "a1", "b2", "0", ""])
FIELDS = st.sampled_from(sorted({name for fields in p.BOT_MESSAGES.values() for name in fields} | {"t", "v", "seq"}))
KINDS = st.sampled_from(sorted(p.BOT_MESSAGES)) | st.text(max_size=12)


def values(ints: st.SearchStrategy[int], extra: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | ints | st.floats() | st.text(max_size=12) | WORDS | extra
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | FIELDS, inner, max_size=4),
        max_leaves=10,
    )


JSON_VALUES = values(st.integers(), st.nothing())
PACK_VALUES = values(st.integers(-(2**63), 2**64 - 1), st.binary(max_size=12))


def messages(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Maps shaped like messages: a known or random type and known or random fields."""
    fields = st.dictionaries(FIELDS | st.text(max_size=6), inner, max_size=6)
    return st.builds(lambda kind, rest: {**rest, "t": kind, "v": p.PROTOCOL_VERSION}, KINDS, fields) | fields


FRAMES = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=80),
    JSON_VALUES.map(json.dumps),
    PACK_VALUES.map(packed),
    messages(JSON_VALUES).map(json.dumps),
    messages(PACK_VALUES).map(packed),
    st.builds(
        lambda kind, odd: json.dumps({"t": kind, "v": 1, "x": "@"}).replace("@", odd),
        KINDS,
        st.sampled_from([r"\ud800", r"a\udfffb"]),
    ),
)
EXPECTED_CLOSES = {p.CLOSE_POLICY}  # bad frames strike out; anything else (1011 above all) is a server failure


async def throw_frames(url: str, token: str, frames: list[bytes | str]) -> None:
    """Send every frame from one logged-in bot (logging in again when the server closes it),
    then check that the connection still answers a ping."""
    pending = list(frames)
    while True:
        async with connect(url + "/bot", proxy=None, max_size=None) as ws:
            await ws.send(p.encode(p.message("hello", bot="fuzzer", token=token), True))
            pong = trio.Event()
            closed: list[int | None] = []

            async def read(ws: ClientConnection = ws, pong: trio.Event = pong, closed: list[int | None] = closed) -> None:
                try:
                    async for frame in ws:
                        msg = p.decode(frame)
                        if msg["t"] == "error":
                            assert msg["code"] in p.ERROR_CODES, msg
                        elif msg["t"] == "pong":
                            pong.set()
                except ConnectionClosed:
                    pass
                closed.append(ws.close_code)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(read)
                try:
                    while pending:
                        await ws.send(pending.pop(0))
                    await ws.send(p.encode(p.message("ping"), True))
                except ConnectionClosed:
                    pass
                with trio.move_on_after(5):
                    while not pong.is_set() and not closed:
                        await trio.sleep(0.005)
                nursery.cancel_scope.cancel()
            assert set(closed) <= EXPECTED_CLOSES, closed
            if pong.is_set():
                return
            assert closed, "the server neither answered the ping nor closed the connection"


def test_random_frames_never_break_the_server(tmp_path: Path) -> None:
    db = tmp_path / "fuzz.db"
    with arena_in_a_thread(db, Limits(strikes=5), Clock(move_ms=300, grace_ms=0)) as live:
        token = live.call(Call(Store.register_bot, "fuzzer"))

        @settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
        @given(frames=st.lists(FRAMES, min_size=1, max_size=12))
        def throw(frames: list[bytes | str]) -> None:
            trio.run(throw_frames, live.url, token, frames)

        throw()

        async def afterwards() -> dict[str, Any]:
            await a_normal_match_completes(
                live.url, db, lambda name: trio.to_thread.run_sync(live.call, Call(Store.register_bot, name)), "final", FINAL_GAME
            )
            status, metrics = await http_get(live.url, "/metrics")
            assert status == 200
            return metrics

        metrics = trio.run(afterwards)
        assert metrics["errors"] > 0 and metrics["matches_finished"] >= 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# ---- bad server configuration ------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"limits": {"grace_ms": -1}}, "grace_ms=-1"),
        ({"limits": {"max_matches": 0}}, "max_matches=0"),
        ({"limits": {"rate": 0.0, "queue": -1}}, "rate=0.0, queue=-1"),
        ({"limits": {"soft_cap": 4_096, "hard_cap": 1_024}}, "hard_cap=1024"),
        ({"limits": {"heartbeat_s": 0.0}}, "heartbeat_s=0.0"),
        ({"max_retries": -1}, "max_retries must be from 0 to 100, got -1"),
    ],
)
def test_a_server_configured_out_of_range_refuses_to_start_and_writes_nothing(
    tmp_path: Path, options: dict[str, Any], named: str
) -> None:
    db = tmp_path / "arena.db"
    with pytest.raises(ValueError, match=named):
        limits = Limits(**options.get("limits", {}))
        ArenaServer(db, limits=limits, max_retries=options.get("max_retries", 2))
    assert not db.exists()


@pytest.mark.trio
async def test_a_connection_closed_for_a_rotated_token_no_longer_acts_for_the_bot(arena: Arena) -> None:
    """Between the rotation and its close completing, what the old connection still sends
    (here from a client that reads nothing, so it never sees the close) is dropped."""
    stream, protocol = await arena.raw_bot("rotated")
    async with arena.admin() as admin:
        await admin.send("rotate", name="rotated")
        await admin.expect("rotated")
    read = arena.server.metrics.frames_in
    protocol.send_binary(p.encode(p.message("seek", games=["nim"]), True))
    await stream.send_all(b"".join(protocol.data_to_send()))
    with trio.fail_after(5):
        while arena.server.metrics.frames_in == read:
            await trio.sleep(0.01)
    assert arena.server.lobby.waiting() == []
    await stream.aclose()
    await still_serving(arena, "after-rotated")

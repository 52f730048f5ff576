"""The live server over real websockets on loopback, with a real SQLite store."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import json
import logging
import math
import random
import re
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.protocol import State
from websockets.trio.client import connect
from websockets.uri import parse_uri

import games
import games.registry
from arena import protocol as p
from arena.match import MatchResult, play_match
from arena.seats import LocalSeat, Turn
from arena.server import CLIENT_GONE, ArenaServer, Ended, Limits, Watcher, open_listeners
from arena.sessions import Connection
from arena.store import Store, StoreError
from arena.store_writer import Call
from bots.client import BotRun, BotStopped, run_bot
from bots.registry import make_bot
from games.api import Observation
from games.tic_tac_toe import TicTacToe
from tests.conftest import Arena, ArenaFactory, Client, execute, http_get, http_raw
from tests.tui.stores import play as play_stored


def random_policy(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)

    def policy(turn: Turn) -> str:
        assert len(turn.clocks) == len(turn.players)  # the SDK hands the policy the whole turn
        if turn.legal_actions is not None:
            return rng.choice(turn.legal_actions)
        return games.get(turn.game).random_free_action(turn.observation, rng)

    return policy


@pytest.mark.trio
async def test_sdk_bots_play_every_game_and_the_store_matches_what_they_saw(arena: Arena) -> None:
    for game in games.all():
        seats = game.spec.default_config.players
        names = [f"{game.spec.name[:40]}-{i}" for i in range(seats)]
        tokens = [await arena.register(name) for name in names]
        runs: dict[str, BotRun] = {}

        async def play(i: int, name: str, token: str, game_name: str = game.spec.name, runs: dict[str, BotRun] = runs) -> None:
            runs[name] = await run_bot(random_policy(i), arena.url, name, token, games=[game_name], matches=1, binary=i % 2 == 0)

        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for i, (name, token) in enumerate(zip(names, tokens, strict=True)):
                    nursery.start_soon(play, i, name, token)
        ends = [runs[name].results[0] for name in names]
        assert len({end["match"] for end in ends}) == 1, game.spec.name
        end = ends[0]
        assert end["status"] == "finished" and end["reason"] == "complete", (game.spec.name, end)
        record = Store(arena.db, read_only=True).match(end["match"])
        assert record is not None and record["status"] == "finished"
        assert record["returns"] == end["returns"] and sorted(record["players"]) == sorted(names)
        assert all(turn["accepted"] for turn in record["turns"])


class SetTicTacToe(TicTacToe):
    """A plugin's bug: observation data holding a set, which no wire encoding carries."""

    spec = dataclasses.replace(TicTacToe.spec, name="set-tic-tac-toe")

    def observe(self, seat: int) -> Observation:
        observation = super().observe(seat)
        return Observation(observation.text, {**observation.data, "seen": {seat}})


class HugeTicTacToe(TicTacToe):
    """A plugin's bug: an integer beyond 64 bits, which JSON carries and msgpack does not (a
    bot may switch to msgpack at any message: the turn would raise as it is sent)."""

    spec = dataclasses.replace(TicTacToe.spec, name="huge-tic-tac-toe")

    def observe(self, seat: int) -> Observation:
        observation = super().observe(seat)
        return Observation(observation.text, {**observation.data, "huge": 2**64})


@pytest.mark.trio
@pytest.mark.parametrize("game", [SetTicTacToe, HugeTicTacToe], ids=["a set", "an integer beyond 64 bits"])
async def test_an_observation_the_wire_cannot_carry_voids_the_match_and_forfeits_no_seat(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, game: type[TicTacToe]
) -> None:
    monkeypatch.setitem(games.registry._load(), game.spec.name, game)
    names = ["set-0", "set-1"]
    tokens = [await arena.register(name) for name in names]
    runs: dict[str, BotRun] = {}

    async def play(i: int) -> None:
        # JSON both: only a check of both encodings finds the huge integer before the turn is sent
        policy = random_policy(i)
        runs[names[i]] = await run_bot(policy, arena.url, names[i], tokens[i], games=[game.spec.name], matches=1, binary=False)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for i in range(2):
                nursery.start_soon(play, i)
    for name in names:
        end = runs[name].results[0]
        assert end["status"] == "void" and f"{game.spec.name}: the observation of seat" in end["detail"], end
        assert "cannot be sent" in end["detail"], end
    assert arena.server.metrics.matches_voided == 1


class BlindTicTacToe(TicTacToe):
    """A plugin's bug in the view spectators get, not in what its players see."""

    spec = dataclasses.replace(TicTacToe.spec, name="blind-tic-tac-toe")

    def public_view(self) -> dict[str, Any]:
        raise RuntimeError("boom in public_view")

    def full_view(self) -> dict[str, Any]:
        return {"text": self.board_text()}


@pytest.mark.trio
async def test_a_game_that_cannot_show_spectators_its_view_is_played_out_while_watched(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Watched, the match was voided for the game's bug, unwatched it was rated: anyone could
    void such a game's matches by watching them (found by a QA helper)."""
    monkeypatch.setitem(games.registry._load(), BlindTicTacToe.spec.name, BlindTicTacToe)
    async with arena.bot("b1") as b1, arena.bot("b2") as b2, arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        match = await start_direct_match(arena, BlindTicTacToe.spec.name, ["b1", "b2"], seed=3)
        await watcher.send("watch", match=match)
        snapshot = await watcher.expect("snapshot")
        said = "blind-tic-tac-toe could not show this match's public view (RuntimeError)"
        assert snapshot["view"] == {"text": said}
        for step, (bot, seat, cell) in enumerate([(b1, 0, "a1"), (b2, 1, "b1"), (b1, 0, "a2"), (b2, 1, "b2"), (b1, 0, "a3")]):
            await bot.expect("turn", match=match)
            await bot.send("move", match=match, seat=seat, step=step, attempt=0, action=cell)
            assert (await watcher.expect("delta"))["view"] == {"text": said}
        end = await b1.expect("match_end", match=match)
        assert (end["status"], end["reason"], end["outcomes"]) == ("finished", "complete", ["win", "loss"])
        assert (await watcher.expect("result"))["status"] == "finished"


@pytest.mark.trio
async def test_a_replay_of_a_game_no_longer_installed_is_refused_as_an_unknown_game(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its record stays served; the replay, which the game rebuilds, was answered as the
    server's own failure ("this message could not be handled"; found by a QA helper)."""
    monkeypatch.setitem(games.registry._load(), HugeTicTacToe.spec.name, TicTacToe)  # installed while it plays
    async with arena.bot("u1") as u1, arena.bot("u2") as u2:
        match = await start_direct_match(arena, HugeTicTacToe.spec.name, ["u1", "u2"], seed=3)
        await u1.expect("turn", match=match)
        await u1.send("resign", match=match)
        assert (await u2.expect("match_end", match=match))["status"] == "finished"
    monkeypatch.delitem(games.registry._load(), HugeTicTacToe.spec.name)  # then its plugin is uninstalled
    async with arena.socket("/watch") as ws:
        watcher = Client(ws)
        await watcher.expect("lobby")
        await watcher.send("replay", match=match)
        error = await watcher.expect("error")
        assert error["code"] == "unknown_game", error
        assert error["message"] == (
            f"match {match} is of huge-tic-tac-toe, which is not installed on this server: it cannot be replayed,"
            f" and its record is at /api/matches/{match}"
        )


class SetupBugTicTacToe(TicTacToe):
    """A plugin's bug in ``_setup``."""

    spec = dataclasses.replace(TicTacToe.spec, name="setup-bug-tic-tac-toe")

    def _setup(self) -> None:
        raise RuntimeError("boom in _setup")


@pytest.mark.trio
async def test_a_game_that_cannot_set_up_voids_the_match_as_an_engine_fault_not_the_servers(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(games.registry._load(), SetupBugTicTacToe.spec.name, SetupBugTicTacToe)
    async with arena.bot("s1") as s1, arena.bot("s2"):
        match = await start_direct_match(arena, SetupBugTicTacToe.spec.name, ["s1", "s2"], seed=3)
        end = await s1.expect("match_end", match=match)
    detail = "engine fault: setup-bug-tic-tac-toe could not set up the match: RuntimeError: boom in _setup"
    assert (end["status"], end["detail"], end["returns"]) == ("void", detail, [0.0, 0.0])
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and (record["status"], record["detail"]) == ("void", detail)


async def play_fixed_match(arena: Arena, binary: bool, names: tuple[str, str]) -> dict:
    """One Kuhn match with a fixed seed between two seeded equilibrium bots."""
    tokens = [await arena.register(name) for name in names]
    ends: dict[str, dict] = {}

    async def play(seat: int) -> None:
        bot = make_bot("equilibrium", "kuhn-poker", seed=seat)
        run = await run_bot(bot.act, arena.url, names[seat], tokens[seat], games=[], matches=1, binary=binary)
        ends[names[seat]] = run.results[0]

    async with arena.admin() as admin, trio.open_nursery() as nursery:
        for seat in range(2):
            nursery.start_soon(play, seat)
        await arena.connected(names)
        await admin.send("create_match", bots=list(names), game="kuhn-poker", seed=7)
        created = await admin.expect("match_created")
    record = Store(arena.db, read_only=True).match(created["match"])
    assert record is not None
    return record


@pytest.mark.trio
async def test_json_and_msgpack_give_the_same_record(arena: Arena) -> None:
    packed = await play_fixed_match(arena, True, ("pack-a", "pack-b"))
    text = await play_fixed_match(arena, False, ("text-a", "text-b"))
    assert packed["returns"] == text["returns"]
    assert [(t["seat"], t["step"], t["action"]) for t in packed["turns"]] == [
        (t["seat"], t["step"], t["action"]) for t in text["turns"]
    ]
    assert packed["final_view"] == text["final_view"]


async def start_direct_match(arena: Arena, game: str, names: list[str], **fields) -> str:  # type: ignore[no-untyped-def]
    async with arena.admin() as admin:
        await admin.send("create_match", bots=names, game=game, **fields)
        return (await admin.expect("match_created"))["match"]


@pytest.mark.trio
async def test_illegal_moves_are_rejected_with_retries_left_then_forfeit(arena: Arena) -> None:
    async with arena.bot("cheater") as cheater, arena.bot("honest") as honest:
        match = await start_direct_match(arena, "tic-tac-toe", ["cheater", "honest"], seed=1, max_retries=1)
        turn = await cheater.expect("turn", match=match)
        await cheater.send("move", match=match, seat=0, step=0, attempt=0, action="z9")
        rejected = await cheater.expect("move_rejected")
        assert rejected["retries_left"] == 1 and "not a cell" in rejected["reason"]
        retry = await cheater.expect("turn", match=match)
        assert retry["attempt"] == 1 and "not a cell" in retry["reason"] and retry["step"] == turn["step"]
        await cheater.send("move", match=match, seat=0, step=0, attempt=1, action="a0")
        end = await cheater.expect("match_end", match=match)
        assert end["reason"] == "illegal" and end["outcomes"] == ["forfeit", "win"] and end["returns"] == [-1.0, 1.0]
        assert (await honest.expect("match_end", match=match))["outcomes"] == ["forfeit", "win"]
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["reason"] == "illegal" and record["max_retries"] == 1
    assert [t["rejection"] is not None for t in record["turns"]] == [True, True]


@pytest.mark.trio
async def test_a_timeout_forfeits_and_is_recorded(arena: Arena) -> None:
    async with arena.bot("sleepy") as sleepy, arena.bot("quick"):
        match = await start_direct_match(arena, "tic-tac-toe", ["sleepy", "quick"], clock={"move_ms": 200, "grace_ms": 50})
        turn = await sleepy.expect("turn", match=match)
        assert turn["deadline_ms"] <= 200 and turn["clocks"] == [0, 0]
        end = await sleepy.expect("match_end", match=match)
        assert end["reason"] == "timeout" and end["forfeit_seat"] == 0
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["reason"] == "timeout" and record["clock"]["move_ms"] == 200


@pytest.mark.trio
async def test_turns_and_spectators_carry_every_seats_time_bank(arena: Arena) -> None:
    async with arena.bot("slow") as slow, arena.bot("fast") as fast, arena.socket("/watch") as ws:
        from tests.conftest import Client

        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        clock = {"move_ms": 100, "grace_ms": 0, "bank_ms": 2_000}
        match = await start_direct_match(arena, "tic-tac-toe", ["slow", "fast"], clock=clock)
        await watcher.send("watch", match=match)
        assert (await watcher.expect("snapshot"))["clocks"] == [2_000, 2_000]
        first = await slow.expect("turn", match=match)
        assert first["clocks"] == [2_000, 2_000] and first["deadline_ms"] <= 2_100
        await trio.sleep(0.4)  # 300 ms or more beyond move_ms come out of slow's bank
        await slow.send("move", match=match, seat=0, step=0, attempt=0, action="b2")
        second = await fast.expect("turn", match=match)
        assert 1_000 <= second["clocks"][0] <= 1_700 and second["clocks"][1] == 2_000
        assert (await watcher.expect("delta"))["clocks"] == second["clocks"]
        await watcher.send("lobby")
        listed = (await watcher.expect("lobby"))["live"]
        assert [entry["clocks"] for entry in listed if entry["match"] == match] == [second["clocks"]]
        await fast.send("resign", match=match)
        await fast.expect("match_end", match=match)


@pytest.mark.trio
async def test_a_bot_gone_before_its_match_is_announced_is_reported_after_match_start(arena_factory: ArenaFactory) -> None:
    """A bot that drops between its table forming and the match being recorded: its opponent
    hears of the match first, then that the bot is away, never of a match it does not know."""
    arena = await arena_factory(limits=Limits(grace_ms=5_000))
    async with arena.bot("stays") as stays:
        async with arena.bot("drops"):
            live, row = arena.server._reserve("tic-tac-toe", ["stays", "drops"], {})
        with trio.fail_after(5):
            while arena.server.sessions["drops"].connected:
                await trio.sleep(0.01)
        await arena.server._launch(live, row)
        start = await stays.receive()
        assert (start["t"], start["match"]) == ("match_start", live.id), start
        gone = await stays.expect("opponent_gone", match=live.id)
        assert gone["bot"] == "drops" and 0 < gone["ms"] <= 5_000


@pytest.mark.trio
async def test_a_bot_that_reconnects_mid_match_resumes_and_finishes(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(grace_ms=5_000))
    token = await arena.register("flaky")
    async with arena.bot("steady") as steady:
        async with arena.bot("flaky", token) as flaky:
            session = flaky.welcome["session"]
            match = await start_direct_match(arena, "tic-tac-toe", ["steady", "flaky"], seed=3)
            first = await steady.expect("turn", match=match)
            await steady.send("move", match=match, seat=0, step=0, attempt=0, action=first["legal"][0])
            await flaky.expect("match_start", match=match)
            last_seq = flaky.last_seq  # flaky leaves before reading its turn
        gone = await steady.expect("opponent_gone", match=match)
        assert gone["bot"] == "flaky" and 0 < gone["ms"] <= 5_000
        async with arena.socket() as ws:
            from tests.conftest import Client

            back = Client(ws)
            await back.send("hello", bot="flaky", token=token, resume={"session": session, "last_seq": last_seq})
            welcome = await back.expect("welcome")
            assert welcome["resumed"] is True and welcome["session"] == session
            missed = await back.expect("turn", match=match)  # the turn it missed, replayed by seq
            assert missed["seq"] > last_seq and missed["step"] == 1
            await steady.expect("opponent_back", match=match)

            async def answer(client: Client, seat: int) -> None:
                turn = missed if seat == 1 else None
                while True:
                    msg = turn or await client.receive()
                    turn = None
                    if msg["t"] == "match_end" and msg["match"] == match:
                        return
                    if msg["t"] == "turn" and msg["match"] == match:
                        await client.send(
                            "move", match=match, seat=seat, step=msg["step"], attempt=msg["attempt"], action=msg["legal"][0]
                        )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer, steady, 0)
                nursery.start_soon(answer, back, 1)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished" and record["reason"] == "complete"


@pytest.mark.trio
async def test_a_disconnect_past_the_grace_window_forfeits(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(grace_ms=300))
    async with arena.bot("stayer") as stayer:
        async with arena.bot("leaver") as leaver:
            match = await start_direct_match(arena, "tic-tac-toe", ["leaver", "stayer"], clock={"move_ms": 10_000})
            await leaver.expect("turn", match=match)
        end = await stayer.expect("match_end", match=match)
        assert end["reason"] == "disconnect" and end["forfeit_seat"] == 0 and end["outcomes"] == ["forfeit", "win"]
    assert Store(arena.db, read_only=True).match(match)["reason"] == "disconnect"  # type: ignore[index]


@pytest.mark.trio
async def test_a_session_away_past_its_window_with_no_match_left_is_forgotten(arena_factory: ArenaFactory) -> None:
    """The server kept every bot that ever connected, with the messages kept for its resume."""
    arena = await arena_factory(limits=Limits(grace_ms=300))
    token = await arena.register("passing")
    async with arena.bot("passing", token) as passing:
        welcome = passing.welcome
    async with arena.bot("stayer") as stayer, arena.bot("leaver") as leaver:
        match = await start_direct_match(arena, "tic-tac-toe", ["stayer", "leaver"], clock={"move_ms": 60_000})
        await stayer.expect("turn", match=match)
        await leaver.ws.aclose()
        await trio.sleep(0.6)  # past the window, but the leaver's seat is not asked yet: its match keeps it
        assert "passing" not in arena.server.sessions and "leaver" in arena.server.sessions
        await stayer.send("move", match=match, seat=0, step=0, attempt=0, action="a1")
        assert (await stayer.expect("match_end", match=match))["reason"] == "disconnect"
        assert "leaver" not in arena.server.sessions and "stayer" in arena.server.sessions
    async with arena.bot("passing", token, resume={"session": welcome["session"], "last_seq": welcome["seq"]}) as back:
        assert back.welcome["resumed"] is False and back.welcome["session"] != welcome["session"]


@pytest.mark.trio
async def test_the_heartbeat_finds_a_frozen_bot_and_its_opponent_is_told(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(heartbeat_s=0.2, grace_ms=60_000))
    async with arena.bot("watchful") as watchful:
        assert watchful.welcome["heartbeat_s"] == 0.2 and "heartbeat_s" not in watchful.welcome["limits"]
        stream, _ = await arena.raw_bot("frozen")  # a process frozen after its welcome: nothing reads the socket
        async with stream:
            match = await start_direct_match(arena, "tic-tac-toe", ["frozen", "watchful"], clock={"move_ms": 60_000})
            gone = await watchful.expect("opponent_gone", match=match, bot="frozen", timeout=5)
            assert 0 < gone["ms"] <= 60_000  # the reconnection window, not the move clock, is what it has left
            _, metrics = await http_get(arena.url, "/metrics")
            assert metrics["bots_connected"] == 1


async def frozen_spectator(arena: Arena, *requests: dict[str, Any]) -> trio.SocketStream:
    """A spectator that sends ``requests`` and then never reads again: its socket fills up."""
    protocol = ClientProtocol(parse_uri(arena.url + "/watch"))
    host, port = arena.url.removeprefix("ws://").split(":")
    sock = trio.socket.socket()
    sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_RCVBUF, 4096)  # fills up sooner
    await sock.connect((host, int(port)))
    stream = trio.SocketStream(sock)
    protocol.send_request(protocol.connect())
    await stream.send_all(b"".join(protocol.data_to_send()))
    while protocol.state is not State.OPEN:
        protocol.receive_data(await stream.receive_some())
    for request in requests:
        protocol.send_text(p.encode(request, False).encode())
    await stream.send_all(b"".join(protocol.data_to_send()))
    return stream


@pytest.mark.trio
async def test_a_spectator_whose_socket_is_full_is_cut_off_and_the_server_still_stops(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(queue=4, heartbeat_s=0.5))
    first = LocalSeat(lambda turn: turn.legal_actions[0], threaded=False)  # type: ignore[index]
    result = await play_match(games.get("iterated-prisoners-dilemma"), [first, first], config={"rounds": 200})
    await arena.server.writer.call(Call(Store.finish_match, result))  # type: ignore[union-attr]
    replays = [p.message("replay", match=result.match_id)] * 16  # megabytes: more than the socket buffers hold
    async with await frozen_spectator(arena, *replays):
        (frozen,) = arena.server.watchers
        with trio.fail_after(5):
            while frozen in arena.server.watchers:  # neither a ping nor a close frame can reach it: cut off
                await trio.sleep(0.01)
        async with arena.socket("/watch") as ws:  # the others are served as ever
            other = Client(ws, binary=False)
            await other.send("replay", match=result.match_id)
            assert len((await other.expect("replay"))["views"]) == 201
        with trio.fail_after(5):
            await arena.server.shutdown()


@pytest.mark.trio
async def test_a_shutdown_does_not_wait_a_heartbeat_for_clients_that_never_answer_its_close(arena: Arena) -> None:
    """Eight spectators that read nothing more held SIGTERM's exit for 20 s, a close timeout
    (one heartbeat) each time over (found by QA)."""
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(4):
            await stack.enter_async_context(await frozen_spectator(arena))
        while len(arena.server.watchers) < 4:
            await trio.sleep(0.01)
        with trio.fail_after(8):  # a heartbeat is 20 s
            await arena.server.shutdown()


@pytest.mark.trio
async def test_a_spectator_that_does_not_read_has_one_replay_made_at_a_time(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replay asked for was made and queued: a spectator that asked for a long match's
    replay five times a second and never read held gigabytes until it was cut off."""
    arena = await arena_factory(limits=Limits(heartbeat_s=1))
    first = LocalSeat(lambda turn: turn.legal_actions[0], threaded=False)  # type: ignore[index]
    result = await play_match(games.get("iterated-prisoners-dilemma"), [first, first], config={"rounds": 400})
    await arena.server.writer.call(Call(Store.finish_match, result))  # type: ignore[union-attr]
    made: list[str] = []  # each replay is 11 MB: more than the socket buffers hold
    replay = arena.server._replay

    async def counted(match_id: str) -> dict[str, Any]:
        made.append(match_id)
        return await replay(match_id)

    monkeypatch.setattr(arena.server, "_replay", counted)
    async with await frozen_spectator(arena, *[p.message("replay", match=result.match_id)] * 8):
        (frozen,) = arena.server.watchers
        with trio.fail_after(5):
            while frozen in arena.server.watchers:  # cut off after a heartbeat of its socket staying full
                await trio.sleep(0.01)
    assert made == [result.match_id]
    async with arena.socket("/watch") as ws:  # one that reads gets them all, in the encoding it asked in
        reader = Client(ws, binary=True)
        for _ in range(2):
            await reader.send("replay", match=result.match_id)
        answers = [await reader.expect("replay") for _ in range(2)]
    assert [len(answer["views"]) for answer in answers] == [401, 401] and answers[1]["seq"] == answers[0]["seq"] + 1
    assert [turn["action"] for turn in answers[0]["turns"]] == [turn.action for turn in result.turns]


@pytest.mark.parametrize("binary", [True, False])
def test_a_message_encoded_in_pieces_reads_as_the_message_encoded_whole(binary: bool) -> None:
    message = p.message(
        "replay",
        match="m1",
        views=[{"text": "a\nb", "render": [{"type": "text", "text": "é"}]}] * 20,  # a long list: its own array header
        turns=[{"seat": 0, "cost": math.inf, "reward": -0.5, "raw": None, "tokens_in": 2**63 - 1}],
        none=[],
        config={"rounds": [1, 2]},
    )
    framed = p.prepare(message, binary).framed(12)
    assert isinstance(framed, bytes) == binary
    assert p.decode(framed) == p.decode(p.encode({**message, "seq": 12}, binary))
    assert json.loads(p.json_in_pieces(message)) == json.loads(p.dumps(message))


@pytest.mark.trio
async def test_the_move_deadline_beats_a_longer_grace_window(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(grace_ms=10_000))
    async with arena.bot("stayer2") as stayer:
        async with arena.bot("leaver2") as leaver:
            match = await start_direct_match(arena, "tic-tac-toe", ["leaver2", "stayer2"], clock={"move_ms": 300, "grace_ms": 0})
            await leaver.expect("turn", match=match)
        end = await stayer.expect("match_end", match=match)
        assert end["reason"] == "timeout"


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_cancelled_comes_after_the_match_start_of_a_seek_paired_before_the_cancel(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table takes the seeks at once, and its match_start waits for the store: a cancel
    in between was answered "cancelled" first, and a bot that stopped then left the match
    to lose by disconnection."""
    recording, release = threading.Event(), threading.Event()
    open_match = Store.open_match

    def slow(store: Store, row: Any) -> Any:
        recording.set()
        release.wait(10)
        return open_match(store, row)

    monkeypatch.setattr(Store, "open_match", slow)
    async with arena.bot("quits") as a, arena.bot("stays") as b:
        for client in (a, b):
            await client.send("seek", games=["nim"])
            await client.expect("seeking")
        await trio.to_thread.run_sync(recording.wait, 10)  # paired: the match is being recorded
        read = arena.server.metrics.frames_in
        await a.send("cancel")
        with trio.fail_after(5):
            while arena.server.metrics.frames_in == read:  # read, and so handled: no await in between
                await trio.sleep(0.01)
        release.set()
        assert (await a.receive())["t"] == "match_start"  # then its turn, perhaps, and the answer
        await a.expect("cancelled", count=0)


@pytest.mark.trio
async def test_a_bot_that_plays_one_match_at_a_time_is_paired_and_challenged_as_such(arena: Arena) -> None:
    """Two seeks of a bot (playing itself, say) could pair with two other bots in one pass:
    its own limit, said in its hello, is held as the server's is."""
    async with (
        arena.bot("single", max_matches=1) as single,
        arena.bot("other1") as other1,
        arena.bot("other2") as other2,
    ):
        for client in (other1, single, other2, single):  # each seek is paired as it comes
            await client.send("seek", games=["nim"])
            await client.expect("seeking")
            await trio.testing.wait_all_tasks_blocked()
        assert len(arena.server.sessions["single"].matches) == 1 and arena.server.lobby.waiting_of("single") == 1
        await other2.send("challenge", bot="single", game="nim")
        refused = await other2.expect("error")
        assert refused["code"] == p.BUSY and "plays 1 match already, the most it may" in refused["message"]


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_seat_freed_by_a_match_that_never_started_pairs_the_seeks_waiting_for_it(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seek that came while a create_match held a bot's last seat was left waiting once the
    match did not start (its key's match existed, or the store failed): only a match's end
    paired again (found by a QA helper)."""
    import threading

    opened = Store.open_match
    recorded = threading.Event()

    def held(store: Store, row: dict[str, Any]) -> str | None:
        if row["game"] == "tic-tac-toe":  # the admin's match: its record waits until the seek is in
            recorded.wait(10)
            raise sqlite3.OperationalError("database or disk is full")
        return opened(store, row)

    monkeypatch.setattr(Store, "open_match", held)
    async with arena.bot("busy", max_matches=1) as busy, arena.bot("idle") as idle, arena.bot("third"), arena.admin() as admin:
        await busy.send("seek", games=["nim"])
        await busy.expect("seeking")
        await admin.send("create_match", bots=["busy", "third"], game="tic-tac-toe")
        while not arena.server.sessions["busy"].matches:  # its one seat reserved
            await trio.sleep(0.01)
        await idle.send("seek", games=["nim"])
        await idle.expect("seeking")
        await trio.testing.wait_all_tasks_blocked()
        assert arena.server.lobby.waiting_of("idle") == 1  # no room for busy: the pass left both waiting
        recorded.set()
        assert (await admin.expect("error"))["code"] == p.STORE_UNAVAILABLE
        started = await busy.expect("match_start", timeout=5)
        assert started["game"] == "nim" and (await idle.expect("match_start", timeout=5))["match"] == started["match"]


@pytest.mark.trio
async def test_a_hello_asking_for_no_match_at_all_is_refused(arena: Arena) -> None:
    token = await arena.register("none")
    async with arena.socket() as ws:
        client = Client(ws, True)
        await client.send("hello", bot="none", token=token, max_matches=0)
        refused = await client.expect("error")
        assert refused["code"] == p.BAD_MESSAGE and "max_matches" in refused["message"]
        with pytest.raises(ConnectionClosed) as closed:
            await client.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == p.CLOSE_NO_HELLO


@pytest.mark.trio
async def test_an_aborted_match_is_void_and_unrated_and_keeps_the_turns_it_played(arena: Arena) -> None:
    """The turns went with the abort: a move the server had acknowledged left no record
    (found by a QA helper)."""
    async with arena.bot("a1") as a, arena.bot("b1") as b, arena.admin() as admin:
        await admin.send("create_match", bots=["a1", "b1"], game="tic-tac-toe")
        match = (await admin.expect("match_created"))["match"]
        turn = await a.expect("turn", match=match)
        await a.send("move", match=match, seat=turn["seat"], step=0, attempt=0, action="b2")
        await b.expect("turn", match=match)
        await admin.send("abort_match", match=match, reason="testing")
        await admin.expect("match_aborted", match=match)
        end = await a.expect("match_end", match=match)
        assert end["status"] == "void" and end["detail"] == "testing" and end["returns"] is None
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "void" and record["detail"] == "testing"
    assert [(turn["seat"], turn["step"], turn["action"], turn["accepted"]) for turn in record["turns"]] == [(0, 0, "b2", True)]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("reason", "detail"), [("x" * 50_000, "x" * 299 + "…"), ("", "aborted by the admin")], ids=["long", "empty"]
)
async def test_an_aborts_reason_is_cut_as_a_resignations_and_an_empty_one_is_the_default(
    arena: Arena, reason: str, detail: str
) -> None:
    """A reason of 50,000 characters went whole into the record and every spectator's lobby,
    where a resignation's detail is cut to 300 (found by QA). The empty reason is a control:
    it read as the default before too, and must go on doing so past the cut."""
    async with arena.bot("a1") as a, arena.bot("b1"), arena.admin() as admin:
        await admin.send("create_match", bots=["a1", "b1"], game="tic-tac-toe")
        match = (await admin.expect("match_created"))["match"]
        await a.expect("turn", match=match)
        await admin.send("abort_match", match=match, reason=reason)
        await admin.expect("match_aborted", match=match)
        assert (await a.expect("match_end", match=match))["detail"] == detail
    record = Store(arena.db, read_only=True).match(match, turns=False)
    assert record is not None and record["detail"] == detail


async def aborted_at_its_first_turn(arena: Arena, bots: tuple[str, str]) -> str:
    """A tic-tac-toe match the admin makes and aborts ("testing") once its first turn is asked;
    its id, once its first seat was told it is void."""
    async with arena.bot(bots[0]) as first, arena.bot(bots[1]), arena.admin() as admin:
        await admin.send("create_match", bots=list(bots), game="tic-tac-toe")
        match = str((await admin.expect("match_created"))["match"])
        await first.expect("turn", match=match)
        await admin.send("abort_match", match=match, reason="testing")
        assert (await first.expect("match_end", match=match))["status"] == "void"
    return match


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_void_the_store_could_not_take_is_written_once_it_can(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a full disk an aborted match stayed live in the store, and on /api, after its seats
    were told it was void, until the next start (found by a QA helper)."""
    from arena import server

    monkeypatch.setattr(server, "VOID_RETRY_S", 0.05)
    void_match = Store.void_match
    full = [sqlite3.OperationalError("database or disk is full")]

    def full_once(store: Store, *args: Any, **kwargs: Any) -> bool:
        if full:
            raise full.pop()
        return void_match(store, *args, **kwargs)

    monkeypatch.setattr(Store, "void_match", full_once)
    match = await aborted_at_its_first_turn(arena, ("full1", "full2"))
    with trio.fail_after(5):
        while (await http_get(arena.url, f"/api/matches/{match}"))[1]["status"] != "void":
            await trio.sleep(0.02)
    assert not full and (await http_get(arena.url, f"/api/matches/{match}"))[1]["detail"] == "testing"


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_shutdown_while_an_unrecorded_void_is_written_again_ends_cleanly(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retry and the shutdown's last try wrote the one void at once, and the second to
    finish failed with a KeyError, out of the shutdown (found by a QA helper)."""
    from arena import server

    monkeypatch.setattr(server, "VOID_RETRY_S", 0.05)
    void_match = Store.void_match
    calls: list[int] = []

    def full_then_slow(store: Store, *args: Any, **kwargs: Any) -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        time.sleep(0.3)  # room again; a write takes a moment
        return void_match(store, *args, **kwargs)

    monkeypatch.setattr(Store, "void_match", full_then_slow)
    match = await aborted_at_its_first_turn(arena, ("slow1", "slow2"))
    await trio.sleep(0.1)  # the retry's write is under way
    with trio.fail_after(10):
        await arena.server.shutdown()  # its last try writes the same void
    assert Store(arena.db, read_only=True).match(match, turns=False)["status"] == "void"  # type: ignore[index]


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_an_abort_that_lands_while_the_result_is_committed_leaves_the_match_finished(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    committing, release = threading.Event(), threading.Event()
    finish_match = Store.finish_match

    def held(store: Store, *args: Any, **kwargs: Any) -> Any:
        committing.set()
        release.wait(10)
        return finish_match(store, *args, **kwargs)

    monkeypatch.setattr(Store, "finish_match", held)
    async with arena.bot("late1") as a, arena.bot("late2") as b, arena.admin() as admin:
        await admin.send("create_match", bots=["late1", "late2"], game="tic-tac-toe")
        match = (await admin.expect("match_created"))["match"]
        await a.expect("turn", match=match)
        await a.send("resign", match=match)
        await trio.to_thread.run_sync(committing.wait, 10)  # the result is being written
        await admin.send("abort_match", match=match)
        with trio.fail_after(5):
            while not arena.server.live[match].void_reason:  # the abort is in: it waits for the match's end
                await trio.sleep(0.01)
        release.set()
        refused = await admin.expect("error")  # not told "aborted" of a match that stands finished
        assert refused["code"] == p.UNKNOWN_MATCH and "ended (finished) before it could be aborted" in refused["message"]
        ends = [await a.expect("match_end", match=match), await b.expect("match_end", match=match)]
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished" and record["reason"] == "resign"
    assert [(end["status"], end["reason"]) for end in ends] == [("finished", "resign")] * 2  # what the store says
    assert arena.server.recent[0].summary["status"] == "finished" and arena.server.metrics.matches_voided == 0


async def until_closed(client: Client) -> int | None:
    """Read everything the server still sends (into ``client.seen``); the close code it ends with."""
    try:
        while True:
            await client.receive(timeout=5)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


@pytest.mark.trio
async def test_a_shutdown_tells_every_seat_and_spectator_of_each_voided_match_before_closing(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory()
    async with arena.bot("down1") as a, arena.bot("down2") as b, arena.socket("/watch") as ws, arena.admin() as admin:
        watcher = Client(ws, binary=False)
        matches = []
        for game in ("tic-tac-toe", "kuhn-poker", "nim"):
            await admin.send("create_match", bots=["down1", "down2"], game=game)
            matches.append((await admin.expect("match_created"))["match"])
            await watcher.send("watch", match=matches[-1])
            await watcher.expect("snapshot", match=matches[-1])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(arena.server.shutdown, "maintenance")
            codes = [await until_closed(client) for client in (a, b, watcher)]
    assert codes == [p.CLOSE_GOING_AWAY] * 3
    for client, kind in ((a, "match_end"), (b, "match_end"), (watcher, "result")):
        told = {msg["match"]: msg["detail"] for msg in client.seen if msg["t"] == kind}
        assert told == dict.fromkeys(matches, "maintenance"), kind
    assert {Store(arena.db, read_only=True).match(match)["status"] for match in matches} == {"void"}  # type: ignore[index]


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_match_that_cannot_start_while_the_server_stops_does_not_hang_the_shutdown(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = await arena_factory()
    opening, release = threading.Event(), threading.Event()

    def failing(store: Store, row: Any) -> Any:
        opening.set()
        release.wait(10)
        raise StoreError("database or disk is full")

    monkeypatch.setattr(Store, "open_match", failing)
    async with arena.bot("never1"), arena.bot("never2"), arena.admin() as admin:
        await admin.send("create_match", bots=["never1", "never2"], game="nim")
        await trio.to_thread.run_sync(opening.wait, 10)  # its seats are reserved, its record being written
        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(arena.server.shutdown)
                await trio.testing.wait_all_tasks_blocked()  # the shutdown waits for the live matches to end
                release.set()
        assert (await admin.expect("error"))["ref"] == "create_match"
    assert arena.server.live == {}


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_server_shutting_down_takes_no_seek_and_no_connection_and_says_so_on_health(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a shutdown waited for its matches, a new bot was let in and its seek confirmed,
    though nothing would pair it, and /health said "ok" (found by a QA helper)."""
    arena = await arena_factory()
    opening, release = threading.Event(), threading.Event()

    def held(store: Store, row: Any) -> Any:  # a match being recorded holds the shutdown open
        opening.set()
        release.wait(10)
        raise StoreError("database or disk is full")

    monkeypatch.setattr(Store, "open_match", held)
    late = await arena.register("late")
    async with arena.bot("held1"), arena.bot("held2"), arena.bot("seeker") as seeker, arena.admin() as admin:
        await admin.send("create_match", bots=["held1", "held2"], game="nim")
        await trio.to_thread.run_sync(opening.wait, 10)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(arena.server.shutdown)
            await trio.testing.wait_all_tasks_blocked()
            await seeker.send("seek", games=["nim"])
            refused = await seeker.expect("error")
            assert (refused["code"], refused["message"]) == (p.BUSY, "the server is shutting down and pairs no more seeks")
            assert await http_get(arena.url, "/health") == (
                503,
                {
                    "status": "shutting_down",
                    "error": p.BUSY,
                    "message": "the server is shutting down",
                    "protocol": p.PROTOCOL_VERSION,
                    "read_only": False,
                },
            )
            with pytest.raises(InvalidStatus) as turned_away:
                async with arena.bot("late", late):
                    pass
            response = turned_away.value.response
            assert (response.status_code, response.headers["Retry-After"]) == (503, "5")
            assert json.loads(response.body) == {"error": p.BUSY, "message": "the server is shutting down; retry later"}
            release.set()


@pytest.mark.trio
async def test_the_lobby_pairs_seeks_and_never_a_bot_with_itself(arena: Arena) -> None:
    async with arena.bot("solo") as solo:
        await solo.send("seek", games=["tic-tac-toe"])
        await solo.send("seek", games=["tic-tac-toe"])
        await solo.expect("seeking")
        with trio.move_on_after(0.3):
            msg = await solo.expect("match_start")
            pytest.fail(f"paired with itself: {msg}")
        async with arena.bot("friend") as friend:
            await friend.send("seek", games=["connect-four", "tic-tac-toe"])
            start = await friend.expect("match_start")
            assert start["game"] == "tic-tac-toe" and sorted(start["players"]) == ["friend", "solo"]
            assert "seed" not in start


@pytest.mark.trio
async def test_self_play_seeks_pair_a_bot_with_itself(arena: Arena) -> None:
    async with arena.bot("mirror") as mirror:
        await mirror.send("seek", games=["tic-tac-toe"], self_play=True)
        await mirror.send("seek", games=["tic-tac-toe"], self_play=True)
        start = await mirror.expect("match_start")
        assert start["players"] == ["mirror", "mirror"]


@pytest.mark.trio
async def test_a_player_count_the_game_does_not_allow_is_a_bad_config_not_a_void_match(arena: Arena) -> None:
    async with arena.bot("loner") as loner, arena.admin() as admin:
        await loner.send("seek", games=["tic-tac-toe"], config={"players": 1})  # a table of one would form at once
        refused = await loner.expect("error")
        assert refused["code"] == p.BAD_CONFIG and "2 players, not 1" in refused["message"]
        await admin.send("create_match", bots=["loner"], game="tic-tac-toe", config={"players": 1})
        assert (await admin.expect("error"))["code"] == p.BAD_CONFIG
    assert Store(arena.db, read_only=True).matches() == []


@pytest.mark.trio
async def test_a_seek_for_an_endless_match_is_a_bad_config(arena: Arena) -> None:
    """A self-play seek needs no opponent: a billion rounds of talk, every turn showing the whole
    history, held 3.8 GB of the server's memory after 35 s, growing as the square of the rounds."""
    async with arena.bot("endless") as bot:
        config = {"rounds": 10**9, "cheap_talk": True, "message_chars": 10**9}
        await bot.send("seek", games=["iterated-prisoners-dilemma"], config=config, self_play=True)
        refused = await bot.expect("error")
        assert refused["code"] == p.BAD_CONFIG and "'rounds'" in refused["message"]


@pytest.mark.trio
async def test_a_superseded_connection_takes_its_seeks_with_it(arena: Arena) -> None:
    token = await arena.register("twice")
    async with arena.bot("twice", token) as old:
        await old.send("seek", games=["tic-tac-toe"])
        await old.expect("seeking")
        async with arena.bot("twice", token) as new:  # the bot reconnects before the server saw the old socket die
            await new.send("seek", games=["tic-tac-toe"])  # and seeks again after its welcome, as it is told to
            await new.expect("seeking")
            async with arena.socket("/watch") as ws:
                waiting = (await Client(ws, binary=False).expect("lobby"))["waiting"]
    assert [seek["bot"] for seek in waiting] == ["twice"]  # one seat wanted, not two


@pytest.mark.trio
async def test_a_challenge_takes_a_seek_of_the_named_bot_and_starts_a_match_at_once(arena: Arena) -> None:
    async with arena.bot("challenger") as challenger, arena.bot("target") as target:
        await target.send("seek", games=["nim", "kuhn-poker"], config={"players": 2})
        await target.expect("seeking")
        await challenger.send("challenge", bot="target", game="kuhn-poker", config={"players": 2})
        start = await target.expect("match_start")
        assert sorted(start["players"]) == ["challenger", "target"] and start["game"] == "kuhn-poker"
        assert arena.server.lobby.seeks == []  # the seek is spent: it stands for one match
        await arena.register("away")
        await challenger.send("challenge", bot="away", game="kuhn-poker")
        assert (await challenger.expect("error"))["code"] == p.BOT_OFFLINE
        await challenger.send("challenge", bot="nobody", game="kuhn-poker")  # a typo: it will never connect
        refused = await challenger.expect("error")
        assert (refused["code"], refused["message"]) == (p.UNKNOWN_BOT, "no bot named 'nobody' is registered on this server")


@pytest.mark.trio
async def test_seeks_pair_and_challenges_take_by_the_config_values_the_game_reads(arena: Arena) -> None:
    """`arena bot run --config players=2` sends the text "2"; a bot written from the docs sends
    the integer: the two seeks waited side by side for ever."""
    async with arena.bot("as-text") as text, arena.bot("as-int") as number, arena.bot("third") as third:
        await text.send("seek", games=["iterated-prisoners-dilemma"], config={"rounds": "3", "temptation": "5"})
        await text.expect("seeking")
        await number.send("seek", games=["iterated-prisoners-dilemma"], config={"temptation": 5, "rounds": 3})
        start = await number.expect("match_start")
        assert sorted(start["players"]) == ["as-int", "as-text"] and start["config"]["rounds"] == 3
        await third.send("seek", games=["nim", "kuhn-poker"], config={"players": "2"})
        await third.expect("seeking")
        await third.send("seek", games=["kuhn-poker"])  # {} is not {"players": 2}, though 2 is the default
        await third.expect("seeking")
        await number.send("challenge", bot="third", game="kuhn-poker", config={"players": 2})
        assert (await third.expect("match_start"))["game"] == "kuhn-poker"
        assert [seek["config"] for seek in arena.server.lobby.waiting()] == [{}]


@pytest.mark.trio
async def test_a_seek_whose_games_read_a_key_as_different_types_sits_with_each_game_as_it_reads_it(arena: Arena) -> None:
    """The text "1" is True to public-goods and 1.0 to the prisoner's dilemma, equal in Python: the seek
    kept True, which the dilemma refused at pairing, and that stopped the whole server; kept as sent
    then, it sat with no seek or challenge of either game alone (found by QA)."""
    both = ["public-goods", "iterated-prisoners-dilemma"]
    async with arena.bot("mixed") as mixed, arena.bot("plain") as plain, arena.bot("single") as single:
        await mixed.send("seek", games=both, config={"punishment": "1"})
        await mixed.expect("seeking")
        assert [seek["config"] for seek in arena.server.lobby.waiting()] == [{"punishment": "1"}]
        await plain.send("seek", games=both, config={"punishment": "1"})
        start = await plain.expect("match_start")  # the dilemma: public goods seats four by default
        assert start["game"] == "iterated-prisoners-dilemma" and start["config"]["punishment"] == 1.0
        await mixed.send("seek", games=both, config={"punishment": "1"})
        await mixed.expect("seeking")
        await single.send("seek", games=["iterated-prisoners-dilemma"], config={"punishment": 1})
        start = await single.expect("match_start")
        assert sorted(start["players"]) == ["mixed", "single"] and start["config"]["punishment"] == 1.0
        await mixed.send("seek", games=both, config={"punishment": "1"})
        await mixed.expect("seeking")
        await single.send("challenge", bot="mixed", game="iterated-prisoners-dilemma", config={"punishment": 1.0})
        assert (await single.expect("match_start"))["config"]["punishment"] == 1.0
    assert (await http_get(arena.url, "/health"))[0] == 200


@pytest.mark.trio
async def test_a_game_named_many_times_in_a_seek_is_checked_once(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each name's config was checked before the duplicates went: a 63 KB seek naming nim 9,000
    times cost the server 50-80 ms, and other bots waited on it (found by QA)."""
    checked: list[str] = []
    check_game = arena.server._check_game

    def counted(name: str, config: Any) -> Any:
        checked.append(name)
        return check_game(name, config)

    monkeypatch.setattr(arena.server, "_check_game", counted)
    async with arena.bot("repeater") as repeater:
        await repeater.send("seek", games=["nim"] * 5000 + ["tic-tac-toe"], config={})
        assert len((await repeater.expect("seeking"))["games"]) == 5001  # the list as sent
    assert checked == ["nim", "tic-tac-toe"]


@pytest.mark.trio
async def test_a_challenge_cannot_seat_a_bot_in_a_game_it_does_not_seek(arena: Arena) -> None:
    """Nobody may push a connected bot (and the model behind it, paid by the token) into rated
    matches it never asked for: a challenge needs a waiting seek of the same game and config."""
    async with arena.bot("griefer") as griefer, arena.bot("target") as target:
        await griefer.send("challenge", bot="target", game="tic-tac-toe")
        refused = await griefer.expect("error")
        assert refused["code"] == p.NOT_SEEKING and "target" in refused["message"]
        await target.send("seek", games=["tic-tac-toe"], config={"players": 2})
        await target.expect("seeking")
        for game, config in (("connect-four", {"players": 2}), ("tic-tac-toe", {}), ("tic-tac-toe", None)):
            fields = {"config": config} if config is not None else {}
            await griefer.send("challenge", bot="target", game=game, **fields)
            assert (await griefer.expect("error"))["code"] == p.NOT_SEEKING  # another game, or the config not as sought
        assert [seek.bot for seek in arena.server.lobby.seeks] == ["target"] and not arena.server.live


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_challenge_that_cannot_start_tells_the_challenged_bot_its_seek_is_spent(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The challenge took the opponent's seek, then the store could not record the match (a full
    disk): unless told, the opponent waits for ever on a seek that is gone, as a paired table's bots did."""

    def full(store: Store, row: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    async with arena.bot("eager") as challenger, arena.bot("seeker") as seeker:
        await seeker.send("seek", games=["nim"])
        await seeker.expect("seeking")
        with monkeypatch.context() as patched:
            patched.setattr(Store, "open_match", full)
            await challenger.send("challenge", bot="seeker", game="nim")
            refused = await challenger.expect("error")
        assert refused["code"] == p.STORE_UNAVAILABLE and refused["ref"] == "challenge"
        told = await seeker.expect("error", timeout=3)
        assert told["code"] == p.STORE_UNAVAILABLE and told["ref"] == "seek" and told["retry_after"] > 0
        assert arena.server.lobby.seeks == [] and not arena.server.live


# ---- security ------------------------------------------------------------------------


@pytest.mark.trio
async def test_a_wrong_token_is_refused_with_4001(arena: Arena) -> None:
    await arena.register("victim")
    with pytest.raises(BotStopped, match="refused the token of bot 'victim'"):
        await run_bot(random_policy(0), arena.url, "victim", "not-the-token", games=["tic-tac-toe"], matches=1)


@pytest.mark.trio
async def test_the_sdk_stops_with_the_reason_where_waiting_could_never_help(arena_factory: ArenaFactory) -> None:
    """Each of these used to wait for ever, silently: the seek's error was kept, the
    refused or unreachable connection retried."""
    arena = await arena_factory()
    token = await arena.register("hopeful")
    with trio.fail_after(10):
        with pytest.raises(BotStopped, match=r"refused this bot's seek \(bad_config\): nim: unknown config key 'nosuch'"):
            await run_bot(random_policy(0), arena.url, "hopeful", token, games=["nim"], config={"nosuch": 1}, matches=1)
        with pytest.raises(BotStopped, match=r"refused this bot's seek \(unknown_game\)"):
            await run_bot(random_policy(0), arena.url, "hopeful", token, games=["chess"], matches=1)
        with pytest.raises(BotStopped, match=r"cannot reach ws://127\.0\.0\.1:1"):
            await run_bot(random_policy(0), "ws://127.0.0.1:1", "hopeful", token, games=["nim"], matches=1)
    await arena.server.shutdown()
    reader = await arena_factory(read_only=True, db=arena.db)
    with trio.fail_after(10), pytest.raises(BotStopped, match=r"refused this bot's hello \(read_only\)"):
        await run_bot(random_policy(0), reader.url, "hopeful", token, games=["nim"], matches=1)
    await reader.server.shutdown()


@pytest.mark.trio
async def test_a_long_resignation_is_cut_before_it_goes_into_the_record_and_every_lobby(arena: Arena) -> None:
    """Twenty resignations of 65,000 control characters made every spectator's lobby 7.8 MB."""
    async with arena.bot("windy") as windy, arena.bot("calm"):
        match = await start_direct_match(arena, "nim", ["windy", "calm"], seed=3)
        await windy.expect("turn", match=match)
        await windy.send("resign", match=match, detail="\x01" * 65_000)
        end = await windy.expect("match_end", match=match)
    assert end["detail"] == "windy resigned: " + "\x01" * 299 + "…"
    assert arena.server.recent[0].summary["detail"] == end["detail"]


@pytest.mark.trio
async def test_a_resignation_off_its_turn_ends_the_match_at_once(arena: Arena) -> None:
    """It took effect when the seat was next asked: a bot that gave up while its opponent
    thought held the match, and its place among the bot's matches, until the opponent moved."""
    async with arena.bot("quitter") as quitter, arena.bot("thinker") as thinker:
        match = await start_direct_match(arena, "nim", ["quitter", "thinker"], seed=3, clock={"move_ms": 60_000})
        turn = await quitter.expect("turn", match=match)
        await quitter.send("move", match=match, seat=0, step=turn["step"], attempt=0, action=turn["legal"][0])
        asked = await thinker.expect("turn", match=match)
        with trio.fail_after(5):
            await quitter.send("resign", match=match, detail="bored")
            ends = [await quitter.expect("match_end", match=match), await thinker.expect("match_end", match=match)]
        await thinker.send("move", match=match, seat=1, step=asked["step"], attempt=0, action=asked["legal"][0])
        late = await thinker.expect("error")
    assert [(end["reason"], end["forfeit_seat"], end["detail"]) for end in ends] == [("resign", 0, "quitter resigned: bored")] * 2
    assert [msg["step"] for msg in quitter.seen if msg["t"] == "turn"] == [turn["step"]]  # no turn came to take it
    assert late["code"] == p.NOT_YOUR_MATCH
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["reason"] == "resign" and [t["seat"] for t in record["turns"]] == [0]


@pytest.mark.trio
async def test_a_bot_playing_itself_resigns_one_seat_of_a_simultaneous_step(arena: Arena) -> None:
    """Asked at both seats at once, its resign forfeited both, and two seats failing at once
    voided the match (found by a QA helper)."""
    async with arena.bot("mirror") as mirror:
        for _ in range(2):
            await mirror.send("seek", games=["iterated-rock-paper-scissors"], self_play=True)
        turns = [await mirror.expect("turn"), await mirror.expect("turn")]
        assert sorted(turn["seat"] for turn in turns) == [0, 1]
        await mirror.send("resign", match=turns[0]["match"], detail="bye")
        ends = [await mirror.expect("match_end"), await mirror.expect("match_end")]
    assert [(end["status"], end["reason"], end["forfeit_seat"]) for end in ends] == [("finished", "resign", 0)] * 2


@pytest.mark.trio
async def test_a_resignation_handled_with_a_move_of_its_own_wins_whichever_came_first(arena: Arena) -> None:
    """Read in one go, a move and a resign left the resigning seat's slot open with its move
    taken: the move was played and the resignation waited for the opponent (found by QA)."""
    for resign_first in (True, False):
        bots = [f"quick-{resign_first}".lower(), f"slow-{resign_first}".lower()]
        async with arena.bot(bots[0]) as quick, arena.bot(bots[1]):
            match = await start_direct_match(arena, "nim", bots, seed=3, clock={"move_ms": 60_000})
            turn = await quick.expect("turn", match=match)
            session = arena.server.sessions[bots[0]]
            move = {"t": "move", "match": match, "seat": 0, "step": turn["step"], "attempt": 0, "action": turn["legal"][0]}
            resign = arena.server._on_resign(session, {"t": "resign", "match": match, "detail": "bored"})
            if resign_first:
                await resign
                arena.server._on_move(session, move)
            else:
                arena.server._on_move(session, move)
                await resign
            with trio.fail_after(5):
                end = await quick.expect("match_end", match=match)
        assert (end["reason"], end["forfeit_seat"]) == ("resign", 0)
        assert [msg["step"] for msg in quick.seen if msg["t"] == "turn"] == [turn["step"]]
        record = Store(arena.db, read_only=True).match(match)
        assert record is not None and not [t for t in record["turns"] if t["accepted"]]


@pytest.mark.trio
async def test_a_second_resignation_does_not_rewrite_the_first(arena: Arena) -> None:
    """Both sent during the other seat's turn, the second's account replaced the first's (found by QA)."""
    async with arena.bot("rash") as rash, arena.bot("slow") as slow:
        match = await start_direct_match(arena, "nim", ["rash", "slow"], seed=3)
        turn = await rash.expect("turn", match=match)
        await rash.send("move", match=match, seat=0, step=turn["step"], attempt=0, action=turn["legal"][0])
        turn = await slow.expect("turn", match=match)
        await rash.send("resign", match=match, detail="first")
        await rash.send("resign", match=match, detail="second")
        await slow.send("move", match=match, seat=1, step=turn["step"], attempt=0, action=turn["legal"][0])
        end = await rash.expect("match_end", match=match)
    assert end["reason"] == "resign" and end["detail"] == "rash resigned: first"


@pytest.mark.trio
async def test_an_sdk_policy_that_raises_resigns_naming_its_error_as_play_match_would(arena: Arena) -> None:
    def broken(turn: Turn) -> str:
        raise KeyError("no such heap")

    names = ["broken", "fine"]
    tokens = [await arena.register(name) for name in names]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for name, token, policy in zip(names, tokens, [broken, random_policy(0)], strict=True):
                nursery.start_soon(functools.partial(run_bot, policy, arena.url, name, token, games=["nim"], matches=1))
    (record,) = Store(arena.db, read_only=True).matches(bot="broken", limit=5)
    assert (record["reason"], record["players"][record["forfeit_seat"]]) == ("resign", "broken")
    assert record["detail"] == "broken resigned: crash: KeyError: 'no such heap'"  # not a format error, no retries
    assert not any(turn["format_error"] for turn in Store(arena.db, read_only=True).match(record["id"])["turns"])  # type: ignore[index]


@pytest.mark.trio
async def test_a_bot_cannot_move_for_another_bots_seat(arena: Arena) -> None:
    async with arena.bot("mallory") as mallory, arena.bot("alice2") as alice:
        match = await start_direct_match(arena, "tic-tac-toe", ["alice2", "mallory"], seed=2)
        await alice.expect("turn", match=match)
        await mallory.send("move", match=match, seat=0, step=0, attempt=0, action="b2")
        error = await mallory.expect("error")
        assert error["code"] == p.NOT_YOUR_MATCH
        await alice.send("move", match=match, seat=0, step=0, attempt=0, action="a1")
        ack = await alice.expect("move_ack", match=match)
        assert ack["step"] == 0
        await alice.send("move", match=match, seat=0, step=0, attempt=0, action="a2")
        assert (await alice.expect("error"))["code"] == p.STALE_MOVE
        board = (await mallory.expect("turn", match=match))["observation"]["data"]["board"]
        assert board == ["X..", "...", "..."]  # alice's a1 only: not mallory's b2, nor the stale a2


@pytest.mark.trio
async def test_a_bot_that_declines_acks_gets_none_and_still_hears_rejections(arena: Arena) -> None:
    async with arena.bot("quiet", acks=False) as quiet, arena.bot("chatty") as chatty:
        await quiet.send("seek", games=["kuhn-poker"])
        await quiet.send("seek", games=["no-such-game"])
        assert (await quiet.expect("error"))["code"] == p.UNKNOWN_GAME  # the first seek was not confirmed
        await quiet.send("cancel")
        assert (await quiet.expect("cancelled"))["count"] == 1
        assert [m["t"] for m in quiet.seen] == ["welcome", "error", "cancelled"]
        match = await start_direct_match(arena, "tic-tac-toe", ["quiet", "chatty"], seed=3)
        await quiet.expect("turn", match=match)
        await quiet.send("move", match=match, seat=0, step=0, attempt=0, action="z9")
        assert (await quiet.expect("move_rejected", match=match))["retries_left"] == 2
        assert (await quiet.expect("turn", match=match))["attempt"] == 1
        await quiet.send("move", match=match, seat=0, step=0, attempt=1, action="a1")
        turn = await chatty.expect("turn", match=match)
        await chatty.send("move", match=match, seat=1, step=1, attempt=0, action=turn["legal"][0])
        assert (await chatty.expect("move_ack", match=match))["step"] == 1  # the other bot kept the default
        assert (await quiet.expect("turn", match=match))["step"] == 2
        assert [m["t"] for m in quiet.seen if m.get("match") == match] == ["match_start", "turn", "move_rejected", "turn", "turn"]


@pytest.mark.trio
async def test_a_spectator_of_live_kuhn_poker_never_sees_the_hidden_card(arena: Arena) -> None:
    async with arena.bot("k1") as k1, arena.bot("k2") as k2, arena.socket("/watch") as ws:
        from tests.conftest import Client

        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        match = await start_direct_match(arena, "kuhn-poker", ["k1", "k2"], seed=11)
        await watcher.send("watch", match=match)
        snapshot = await watcher.expect("snapshot")
        first = await k1.expect("turn", match=match)
        own_card = first["observation"]["data"]["card"]
        other_card = None
        await k1.send("move", match=match, seat=0, step=0, attempt=0, action="bet")
        second = await k2.expect("turn", match=match)
        other_card = second["observation"]["data"]["card"]
        live_messages = [snapshot, await watcher.expect("delta")]
        for msg in live_messages:
            text = json.dumps(msg)
            assert other_card not in text.replace('"?"', "") or own_card == other_card
            cards = [
                c for block in msg["view"]["render"] if block["type"] == "cards" for g in block["groups"] for c in g["cards"]
            ]
            assert set(cards) <= {"?"}
        await k2.send("move", match=match, seat=1, step=1, attempt=0, action="fold")
        result = await watcher.expect("result")
        assert result["match"] == match


async def resign_with_deals_shown(arena: Arena, resigner: Client, last: str, ended: str) -> None:
    """``resigner`` ends ``last``, the last match dealt from seed 11: ``ended`` shows it all now,
    how it ended included, over HTTP and in the lobby."""
    await resigner.send("resign", match=last)
    await resigner.expect("match_end", match=last)
    _, record = await http_get(arena.url, f"/api/matches/{ended}")
    assert record["seed"] == 11 and record["final_view"] and record["turns"] is not None
    assert record["reason"] == "resign" and record["returns"] and record["detail"]
    listed = {entry["match"]: entry for entry in arena.server._lobby_fields(None)["recent"]}
    assert listed[ended]["reason"] == "resign" and listed[ended]["returns"] and listed[ended]["outcomes"]
    assert not arena.server._held_seeds  # nothing more to show once its deal is played out


async def start_watched(arena: Arena, watcher: Client, bots: list[str], **fields: Any) -> str:
    """A kuhn-poker match the admin makes, watched by ``watcher`` from its start."""
    match = await start_direct_match(arena, "kuhn-poker", bots, **fields)
    await watcher.send("watch", match=match)
    await watcher.expect("snapshot")
    return match


async def resign_with_deals_withheld(arena: Arena, watcher: Client, resigner: Client, ended: str) -> None:
    """``resigner`` ends the match, which then shows nothing of its deals: an empty view in its
    result and snapshot, no seed, full view or turns over HTTP, no replay."""
    await resigner.send("resign", match=ended)
    await resigner.expect("match_end", match=ended)
    result = await watcher.expect("result", match=ended)
    assert result["view"] == {} and result["withheld"] is True and result["status"] == "finished"
    _, record = await http_get(arena.url, f"/api/matches/{ended}")
    assert record["status"] == "finished"
    assert "seed" not in record and "final_view" not in record and "turns" not in record
    _, listed = await http_get(arena.url, "/api/matches")
    shown = [row for row in listed if row["id"] == ended]
    assert shown and "seed" not in shown[0] and not shown[0].get("final_view")
    await watcher.send("watch", match=ended)
    snapshot = await watcher.expect("snapshot", match=ended)
    assert snapshot["view"] == {} and snapshot["withheld"] is True
    # who won a showdown, or a rejection naming a partner's card, would tell the other table its deal
    recent = [entry for entry in arena.server._lobby_fields(None)["recent"] if entry["match"] == ended]
    for told in (result, record, shown[0], snapshot, *recent):
        assert all(told[key] is None for key in ("reason", "detail", "returns", "outcomes", "ranks", "forfeit_seat")), told
    await watcher.send("replay", match=ended)
    assert (await watcher.expect("error"))["code"] == p.UNKNOWN_MATCH
    _, board = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")  # nor the board: a win, a return, a rating
    assert board["variants"] == {"kuhn-poker": []}, board


@pytest.mark.trio
async def test_an_ended_match_hides_its_deals_while_a_match_dealt_from_its_seed_is_live(arena: Arena) -> None:
    """A duplicate group's matches share a seed and run at once: the first to end must not show
    the cards of the others (its seed, full view and turns) until they end too."""
    async with arena.bot("d1") as d1, arena.bot("d2"), arena.bot("d3") as d3, arena.bot("d4"):
        async with arena.socket("/watch") as ws:
            watcher = Client(ws, binary=False)
            await watcher.expect("lobby")
            ended = await start_watched(arena, watcher, ["d1", "d2"], seed=11)
            live = await start_direct_match(arena, "kuhn-poker", ["d3", "d4"], seed=11)
            await resign_with_deals_withheld(arena, watcher, d1, ended)
        await resign_with_deals_shown(arena, d3, live, ended)


@pytest.mark.trio
async def test_an_ended_match_hides_its_deals_until_every_match_of_its_group_has_finished(arena: Arena) -> None:
    """A tournament plays the matches of a duplicate group that share a bot one after another:
    when the first ends, the next one dealt from its seed may not be made yet, and its bots
    must not read the cards they are about to be dealt."""
    group = {"seed": 11, "group": "cup/kuhn-poker/dup/deal0", "group_size": 2}
    async with arena.bot("d1") as d1, arena.bot("d2") as d2, arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        first = await start_watched(arena, watcher, ["d1", "d2"], **group)
        await resign_with_deals_withheld(arena, watcher, d1, first)
        second = await start_direct_match(arena, "kuhn-poker", ["d2", "d1"], **group)
        await resign_with_deals_shown(arena, d2, second, first)


@pytest.mark.trio
@pytest.mark.parametrize("twin_ends", ["resign", "abort"])
async def test_the_board_and_the_lobby_tell_nothing_of_a_match_while_its_seed_deals_at_another_table(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, twin_ends: str
) -> None:
    """Two tables dealt from one seed outside a group (an admin's seed, twice): the first to end
    moved its winner's rating on the board while the other still played the same cards; and a
    match dealt again from an ended one's seed left the lobby showing how that one ended. An
    abort of the other table left the first withheld in the lobby for good, and its rating
    unknown to the pairing."""
    import arena.server as server_module

    monkeypatch.setattr(server_module, "BOARD_AGAIN_S", 0.0)
    monkeypatch.setattr(server_module, "BOARD_DUTY", 1.0)  # computed again whenever a match ended

    async def board() -> dict[str, float]:
        _, got = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")
        return {row["bot"]: row["mu"] for row in got["variants"]["kuhn-poker"]}

    def recent(match: str) -> dict[str, Any]:
        return next(entry for entry in arena.server._lobby_fields(None)["recent"] if entry["match"] == match)

    async def resign(bot: Client, match: str) -> None:
        await bot.send("resign", match=match)
        await bot.expect("match_end", match=match)

    async with arena.bot("r1") as r1, arena.bot("r2"), arena.bot("r3") as r3, arena.bot("r4"):
        shown = await start_direct_match(arena, "kuhn-poker", ["r1", "r2"], seed=5)
        await resign(r1, shown)
        before = await board()
        assert set(before) == {"r1", "r2"} and recent(shown)["returns"]
        held = await start_direct_match(arena, "kuhn-poker", ["r1", "r2"], seed=11)
        twin = await start_direct_match(arena, "kuhn-poker", ["r3", "r4"], seed=11)
        await resign(r1, held)
        assert await board() == before
        again = await start_direct_match(arena, "kuhn-poker", ["r3", "r4"], seed=5)
        assert recent(shown)["returns"] is None and recent(held)["returns"] is None
        if twin_ends == "resign":
            await resign(r3, twin)
        else:
            async with arena.admin() as admin:
                await admin.send("abort_match", match=twin)
                await admin.expect("match_aborted")
        after = await board()
        assert after["r1"] < before["r1"] and after["r2"] > before["r2"]  # r1's second resign, rated now
        assert arena.server.skill[("r1", "kuhn-poker")] == pytest.approx(after["r1"])  # and paired by it
        assert recent(held)["outcomes"] == ["forfeit", "win"]
        await resign(r3, again)
        assert recent(shown)["outcomes"] == ["forfeit", "win"]


@pytest.mark.trio
async def test_a_spectator_with_the_admin_token_is_told_how_a_withheld_match_ended(arena: Arena) -> None:
    """A remote tournament scores each table of a duplicate group as it ends, through /watch."""
    async with arena.bot("h1") as h1, arena.bot("h2"), arena.bot("h3"), arena.bot("h4"), arena.socket("/watch") as ws:
        admin = Client(ws, binary=False)
        await admin.expect("lobby")
        await admin.send("admin", token=arena.admin_token)
        await admin.expect("trusted")
        ended = await start_watched(arena, admin, ["h1", "h2"], seed=11)
        await start_direct_match(arena, "kuhn-poker", ["h3", "h4"], seed=11)
        await h1.send("resign", match=ended)
        result = await admin.expect("result", match=ended)
        assert result["withheld"] is True and result["view"] == {}
        assert result["reason"] == "resign" and result["returns"] and result["forfeit_seat"] == 0
        await admin.send("watch", match=ended)
        snapshot = await admin.expect("snapshot", match=ended)
        assert snapshot["withheld"] is True and snapshot["returns"] == result["returns"] and snapshot["view"] == {}


@pytest.mark.writer_in_thread  # held by a job that waits for an event of this process
@pytest.mark.trio
async def test_of_two_tables_of_one_deal_ending_in_one_commit_the_later_shows_everything(arena: Arena) -> None:
    """Both ends are committed in one batch of the writer: the second found the first still in
    the server's live matches (it had not been told yet) and held its view too, for good."""
    group = {"seed": 11, "group": "cup/kuhn-poker/dup/deal0", "group_size": 2}
    async with arena.bot("t1") as t1, arena.bot("t2"), arena.bot("t3") as t3, arena.bot("t4"), arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        first = await start_watched(arena, watcher, ["t1", "t2"], **group)
        second = await start_watched(arena, watcher, ["t3", "t4"], **group)
        writer = arena.server.writer
        assert writer is not None
        entered, gate = threading.Event(), threading.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.call, lambda store: (entered.set(), gate.wait()))  # what comes next is one batch
            while not entered.is_set():  # the writer holds the gate alone, not a job queued after it too
                await trio.sleep(0.01)
            nursery.start_soon(writer.call, lambda store: None)  # out behind it: no room for another batch
            await trio.testing.wait_all_tasks_blocked()
            await t1.send("resign", match=first)
            await t3.send("resign", match=second)
            while len(writer._queued) < 2:
                await trio.sleep(0.01)
            gate.set()
        results = {}
        for _ in range(2):
            result = await watcher.expect("result")
            results[result["match"]] = result
    assert results[first]["withheld"] is True and results[first]["view"] == {}
    assert results[second]["withheld"] is False and results[second]["view"] and results[second]["returns"]
    with trio.fail_after(5):  # the first, held by its commit, is shown once its deal is seen played out
        while arena.server._held_seeds or any(entry.held for entry in arena.server.recent):
            await trio.sleep(0.01)


@pytest.mark.trio
@pytest.mark.parametrize(
    ("group", "says"),
    [({"group_size": 2}, "needs 'group'"), ({"group": "g", "group_size": 0}, "at least 1")],
    ids=["a size without a group", "a size of 0"],
)
async def test_create_match_refuses_a_group_size_it_could_never_count(arena: Arena, group: dict[str, Any], says: str) -> None:
    """Its matches are counted by the group's id: a size without one was a group never complete,
    its every match withheld from spectators and the API for good."""
    async with arena.bot("g1"), arena.bot("g2"), arena.admin() as admin:
        await admin.send("create_match", bots=["g1", "g2"], game="kuhn-poker", **group)
        error = await admin.expect("error")
        assert error["code"] == p.BAD_MESSAGE and says in error["message"]
    assert Store(arena.db, read_only=True).matches() == []


async def play_to_showdown(watcher: Client, first: Client, second: Client, match: str) -> list[dict[str, Any]]:
    """Bet and call: the showdown shows both cards. What ``watcher`` (watching ``match``) is sent."""
    await first.expect("turn", match=match)
    await first.send("move", match=match, seat=0, step=0, attempt=0, action="bet")
    await second.expect("turn", match=match)
    await second.send("move", match=match, seat=1, step=1, attempt=0, action="call")
    return [await watcher.expect("delta", match=match), await watcher.expect("delta", match=match)]


@pytest.mark.trio
@pytest.mark.parametrize("grouped", [True, False], ids=["a duplicate group", "a seed given twice"])
async def test_a_live_match_whose_deal_is_dealt_at_another_table_shows_spectators_no_view(arena: Arena, grouped: bool) -> None:
    """The last delta of a showdown showed both cards, which at the other table, still live, were
    the cards its players were yet to see: and any of them may watch."""
    group = {"group": "cup/kuhn-poker/dup/deal0", "group_size": 2} if grouped else {}
    async with arena.bot("w1") as w1, arena.bot("w2") as w2, arena.bot("w3"), arena.bot("w4"), arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        match = await start_direct_match(arena, "kuhn-poker", ["w1", "w2"], seed=11, **group)
        await start_direct_match(arena, "kuhn-poker", ["w3", "w4"], seed=11, **group)
        await watcher.send("watch", match=match)
        snapshot = await watcher.expect("snapshot", match=match)
        deltas = await play_to_showdown(watcher, w1, w2, match)
        for shown in [snapshot, *deltas]:
            assert shown["view"] == {} and shown["withheld"] is True, shown
        assert (await watcher.expect("result", match=match))["view"] == {}


@pytest.mark.trio
async def test_a_live_match_dealt_from_its_own_seed_shows_spectators_its_public_view_to_the_showdown(arena: Arena) -> None:
    async with arena.bot("o1") as o1, arena.bot("o2") as o2, arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        match = await start_watched(arena, watcher, ["o1", "o2"], seed=12)
        deltas = await play_to_showdown(watcher, o1, o2, match)
        assert all(delta["withheld"] is False and delta["view"]["render"] for delta in deltas)
        assert "Showdown" in json.dumps(deltas[-1]["view"])


@pytest.mark.trio
async def test_the_server_deals_from_a_generator_its_published_seeds_do_not_reveal(arena: Arena) -> None:
    """Finished matches publish their seeds, and a Mersenne Twister's next outputs follow from
    624 of its words: the server draws from the OS, which keeps no state to recover."""
    with pytest.raises(NotImplementedError):
        arena.server.rng.getstate()
    seeds = []
    async with arena.bot("s1") as s1, arena.bot("s2"):
        for _ in range(2):
            match = await start_direct_match(arena, "kuhn-poker", ["s1", "s2"])
            await s1.send("resign", match=match)
            await s1.expect("match_end", match=match)
            _, record = await http_get(arena.url, f"/api/matches/{match}")
            seeds.append(record["seed"])
    assert len(set(seeds)) == 2 and all(0 <= seed < 2**62 for seed in seeds)


@pytest.mark.trio
async def test_the_lobby_orders_seats_from_a_generator_that_seat_orders_do_not_reveal(arena: Arena) -> None:
    """Every pairing's seat order is public (/watch, /api/matches): with a Mersenne Twister
    behind it, a bot could work out the next shuffles and seek when it would move first."""
    with pytest.raises(NotImplementedError):
        arena.server.lobby.rng.getstate()


@pytest.mark.trio
async def test_admin_messages_need_the_admin_token(arena: Arena) -> None:
    """Whatever their fields: a bot that leaves one out must still learn it is not the admin."""
    async with arena.bot("plain") as plain:
        for kind, fields in (
            ("register", {"name": "x"}),
            ("register", {}),
            ("create_match", {"bots": ["plain"], "game": "nim"}),
            ("create_match", {"bots": "plain"}),
            ("seed_salt", {"tournament": "cup"}),
            ("abort_match", {}),
        ):
            await plain.send(kind, **fields)
            assert (await plain.expect("error"))["code"] == p.NOT_ADMIN
        await plain.ws.send(json.dumps({"t": ["register"], "v": 1}))  # a type that is no name
        assert (await plain.expect("error"))["code"] == p.BAD_MESSAGE


@pytest.mark.trio
async def test_create_match_is_idempotent_on_its_key(arena: Arena) -> None:
    async with arena.bot("i1"), arena.bot("i2"), arena.admin() as admin:
        await admin.send("create_match", bots=["i1", "i2"], game="kuhn-poker", key="round-1/table-1")
        first = await admin.expect("match_created")
        await admin.send("create_match", bots=["i1", "i2"], game="kuhn-poker", key="round-1/table-1")
        second = await admin.expect("match_created")
    assert first["existing"] is False and second["existing"] is True and first["match"] == second["match"]
    assert Store(arena.db, read_only=True).count("matches", caller_key="round-1/table-1") == 1


@pytest.mark.trio
async def test_create_match_under_a_key_of_another_group_is_refused(arena: Arena) -> None:
    """A key's match stood for one asked in another group, or a group of another size: a deal
    already shown joined a group still to be played (found by QA)."""
    async with arena.bot("g1"), arena.bot("g2"), arena.admin() as admin:
        made = {"bots": ["g1", "g2"], "game": "kuhn-poker", "key": "cup/g2", "group": "cup/pair1", "group_size": 1}
        await admin.send("create_match", **made)
        await admin.expect("match_created")
        await admin.send("create_match", **{**made, "group_size": 2})
        refused = await admin.expect("error")
    said = "was in group 'cup/pair1' of 1, and this one is in group 'cup/pair1' of 2"
    assert refused["code"] == p.BAD_CONFIG and said in refused["message"]


@pytest.mark.trio
async def test_admins_racing_under_one_key_in_two_groups_get_one_match_and_refusals(arena: Arena) -> None:
    """Each looked for the key before any had opened its match: the other group's requests were
    answered with the first's match (found by QA)."""
    answers: list[tuple[int, dict[str, Any]]] = []

    async def create(size: int) -> None:
        async with arena.admin() as admin:
            await admin.send("create_match", bots=["r1", "r2"], game="nim", key="cup/r", group="cup/p", group_size=size)
            while (answer := await admin.receive(10))["t"] not in ("match_created", "error"):
                pass
            answers.append((size, answer))

    async with arena.bot("r1"), arena.bot("r2"), trio.open_nursery() as nursery:
        for index in range(8):
            nursery.start_soon(create, 1 + index % 2)
    made = [size for size, answer in answers if answer["t"] == "match_created"]
    assert len(answers) == 8 and len(set(made)) == 1
    assert all(answer["code"] == p.BAD_CONFIG for size, answer in answers if size != made[0])
    assert Store(arena.db, read_only=True).count("matches", caller_key="cup/r") == 1


@pytest.mark.trio
async def test_a_key_names_the_match_of_one_game_and_config_even_asked_at_once(arena: Arena) -> None:
    """Under a key made for one game, a request for another game, or the same game with another
    config, was told `existing: true` with a match it never asked for; asked at once, four
    games under one key made one match and three callers took it for theirs (found by QA)."""
    answers: dict[str, dict[str, Any]] = {}

    async def create(name: str, game: str, config: dict[str, Any]) -> None:
        async with arena.admin() as admin:
            await admin.send("create_match", bots=["k1", "k2"], game=game, config=config, key="cup/k")
            while (answer := await admin.receive(10))["t"] not in ("match_created", "error"):
                pass
            answers[name] = answer

    asked = {"nim": ("nim", {}), "heaps": ("nim", {"heaps": [1, 2]}), "kuhn": ("kuhn-poker", {}), "ttt": ("tic-tac-toe", {})}
    async with arena.bot("k1"), arena.bot("k2"):
        async with trio.open_nursery() as nursery:
            for name, (game, config) in asked.items():
                nursery.start_soon(create, name, game, config)
        made = [name for name, answer in answers.items() if answer["t"] == "match_created"]
        assert len(made) == 1 and all(answers[name]["code"] == p.BAD_CONFIG for name in asked if name not in made)
        for name, (game, config) in asked.items():  # asked again, each after the other: the same answers
            await create(name, game, config)
            assert answers[name]["t"] == ("match_created" if name in made else "error")
    assert answers[made[0]]["existing"] is True
    other = next(name for name in asked if name not in made)
    assert "the match made under this key is" in answers[other]["message"]
    assert Store(arena.db, read_only=True).count("matches", caller_key="cup/k") == 1


@pytest.mark.trio
async def test_an_empty_key_is_a_key_even_from_admins_racing_and_a_known_key_still_checks_the_bots(arena: Arena) -> None:
    """The store took "" for no key: eight admins asking at once made eight matches. And a
    known key was answered before the bots were checked, so the admin could be named a player."""
    created: list[dict[str, Any]] = []

    async def create() -> None:
        async with arena.admin() as admin:
            await admin.send("create_match", bots=["e1", "e2"], game="nim", key="")
            created.append(await admin.expect("match_created"))

    async with arena.bot("e1"), arena.bot("e2"):
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(create)
        async with arena.admin() as admin:
            await admin.send("create_match", bots=["admin", "e2"], game="nim", key="")
            assert (await admin.expect("error"))["code"] == p.BAD_MESSAGE
    assert len({answer["match"] for answer in created}) == 1 and sum(not a["existing"] for a in created) == 1
    assert Store(arena.db, read_only=True).count("matches", caller_key="") == 1


@pytest.mark.trio
async def test_admins_register_and_rotate_tokens_and_the_old_token_dies(arena: Arena) -> None:
    async with arena.admin() as admin:
        await admin.send("register", name="newbie")
        token = (await admin.expect("registered"))["token"]
        await admin.send("register", name="newbie")
        assert (await admin.expect("error"))["code"] == p.BOT_EXISTS
        await admin.send("rotate", name="newbie")
        fresh = (await admin.expect("rotated"))["token"]
    with pytest.raises(BotStopped):
        await run_bot(random_policy(0), arena.url, "newbie", token, games=["nim"], matches=1)
    async with arena.bot("newbie", fresh) as client:
        assert client.welcome["bot"] == "newbie"
    store = Store(arena.db, read_only=True)
    assert token not in json.dumps(store.bots()) and fresh not in str(list(store.conn.execute("SELECT * FROM bots")))


@pytest.mark.trio
async def test_rotating_a_playing_bots_token_says_what_it_stands_to_lose_to_both_sides(arena: Arena) -> None:
    """The admin learned nothing of the match the rotation cut off, and the SDK stopped saying
    only that the token was refused, while its match was forfeited on time (found by QA)."""
    token = await arena.register("busy")
    stopped: list[str] = []

    async def thinker(turn: Turn) -> str:
        await trio.sleep(60)
        return "never"

    async def play() -> None:
        with pytest.raises(BotStopped) as stop:
            await run_bot(thinker, arena.url, "busy", token, games=["nim"])
        stopped.append(str(stop.value))

    async with arena.bot("calm"), arena.admin() as admin, trio.open_nursery() as nursery:
        nursery.start_soon(play)
        with trio.fail_after(10):
            while "busy" not in arena.server.sessions or arena.server.sessions["busy"].connection is None:
                await trio.sleep(0.01)
        await admin.send("rotate", name="calm")
        assert {k: v for k, v in (await admin.expect("rotated")).items() if k in ("connected", "playing")} == {
            "connected": True,
            "playing": 0,
        }
        async with arena.bot("calm2"):
            await admin.send("create_match", bots=["busy", "calm2"], game="nim")
            await admin.expect("match_created")
            await admin.send("rotate", name="busy")
            rotated = await admin.expect("rotated")
    assert (rotated["connected"], rotated["playing"]) == (True, 1)
    said = "the server refused the token of bot 'busy' (the token was rotated); its 1 match in play will be forfeited"
    assert stopped == [said]


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_login_checked_as_its_token_is_rotated_does_not_outlive_the_rotation(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hello's token was checked on the store's thread; the rotation then looked for the
    bot's connection before that login had attached it, closed nothing, and a leaked token
    kept its connection after the owner rotated it."""
    token = await arena.register("racer")
    assert arena.server.writer is not None
    call = arena.server.writer.call
    checked: list[str] = []  # by the store's thread
    holding, rotated = trio.Event(), trio.Event()
    authenticate = Store.authenticate

    def noting(store: Store, bot: str, given: str) -> bool:
        checked.append(bot)
        return authenticate(store, bot, given)

    async def held(work: Callable[[Store], Any]) -> Any:
        result = await call(work)
        if "racer" in checked and not holding.is_set():  # the racer's check: its answer comes after the rotation
            holding.set()
            await rotated.wait()
        return result

    monkeypatch.setattr(Store, "authenticate", noting)
    monkeypatch.setattr(arena.server.writer, "call", held)
    async with arena.socket() as racer, arena.admin() as admin:
        await racer.send(p.encode(p.message("hello", bot="racer", token=token), True))
        await holding.wait()
        await admin.send("rotate", name="racer")
        await admin.expect("rotated")
        rotated.set()
        with trio.fail_after(5), pytest.raises(ConnectionClosed) as closed:
            while True:
                assert p.decode(await racer.recv())["t"] != "welcome"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == p.CLOSE_AUTH_FAILED


@pytest.mark.trio
async def test_a_bot_whose_token_is_rotated_is_away_at_once_and_its_seeks_are_never_paired(arena: Arena) -> None:
    """Its seeks stayed until its socket had closed, a heartbeat (20 s) for a client that never
    answers the close frame: the lobby paired one, and the revoked bot forfeited a rated match."""
    stream, protocol = await arena.raw_bot("revoked")
    protocol.send_binary(p.encode(p.message("seek", games=["kuhn-poker"]), True))
    await stream.send_all(b"".join(protocol.data_to_send()))
    while not arena.server.lobby.waiting_of("revoked"):
        await trio.sleep(0.01)
    async with arena.admin() as admin:
        await admin.send("rotate", name="revoked")
        await admin.expect("rotated")
        assert arena.server.lobby.waiting_of("revoked") == 0 and not arena.server.sessions["revoked"].connected
        async with arena.bot("other") as other:
            await other.send("seek", games=["kuhn-poker"])
            await other.expect("seeking")
            await trio.sleep(0.2)
            assert not arena.server.live
    await stream.aclose()


@pytest.mark.trio
async def test_two_admin_connections_at_once_each_get_the_answers_to_their_own_requests(arena: Arena) -> None:
    """They shared one session: the second to log in closed the first (4002) and was sent the
    answer to the first's request, a new bot's token shown once, as if it were its own."""
    async with arena.admin() as first:
        await first.send("register", name="alpha")
        async with arena.admin() as second:
            await second.send("register", name="beta")
            assert (await second.expect("registered"))["name"] == "beta"
            await second.send("ping")
            await second.expect("pong")
        assert (await first.expect("registered"))["name"] == "alpha"  # still open, still its own
        await first.send("ping")
        await first.expect("pong")
    assert [m["name"] for m in first.seen + second.seen if m["t"] == "registered"] == ["alpha", "beta"]
    assert arena.server.metrics_snapshot()["bots_connected"] == 0


@pytest.mark.trio
async def test_a_rotate_with_an_owner_renews_only_that_owners_bots(arena: Arena) -> None:
    person = await arena.register("someones")
    async with arena.admin() as admin:
        await admin.send("register", name="made", owner="tournament")
        await admin.expect("registered")
        await admin.send("rotate", name="made", owner="tournament")
        await admin.expect("rotated")
        for name, owner in (("made", "trainer"), ("someones", "tournament")):
            await admin.send("rotate", name=name, owner=owner)
            refused = await admin.expect("error")
            assert refused["code"] == p.BOT_EXISTS and refused["message"] == f"the bot {name!r} was not registered by {owner}"
    async with arena.bot("someones", person) as client:  # its owner's token still works
        assert client.welcome["bot"] == "someones"


# ---- spectators and HTTP ---------------------------------------------------------------


@pytest.mark.trio
async def test_a_finished_match_can_be_replayed_with_full_views(arena: Arena) -> None:
    record = await play_fixed_match(arena, True, ("r-a", "r-b"))
    async with arena.socket("/watch") as ws:
        from tests.conftest import Client

        watcher = Client(ws, binary=False)
        await watcher.send("replay", match=record["id"])
        replay = await watcher.expect("replay")
        await watcher.send("watch", match=record["id"])
        snapshot = await watcher.expect("snapshot")
        await watcher.send("leaderboard", game="kuhn-poker")
        board = await watcher.expect("leaderboard")
    assert replay["returns"] == record["returns"] and len(replay["views"]) == 1 + len({t["step"] for t in record["turns"]})
    assert replay["views"][-1] == record["final_view"] and snapshot["view"] == record["final_view"]
    rows = board["variants"]["kuhn-poker"]
    assert {row["bot"] for row in rows} == {"r-a", "r-b"} and all(row["games"] == 1 for row in rows)
    assert {row["bot"] for row in rows if row["rated"]} == {"r-a", "r-b"}


@pytest.mark.trio
async def test_a_simultaneous_match_ended_by_a_forfeit_after_the_others_move_is_replayed_to_its_last_step(
    arena: Arena,
) -> None:
    """The move taken at the step never applied is stored (accepted, with its think time), and
    replaying it raised: "expected actions for seats [0, 1], got [0]"."""
    async with arena.bot("rps-a") as a, arena.bot("rps-b") as b:
        match = await start_direct_match(arena, "iterated-rock-paper-scissors", ["rps-a", "rps-b"], clock={"move_ms": 300})
        for step, answering in ((0, (a, b)), (1, (a,))):
            for seat, client in enumerate(answering):
                await client.expect("turn", match=match, step=step)
                await client.send("move", match=match, seat=seat, step=step, attempt=0, action="rock")
        assert (await a.expect("match_end", match=match))["reason"] == "timeout"
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("replay", match=match)
        replay = await watcher.expect("replay")
    assert len(replay["views"]) == 2 and replay["views"][-1]["text"] != replay["views"][0]["text"]  # the start, step 0


@pytest.mark.trio
async def test_a_leaderboard_is_computed_once_for_requests_that_come_together(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its Nash bootstrap takes seconds over a big store, in a thread that shares the
    interpreter lock with every live match: requests anyone may send must not multiply it."""
    import arena.server as server_module

    computed: list[str | None] = []
    compute = server_module.leaderboard

    def counted(store: Store, game: str | None) -> dict[str, Any]:
        computed.append(game)
        return compute(store, game)

    await play_fixed_match(arena, True, ("l-a", "l-b"))
    monkeypatch.setattr(server_module, "leaderboard", counted)
    boards: list[Any] = []

    async def get(path: str) -> None:
        boards.append((await http_get(arena.url, path))[1])

    async with trio.open_nursery() as nursery:
        for _ in range(8):
            nursery.start_soon(get, "/api/leaderboard?game=kuhn-poker")
    await get("/api/leaderboard?game=kuhn-poker")
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("leaderboard", game="kuhn-poker")
        boards.append({k: v for k, v in (await watcher.expect("leaderboard")).items() if k in ("game", "variants")})
    assert computed == ["kuhn-poker"] and all(board == boards[0] for board in boards)
    for made_up in ("no-such-game", "no-such-game"):  # names anyone can invent are not kept
        await get(f"/api/leaderboard?game={made_up}")
    arena.server._boards.clear()  # as when the time it is served for has passed
    await get("/api/leaderboard?game=kuhn-poker")
    assert computed == ["kuhn-poker", "kuhn-poker"]  # a made-up name is answered without a board


@pytest.mark.trio
async def test_a_leaderboard_has_the_match_that_just_ended_unless_its_duty_holds_it_back(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served for a fixed 5 s, the board a spectator opened as the match it watched ended did
    not have it: the spectator saw the bots on it 10 s later, at its next ask (found timing
    the TUI's tests). A game's board is still computed no oftener than its duty allows, and
    one whose time has come does not wait behind another game's (found by QA)."""
    import time

    import arena.server as server_module

    computed: list[str | None] = []
    compute = server_module.leaderboard
    slow: set[str | None] = set()

    def counted(store: Store, game: str | None) -> dict[str, Any]:
        computed.append(game)
        if game in slow:
            time.sleep(1.0)
        return compute(store, game)

    async def bots_on_board() -> set[str]:
        status, board = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")
        assert status == 200
        return {row["bot"] for rows in board["variants"].values() for row in rows}

    monkeypatch.setattr(server_module, "leaderboard", counted)
    monkeypatch.setattr(server_module, "BOARD_AGAIN_S", 0.0)
    monkeypatch.setattr(server_module, "BOARD_DUTY", 1.0)  # any share of the time: computed again whenever stale
    await play_fixed_match(arena, True, ("fresh-a", "fresh-b"))
    assert await bots_on_board() == {"fresh-a", "fresh-b"}
    assert await bots_on_board() == {"fresh-a", "fresh-b"} and computed == ["kuhn-poker"]  # nothing ended: served again
    await play_fixed_match(arena, True, ("fresh-c", "fresh-d"))
    assert await bots_on_board() == {"fresh-a", "fresh-b", "fresh-c", "fresh-d"}
    assert computed == ["kuhn-poker"] * 2
    async with arena.socket("/watch") as ws:  # the board of every game is told of every game's match
        watcher = Client(ws, binary=False)
        await watcher.send("leaderboard")
        every = await watcher.expect("leaderboard")
        await play_fixed_match(arena, True, ("fresh-e", "fresh-f"))
        await watcher.send("leaderboard")
        assert (await watcher.expect("leaderboard"))["bots"] != every["bots"]
    assert computed == ["kuhn-poker", "kuhn-poker", None, None]
    monkeypatch.setattr(server_module, "BOARD_AGAIN_S", 60.0)
    await play_fixed_match(arena, True, ("fresh-g", "fresh-h"))
    assert "fresh-g" not in await bots_on_board() and len(computed) == 4  # not computed again within its time
    monkeypatch.setattr(server_module, "BOARD_AGAIN_S", 0.0)
    slow.add(None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(http_get, arena.url, "/api/leaderboard")
        with trio.fail_after(5):
            while None not in arena.server._boards_coming:  # the board of every game is being computed
                await trio.sleep(0.01)
        started = trio.current_time()
        assert "fresh-g" not in await bots_on_board()  # its last board at once, not after the other game's
        assert trio.current_time() - started < 0.5
    assert {"fresh-g", "fresh-h"} <= await bots_on_board()  # then computed: the next ask has it
    assert computed == ["kuhn-poker", "kuhn-poker", None, None, None, "kuhn-poker"]
    slow.add("kuhn-poker")
    await play_fixed_match(arena, True, ("fresh-i", "fresh-j"))  # both boards lack it
    took: list[float] = []

    async def timed(path: str) -> None:
        started = trio.current_time()
        await http_get(arena.url, path)
        took.append(trio.current_time() - started)

    async with trio.open_nursery() as nursery:  # asked at once: the second is not computed behind the first
        nursery.start_soon(timed, "/api/leaderboard")
        nursery.start_soon(timed, "/api/leaderboard?game=kuhn-poker")
    assert min(took) < 0.5, took


@pytest.mark.trio
async def test_a_board_slower_than_the_wait_is_asked_for_again_and_others_are_served_meanwhile(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big store's board took longer than the 10 s websockets gives an HTTP answer, which it
    dropped with an empty reply; and while one game's board was computed, a cached board of
    another waited behind it (found by QA)."""
    import time

    import arena.server as server_module

    compute = server_module.leaderboard

    def slow(store: Store, game: str | None) -> dict[str, Any]:
        if game == "kuhn-poker":
            time.sleep(1.0)
        return compute(store, game)

    await play_fixed_match(arena, True, ("s-a", "s-b"))
    status, nim = await http_get(arena.url, "/api/leaderboard?game=nim")
    assert status == 200
    monkeypatch.setattr(server_module, "leaderboard", slow)
    monkeypatch.setattr(server_module, "BOARD_WAIT_S", 0.3)
    started = trio.current_time()
    status, asked = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")
    assert status == 503 and asked["error"] == "computing" and asked["retry_after"] == 0.3
    assert await http_get(arena.url, "/api/leaderboard?game=nim") == (200, nim)  # cached: not behind kuhn-poker's
    status, typo = await http_get(arena.url, "/api/leaderboard?game=kuhn-pokr")  # nor a typo, told at once
    assert status == 404 and typo["error"] == "unknown_game" and "did you mean 'kuhn-poker'" in typo["message"]
    assert trio.current_time() - started < 0.9
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("leaderboard", game="kuhn-poker")
        told = await watcher.expect("error")
        assert told["code"] == "computing" and told["retry_after"] == 0.3
    await trio.sleep(1.0)  # the computation went on: its board is served
    status, board = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")
    assert status == 200 and board["game"] == "kuhn-poker" and board["variants"]


@pytest.mark.trio
async def test_a_spectator_s_later_messages_are_not_held_behind_a_board_being_computed(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spectator's messages were answered in order: the match it asked to watch, and its
    pings, waited up to 8 s behind a big store's board (found by a QA helper)."""
    import time

    import arena.server as server_module

    compute = server_module.leaderboard

    def slow(store: Store, game: str | None) -> dict[str, Any]:
        time.sleep(0.5)
        return compute(store, game)

    match_id = (await play_fixed_match(arena, True, ("w-a", "w-b")))["id"]
    monkeypatch.setattr(server_module, "leaderboard", slow)
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        asked = ["kuhn-poker", "nim", "tic-tac-toe", None, "pig"]  # one answered, and four that wait their turn
        for game in [*asked, "goofspiel"]:  # and one more
            await watcher.send("leaderboard", **({} if game is None else {"game": game}))
        refused = await watcher.expect("error", timeout=0.5)
        assert refused["code"] == p.COMPUTING and refused["ref"] == "leaderboard" and refused["retry_after"] > 0
        assert refused["message"].startswith("5 leaderboards asked are still to be answered")
        await watcher.send("watch", match=match_id)
        await watcher.send("ping")
        assert (await watcher.expect("snapshot", timeout=0.5))["match"] == match_id
        await watcher.expect("pong", timeout=0.5)
        answered = [(await watcher.expect("leaderboard", timeout=30)).get("game") for _ in asked]
        assert answered == asked  # in the order asked


@pytest.mark.trio
async def test_a_spectator_the_server_closes_leaves_no_trace(arena: Arena) -> None:
    """Closed by the server (a wrong admin token), a spectator kept its place, and enough of
    them refused every other spectator (found by a QA helper)."""
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("admin", token="not-the-token")
        assert (await watcher.expect("error"))["code"] == p.NOT_ADMIN
        with pytest.raises(ConnectionClosed):
            await watcher.receive()
    with trio.fail_after(5):
        while arena.server.watchers:
            await trio.sleep(0.01)
    status, metrics = await http_get(arena.url, "/metrics")
    assert status == 200 and metrics["spectators"] == 0


@pytest.mark.trio
async def test_the_leaderboard_of_a_game_neither_installed_nor_stored_is_an_unknown_game(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo got an empty board, where every other message says unknown_game; a game stored
    and uninstalled since (a plugin) still has its board."""
    status, body = await http_get(arena.url, "/api/leaderboard?game=kuhn-pokr")
    assert status == 404 and body["error"] == p.UNKNOWN_GAME and "did you mean 'kuhn-poker'" in body["message"]
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("leaderboard", game="kuhn-pokr")
        refused = await watcher.expect("error")
        assert refused["code"] == p.UNKNOWN_GAME and refused["ref"] == "leaderboard"
        await watcher.send("leaderboard", game="kuhn-poker")  # installed, nothing stored: an empty board
        assert (await watcher.expect("leaderboard"))["variants"] == {}
    await play_fixed_match(arena, True, ("gone-a", "gone-b"))
    arena.server._boards.clear()  # as when the empty board's time has passed
    installed = games.names()
    monkeypatch.setattr(games, "names", lambda: [name for name in installed if name != "kuhn-poker"])
    status, body = await http_get(arena.url, "/api/leaderboard?game=kuhn-poker")
    assert status == 200 and [{row["bot"] for row in board} for board in body["variants"].values()] == [{"gone-a", "gone-b"}]


@pytest.mark.trio
async def test_a_fault_answering_http_or_a_spectator_is_an_error_and_the_server_goes_on(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was websockets' plain-text 500 "Failed to open a WebSocket connection", with a traceback."""
    import arena.server as server_module

    def broken(store: Store, game: str | None) -> dict[str, Any]:
        raise ValueError("scores has a NaN or infinite entry")

    monkeypatch.setattr(server_module, "leaderboard", broken)
    status, body = await http_get(arena.url, "/api/leaderboard")
    assert status == 500 and body == {"error": "internal_error", "message": "ValueError: scores has a NaN or infinite entry"}
    async with arena.socket("/watch") as ws:  # a spectator asking the same is told, and stays (it was closed 1011)
        watcher = Client(ws, binary=False)
        await watcher.send("leaderboard")
        error = await watcher.expect("error", ref="leaderboard")
        assert error["code"] == p.BAD_MESSAGE and "NaN or infinite" in error["message"]
        await watcher.send("ping")
        await watcher.expect("pong")
    status, body = await http_get(arena.url, "/health")
    assert status == 200 and body["status"] == "ok"


@pytest.mark.trio
async def test_http_endpoints_answer_json(arena: Arena) -> None:
    record = await play_fixed_match(arena, True, ("h-a", "h-b"))

    async def get(path: str) -> tuple[int, Any]:
        return await http_get(arena.url, path)

    assert (await get("/health"))[1]["status"] == "ok"  # type: ignore[index]
    board = (await get("/api/leaderboard?game=kuhn-poker"))[1]
    assert {row["bot"] for row in board["variants"]["kuhn-poker"]} == {"h-a", "h-b"}  # type: ignore[index]
    overall = (await get("/api/leaderboard"))[1]
    assert {row["bot"] for row in overall["bots"]} == {"h-a", "h-b"}  # type: ignore[index]
    status, metrics = await get("/metrics")
    assert status == 200 and metrics["matches_finished"] >= 1 and metrics["moves_relayed"] >= 2  # type: ignore[index]
    bots = (await get("/api/bots"))[1]
    assert {"h-a", "h-b"} <= {b["name"] for b in bots}  # type: ignore[union-attr]
    listed = (await get("/api/matches?bot=h-a&limit=5"))[1]
    assert [m["id"] for m in listed] == [record["id"]]  # type: ignore[union-attr]
    assert (await get("/api/matches?game=&bot="))[1] == (await get("/api/matches"))[1] != []  # blank: no filter
    status, typo = await get("/api/matches?game=kuhn-pokr")  # it said [], as of a game nobody played yet (found by QA)
    assert status == 404 and typo["error"] == "unknown_game" and "did you mean 'kuhn-poker'" in typo["message"]  # type: ignore[index]
    assert await get("/api/matches?game=nim") == (200, [])  # installed, never played
    assert (await get("/api/leaderboard?game="))[1] == overall
    status, full = await get(f"/api/matches/{record['id']}")
    assert status == 200 and full["turns"] == record["turns"]  # type: ignore[index]
    assert (await get("/api/matches/nope"))[0] == 404
    assert (await get("/elsewhere"))[0] == 404
    assert await get("//health") == (404, {"error": "not_found", "message": "no such path '//health'"})  # not a host
    assert (await get("/health?x=//y"))[0] == 200
    # the absolute form, which some proxies send, was answered 404 "no such path 'http://...'"
    host = arena.url.removeprefix("ws://")
    assert await get(f"HTTP://{host}/api/matches?bot=h-a&limit=5") == (200, listed)
    assert (await get(f"http://{host}"))[0] == 404  # the path "/"
    # no URL (an IPv6 host unclosed): read as a path, as before; urlsplit's ValueError was a plain-text 500
    assert await get("http://[::1/health") == (404, {"error": "not_found", "message": "no such path 'http://[::1/health'"})
    with pytest.raises(InvalidStatus) as refused:  # a websocket upgrade is answered as plain HTTP too
        async with connect(arena.url + "/elsewhere", proxy=None):
            pass
    assert refused.value.response.status_code == 404


class SpendsOnce:
    """A policy that is exhausted once it has moved, as an LLM bot at its spending cap."""

    def __init__(self) -> None:
        self.moves = 0
        self.pick = random_policy(3)

    @property
    def exhausted(self) -> bool:
        return self.moves > 0

    def act(self, turn: Turn) -> str:
        self.moves += 1
        return self.pick(turn)


@pytest.mark.trio
async def test_an_exhausted_policy_ends_its_run_once_its_match_is_over(arena: Arena) -> None:
    """With no match count the run would go on for ever: an exhausted bot seeks no more, so
    its run ends when its last match does instead of waiting connected for nothing."""
    tokens = [await arena.register(name) for name in ("spender", "other")]
    runs: dict[str, BotRun] = {}

    heard: list[dict[str, Any]] = []

    async def play(name: str, token: str, policy: Any, matches: int | None) -> None:
        runs[name] = await run_bot(
            policy, arena.url, name, token, games=["nim"], matches=matches, on_message=heard.append if matches is None else None
        )

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, "spender", tokens[0], SpendsOnce(), None)
            nursery.start_soon(play, "other", tokens[1], random_policy(4), 1)
    assert [end["match"] for end in runs["spender"].results] == [end["match"] for end in runs["other"].results]
    # the seek made when its match started was withdrawn at once, not left for a pairing it must resign
    # (the first cancel, as its match started, found its seek already taken by that match)
    assert [msg["count"] for msg in heard if msg["t"] == "cancelled"] == [0, 1]


@pytest.mark.trio
async def test_a_match_record_is_found_by_a_unique_prefix_of_its_id_as_the_lobby_shows_it(arena: Arena) -> None:
    """The TUI and the lobby show ids cut to 8 characters, which /watch took and HTTP answered
    with a 404 (found by QA)."""
    ids = await trio.to_thread.run_sync(play_stored, arena.db, "nim", 17)  # 17 ids over 16 hex digits: two share their first
    shared = next(a for a in ids if any(b != a and b[0] == a[0] for b in ids))[0]
    status, record = await http_get(arena.url, f"/api/matches/{ids[0][:8]}")
    assert status == 200 and record["id"] == ids[0] and record["turns"]  # type: ignore[index]
    status, error = await http_get(arena.url, f"/api/matches/{shared}")
    assert status == 404 and error["error"] == p.UNKNOWN_MATCH  # type: ignore[index]
    assert f"match id prefix '{shared}' is ambiguous" in error["message"]  # type: ignore[index]


@pytest.mark.trio
async def test_api_matches_pages_by_the_last_id_and_filters_by_status(arena: Arena) -> None:
    older = await play_fixed_match(arena, True, ("page-a", "page-b"))
    newer = await play_fixed_match(arena, True, ("page-c", "page-d"))
    (first,) = (await http_get(arena.url, "/api/matches?limit=1"))[1]  # type: ignore[misc]
    (second,) = (await http_get(arena.url, f"/api/matches?limit=1&before={first['id']}"))[1]  # type: ignore[misc]
    assert [first["id"], second["id"]] == [newer["id"], older["id"]]
    assert (await http_get(arena.url, f"/api/matches?before={older['id']}"))[1] == []
    finished = (await http_get(arena.url, "/api/matches?status=finished"))[1]
    assert {m["id"] for m in finished} == {older["id"], newer["id"]}  # type: ignore[union-attr]
    assert (await http_get(arena.url, "/api/matches?status=void"))[1] == []
    status, error = await http_get(arena.url, "/api/matches?before=nope")
    assert status == 400 and error == {"error": "bad_message", "message": "no match 'nope' to list the matches before"}
    status, error = await http_get(arena.url, "/api/matches?status=done")
    assert status == 400 and error["message"] == "status must be live, finished or void"  # type: ignore[index]
    for loose in ("limit=1_0", "limit=%201", "limit=+1", "limit=1.5"):  # int() took 10, 1 and 1 ("+" reads as a space)
        status, error = await http_get(arena.url, f"/api/matches?{loose}")
        assert status == 400 and error["error"] == "bad_message", loose  # type: ignore[index]
    # a blank field is as absent, as a form sends one for "any": status and before were a 400 where game was no filter
    everything = (await http_get(arena.url, "/api/matches"))[1]
    for blank in ("status=", "before=", "limit=", "game=&bot=&status=&before=&limit="):
        assert await http_get(arena.url, f"/api/matches?{blank}") == (200, everything), blank
    # clamped to 1..1000, however many digits (int() refused 5,000 of them: a 500)
    for limit, count in ((f"-{'9' * 5000}", 1), ("9" * 5000, 2), ("0" * 5000 + "1", 1), ("-0", 1)):
        status, listed = await http_get(arena.url, f"/api/matches?limit={limit}")
        assert status == 200 and len(listed) == count, limit[:8]  # type: ignore[arg-type]


@pytest.mark.trio
async def test_http_answers_carry_one_json_content_type(arena: Arena) -> None:
    """A second, text/plain Content-Type made urllib and browsers read the JSON as plain text."""
    for path in ("/health", "/api/games/nim", "/nope", "/bot"):
        head = (await http_raw(arena.url, path)).partition(b"\r\n\r\n")[0].decode().lower().split("\r\n")[1:]
        assert [line for line in head if line.startswith("content-type:")] == ["content-type: application/json"], path


@pytest.mark.trio
async def test_two_upgrade_headers_and_an_escaped_path_are_answered_as_any_request(arena: Arena) -> None:
    """Two Upgrade headers raised in the request's handler: a 500 in plain text and a traceback
    in the log, on any path; an upgrade to /%62ot (an escaped /bot) was told 426, "/bot speaks
    websocket" (found by a QA helper)."""
    head, _, body = (await http_raw(arena.url, "/health", "GET", "Upgrade: foo\r\nUpgrade: bar\r\n")).partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 200 OK" and json.loads(body)["status"] == "ok"
    token = await arena.register("escaped")
    async with arena.socket("/%62ot") as ws:
        bot = Client(ws, binary=False)
        await bot.send("hello", bot="escaped", token=token)
        assert (await bot.expect("welcome"))["bot"] == "escaped"


@pytest.mark.trio
async def test_only_get_and_head_are_answered_and_head_without_a_body(arena: Arena) -> None:
    """Every method was answered as a GET: a DELETE of a match got 200 and its record, as if
    it had been deleted, and a HEAD got a body, which HTTP forbids."""
    record = await play_fixed_match(arena, True, ("m-a", "m-b"))
    upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\n"  # websockets itself answered in plain text, with Allow: GET
    cases = (("DELETE", f"/api/matches/{record['id']}", ""), ("POST", "/api/bots", ""), ("PUT", "/health", ""))
    for method, path, headers in (*cases, ("POST", "/bot", upgrade), ("PUT", "/watch", upgrade)):
        head, _, body = (await http_raw(arena.url, path, method, headers)).partition(b"\r\n\r\n")
        lines = head.decode().lower().split("\r\n")
        assert lines[0].split()[1] == "405" and "allow: get, head" in lines and "content-type: application/json" in lines
        assert json.loads(body) == {"error": "method_not_allowed", "message": f"{path} answers GET and HEAD only"}
    got = (await http_raw(arena.url, "/api/bots")).partition(b"\r\n\r\n")
    head, _, body = (await http_raw(arena.url, "/api/bots", "HEAD")).partition(b"\r\n\r\n")
    assert body == b"" and head.split(b"\r\n")[0] == b"HTTP/1.1 200 OK"
    assert f"content-length: {len(got[2])}" in head.decode().lower().split("\r\n")


@pytest.mark.trio
async def test_a_read_only_server_hides_an_ended_matchs_deal_while_the_serving_one_deals_it_live(
    arena_factory: ArenaFactory, tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """The read-only server has no live matches of its own: it showed the seed, turns and full
    view (both cards) of a match whose seed a match still live at the serving server dealt."""
    db = tmp_path / "served.db"
    store = Store(db)
    ended = dataclasses.replace(match_record("kuhn-poker", ["r1", "r2"], [1.0, -1.0]), seed=42, final_view={"text": "Seat 0: Q"})
    store.finish_match(ended)
    store.open_match({"id": "f" * 32, "game": "kuhn-poker", "variant": "kuhn-poker", "config": {}, "seed": 42,
                      "players": ["r3", "r4"], "max_retries": 2, "clock": {}, "created_at": 1.0, "source": "server"})  # fmt: skip
    store.close()
    reader = await arena_factory(db=db, read_only=True)
    status, record = await http_get(reader.url, f"/api/matches/{ended.match_id}")
    assert status == 200 and not {"seed", "final_view", "turns"} & set(record)
    async with reader.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.send("watch", match=ended.match_id)
        assert (await watcher.expect("snapshot"))["view"] == {}
    await reader.server.shutdown()


@pytest.mark.trio
async def test_a_read_only_server_given_an_admin_token_takes_it_in_place_of_the_stores(
    arena: Arena, arena_factory: ArenaFactory
) -> None:
    """It cannot keep the token in the store, and the one given was ignored without a word."""
    reader = await arena_factory(db=arena.db, read_only=True, admin_token="the-mirror's-own")
    async with reader.socket("/watch") as ws:
        spectator = Client(ws, binary=False)
        await spectator.send("admin", token=arena.admin_token)  # the store's
        assert (await spectator.expect("error"))["code"] == p.NOT_ADMIN
        with trio.fail_after(10), pytest.raises(ConnectionClosed) as closed:  # a guess costs a connection (found by QA)
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == p.CLOSE_AUTH_FAILED
    async with reader.socket("/watch") as ws:
        spectator = Client(ws, binary=False)
        await spectator.send("admin", token="the-mirror's-own")
        await spectator.expect("trusted")
    await reader.server.shutdown()


@pytest.mark.trio
async def test_a_store_that_cannot_be_read_is_a_json_503_not_a_websocket_failure(
    arena_factory: ArenaFactory, tmp_path: Path
) -> None:
    """A read-only server whose store a newer arena upgraded, or that was removed, answered
    500 text/plain "Failed to open a WebSocket connection", and /api/matches blamed the
    caller (400) for a missing store."""
    db = tmp_path / "served.db"
    Store(db).close()
    reader = await arena_factory(db=db, read_only=True)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    status, error = await http_get(reader.url, "/api/bots")
    assert status == 503 and error["error"] == "store_unavailable" and "newer than this arena" in error["message"]
    db.unlink()
    for path in ("/api/bots", "/api/matches", "/api/matches/x", "/api/leaderboard"):
        status, error = await http_get(reader.url, path)
        assert (status, error["error"]) == (503, "store_unavailable") and "no store at" in error["message"], path
    status, health = await http_get(reader.url, "/health")
    assert (status, health["status"], health["read_only"]) == (503, "unavailable", True) and "no store at" in health["message"]
    Store(db).close()
    assert (await http_get(reader.url, "/health"))[0] == 200  # a read-only server reads whatever file is there
    await reader.server.shutdown()


def strict_json(text: bytes | str) -> Any:
    """JSON as a browser or jq reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.trio
async def test_log_probs_are_held_compactly_and_capped_per_move(arena: Arena) -> None:
    """A list of zeros is a byte each in msgpack and was held as Python floats, 32 bytes each,
    to the end of the match: 34 MB of moves grew the server by 1.5 GB."""
    async with arena.bot("lp-a") as a, arena.bot("lp-b"):
        match = await start_direct_match(arena, "tic-tac-toe", ["lp-a", "lp-b"], seed=1, max_retries=0)
        await a.expect("turn", match=match)
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="a1", logprobs=[0] * (p.MAX_LOGPROBS + 1))
        error = await a.expect("error")
        assert error["code"] == p.BAD_MESSAGE and "at most 16,384 numbers" in error["message"]
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="a1", logprobs=[0] * p.MAX_LOGPROBS)
        while not arena.server.sessions["lp-b"].slots:  # taken: lp-b is asked the next step
            await trio.sleep(0.01)
        await a.send("resign", match=match)
        await a.expect("match_end", match=match)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["turns"][0]["logprobs"] == [0.0] * p.MAX_LOGPROBS


@pytest.mark.trio
async def test_a_json_client_may_send_null_where_its_numbers_are_not_finite(arena: Arena) -> None:
    """JSON writes -inf as null (JavaScript's JSON.stringify, our own encoder): the move that
    carried it was refused whole, its action lost, and the seat left to lose on time."""
    async with arena.bot("null-a", binary=False) as a, arena.bot("null-b"):
        match = await start_direct_match(arena, "tic-tac-toe", ["null-a", "null-b"], seed=1, max_retries=0)
        await a.expect("turn", match=match)
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="b2", logprobs=[-0.25, None], cost=None)
        with trio.fail_after(5):
            while not arena.server.sessions["null-b"].slots:  # taken: null-b is asked the next step
                await trio.sleep(0.01)
        await a.send("resign", match=match)
        await a.expect("match_end", match=match)
    assert not [msg for msg in a.seen if msg["t"] == "error"], a.seen
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None
    first = record["turns"][0]
    assert (first["action"], first["logprobs"], first["cost"]) == ("b2", [-0.25, -math.inf], None)


@pytest.mark.trio
async def test_numbers_that_are_not_finite_are_served_as_null_in_valid_json(arena: Arena) -> None:
    """A logprob of -inf (a token the model gave no mass) and an infinite cost are numbers a
    bot may send; they were served as -Infinity and Infinity, which JSON parsers refuse."""
    async with arena.bot("inf-a") as a, arena.bot("inf-b"):
        match = await start_direct_match(arena, "tic-tac-toe", ["inf-a", "inf-b"], seed=1, max_retries=0)
        await a.expect("turn", match=match)
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="z9", logprobs=[-math.inf, 0.0], cost=math.inf)
        await a.expect("match_end", match=match)
    body = (await http_raw(arena.url, f"/api/matches/{match}")).partition(b"\r\n\r\n")[2]
    (turn,) = strict_json(body)["turns"]
    assert turn["logprobs"] == [None, 0.0] and turn["cost"] is None
    board = strict_json((await http_raw(arena.url, "/api/leaderboard?game=tic-tac-toe")).partition(b"\r\n\r\n")[2])
    assert {row["bot"]: row["cost"] for row in board["variants"]["tic-tac-toe"]} == {"inf-a": None, "inf-b": 0.0}
    async with arena.socket("/watch") as ws:
        await ws.send(p.encode(p.message("leaderboard", game="tic-tac-toe"), False))
        with trio.fail_after(10):
            while (message := strict_json(await ws.recv()))["t"] != "leaderboard":
                pass
    assert {row["bot"]: row["cost"] for row in message["variants"]["tic-tac-toe"]} == {"inf-a": None, "inf-b": 0.0}


@pytest.mark.trio
async def test_a_second_server_on_the_same_store_is_refused_and_voids_nothing(arena: Arena, nursery: trio.Nursery) -> None:
    async with arena.bot("keep-a") as a, arena.bot("keep-b"):
        match = await start_direct_match(arena, "tic-tac-toe", ["keep-a", "keep-b"])
        await a.expect("turn", match=match)
        second = ArenaServer(arena.db, admin_token=arena.admin_token)
        with pytest.raises(StoreError, match="another arena server is serving") as refused:
            await nursery.start(second.run, await open_listeners("127.0.0.1", 0))
        assert refused.value.kind == "busy"
        assert Store(arena.db, read_only=True).match(match)["status"] == "live"  # type: ignore[index]
        reader = ArenaServer(arena.db, read_only=True)  # reading needs no lock
        await nursery.start(reader.run, await open_listeners("127.0.0.1", 0))
        await reader.shutdown()


@pytest.mark.trio
async def test_the_games_are_described_over_http_for_clients_in_any_language(arena: Arena) -> None:
    status, listed = await http_get(arena.url, "/api/games")
    assert status == 200 and [game["name"] for game in listed] == games.names()
    status, kuhn = await http_get(arena.url, "/api/games/kuhn-poker")
    assert status == 200 and kuhn["action_space"] == ["check", "bet", "call", "fold"] and "Kuhn" in kuhn["rules"]
    assert kuhn["config"] == [{"key": "players", "type": "int", "default": 2}] and kuhn["doc"].startswith("## Kuhn poker")
    nim = (await http_get(arena.url, "/api/games/nim"))[1]
    assert {"key": "heaps", "type": "list of int", "default": [3, 4, 5]} in nim["config"]
    status, missing = await http_get(arena.url, "/api/games/tic_tac_toe")
    assert status == 404 and missing["error"] == p.UNKNOWN_GAME and "tic-tac-toe" in missing["message"]
    assert await http_get(arena.url, "/api/games/kuhn%2Dpoker") == (200, kuhn)  # escaped as clients may


@pytest.mark.trio
async def test_a_match_that_reaches_max_steps_without_ending_is_void(arena_factory: ArenaFactory) -> None:
    """Pig never ends when nobody holds, and the server keeps every turn until the end: one bot
    playing itself (or two colluding) grew the server's memory without bound."""
    arena = await arena_factory(limits=Limits(max_steps=40))
    token = await arena.register("gambler")
    welcomes: list[dict[str, Any]] = []
    asked: list[int] = []

    def seen(msg: dict[str, Any]) -> None:
        if msg["t"] == "welcome":
            welcomes.append(msg)
        elif msg["t"] == "turn":
            asked.append(msg["step"])

    with trio.fail_after(20):
        run = await run_bot(
            lambda turn: "roll", arena.url, "gambler", token, games=["pig"], self_play=True, matches=1, on_message=seen
        )
    [end] = {result["match"]: result for result in run.results}.values()  # one match_end per seat
    assert end["status"] == "void" and "reached 40 steps without ending" in end["detail"]
    # nobody is asked the turn of a step that will not be played: the bot paid for a reply
    # (a model's tokens) and, answering before the void reached it, got error stale_move
    assert max(asked) == 39
    assert run.errors == [] and welcomes[0]["limits"]["max_steps"] == 40
    record = Store(arena.db, read_only=True).match(end["match"])
    assert record is not None and record["status"] == "void" and record["detail"] == end["detail"]
    assert len(record["turns"]) == 40 and record["returns"] == [0.0, 0.0]  # kept for the audit, rated for nobody


@pytest.mark.trio
async def test_a_bot_may_keep_only_max_seeks_seeks_waiting(arena_factory: ArenaFactory) -> None:
    """Every pairing pass walks the waiting seeks, and one bot's seeks that cannot pair with
    each other are walked once per seek: 30,000 took 14 s a pass, the server frozen."""
    arena = await arena_factory(limits=Limits(max_seeks=3))
    async with arena.bot("hoarder", acks=True) as hoarder:
        for heaps in ([1, 2], [1, 3], [1, 4]):
            await hoarder.send("seek", games=["nim"], config={"heaps": heaps})
            await hoarder.expect("seeking")
        await hoarder.send("seek", games=["nim"], config={"heaps": [1, 5]})
        refused = await hoarder.expect("error")
        assert (refused["code"], refused["ref"]) == (p.BUSY, "seek") and "3 seeks waiting" in refused["message"]
        assert hoarder.welcome["limits"]["max_seeks"] == 3
        await hoarder.send("cancel", games=["nim"])
        await hoarder.expect("cancelled", count=3)
        await hoarder.send("seek", games=["nim"], config={"heaps": [1, 5]})
        await hoarder.expect("seeking")


@pytest.mark.trio
async def test_a_burst_of_seeks_never_seats_a_bot_past_its_match_limit(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(max_matches=1))
    async with arena.bot("busy") as busy, arena.bot("o1") as o1, arena.bot("o2") as o2:
        for client in (busy, busy, o1, o2):
            await client.send("seek", games=["tic-tac-toe"])
        await busy.expect("match_start")
        with trio.move_on_after(0.3):
            second = await busy.expect("match_start")
            pytest.fail(f"seated in a second match: {second}")
    assert sum("busy" in live.bots for live in arena.server.live.values()) <= 1


@pytest.mark.trio
async def test_nobody_can_seat_the_admin(arena: Arena) -> None:
    async with arena.admin() as admin, arena.bot("farmer") as farmer:
        await farmer.send("challenge", bot="admin", game="tic-tac-toe")
        assert (await farmer.expect("error"))["code"] == p.BAD_MESSAGE
        await admin.send("create_match", bots=["farmer", "admin"], game="tic-tac-toe")
        assert (await admin.expect("error"))["code"] == p.BAD_MESSAGE


@pytest.mark.trio
async def test_metrics_count_every_frame_each_way(arena: Arena) -> None:
    async with arena.bot("counted") as bot:
        before = (await http_get(arena.url, "/metrics"))[1]
        for _ in range(3):
            await bot.send("ping")
            await bot.expect("pong")
        await bot.send("seek", games=["no-such-game"])
        await bot.expect("error")
        after = (await http_get(arena.url, "/metrics"))[1]
    assert after["frames_in"] - before["frames_in"] == 4  # type: ignore[index]
    assert after["frames_out"] - before["frames_out"] == 4  # type: ignore[index]


@pytest.mark.trio
async def test_odd_shapes_get_an_error_and_the_connection_lives(arena: Arena) -> None:
    async with arena.bot("odd") as odd:
        await odd.send("seek", games=["tic-tac-toe"], config={1: 2})
        assert (await odd.expect("error"))["code"] == p.BAD_CONFIG
        await odd.send("cancel", games=[{"a": 1}])
        assert (await odd.expect("error"))["code"] == p.BAD_MESSAGE
        await odd.send("ping")
        await odd.expect("pong")
    async with arena.admin() as admin:
        await admin.send("create_match", bots=["odd", "odd"], game="nim", clock={"move_ms": True})
        assert (await admin.expect("error"))["code"] == p.BAD_CONFIG
        await admin.send("create_match", bots=["odd", "odd"], game="nim", max_retries=101)
        refused = await admin.expect("error")
        assert refused["code"] == p.BAD_CONFIG and "max_retries must be from 0 to 100" in refused["message"]


@pytest.mark.trio
async def test_sdk_bots_keep_under_the_servers_rate_limit_in_a_fast_game(arena_factory: ArenaFactory) -> None:
    """Forty rounds answered at once would pass rate 20 and burst 4: a dropped move loses on
    time. The SDK paces itself by the limits its welcome gives, so the match is played out."""
    arena = await arena_factory(limits=Limits(rate=20, burst=4))
    names = ["quick-a", "quick-b"]
    tokens = [await arena.register(name) for name in names]
    runs: dict[str, BotRun] = {}

    async def play(seat: int) -> None:
        runs[names[seat]] = await run_bot(
            lambda turn: "cooperate",
            arena.url,
            names[seat],
            tokens[seat],
            games=["iterated-prisoners-dilemma"],
            config={"rounds": 40},
            matches=1,
        )

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for seat in range(2):
                nursery.start_soon(play, seat)
    ends = [runs[name].results[0] for name in names]
    assert [(end["status"], end["reason"]) for end in ends] == [("finished", "complete")] * 2
    assert [runs[name].errors for name in names] == [[], []] and arena.server.metrics.errors == 0


@pytest.mark.trio
async def test_spectators_get_the_lobby_once_an_interval_at_most_and_its_latest_state(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lobby message lists every live match, and a busy server starts and ends hundreds a
    second: one spectator of the benchmark took 568 lobby messages a second (23 MB/s)."""
    import arena.server as server_module

    monkeypatch.setattr(server_module, "LOBBY_INTERVAL_S", 1.0)
    async with arena.bot("burst1"), arena.bot("burst2"), arena.admin() as admin, arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")  # on connect
        made = []
        for _ in range(3):  # six changes in a burst: three matches start, then end (the bots read nothing)
            await admin.send("create_match", bots=["burst1", "burst2"], game="nim")
            made.append((await admin.expect("match_created"))["match"])
        for match in made:
            await admin.send("abort_match", match=match)
            await admin.expect("match_aborted")
        lobbies: list[dict[str, Any]] = []  # until one shows the burst's end
        while not lobbies or lobbies[-1]["live"] or not set(made) <= {m["match"] for m in lobbies[-1]["recent"]}:
            lobbies.append(await watcher.expect("lobby", timeout=3))
    assert len(lobbies) <= 3  # one at the first change, one an interval later (sent on each change: six)


@pytest.mark.trio
async def test_a_lobby_lists_the_newest_live_matches_and_seeks_with_counts_and_of_the_game_a_spectator_follows(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lobby listed every live match, to every spectator four times a second: about a
    megabyte each with 4,000 live, so that a few spectators took the event loop from the bots."""
    import arena.server as server_module

    monkeypatch.setattr(server_module, "LOBBY_LIST_LIMIT", 2)
    async with arena.bot("many1"), arena.bot("many2") as seeker, arena.admin() as admin:
        made = []
        for game in ("nim", "nim", "tic-tac-toe", "nim"):  # they stay live: the bots read nothing
            await admin.send("create_match", bots=["many1", "many2"], game=game)
            made.append((await admin.expect("match_created"))["match"])
        for game in ("nim", "pig", "nim"):
            await seeker.send("seek", games=[game])
            await seeker.expect("seeking")
        async with arena.socket("/watch") as ws:
            watcher = Client(ws, binary=False)
            lobby = await watcher.expect("lobby", waiting_count=3)  # sent on connect: nothing changes after
            assert lobby["game"] is None and [m["match"] for m in lobby["live"]] == made[2:]  # the newest, oldest first
            assert lobby["live_count"] == 4 and lobby["live_games"] == {"nim": 3, "tic-tac-toe": 1}
            assert [w["games"] for w in lobby["waiting"]] == [["pig"], ["nim"]]

            await watcher.send("lobby", game="nim")
            lobby = await watcher.expect("lobby", game="nim")
            assert [m["match"] for m in lobby["live"]] == [made[1], made[3]] and lobby["live_count"] == 3
            assert lobby["live_games"] == {"nim": 3, "tic-tac-toe": 1}
            assert lobby["waiting_count"] == 2 and all(w["games"] == ["nim"] for w in lobby["waiting"])

            await watcher.send("lobby", game="nimm")
            assert (await watcher.expect("error", ref="lobby"))["code"] == p.UNKNOWN_GAME
            for match in (made[2], made[3]):  # the tic-tac-toe match ends in no lobby of nim's
                await admin.send("abort_match", match=match)
            while not lobby["recent"]:  # the lobbies sent keep to nim, the game it follows
                lobby = await watcher.expect("lobby")
                assert lobby["game"] == "nim" and all(m["game"] == "nim" for m in lobby["live"] + lobby["recent"])
            assert [m["match"] for m in lobby["recent"]] == [made[3]] and lobby["live_count"] == 2

            await watcher.send("lobby", game=None)  # every game again
            lobby = await watcher.expect("lobby", game=None)
            assert sorted(m["match"] for m in lobby["recent"]) == sorted(made[2:])  # they ended in either order


def test_a_lobby_queued_for_a_busy_spectator_keeps_the_results_it_was_sent_with(tmp_path: Path) -> None:
    """A message waits in a busy connection's queue until its pump encodes it; by then a match
    may have ended, and a lobby holding the newer results beside its older live list showed
    a finished match as live and as a result at once."""
    server = ArenaServer(tmp_path / "arena.db")
    outgoing, queued = trio.open_memory_channel[dict[str, Any]](4)

    async def drained() -> bool:
        return True

    server.watchers.add(Watcher(Connection(outgoing, binary=False), drained, "127.0.0.1"))
    server._send_lobby()
    ended = {"match": "m" * 32, "game": "tic-tac-toe", "status": "finished", "players": ["a", "b"]}
    server._remember(Ended(ended, 7, held=False))
    assert queued.receive_nowait()["recent"] == []


async def refuse_writes(arena: Arena, refused: bool) -> None:
    """The writer's writes fail as on a full disk or a file system remounted read-only."""
    assert arena.server.writer is not None
    await arena.server.writer.call(Call(execute, f"PRAGMA query_only={int(refused)}"))


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_store_that_cannot_be_written_drops_the_paired_table_and_the_server_goes_on(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(store: Store, row: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    async with arena.bot("full1") as a, arena.bot("full2") as b:
        with monkeypatch.context() as patched:
            patched.setattr(Store, "open_match", full)
            await a.send("seek", games=["tic-tac-toe"])
            await b.send("seek", games=["tic-tac-toe"])
            await a.expect("seeking")
            await b.expect("seeking")
            with trio.fail_after(5):
                while arena.server.lobby.seeks or arena.server.live:  # paired, then failing to record the match
                    await trio.sleep(0.01)
        assert not any(msg["t"] == "match_start" for msg in a.seen + b.seen)  # (it crashed the server)
        for client in (a, b):  # their seeks are spent: unless told, they would wait for ever
            told = await client.expect("error")
            assert told["code"] == p.STORE_UNAVAILABLE and told["ref"] == "seek" and told["retry_after"] > 0
            assert "disk is full" in told["message"]
        await a.send("seek", games=["tic-tac-toe"])
        await b.send("seek", games=["tic-tac-toe"])
        await a.expect("match_start")


@pytest.mark.trio
async def test_admin_messages_the_store_cannot_write_get_store_unavailable_not_bad_message(arena: Arena) -> None:
    """They were answered bad_message, which tells an admin tool the fault is its own."""
    async with arena.bot("rw-a") as a, arena.bot("rw-b"), arena.admin() as admin:
        await refuse_writes(arena, True)
        for kind, fields in [
            ("register", {"name": "rw-new"}),
            ("rotate", {"name": "rw-a"}),
            ("create_match", {"bots": ["rw-a", "rw-b"], "game": "nim"}),
        ]:
            await admin.send(kind, **fields)
            error = await admin.expect("error", ref=kind)
            assert error["code"] == p.STORE_UNAVAILABLE and "readonly" in error["message"], error
        await admin.send("ping")  # the admin session goes on
        await admin.expect("pong")
        assert not any(msg["t"] == "match_start" for msg in a.seen)


@pytest.mark.trio
async def test_a_match_whose_end_the_store_cannot_take_is_void_saying_the_store_failed(arena: Arena) -> None:
    """Another program's lock on the store, or a full disk, voided the match as a "server fault" (found by QA)."""
    async with arena.bot("locked1") as a, arena.bot("locked2") as b:
        match = await start_direct_match(arena, "nim", ["locked1", "locked2"], config={"heaps": [1]}, seed=1)
        await a.expect("turn", match=match)
        await refuse_writes(arena, True)
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="take 1 from 1")
        for client in (a, b):
            end = await client.expect("match_end", match=match)
            assert end["status"] == "void" and end["detail"].startswith("the store failed: OperationalError: "), end


@pytest.mark.trio
async def test_a_match_that_cannot_be_voided_in_the_store_is_told_void_and_left_for_the_next_start(arena: Arena) -> None:
    async with arena.bot("late1") as a, arena.bot("late2") as b, arena.admin() as admin:
        await admin.send("create_match", bots=["late1", "late2"], game="nim")
        match = (await a.expect("match_start"))["match"]
        await refuse_writes(arena, True)
        await admin.send("abort_match", match=match)
        for client in (a, b):
            assert (await client.expect("match_end", match=match))["status"] == "void"
        assert arena.server.live == {}
    assert Store(arena.db, read_only=True).match(match)["status"] == "live"  # type: ignore[index]  # a start voids it


@pytest.mark.trio
async def test_a_match_ending_after_its_store_file_was_deleted_is_void_not_a_result_that_is_lost(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    token = await arena.register("gone-later")
    async with arena.bot("gone-a") as a, arena.bot("gone-b") as b:
        match = await start_direct_match(arena, "nim", ["gone-a", "gone-b"], config={"heaps": [1]}, seed=1)
        await a.expect("turn", match=match)
        arena.db.unlink()  # the server's connection still writes, to a file nobody will ever read again
        await a.send("move", match=match, seat=0, step=0, attempt=0, action="take 1 from 1")
        for client in (a, b):
            end = await client.expect("match_end", match=match)
            assert end["status"] == "void" and "deleted or replaced" in end["detail"]
    async with arena.socket() as ws:  # a login cannot be checked: refused in one logged line, not a traceback
        client = Client(ws)
        await client.send("hello", bot="gone-later", token=token)
        assert await until_closed(client) == 1011
    assert [record.getMessage() for record in caplog.records if record.name.startswith("websockets")] == []
    assert any("gone-later" in record.getMessage() and "deleted" in record.getMessage() for record in caplog.records)
    said = [record for record in caplog.records if match in record.getMessage()]  # lines, not tracebacks
    assert all(record.exc_info is None and record.levelname in ("INFO", "WARNING") for record in said)
    assert any("is void: the store failed" in record.getMessage() for record in said)
    status, body = await http_get(arena.url, "/health")  # a monitor learns why every match now ends void
    assert status == 503 and body["status"] == "unavailable" and body["error"] == "store_unavailable"
    assert "deleted or replaced" in body["message"] and body["read_only"] is False
    # the file by its name: where it lies on the server's disk is the log's (found by a security review)
    assert f"store file {arena.db.name} was" in body["message"] and str(arena.db.parent) not in json.dumps(body)
    assert str(arena.db.parent) not in end["detail"]


@pytest.mark.trio
async def test_health_says_unavailable_once_the_store_file_is_replaced_and_the_api_still_answers(arena: Arena) -> None:
    assert await http_get(arena.url, "/health") == (200, {"status": "ok", "protocol": p.PROTOCOL_VERSION, "read_only": False})
    arena.db.rename(arena.db.with_suffix(".moved"))
    fresh = arena.db.with_suffix(".fresh")  # made beside it: at the path, it would open the moved one's -wal
    Store(fresh).close()
    fresh.rename(arena.db)  # a readable store, but not the file the server writes to
    status, body = await http_get(arena.url, "/health")
    assert status == 503 and "deleted or replaced" in body["message"]
    assert (await http_get(arena.url, "/metrics"))[0] == 200


@pytest.mark.trio
async def test_a_spectator_asking_of_a_store_that_cannot_be_read_gets_an_error_and_stays(arena: Arena) -> None:
    async with arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        arena.db.unlink()
        for kind, fields in (("leaderboard", {"game": "nim"}), ("watch", {"match": "0" * 32}), ("replay", {"match": "0" * 32})):
            await watcher.send(kind, **fields)
            error = await watcher.expect("error")
            assert error["code"] == "store_unavailable" and "no store" in error["message"]
            assert str(arena.db.parent) not in error["message"]
        await watcher.send("ping")
        await watcher.expect("pong")


def test_a_client_going_is_logged_in_one_line_and_other_errors_keep_their_traceback() -> None:
    """websockets logged each client that hung up mid-write as an internal error, thirty lines
    of traceback, tens of them whenever a bot process stopped."""

    def record(message: str, error: BaseException) -> logging.LogRecord:
        try:
            raise error
        except BaseException:
            return logging.LogRecord("websockets.server", logging.ERROR, "x.py", 1, message, None, sys.exc_info())

    gone = record("unexpected internal error", trio.BrokenResourceError("socket connection broken: [Errno 32] Broken pipe"))
    assert CLIENT_GONE.filter(gone) and gone.levelno == logging.INFO and gone.exc_info is None
    assert gone.getMessage() == "a client went (unexpected internal error): socket connection broken: [Errno 32] Broken pipe"
    bug = record("unexpected internal error", KeyError("a bug"))
    assert CLIENT_GONE.filter(bug) and bug.levelno == logging.ERROR and bug.exc_info is not None


@pytest.mark.trio
async def test_a_socket_closed_in_this_process_has_nothing_unread() -> None:
    """A client gone without a close frame left the socket closed here (fd -1) before its handler
    asked: every such disconnect logged a traceback, ValueError from the ioctl (found by QA)."""
    from types import SimpleNamespace

    from arena.server import _unread

    near, far = trio.socket.socketpair()
    queue = SimpleNamespace(statistics=lambda: SimpleNamespace(current_buffer_used=0))
    ws = SimpleNamespace(recv_messages=SimpleNamespace(recv_frames=queue), send_lock=trio.Lock(), stream=trio.SocketStream(near))
    near.close()
    far.close()
    assert _unread(ws) is False  # type: ignore[arg-type]


@pytest.mark.trio
async def test_health_says_unavailable_while_the_store_cannot_be_written_and_ok_once_it_can(arena: Arena) -> None:
    """On a full disk every match ended void while /health said ok (found by QA)."""
    writer = arena.server.writer
    assert writer is not None
    ((pages,),) = await writer.call(Call(execute, "PRAGMA page_count"))
    await writer.call(Call(execute, f"PRAGMA max_page_count = {pages}"))  # the disk is full
    with pytest.raises(sqlite3.OperationalError, match="full"):
        await writer.call(Call(execute, "INSERT INTO meta VALUES ('filler', ?)", "x" * 100_000))
    status, body = await http_get(arena.url, "/health")
    assert status == 503 and body["message"].startswith("the store cannot be written: database or disk is full")
    await writer.call(Call(execute, "PRAGMA max_page_count = 1000000000"))  # room again
    await arena.register("room-again")
    assert (await http_get(arena.url, "/health"))[0] == 200


class TwoAddresses:
    """A resolver for which ``dual.test`` is ::1 and 127.0.0.1, as ``localhost`` is on most
    systems, and ``twice.test`` is 127.0.0.1 twice, as a hosts file's repeated line makes it."""

    async def getaddrinfo(self, host: bytes | str, port: Any, *_: int) -> Any:
        tcp = (trio.socket.SOCK_STREAM, trio.socket.IPPROTO_TCP, "")
        v4 = (trio.socket.AF_INET, *tcp, ("127.0.0.1", int(port)))
        if host in (b"twice.test", "twice.test"):
            return [v4, v4]
        assert host in (b"dual.test", "dual.test"), host
        return [(trio.socket.AF_INET6, *tcp, ("::1", int(port), 0, 0)), v4]

    async def getnameinfo(self, sockaddr: Any, flags: int) -> Any:
        raise NotImplementedError


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.trio
@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
@pytest.mark.parametrize("taken_once", [False, True], ids=["free", "taken-once"])
async def test_port_0_on_a_name_of_two_addresses_listens_on_one_port_on_both(
    monkeypatch: pytest.MonkeyPatch, taken_once: bool
) -> None:
    """Each address got a port of its own, and the one printed reached only one of them (found
    by a QA helper). ``taken_once``: the port the first address got is taken on the other, once."""
    trio.socket.set_custom_hostname_resolver(TwoAddresses())
    if taken_once:
        real, refused = trio.open_tcp_listeners, []

        async def once_taken(port: int, *, host: str) -> list[trio.SocketListener]:
            if port and not refused:
                refused.append(port)
                raise OSError(errno.EADDRINUSE, "Address already in use")
            return await real(port, host=host)

        monkeypatch.setattr(trio, "open_tcp_listeners", once_taken)
    listeners = await open_listeners("dual.test", 0)
    try:
        bound = sorted((listener.socket.getsockname()[0], listener.socket.getsockname()[1]) for listener in listeners)
        assert [address for address, _ in bound] == ["127.0.0.1", "::1"]
        assert bound[0][1] == bound[1][1] != 0
    finally:
        for listener in listeners:
            await listener.aclose()


def damage_bots_table(db: Path) -> None:
    """A store whose bots table's root page is overwritten: the schema still reads, every scan of the bots fails."""
    store = Store(db)
    for i in range(300):
        store.register_bot(f"bot-{i:03d}")
    root = store.conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'bots'").fetchone()[0]
    page = store.conn.execute("PRAGMA page_size").fetchone()[0]
    store.close()
    with db.open("r+b") as file:
        file.seek((root - 1) * page)
        file.write(b"\xff" * page)


@pytest.mark.trio
@pytest.mark.parametrize("found_by", ["reader", "writer"])
async def test_a_store_found_damaged_makes_health_say_so_for_good(
    arena_factory: ArenaFactory, tmp_path: Path, found_by: str
) -> None:
    """A damaged store answered /api with "database disk image is malformed" while /health
    said "ok", and matches went on being written into it (found by a QA helper)."""
    db = tmp_path / "damaged.db"
    damage_bots_table(db)
    arena = await arena_factory(db=db)
    if found_by == "reader":
        assert (await http_get(arena.url, "/api/bots"))[0] == 503
    else:
        with pytest.raises(sqlite3.DatabaseError, match="malformed"):
            await arena.register("one-more")
    for _ in range(2):  # and stays so: reads of other tables still succeed
        status, body = await http_get(arena.url, "/health")
        assert (status, body["status"], body["error"]) == (503, "unavailable", p.STORE_UNAVAILABLE)
        assert body["message"] == (
            "the store file is damaged (database disk image is malformed): stop the server, and serve a backup of it"
        )
        assert (await http_get(arena.url, "/api/matches"))[0] == 200


@pytest.mark.trio
async def test_port_0_on_a_name_listing_one_address_twice_still_listens() -> None:
    """One address cannot take one port twice: each listener keeps its own, as before (found by a QA helper)."""
    trio.socket.set_custom_hostname_resolver(TwoAddresses())
    listeners = await open_listeners("twice.test", 0)
    try:
        assert len(listeners) == 2 and all(listener.socket.getsockname()[0] == "127.0.0.1" for listener in listeners)
    finally:
        for listener in listeners:
            await listener.aclose()


@pytest.mark.trio
async def test_the_welcomes_limits_are_the_documented_ones_with_their_documented_defaults(arena: Arena) -> None:
    """The handshake's timeout, a server-wide setting, went out in every welcome, undocumented (found by a review)."""
    doc = (Path(__file__).parents[2] / "docs" / "PROTOCOL.md").read_text()
    documented = json.loads(re.search(r'alice ← (\{"t":"welcome".*\})', doc)[1])["limits"]  # type: ignore[index]
    async with arena.bot("counted") as bot:
        assert list(bot.welcome["limits"]) == list(documented)
    assert Limits().to_wire() == documented

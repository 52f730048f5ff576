"""The bot SDK (``run_bot``) against the real server on loopback: dropped connections, counts."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
import math
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pytest
import trio
import trio.testing
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.http11 import Response
from websockets.trio.server import ServerConnection, serve

from arena import protocol as p
from arena import server as server_module
from arena.seats import Move, Policy, SeatForfeit, Turn
from arena.server import Limits, bound_port, open_listeners
from arena.sessions import BotSession
from arena.store import Store
from bots import client
from bots.client import (
    CHALLENGE_RETRY_S,
    CUT,
    RESULTS_KEPT,
    BotRun,
    BotStopped,
    _within_cap,
    backoff,
    connect_failure,
    end_said,
    run_bot,
)
from tests.conftest import Arena, ArenaFactory


async def wait_until(condition, timeout: float = 10) -> None:  # type: ignore[no-untyped-def]
    with trio.fail_after(timeout):
        while not condition():
            await trio.sleep(0.01)


class RecordedBackoff:
    """Reconnection delays growing by ``step`` each time, every backoff started kept apart."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.backoffs: list[list[float]] = []

    def __call__(self) -> Iterator[float]:
        self.backoffs.append([])
        for count in itertools.count(1):
            self.backoffs[-1].append(round(self.step * count, 9))
            yield self.step * count


def first_legal(turn: Turn) -> str:
    assert turn.legal_actions is not None
    return turn.legal_actions[0]


async def drop_mid_turn(
    arena_factory: ArenaFactory, slow: Policy, thinking: trio.Event, release: trio.Event, *, until_back: bool
) -> dict[str, Any]:
    """A tic-tac-toe match of ``slow`` (seat 0) against a quick bot; once ``slow`` is thinking
    its connection is dropped, and ``release`` is set when the bot is back (``until_back``)
    or while it is still away. Returns the stored match."""
    arena = await arena_factory(limits=Limits(grace_ms=10_000))
    names = ["slow", "quick"]
    tokens = [await arena.register(name) for name in names]
    session = arena.server.sessions
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for name, token, policy in zip(names, tokens, [slow, first_legal], strict=True):
                run = functools.partial(run_bot, policy, arena.url, name, token, games=[], matches=1)
                nursery.start_soon(functools.partial(run, retry_delays=lambda: itertools.repeat(0.5)))
            await arena.connected(names)
            async with arena.admin() as admin:
                await admin.send("create_match", bots=names, game="tic-tac-toe", clock={"move_ms": 4_000})
                match = (await admin.expect("match_created"))["match"]
            await thinking.wait()
            dropped = session["slow"].connection
            assert dropped is not None
            dropped.close(p.CLOSE_GOING_AWAY, "a proxy restarts")
            if until_back:
                await wait_until(lambda: session["slow"].connection not in (None, dropped))
            else:  # closed: what the policy sends now cannot go out
                await wait_until(lambda: session["slow"].connection is None)
            release.set()
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None
    return record


@pytest.mark.trio
async def test_a_move_thought_out_while_the_connection_dropped_is_sent_after_the_resume(arena_factory: ArenaFactory) -> None:
    """The turn was read before the drop, so the resume does not replay it: the answer the
    policy was working on must still reach the server, else the seat loses on time."""
    thinking, release = trio.Event(), trio.Event()

    async def thinker(turn: Turn) -> str:
        if not thinking.is_set():
            thinking.set()
            await release.wait()
        return first_legal(turn)

    record = await drop_mid_turn(arena_factory, thinker, thinking, release, until_back=True)
    assert (record["status"], record["reason"]) == ("finished", "complete"), record


@pytest.mark.trio
async def test_a_match_forfeited_while_the_bot_was_away_is_reported_from_its_record(arena_factory: ArenaFactory) -> None:
    """Away past the reconnection window, the seat forfeited; back with its resume refused, the
    SDK counted the match lost to a restart and its end reached neither the results nor the
    CLI's line (found by a QA helper)."""
    arena = await arena_factory(limits=Limits(grace_ms=300))
    names = ["away", "stays"]
    tokens = [await arena.register(name) for name in names]
    thinking = trio.Event()
    runs: dict[str, BotRun] = {}
    told: list[dict[str, Any]] = []

    async def thinker(turn: Turn) -> str:
        thinking.set()
        await trio.sleep_forever()  # cancelled once the bot is back and the match is gone
        raise AssertionError

    async def play(name: str, token: str, policy: Policy, **options: Any) -> None:
        runs[name] = await run_bot(policy, arena.url, name, token, games=[], matches=1, **options)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            away = functools.partial(play, retry_delays=lambda: itertools.repeat(1.0), on_message=told.append)
            nursery.start_soon(away, "away", tokens[0], thinker)
            nursery.start_soon(play, "stays", tokens[1], first_legal)
            await arena.connected(names)
            async with arena.admin() as admin:
                await admin.send("create_match", bots=names, game="tic-tac-toe", clock={"move_ms": 4_000})
                match = (await admin.expect("match_created"))["match"]
            await thinking.wait()
            connection = arena.server.sessions["away"].connection
            assert connection is not None
            connection.close(p.CLOSE_GOING_AWAY, "a proxy restarts")
    [end] = runs["away"].results
    assert runs["away"].lost == [] and [msg for msg in told if msg["t"] == "match_end"] == [end]
    assert (end["match"], end["seat"], end["status"], end["reason"]) == (match, 0, "finished", "disconnect")
    assert end["outcomes"] == ["forfeit", "win"] == runs["stays"].results[0]["outcomes"]


@pytest.mark.trio
async def test_a_move_lost_in_flight_when_the_connection_drops_is_sent_again_after_the_resume(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written to the socket, the move was taken for delivered; the connection dropped before
    the server read it, the resume (rightly) did not replay the turn, and the seat lost on time."""
    handle_move = arena.server._on_move
    lost: list[dict[str, Any]] = []

    def lose_the_first(session: Any, msg: dict[str, Any]) -> None:
        if session.bot == "unlucky" and not lost:  # as a proxy cut between the bot and the server
            lost.append(msg)
            session.connection.close(p.CLOSE_GOING_AWAY, "a proxy restarts")
            return
        handle_move(session, msg)

    monkeypatch.setattr(arena.server, "_on_move", lose_the_first)
    record = await play_admin_match(
        arena, {"unlucky": first_legal, "other": first_legal}, game="tic-tac-toe", clock={"move_ms": 5_000}
    )
    assert lost and (record["status"], record["reason"]) == ("finished", "complete"), record
    assert record["turns"][0]["seat"] == 0 and record["turns"][0]["action"] == lost[0]["action"]


@pytest.mark.trio
async def test_a_bot_resumed_with_its_match_start_in_the_replay_seeks_no_more_than_it_asked(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeking at once on the resumed welcome, before reading the match_start replayed after
    it, a bot of matches=1 was seated in a second match."""
    deliver = BotSession._deliver
    cut: list[str] = []

    def cut_before_match_start(session: BotSession, out: dict[str, Any]) -> None:
        if session.bot == "resumer" and out["t"] == "match_start" and not cut:  # kept for the resume, never read
            cut.append(out["match"])
            assert session.connection is not None
            session.connection.close(p.CLOSE_GOING_AWAY, "a proxy restarts")
        deliver(session, out)

    monkeypatch.setattr(BotSession, "_deliver", cut_before_match_start)
    tokens = [await arena.register(name) for name in ("resumer", "seeker")]
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(run_bot, first_legal, arena.url, "seeker", tokens[1], games=["nim"], matches=3))
            run = await run_bot(first_legal, arena.url, "resumer", tokens[0], games=["nim"], matches=1)
            await trio.sleep(0.2)  # a second match, had the bot sought again, starts now
            nursery.cancel_scope.cancel()
    assert cut and run.reconnects == 1 and [end["match"] for end in run.results] == cut
    assert Store(arena.db, read_only=True).count("seats", bot="resumer") == 1


@pytest.mark.trio
async def test_a_match_made_by_the_admin_while_seeking_withdraws_the_seek_so_matches_stays_exact(arena: Arena) -> None:
    """A match the bot did not seek (the admin's) leaves its seek waiting in the lobby: kept
    there, it pairs with the next seeker, and a run of matches=1 plays two."""
    token = await arena.register("counted")
    runs: list[BotRun] = []

    async def play() -> None:
        runs.append(await run_bot(first_legal, arena.url, "counted", token, games=["nim"], matches=1))

    lobby = arena.server.lobby
    with trio.fail_after(20):
        async with arena.bot("opponent") as opponent, arena.admin() as admin, trio.open_nursery() as nursery:
            nursery.start_soon(play)
            await wait_until(lambda: any(s.bot == "counted" for s in lobby.seeks))
            await admin.send("create_match", bots=["counted", "opponent"], game="nim")
            start = await opponent.expect("match_start")
            await wait_until(lambda: not any(s.bot == "counted" for s in lobby.seeks), timeout=3)
            while (msg := await opponent.receive())["t"] != "match_end":
                if msg["t"] == "turn":
                    fields = {key: msg[key] for key in ("match", "seat", "step", "attempt")}
                    await opponent.send("move", action=msg["legal"][0], **fields)
    assert [end["match"] for end in runs[0].results] == [start["match"]]


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_bot_whose_table_could_not_start_seeks_again_when_told_and_plays(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store failed to record the table (a full disk, for a while): its seeks are spent, and
    the server says so with a time to wait; the SDK seeks again then, and the bots play."""
    monkeypatch.setattr(server_module, "TABLE_RETRY_S", 0.2)
    failures = [sqlite3.OperationalError("database or disk is full")]
    open_match = Store.open_match

    def flaky(store: Store, row: Any) -> Any:
        if failures:
            raise failures.pop()
        return open_match(store, row)

    monkeypatch.setattr(Store, "open_match", flaky)
    names = ["spent1", "spent2"]
    tokens = [await arena.register(name) for name in names]
    runs: list[BotRun] = []

    async def play(name: str, token: str) -> None:
        runs.append(await run_bot(first_legal, arena.url, name, token, games=["nim"], matches=1))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for name, token in zip(names, tokens, strict=True):
                nursery.start_soon(play, name, token)
    assert not failures and len(runs) == 2
    for run in runs:
        assert [error["code"] for error in run.errors] == [p.STORE_UNAVAILABLE] and len(run.results) == 1


@pytest.mark.trio
async def test_a_bot_told_a_seek_was_spent_while_another_waits_seeks_afresh_and_keeps_one(arena: Arena) -> None:
    """The spent seek need not be the one waiting now: the error is replayed after a resume, whose
    welcome the bot already sought again after, or comes after an admin's match made it seek
    again. Seeking once more on top of the seek waiting seated it in more matches than asked."""
    token = await arena.register("once")
    lobby = arena.server.lobby
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(run_bot, first_legal, arena.url, "once", token, games=["nim"], matches=1))
            await wait_until(lambda: any(s.bot == "once" for s in lobby.seeks))
            [waiting] = lobby.seeks
            arena.server.sessions["once"].send(
                "error", code=p.STORE_UNAVAILABLE, message="a table could not start", ref="seek", retry_after=0.05
            )
            await wait_until(lambda: [s.id for s in lobby.seeks] != [waiting.id], timeout=3)  # sought afresh
            await trio.sleep(0.3)  # no second seek follows
            assert [s.bot for s in lobby.seeks] == ["once"]
            nursery.cancel_scope.cancel()


async def play_admin_match(arena: Arena, policies: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """One match made by the admin between SDK bots (seats in the order given); its record."""
    names = list(policies)
    tokens = [await arena.register(name) for name in names]
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for name, token in zip(names, tokens, strict=True):
                nursery.start_soon(lambda n=name, t=token: run_bot(policies[n], arena.url, n, t, games=[], matches=1))
            await arena.connected(names)
            async with arena.admin() as admin:
                await admin.send("create_match", bots=names, **fields)
                match = (await admin.expect("match_created"))["match"]
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None
    return record


@pytest.mark.trio
async def test_a_pause_for_spectators_never_costs_the_match_on_time(arena: Arena) -> None:
    """``delay_ms`` longer than a move's time used to lose the first move on time; the pause
    takes at most half of it, and the policy is told what is left."""
    names = ["paced-a", "paced-b"]
    tokens = [await arena.register(name) for name in names]
    deadlines: list[int] = []

    def policy(turn: Turn) -> str:
        assert turn.deadline_ms is not None and turn.legal_actions is not None
        deadlines.append(turn.deadline_ms)
        return turn.legal_actions[0]

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for name, token in zip(names, tokens, strict=True):
                nursery.start_soon(
                    functools.partial(run_bot, policy, arena.url, name, token, games=[], matches=1, delay_ms=5_000)
                )
            await arena.connected(names)
            async with arena.admin() as admin:
                await admin.send("create_match", bots=names, game="tic-tac-toe", clock={"move_ms": 400, "bank_ms": 0})
                match = (await admin.expect("match_created"))["match"]
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["reason"] == "complete", record
    assert deadlines and all(0 < ms <= 200 for ms in deadlines), deadlines


@pytest.mark.trio
@pytest.mark.parametrize(
    ("junk", "cause"),
    [
        # the types right, the values not: the server answered bad_message and the seat lost on time
        (Move(action="a0", logprobs=["x"]), "ProtocolError: 'move.logprobs' must be a list of numbers"),  # type: ignore[list-item]
        (Move(action="a0", tokens_in=-1), "ProtocolError: 'move.tokens_in' must be from 0 to 1,000,000,000, got -1"),
        (Move(action="a0", tokens_in=np.float32(12)), "ProtocolError: 'move.tokens_in' must be an integer, got a number"),
        (Move(action=7), "ProtocolError: 'move.action' must be"),  # type: ignore[arg-type]
    ],
)
async def test_a_move_that_cannot_go_on_the_wire_resigns_naming_why(arena: Arena, junk: Move, cause: str) -> None:
    """Such a move used to end the whole run with a traceback (unencodable) or be refused by
    the server while the bot waited for the clock to run out (a wrong type)."""

    def first(turn: Turn) -> str:
        assert turn.legal_actions is not None
        return turn.legal_actions[0]

    policies = {"junk": lambda turn: junk, "fine": first}
    record = await play_admin_match(arena, policies, game="tic-tac-toe", clock={"move_ms": 3_000})
    assert (record["reason"], record["forfeit_seat"]) == ("resign", 0)
    assert record["detail"].startswith(f"junk resigned: crash: {cause}")


@pytest.mark.trio
async def test_numpy_numbers_in_a_moves_extras_are_sent_and_stored_as_numbers(arena: Arena) -> None:
    """A model's int64 token counts and float32 log-probs resigned every match (found by a QA helper)."""

    def numpy_extras(turn: Turn) -> Move:
        assert turn.legal_actions is not None
        logprobs = np.array([-0.5, -np.inf], dtype=np.float32)
        counts = {"tokens_in": np.int64(12), "tokens_out": np.uint32(3)}
        return Move(turn.legal_actions[0], **counts, cost=np.float32(0.25), logprobs=logprobs)

    record = await play_admin_match(arena, {"numpy": numpy_extras, "plain": first_legal}, game="tic-tac-toe")
    assert (record["status"], record["reason"]) == ("finished", "complete")
    mine = [turn for turn in record["turns"] if turn["seat"] == 0]
    assert mine and all(
        (turn["tokens_in"], turn["tokens_out"], turn["cost"], turn["logprobs"]) == (12, 3, 0.25, [-0.5, -math.inf])
        for turn in mine
    )


@pytest.mark.trio
async def test_a_policy_returning_none_is_a_reply_with_no_action_and_is_logged(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    """An author who forgot a return lost every match with no word of why."""
    record = await play_admin_match(arena, {"forgetful": lambda turn: None, "plain": first_legal}, game="tic-tac-toe")
    assert (record["reason"], record["forfeit_seat"]) == ("illegal", 0)
    assert "no action" in record["detail"]
    said = [r.getMessage() for r in caplog.records if "the policy returned None" in r.getMessage()]
    assert len(said) == 3  # each attempt: the first and its two retries


@pytest.mark.trio
async def test_a_game_named_by_a_string_is_one_game_not_its_letters(arena: Arena) -> None:
    token = await arena.register("solo")
    with trio.fail_after(20):
        run = await run_bot(first_legal, arena.url, "solo", token, games="tic-tac-toe", matches=2, self_play=True)  # type: ignore[arg-type]
    assert [end["reason"] for end in run.results] == ["complete", "complete"]


@pytest.mark.trio
async def test_ctrl_c_ends_run_bot_with_a_plain_keyboard_interrupt(arena: Arena) -> None:
    """It came wrapped in trio's exception groups, which `except KeyboardInterrupt` misses (found by a QA helper)."""
    token = await arena.register("interrupted")

    async def interrupted(turn: Turn) -> str:
        raise KeyboardInterrupt

    with trio.fail_after(20), pytest.raises(KeyboardInterrupt):
        await run_bot(interrupted, arena.url, "interrupted", token, games=["tic-tac-toe"], self_play=True)


@pytest.mark.trio
async def test_the_pacer_sends_messages_in_the_order_they_came_to_wait(autojump_clock: trio.testing.MockClock) -> None:
    """Woken together, the waiters raced for each token: a self-play match's move waited 16 s,
    past its deadline, at a mean wait of 1.4 s (found by a QA helper)."""
    pacer = client.Pacer({"rate": 5, "burst": 4})  # 4 messages a second, bursts of 2
    waits: list[float] = []

    async def sender() -> None:
        for _ in range(5):
            asked = trio.current_time()
            await pacer.wait()
            waits.append(trio.current_time() - asked)

    async with trio.open_nursery() as nursery:
        for _ in range(8):
            nursery.start_soon(sender)
    assert len(waits) == 40
    assert max(waits) <= 8 / 4 + 0.01  # never behind more than the others waiting (8, at 4 a second)


@pytest.mark.trio
async def test_a_move_with_a_reply_past_the_frame_cap_still_plays_its_action(arena: Arena) -> None:
    """A reasoning model's long reply made the move frame too large: the server dropped it and
    the seat lost on time. The head of the reply goes instead; the action is at its end."""
    thinking = "Let me think about every cell in turn. " * 3_000  # about 120 KB, past the 64 KiB soft cap
    prompt = json.dumps([{"role": "user", "content": "Play."}])

    def verbose(turn: Turn) -> Move:
        assert turn.legal_actions is not None
        return Move(action=turn.legal_actions[0], raw=f"{thinking}[{turn.legal_actions[0]}]", prompt=prompt, tokens_out=30_000)

    def first(turn: Turn) -> str:
        assert turn.legal_actions is not None
        return turn.legal_actions[0]

    record = await play_admin_match(arena, {"verbose": verbose, "terse": first}, game="tic-tac-toe", clock={"move_ms": 3_000})
    assert (record["status"], record["reason"]) == ("finished", "complete")
    mine = [turn for turn in record["turns"] if turn["seat"] == 0]
    assert mine and all(turn["accepted"] and turn["tokens_out"] == 30_000 for turn in mine)
    for turn in mine:
        assert turn["prompt"] == prompt and len(turn["raw"].encode()) < 64 * 1024
        assert turn["raw"].endswith(f"[{turn['action']}]") and turn["raw"].startswith(CUT)


@pytest.mark.trio
async def test_the_bot_endpoints_address_serves_as_the_servers_url(arena: Arena) -> None:
    """PROTOCOL.md gives bots ws://host:port/bot; the SDK takes it as well as the base URL."""
    names = ["by-base", "by-endpoint"]
    tokens = [await arena.register(name) for name in names]
    runs: dict[str, BotRun] = {}

    async def play(name: str, token: str, url: str) -> None:
        runs[name] = await run_bot(first_legal, url, name, token, games=["nim"], matches=1)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, names[0], tokens[0], arena.url + "/")
            nursery.start_soon(play, names[1], tokens[1], arena.url + "/bot")
    assert [end["status"] for name in names for end in runs[name].results] == ["finished", "finished"]


@pytest.mark.trio
async def test_a_resignation_decided_while_the_connection_was_down_is_sent_after_the_resume(arena_factory: ArenaFactory) -> None:
    """As a move: lost with the connection, the seat lost on time instead of by resigning."""
    thinking, release = trio.Event(), trio.Event()

    async def quitter(turn: Turn) -> str:
        thinking.set()
        await release.wait()
        raise SeatForfeit("resign", "out of ideas")

    record = await drop_mid_turn(arena_factory, quitter, thinking, release, until_back=False)
    assert (record["reason"], record["forfeit_seat"]) == ("resign", 0), record  # the slow seat


@pytest.mark.trio
async def test_the_reconnection_backoff_starts_anew_after_a_connection_that_logged_in(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It only grew: a bot whose proxy cut it every few seconds soon waited 5 s each time, past
    a short reconnection window, and lost its match for disconnection."""
    monkeypatch.setattr(client, "STABLE_S", 0.2)
    delays = RecordedBackoff(0.05)
    token = await arena.register("cut")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(run_bot, first_legal, arena.url, "cut", token, games=[], retry_delays=delays))
        for _ in range(3):  # cut once logged in and working, each time
            await arena.connected(["cut"])
            await trio.sleep(0.25)
            dropped = arena.server.sessions["cut"].connection
            assert dropped is not None
            dropped.close(p.CLOSE_GOING_AWAY, "a proxy restarts")
            await wait_until(functools.partial(lambda gone: arena.server.sessions["cut"].connection not in (None, gone), dropped))
        nursery.cancel_scope.cancel()
    assert delays.backoffs == [[0.05]] * 3  # one delay after each cut, the first of a backoff started anew


def test_a_stopped_run_counts_the_matches_it_lost_while_away() -> None:
    """'after 0 matches' was said of a run whose 5 matches were lost while the server was away (found by a QA helper)."""
    assert BotRun(ended=1).played_said() == "1 match"
    assert BotRun(ended=0, lost=["m1", "m2"]).played_said() == "0 matches and 2 lost while away"


def test_reconnection_delays_double_and_are_spread_so_bots_dropped_together_come_back_apart() -> None:
    """Every bot of a restarted server retried at 0.1, 0.2, 0.4 ... s in the same millisecond."""
    steps = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    runs = [list(itertools.islice(backoff(), len(steps))) for _ in range(2)]
    for delays in runs:
        assert all(step / 2 <= delay <= step * 1.5 for step, delay in zip(steps, delays, strict=True))
    assert runs[0] != runs[1]


def test_a_refused_handshake_says_the_servers_reason() -> None:
    """A bot owner could not tell a full server from one address holding too many connections."""
    body = b'{"error": "server_full", "message": "15 connections are open from 127.0.0.1"}'
    refused = InvalidStatus(Response(503, "Service Unavailable", Headers(), body))
    assert connect_failure(refused).endswith("HTTP 503: 15 connections are open from 127.0.0.1")
    assert connect_failure(InvalidStatus(Response(404, "Not Found", Headers(), b"<html>"))).endswith("HTTP 404")


@pytest.mark.parametrize("binary", [True, False])
def test_a_reply_of_wide_characters_over_the_cap_keeps_the_tail_that_fits(binary: bool) -> None:
    """Bytes were taken for characters: a reply of 70,000 'é' kept nothing, and a raw reply
    was dropped for a prompt that had to go anyway."""
    move = {"match": "m", "seat": 0, "step": 0, "attempt": 0, "action": "a1"}
    kept = _within_cap({**move, "raw": "é" * 70_000 + "[a1]"}, binary, 65_536)
    framed = p.encode(p.message("move", **kept), binary)
    assert kept["raw"].startswith(CUT) and kept["raw"].endswith("é[a1]") and len(kept["raw"]) > 10_000
    assert 65_000 < len(framed if isinstance(framed, bytes) else framed.encode()) <= 65_536
    kept = _within_cap({**move, "raw": "short [a1]", "prompt": "p" * 200_000}, binary, 65_536)
    assert kept["raw"] == "short [a1]" and "prompt" not in kept


@pytest.mark.parametrize("binary", [True, False])
def test_log_probs_no_frame_holds_go_and_the_move_is_still_played(binary: bool, caplog: pytest.LogCaptureFixture) -> None:
    """8,000 log-probs (allowed: up to 16,384) are over a 64 KiB frame alone: the move raised
    and the bot resigned a legal move (found by a QA helper). Those that fit are kept."""
    move = {"match": "m", "seat": 0, "step": 0, "attempt": 0, "action": "a1", "raw": "reply [a1]"}
    with caplog.at_level(logging.WARNING, logger="arena.bot"):
        kept = _within_cap({**move, "logprobs": [-0.123456789] * 8_000}, binary, 65_536)
    assert kept == move
    said = "match m step 0: its 8,000 log-probs are left out, for the move to fit the soft cap of 65536 bytes"
    assert caplog.messages == [said]
    assert _within_cap({**move, "logprobs": [-0.5] * 1_000}, binary, 65_536)["logprobs"] == [-0.5] * 1_000


@pytest.mark.trio
async def test_a_bot_told_to_stop_plays_out_its_match_and_takes_no_other(arena: Arena) -> None:
    """Walking away mid-match made the opponent wait out the reconnection window, and the
    match was scored a forfeit; told to stop, the bot withdraws its seek and finishes."""
    tokens = {name: await arena.register(name) for name in ("stops", "stays")}
    stop = trio.Event()
    runs: dict[str, BotRun] = {}

    async def play(name: str, **options: Any) -> None:
        runs[name] = await run_bot(first_legal, arena.url, name, tokens[name], games=["tic-tac-toe"], **options)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(play, "stops", stop=stop, delay_ms=100))
        nursery.start_soon(functools.partial(play, "stays", matches=1))
        # in its match, "stops" seeks the next one, which nobody takes
        await wait_until(lambda: arena.server.live and arena.server.lobby.waiting_of("stops") == 1)
        stop.set()
        await wait_until(lambda: arena.server.lobby.waiting_of("stops") == 0)
        assert arena.server.live and "stops" not in runs  # withdrawn while the match is still played
        await wait_until(lambda: len(runs) == 2)
    (end,) = runs["stops"].results
    assert (end["status"], end["reason"]) == ("finished", "complete") and runs["stays"].results[0]["match"] == end["match"]


@pytest.mark.trio
async def test_a_bot_told_to_stop_while_only_seeking_returns_at_once(arena: Arena) -> None:
    token = await arena.register("idle")
    stop = trio.Event()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            result: list[BotRun] = []

            async def play() -> None:
                result.append(await run_bot(first_legal, arena.url, "idle", token, games=["nim"], stop=stop))

            nursery.start_soon(play)
            await wait_until(lambda: arena.server.lobby.waiting_of("idle") == 1)
            stop.set()
    assert result[0].results == [] and result[0].reconnects == 0


class Peer:
    """The server's side of one connection, scripted message by message: orders of messages
    that the protocol allows and the real server seldom shows."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.seq = 0

    async def send(self, kind: str, **fields: Any) -> None:
        self.seq += 1
        await self.ws.send(p.encode(p.message(kind, seq=self.seq, **fields), False))

    async def expect(self, kind: str) -> dict[str, Any]:
        msg = p.decode(await self.ws.recv())
        assert msg["t"] == kind, (msg, kind)
        return msg

    async def log_in(self) -> None:
        """The hello answered with a fresh session, and the replay after it (none) read."""
        await self.expect("hello")
        await self.send("welcome", session="s", bot="a", resumed=False, limits={})
        await self.expect("ping")
        await self.send("pong")


@asynccontextmanager
async def scripted_server(script: Callable[[Peer], Awaitable[None]]) -> AsyncIterator[str]:
    """Runs ``script`` for each connection; a script that fails (the bot said something else)
    fails the test, not only the connection."""
    failures: list[BaseException] = []

    async def handler(ws: ServerConnection) -> None:
        try:
            await script(Peer(ws))
        except Exception as error:
            failures.append(error)
            raise

    async with trio.open_nursery() as nursery:
        listeners = await open_listeners("127.0.0.1", 0)
        await nursery.start(functools.partial(serve, handler, listeners=listeners))
        yield f"ws://127.0.0.1:{bound_port(listeners)}"
        nursery.cancel_scope.cancel()
    assert not failures, failures


START = {
    "game": "nim",
    "players": ["a", "b"],
    "rules": "",
    "config": {},
    "max_retries": 2,
    "clock": {"move_ms": 9000, "bank_ms": 0},
}
ENDED = {"status": "finished", "reason": "complete", "detail": "", "returns": [1.0, -1.0], "outcomes": None, "ranks": None}


async def turn_and_end(peer: Peer, match: str) -> None:
    await peer.send("turn", match=match, seat=0, step=0, attempt=0, observation={"text": "heaps"}, legal=["1"], deadline_ms=9000)
    await peer.expect("move")
    await peer.send("match_end", match=match, seat=0, forfeit_seat=None, **ENDED)


@pytest.mark.trio
async def test_a_stopping_bot_waits_for_the_answer_to_its_own_cancel_not_an_earlier_one() -> None:
    """On each match_start the SDK cancels its seek and seeks again; stopped before that
    cancel was answered, its answer ended the wait for the stop's own cancel, and a match
    paired from the new seek was left to lose by disconnection."""
    stop = trio.Event()

    async def script(peer: Peer) -> None:
        await peer.log_in()
        await peer.expect("seek")
        await peer.send("match_start", match="m1", seat=0, **START)
        await peer.expect("cancel")  # the SDK's own, then its next seek
        await peer.expect("seek")
        stop.set()
        await peer.expect("cancel")  # the stop's
        await peer.send("cancelled", count=0)  # the first cancel's answer
        await peer.send("match_end", match="m1", seat=0, forfeit_seat=None, **ENDED)
        await peer.send("match_start", match="m2", seat=0, **START)  # paired before the stop's cancel came
        await peer.send("cancelled", count=0)
        await turn_and_end(peer, "m2")

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            run = await run_bot(first_legal, url, "a", "token", games=["nim"], stop=stop)
    assert [end["match"] for end in run.results] == ["m1", "m2"]


@pytest.mark.trio
async def test_a_bot_stopped_before_the_replay_after_a_fresh_welcome_plays_the_match_it_brings() -> None:
    """A fresh session (the old one lost: a restarted bot, an outbox overrun) is sent every
    live match again after its welcome; stopped in between, the SDK found no match and left."""
    stop = trio.Event()

    async def script(peer: Peer) -> None:
        await peer.expect("hello")
        await peer.send("welcome", session="s", bot="a", resumed=False, limits={})
        await peer.expect("ping")
        stop.set()
        await trio.testing.wait_all_tasks_blocked()  # the stop is taken in before the replay comes
        await peer.send("match_start", match="m1", seat=0, **START)
        await peer.send("pong")
        await turn_and_end(peer, "m1")

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            run = await run_bot(first_legal, url, "a", "token", games=["nim"], stop=stop)
    assert [end["match"] for end in run.results] == ["m1"]


@pytest.mark.trio
async def test_a_stopping_bot_cut_off_from_its_server_gives_up_after_the_reconnection_window() -> None:
    """It retried for ever: past the window, the server has forfeited (or, restarted, voided)
    what it was playing, so nothing is left to play out."""
    stop = trio.Event()
    connections = 0

    async def script(peer: Peer) -> None:
        nonlocal connections
        connections += 1
        if connections > 1:  # the server's process is gone: no session on it will ever log in
            await peer.ws.aclose(1011, "gone")
            return
        await peer.expect("hello")
        await peer.send("welcome", session="s", bot="a", resumed=False, limits={"grace_ms": 300})
        await peer.expect("ping")
        await peer.send("match_start", match="m1", seat=0, **START)
        await peer.send("pong")
        await peer.expect("seek")
        stop.set()
        await peer.expect("cancel")  # with a match in play it stays to play it, until its server goes

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            run = await run_bot(
                first_legal, url, "a", "token", games=["nim"], stop=stop, retry_delays=lambda: itertools.repeat(0.05)
            )
    assert run.results == [] and connections > 2
    assert run.lost == ["m1"]  # in neither the results nor the lost matches (found by a QA helper)


@pytest.mark.trio
@pytest.mark.parametrize("self_play", [False, True], ids=["others", "itself-too"])
async def test_at_once_caps_the_matches_a_bot_plays_at_the_same_time(arena: Arena, self_play: bool) -> None:
    """Seeking again at each match_start, a bot took a new match beside every one it played:
    a spending cap was then passed by every reply in flight. Playing itself, its two seeks
    were paired apart, with two other bots (found by QA)."""
    tokens = {name: await arena.register(name) for name in ("one-at-a-time", "eager", "keen")}
    in_play: set[str] = set()
    most = 0

    def seen(msg: dict[str, Any]) -> None:
        nonlocal most
        if msg["t"] == "match_start":
            in_play.add(msg["match"])
            most = max(most, len(in_play))
        elif msg["t"] == "match_end":
            in_play.discard(msg["match"])

    async with trio.open_nursery() as nursery:
        for other in ("eager", "keen"):
            nursery.start_soon(functools.partial(run_bot, first_legal, arena.url, other, tokens[other], games=["nim"]))
        with trio.fail_after(20):
            run = await run_bot(
                first_legal,
                arena.url,
                "one-at-a-time",
                tokens["one-at-a-time"],
                games=["nim"],
                matches=4,
                at_once=1,
                self_play=self_play,
                on_message=seen,
                delay_ms=20,
            )
        nursery.cancel_scope.cancel()
    assert len(run.results) >= 4 and most == 1


@pytest.mark.trio
async def test_every_void_match_of_a_shutdown_reaches_the_bot() -> None:
    """A server that shuts down sends every seat its void match_end, then closes. After the
    first, the SDK sought again on the closing connection: the failed send ended its reading,
    and the other match_ends went unread (found by QA)."""
    void = {"status": "void", "reason": "void", "detail": "the server is shutting down", "returns": None}

    async def script(peer: Peer) -> None:
        await peer.log_in()
        for match in ("m1", "m2", "m3"):
            await peer.send("match_start", match=match, seat=0, **START)
        for match in ("m1", "m2", "m3"):
            await peer.send("match_end", match=match, seat=0, forfeit_seat=None, outcomes=None, ranks=None, **void)
        await peer.ws.aclose(1001, "the server is shutting down")

    # later connections: the server is gone (the test ends before the bot's backoff is spent)

    ends: list[str] = []

    def seen(msg: dict[str, Any]) -> None:
        if msg["t"] == "match_end":
            ends.append(msg["match"])

    async with scripted_server(script) as url, trio.open_nursery() as nursery:
        # room for one more match at each end: it seeks on the closing connection
        nursery.start_soon(functools.partial(run_bot, first_legal, url, "a", "token", games=["nim"], at_once=3, on_message=seen))
        await wait_until(lambda: len(ends) == 3, timeout=5)
        nursery.cancel_scope.cancel()
    assert ends == ["m1", "m2", "m3"]


@pytest.mark.trio
async def test_a_server_that_drops_each_connection_once_welcomed_is_retried_with_a_growing_backoff() -> None:
    """A crash-looping server (or a proxy) that welcomed then closed got ten hellos a second for
    ever: each welcome started the backoff anew. And a stop never ended the run: the replay
    awaited after that welcome was never read, so a match might still come (found by QA)."""
    connections = 0
    delays = RecordedBackoff(0.01)

    async def script(peer: Peer) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(ConnectionClosed):  # a stopped bot leaves wherever the script stands
            await peer.expect("hello")
            await peer.send("welcome", session="s", bot="a", resumed=False, limits={})
            await peer.ws.aclose(1011, "crashed")

    stop = trio.Event()
    with trio.fail_after(10):
        async with scripted_server(script) as url, trio.open_nursery() as nursery:
            nursery.start_soon(
                functools.partial(run_bot, first_legal, url, "a", "t", games=["nim"], stop=stop, retry_delays=delays)
            )
            await wait_until(lambda: connections >= 5)
            stop.set()  # nothing is in play: the run ends at once, wherever it stands
    assert len(delays.backoffs) == 1 and delays.backoffs[0][:4] == [0.01, 0.02, 0.03, 0.04]


@pytest.mark.trio
@pytest.mark.parametrize(("code", "said"), [(1001, "(closed: 1001 restarting for an upgrade)"), (1011, "(closed: 1011 crashed)")])
async def test_the_reconnect_line_says_the_servers_close_code_and_reason(
    caplog: pytest.LogCaptureFixture, code: int, said: str
) -> None:
    """A server going away (1001) ends websockets' iteration without an exception, and the line
    said only "reconnects in 1.0 s", not the reason the server gave (found by QA). 1011, which
    raises, is a control: said before too, and by the same words now."""

    async def script(peer: Peer) -> None:
        with contextlib.suppress(ConnectionClosed):
            await peer.log_in()
            await peer.ws.aclose(code, "restarting for an upgrade" if code == 1001 else "crashed")

    with trio.fail_after(10):
        async with scripted_server(script) as url, trio.open_nursery() as nursery:
            delays = RecordedBackoff(0.01)
            nursery.start_soon(functools.partial(run_bot, first_legal, url, "a", "t", games=["nim"], retry_delays=delays))
            await wait_until(lambda: "reconnects to" in caplog.text)
            nursery.cancel_scope.cancel()
    line = next(record.getMessage() for record in caplog.records if "reconnects to" in record.getMessage())
    assert line.endswith(said), line


@pytest.mark.trio
async def test_a_bot_that_reconnected_says_it_is_back(caplog: pytest.LogCaptureFixture) -> None:
    """The log said "reconnects in 3.6 s" and then nothing till the next match's line: an
    operator could not tell a bot back at work from one still trying (found by QA)."""
    connections = 0

    async def script(peer: Peer) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(ConnectionClosed):
            await peer.log_in()
            if connections == 1:
                await peer.ws.aclose(1001, "restarting")
            await trio.sleep_forever()

    with trio.fail_after(10):
        async with scripted_server(script) as url, trio.open_nursery() as nursery:
            delays = RecordedBackoff(0.01)
            nursery.start_soon(functools.partial(run_bot, first_legal, url, "a", "t", games=[], retry_delays=delays))
            await wait_until(lambda: "is back on" in caplog.text)
            nursery.cancel_scope.cancel()
    said = [
        record.getMessage()
        for record in caplog.records
        if "reconnects to" in record.getMessage() or "back on" in record.getMessage()
    ]
    assert said == [
        f"bot a reconnects to {url} in 0.0 s (closed: 1001 restarting)",
        f"bot a is back on {url}, in a new session (the server forgot the old one)",
    ]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("echo", "it answered the hello with 'hello'"),
        ("junk", "its answer to the hello is not a message (the frame is not valid JSON)"),
        ("no-session", "it answered the hello with a welcome without a session"),
        ("silence", "no answer to the hello within 0.3 s: is it an arena server?"),
    ],
)
async def test_a_websocket_server_that_is_not_an_arena_is_named_so_at_once(
    monkeypatch: pytest.MonkeyPatch, answer: str, said: str
) -> None:
    """A traceback (a frame that is no message, a welcome without a session), or a bot that waited
    for ever without a word (an echo server, one that says nothing) (found by QA)."""
    monkeypatch.setattr(client, "WELCOME_WAIT_S", 0.3)

    async def script(peer: Peer) -> None:
        hello = await peer.ws.recv()
        if answer == "echo":
            await peer.ws.send(hello)
        elif answer == "junk":
            await peer.ws.send("hello there")
        elif answer == "no-session":
            await peer.send("welcome")
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            with pytest.raises(BotStopped) as stopped:
                await run_bot(first_legal, url, "a", "t", games=["nim"], binary=False)
    assert said in str(stopped.value)


@pytest.mark.trio
async def test_a_policy_still_thinking_when_its_match_ends_is_cancelled_and_sends_nothing() -> None:
    """It went on (a paid model's reply), and its late move was sent: not_your_match (found by QA)."""
    cancelled = trio.Event()

    async def slow(turn: Turn) -> str:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "1"

    after_end: list[str] = []

    async def script(peer: Peer) -> None:
        await peer.log_in()
        await peer.expect("seek")
        await peer.send("match_start", match="m1", seat=0, **START)
        await peer.expect("cancel")
        await peer.send("cancelled", count=0)
        await peer.expect("seek")
        turn = {"observation": {"text": "heaps"}, "legal": ["1"], "deadline_ms": 9000}
        await peer.send("turn", match="m1", seat=0, step=0, attempt=0, **turn)
        await trio.testing.wait_all_tasks_blocked()
        await peer.send("match_end", match="m1", seat=0, forfeit_seat=0, **{**ENDED, "reason": "timeout"})
        with trio.fail_after(2):  # the bot plays on (it seeks), and its policy is stopped now, not at the end
            await cancelled.wait()
        with trio.move_on_after(0.5):
            async for frame in peer.ws:
                after_end.append(p.decode(frame)["t"])
        read.set()
        await trio.sleep_forever()

    read = trio.Event()
    with trio.fail_after(10):
        async with scripted_server(script) as url, trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(run_bot, slow, url, "a", "t", games=["nim"]))
            await read.wait()
            nursery.cancel_scope.cancel()
    assert "move" not in after_end


@pytest.mark.trio
async def test_a_bot_playing_itself_reads_every_seats_end_of_its_last_match() -> None:
    """It left after the first seat's end of its last match and never read the other's: the
    command printed a line per seat for every match but the last (found by QA)."""
    void = {"status": "void", "reason": "void", "detail": "the server is shutting down", "returns": None}
    ends: list[tuple[str, int]] = []

    async def script(peer: Peer) -> None:
        await peer.log_in()
        await peer.expect("seek")
        await peer.expect("seek")  # one seat each: it plays itself
        for seat in (0, 1):
            await peer.send("match_start", match="m1", seat=seat, **START)
        await peer.send("cancelled", count=0)  # the cancel of its seeks a new match makes
        for seat in (0, 1):
            await peer.send("match_end", match="m1", seat=seat, forfeit_seat=None, **{**ENDED, **void})
        await trio.sleep_forever()

    def seen(msg: dict[str, Any]) -> None:
        if msg["t"] == "match_end":
            ends.append((msg["match"], msg["seat"]))

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            run = await run_bot(first_legal, url, "a", "t", games=["nim"], matches=1, self_play=True, on_message=seen)
    assert [end["match"] for end in run.results] == ["m1"] and ends == [("m1", 0), ("m1", 1)]  # a void end counts


@pytest.mark.trio
async def test_a_match_a_restarted_server_forgot_counts_toward_matches_and_one_it_replays_does_not() -> None:
    """A run of N matches played N more after a server restart voided those in play, which no
    end ever told it of (found by QA). One the fresh session's replay brings back is played."""
    connections = 0

    async def script(peer: Peer) -> None:
        nonlocal connections
        connections += 1
        await peer.expect("hello")
        await peer.send("welcome", session=f"s{connections}", bot="a", resumed=False, limits={})
        await peer.expect("ping")
        if connections == 1:
            await peer.send("match_start", match="m1", seat=0, **START)
            await peer.send("match_start", match="m2", seat=0, **START)
            await peer.send("pong")
            await trio.testing.wait_all_tasks_blocked()
            await peer.ws.aclose(1011, "restarting")
            return
        await peer.send("match_start", match="m2", seat=0, **START)  # m1 was voided at the restart
        await peer.send("pong")
        await turn_and_end(peer, "m2")  # the run is done with its two: it seeks nothing more

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            run = await run_bot(
                first_legal, url, "a", "token", games=["nim"], matches=2, retry_delays=lambda: itertools.repeat(0.05)
            )
    assert (run.lost, [end["match"] for end in run.results], run.played) == (["m1"], ["m2"], 2)


def test_a_run_without_a_number_of_matches_keeps_the_last_results_and_counts_them_all() -> None:
    """It kept every match end, a kilobyte each, for as long as the bot ran (found by QA)."""
    endless, counted = BotRun(keep_all=False), BotRun()
    for i in range(2 * RESULTS_KEPT + 1):
        endless.record({"match": str(i)})
        counted.record({"match": str(i)})
    assert (endless.ended, len(endless.results), endless.results[-1]["match"]) == (2 * RESULTS_KEPT + 1, RESULTS_KEPT, "2000")
    assert len(counted.results) == counted.played == 2 * RESULTS_KEPT + 1


@pytest.mark.trio
async def test_a_websocket_server_that_closes_every_hello_is_no_arena_and_the_run_stops() -> None:
    """A server that was no arena's closed each connection unanswered, and the bot retried for
    ever (found by a QA helper)."""

    async def script(peer: Peer) -> None:
        await peer.ws.aclose(1000, "bye")

    with trio.fail_after(10):
        async with scripted_server(script) as url:
            with pytest.raises(
                BotStopped,
                match=r"closed the connection 3 times without answering the hello \(closed: 1000 bye\): is it an arena",
            ):
                await run_bot(first_legal, url, "a", "token", games=["nim"], retry_delays=lambda: itertools.repeat(0.05))


@pytest.mark.trio
async def test_an_on_message_hook_that_raises_is_logged_and_the_bot_plays_on(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    """It ended the run in a doubly nested exception group, the match left to time out (found by a QA helper)."""
    tokens = {name: await arena.register(name) for name in ("hooked", "plain")}

    def broken(msg: dict[str, Any]) -> None:
        raise KeyError("hook bug")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(run_bot, first_legal, arena.url, "plain", tokens["plain"], games=["nim"], matches=1))
        with trio.fail_after(20):
            run = await run_bot(first_legal, arena.url, "hooked", tokens["hooked"], games=["nim"], matches=1, on_message=broken)
    assert [end["status"] for end in run.results] == ["finished"]
    assert "the on_message hook failed" in caplog.text


@pytest.mark.trio
async def test_a_bot_challenges_a_named_bot_till_it_seeks_and_plays_only_it(
    arena: Arena, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person pitting a bot against one other bot had to write websocket code: the SDK only
    sought, and the lobby pairs a seek with anyone. Challenged before its opponent is even
    connected, the bot keeps trying (said once, not at every try) and then plays it alone."""
    monkeypatch.setattr(client, "CHALLENGE_RETRY_MOST_S", 1.0)  # its opponent found a second later, not five
    tokens = {name: await arena.register(name) for name in ("challenger", "target", "bystander")}
    runs: dict[str, BotRun] = {}

    async def play(name: str, **options: Any) -> None:
        runs[name] = await run_bot(first_legal, arena.url, name, tokens[name], games=["tic-tac-toe"], **options)

    with trio.fail_after(30), caplog.at_level("WARNING", logger="arena.bot"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(play, "challenger", challenge="target", matches=3))
            await wait_until(lambda: sum("challenge refused" in r.message for r in caplog.records) == 1)
            await trio.sleep(1.5)  # a few more refusals, not said again
            nursery.start_soon(functools.partial(play, "bystander", matches=1))  # seeks, but is never challenged
            nursery.start_soon(functools.partial(play, "target", matches=4))
            await wait_until(lambda: "challenger" in runs)
            nursery.cancel_scope.cancel()
    refusals = [r.message.split(")")[0] for r in caplog.records if "challenge refused" in r.message]
    assert refusals[0] == "challenge refused (bot_offline" and len(refusals) == len(set(refusals)), refusals
    assert arena.server.lobby.waiting_of("challenger") == 0  # it never sought
    assert len(runs["challenger"].results) == 3
    store = Store(arena.db, read_only=True)
    for end in runs["challenger"].results:
        record = store.match(end["match"], turns=False)
        assert record is not None and record["status"] == "finished" and sorted(record["players"]) == ["challenger", "target"]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("opponent", "game", "said"),
    [
        ("challenger", "nim", "challenge (bad_message)"),
        ("target", "chess", "challenge (unknown_game)"),
        ("nobody", "nim", "challenge (unknown_bot): no bot named 'nobody' is registered"),
    ],
    ids=["itself", "unknown-game", "unregistered"],
)
async def test_a_challenge_that_can_never_be_taken_stops_the_run_saying_why(
    arena: Arena, opponent: str, game: str, said: str
) -> None:
    token = await arena.register("challenger")
    with trio.fail_after(10), pytest.raises(BotStopped, match=rf"refused this bot's {re.escape(said)}"):
        await run_bot(first_legal, arena.url, "challenger", token, games=[game], challenge=opponent)


@pytest.mark.trio
async def test_a_challenging_bot_told_to_stop_while_refused_returns_at_once(arena: Arena) -> None:
    token = await arena.register("challenger")
    await arena.register("away")  # and never connected
    stop = trio.Event()
    result: list[BotRun] = []

    async def play() -> None:
        result.append(await run_bot(first_legal, arena.url, "challenger", token, games=["nim"], challenge="away", stop=stop))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play)
            await wait_until(lambda: arena.server.metrics.errors >= 1)  # refused: "away" is not connected
            stop.set()
        assert result and result[0].played == 0


def test_a_challenge_is_for_one_game_against_another_bot() -> None:
    for options in ({"games": ["nim", "tic-tac-toe"]}, {"games": ["nim"], "self_play": True}):
        with pytest.raises(ValueError, match="a challenge is for one game"):
            trio.run(functools.partial(run_bot, first_legal, "ws://127.0.0.1:9", "me", "t", challenge="you", **options))


@pytest.mark.trio
async def test_a_challenger_keeps_to_the_servers_limit_and_waits_between_refusals(arena_factory: ArenaFactory) -> None:
    """Challenged past the server's limit of matches at once, every challenge was refused
    (busy, naming the challenger), and each refusal started a wait of its own while each
    match's end sent one more: refusals came ten a second instead of backing off."""
    arena = await arena_factory(limits=Limits(max_matches=2))
    tokens = {name: await arena.register(name) for name in ("challenger", "target")}
    refused: list[tuple[float, str]] = []

    def note(msg: dict[str, Any]) -> None:
        if msg["t"] == "error" and msg.get("ref") == "challenge":
            refused.append((trio.current_time(), msg["message"]))

    runs: dict[str, BotRun] = {}

    async def play(name: str, **options: Any) -> None:
        runs[name] = await run_bot(first_legal, arena.url, name, tokens[name], games=["nim"], matches=12, **options)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(play, "target"))
            nursery.start_soon(functools.partial(play, "challenger", challenge="target", on_message=note))
    assert len(runs["challenger"].results) == 12
    assert not [said for _, said in refused if "'challenger' plays" in said]
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(refused)]
    assert all(gap >= CHALLENGE_RETRY_S / 2 - 0.01 for gap in gaps), gaps


def test_an_end_read_from_a_withheld_record_says_so_not_none_none() -> None:
    """A group's match voided while the bot was away, read back from its record before the group
    was played out, was said "ended while this bot was away: None None" (found by a QA helper)."""
    withheld = {"status": "void", "reason": None, "detail": None, "returns": None}
    assert end_said(withheld) == "void; its result is withheld until the rest of its group is played"
    assert end_said({"status": "finished", "reason": "complete", "detail": ""}) == "finished, complete"
    stopped = {"status": "void", "reason": "void", "detail": "the server stopped before the match ended"}
    assert end_said(stopped) == "void, void (the server stopped before the match ended)"


@pytest.mark.trio
async def test_bot_run_without_a_game_resigns_a_match_of_a_game_its_spec_cannot_play_in_one_line(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    """Waiting for matches made for it, `arena bot run nim-optimal` met a tic-tac-toe match
    with a traceback per match, recorded as its crash (found by a QA helper)."""
    from arena.cli import main

    names = ["nim-only", "other"]
    tokens = [await arena.register(name) for name in names]
    argv = ["bot", "run", "nim-optimal", "--url", arena.url, "--name", names[0], "--token", tokens[0], "--matches", "1"]
    codes: list[int] = []

    async def cli() -> None:
        codes.append(await trio.to_thread.run_sync(main, argv))

    def first(turn: Turn) -> str:
        assert turn.legal_actions
        return turn.legal_actions[0]

    with caplog.at_level("INFO"):
        async with arena.admin() as admin, trio.open_nursery() as nursery:
            nursery.start_soon(cli)
            nursery.start_soon(lambda: run_bot(first, arena.url, names[1], tokens[1], games=[], matches=1))
            await arena.connected(names)
            await admin.send("create_match", bots=names, game="tic-tac-toe", seed=1)
            match = (await admin.expect("match_created"))["match"]
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["reason"] == "resign"
    assert record["detail"] == "nim-only resigned: cannot_play: bot 'nim-optimal' plays nim, not tic-tac-toe"
    assert not [r for r in caplog.records if r.exc_info], "no traceback"

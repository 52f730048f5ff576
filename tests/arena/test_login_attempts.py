"""Tries to log in that fail are capped per (client address, bot): a token, or the admin
token, cannot be guessed at the speed of the network."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

import pytest
import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.client import connect

from arena import protocol as p
from arena.seats import Turn
from arena.server import Limits, LoginAttempts, canonical_ip
from bots.client import run_bot
from tests.conftest import Arena, ArenaFactory


def _fail(tries: LoginAttempts, key: tuple[str, str], now: float) -> float:
    """A try as ``key`` whose token proves wrong; the seconds it had to wait (0: it was checked)."""
    wait, counted = tries.attempt(key, now)
    tries.settle(key, counted, False)
    return wait


def _wait(tries: LoginAttempts, key: tuple[str, str], now: float) -> float:
    """The seconds a try as ``key`` waits; one let through stays in flight."""
    return tries.attempt(key, now)[0]


def test_failed_tries_beyond_the_most_wait_for_the_window_that_began_with_the_first() -> None:
    tries = LoginAttempts(most=3, window_s=10.0)
    victim = ("10.0.0.1", "victim")
    assert [_fail(tries, victim, now) for now in (0.0, 1.0, 2.0)] == [0.0, 0.0, 0.0]
    assert _wait(tries, victim, 4.0) == 6.0  # heard again at 10 s, 10 s after the first
    assert _wait(tries, victim, 9.5) == 0.5
    assert _wait(tries, ("10.0.0.2", "victim"), 5.0) == 0.0  # from elsewhere
    assert _wait(tries, ("10.0.0.1", "bystander"), 5.0) == 0.0  # another bot from there
    assert [_fail(tries, victim, now) for now in (10.0, 11.0, 12.0)] == [0.0, 0.0, 0.0]  # a new window
    assert _wait(tries, victim, 12.0) == 8.0


def test_tries_being_checked_hold_the_next_back_a_moment_and_undecided_ones_are_given_back() -> None:
    tries = LoginAttempts(most=2, window_s=10.0)
    key = ("a", "x")
    _, first = tries.attempt(key, 0.0)
    assert _wait(tries, key, 0.0) == 0.0
    assert _wait(tries, key, 1.0) == LoginAttempts.PENDING_WAIT_S  # two in flight: nothing failed yet
    tries.settle(key, first, None)  # the store failed, or the client left
    wait, third = tries.attempt(key, 1.0)
    assert wait == 0.0
    tries.settle(key, third, True)  # logged in: nothing is held against it any more
    assert _fail(tries, key, 2.0) == 0.0
    assert _fail(tries, key, 3.0) == 0.0
    assert _wait(tries, key, 3.0) == 9.0  # locked: two failures since the window began at 2 s


def test_a_try_settled_after_its_count_was_cleared_changes_nothing() -> None:
    """Settled onto the count made since (another connection logged in, clearing the one they
    were counted on), they added failures it never had and made its tries in flight negative."""
    tries = LoginAttempts(most=3, window_s=10.0)
    key = ("a", "x")
    (_, first), (_, second), (_, third) = (tries.attempt(key, 0.0) for _ in range(3))
    tries.settle(key, third, True)
    _, fourth = tries.attempt(key, 1.0)
    tries.settle(key, first, False)  # tries from before the login prove wrong: the token is known
    tries.settle(key, second, False)
    assert _fail(tries, key, 2.0) == _fail(tries, key, 2.0) == 0.0  # two failures of the new count
    tries.settle(key, fourth, False)  # its third
    assert _wait(tries, key, 2.0) == 9.0  # locked until 11 s, 10 s after the new count began


def test_made_up_names_push_out_each_other_before_a_count_with_more_failures() -> None:
    tries = LoginAttempts(most=10, window_s=60.0, tracked=100)
    victim = ("a", "victim")
    for now in range(9):
        assert _fail(tries, victim, now) == 0.0
    for i in range(1_000):
        _fail(tries, ("a", f"made-up-{i}"), 10.0)
    assert _fail(tries, victim, 11.0) == 0.0  # the tenth failure, counted with the nine before
    assert _wait(tries, victim, 12.0) == 48.0


def test_names_tried_once_cannot_push_a_lock_out_but_as_many_locks_can() -> None:
    tries = LoginAttempts(most=1, window_s=10.0, tracked=2)
    victim = ("a", "victim")
    assert _fail(tries, victim, 0.0) == 0.0
    for name in ("b", "c", "d", "e"):
        tries.attempt(("a", name), 1.0)  # counted, still being checked
    assert _wait(tries, victim, 2.0) == 8.0
    for name in ("f", "g"):
        _fail(tries, ("a", name), 3.0)
    assert _wait(tries, victim, 4.0) == 0.0  # two locks since: the victim's, the oldest, is dropped


async def _refused(arena: Arena, bot: str, token: str, forwarded_for: str = "") -> tuple[list[dict[str, Any]], int | None]:
    """A hello as ``bot`` (through a proxy, when it says whom it ``forwarded_for``): what the
    server said before closing, and its close code; or its welcome, and None."""
    said = []
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    async with connect(arena.url + "/bot", proxy=None, additional_headers=headers) as ws:
        await ws.send(p.encode(p.message("hello", bot=bot, token=token), True))
        with trio.fail_after(5):
            while not said or said[-1]["t"] != "welcome":
                try:
                    said.append(p.decode(await ws.recv()))
                except ConnectionClosed as closed:
                    return said, closed.rcvd.code if closed.rcvd else None
    return said, None


@pytest.mark.trio
async def test_a_bot_guessed_at_too_often_is_refused_unheard_from_there_until_the_window_ends(
    arena_factory: ArenaFactory,
) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=3, login_window_s=1.5))
    token = await arena.register("victim")
    for _ in range(3):
        assert await _refused(arena, "victim", "a-guess") == ([], p.CLOSE_AUTH_FAILED)
    said, code = await _refused(arena, "victim", token)  # the right token, not even looked at
    assert code == p.CLOSE_TRY_AGAIN
    assert [(m["t"], m["code"], m["ref"]) for m in said] == [("error", p.RATE_LIMITED, "hello")]
    assert 1 <= said[0]["retry_after"] <= 2 and "3 tries to log in as 'victim' from 127.0.0.1 failed" in said[0]["message"]
    async with arena.bot("bystander"):  # another bot from the same address
        pass
    await trio.sleep(1.5)
    async with arena.bot("victim", token) as victim:
        assert victim.welcome["session"]
    await arena.server.shutdown()


@pytest.mark.trio
async def test_logging_in_clears_the_count_of_tries(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=2))
    token = await arena.register("typist")
    for _ in range(3):
        assert await _refused(arena, "typist", "a-typo") == ([], p.CLOSE_AUTH_FAILED)
        async with arena.bot("typist", token):
            pass
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_spectator_guessing_the_admin_token_is_refused_unheard(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=2))
    for token in ("guess-1", "guess-2", arena.admin_token):
        async with arena.socket("/watch") as ws:
            assert p.decode(await ws.recv())["t"] == "lobby"
            await ws.send(p.encode(p.message("admin", token=token), False))
            with trio.fail_after(5), pytest.raises(ConnectionClosed) as closed:
                while True:
                    told = p.decode(await ws.recv())
        assert told["t"] == "error" and told["ref"] == "admin"
        assert closed.value.rcvd is not None
    assert told["code"] == p.RATE_LIMITED and told["retry_after"] == 60
    assert closed.value.rcvd.code == p.CLOSE_TRY_AGAIN
    said, code = await _refused(arena, "admin", arena.admin_token)  # a hello as the admin guesses the same token
    assert code == p.CLOSE_TRY_AGAIN and said[0]["code"] == p.RATE_LIMITED
    await arena.server.shutdown()


@pytest.mark.trio
async def test_the_sdk_waits_what_the_refusal_asks_and_then_plays(arena_factory: ArenaFactory) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=1, login_window_s=1.0))
    tokens = {name: await arena.register(name) for name in ("locked", "rival")}
    assert await _refused(arena, "locked", "a-guess") == ([], p.CLOSE_AUTH_FAILED)
    started = trio.current_time()
    results = {}

    def policy(turn: Turn) -> str:
        return random.choice(turn.legal_actions or [])

    async def play(name: str) -> None:
        results[name] = await run_bot(policy, arena.url, name, tokens[name], games=["tic-tac-toe"], matches=1)

    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, "locked")
            nursery.start_soon(play, "rival")
    assert len(results["locked"].results) == 1
    assert [e["code"] for e in results["locked"].errors] == [p.RATE_LIMITED]
    assert trio.current_time() - started >= 1.0
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_name_no_bot_can_have_is_refused_on_its_token_and_not_kept(arena_factory: ArenaFactory) -> None:
    """Kept, made-up names of up to the frame cap each would fill the server's memory."""
    arena = await arena_factory(limits=Limits(login_attempts=2))
    for name in ["Not A Name"] * 3 + [f"{i}" * 100_000 for i in range(3)]:
        assert await _refused(arena, name, "a-guess") == ([], p.CLOSE_AUTH_FAILED)
    await arena.server.shutdown()


@pytest.mark.trio
async def test_tries_the_store_could_not_check_or_the_timeout_or_a_rotation_cut_hold_nothing_against_the_bot(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted and never given back, they locked a bot out once the server had healed."""
    arena = await arena_factory(limits=Limits(login_attempts=2, hello_timeout_s=0.3))
    token = await arena.register("patient")
    assert arena.server.writer is not None
    checking = arena.server.writer.call

    async def broken(work: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    async def slow(work: Any) -> Any:
        await trio.sleep(1)
        return await checking(work)

    async def rotated_meanwhile(work: Any) -> Any:
        arena.server._rotations["patient"] += 1  # as a rotate handled while the store checked the token
        return await checking(work)

    for stand_in, code in ((broken, p.CLOSE_INTERNAL), (slow, p.CLOSE_NO_HELLO), (rotated_meanwhile, p.CLOSE_AUTH_FAILED)):
        monkeypatch.setattr(arena.server.writer, "call", stand_in)
        for _ in range(3):
            assert await _refused(arena, "patient", token) == ([], code)
    monkeypatch.setattr(arena.server.writer, "call", checking)
    async with arena.bot("patient", token):
        pass
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_spectators_admin_token_the_store_could_not_check_holds_nothing_against_it(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=1))
    reading = arena.server._read

    async def broken(query: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    async with arena.socket("/watch") as ws:
        assert p.decode(await ws.recv())["t"] == "lobby"
        monkeypatch.setattr(arena.server, "_read", broken)
        await ws.send(p.encode(p.message("admin", token=arena.admin_token), False))
        told = p.decode(await ws.recv())
        assert (told["t"], told["code"]) == ("error", p.STORE_UNAVAILABLE)
        monkeypatch.setattr(arena.server, "_read", reading)
        await ws.send(p.encode(p.message("admin", token=arena.admin_token), False))
        assert p.decode(await ws.recv())["t"] == "trusted"
    await arena.server.shutdown()


@pytest.mark.trio
@pytest.mark.parametrize("trusted", [True, False])
async def test_behind_a_trusted_proxy_each_client_is_counted_apart_and_elsewhere_its_header_is_ignored(
    arena_factory: ArenaFactory, trusted: bool
) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=1), trusted_proxies=["127.0.0.1"] if trusted else [])
    token = await arena.register("victim")
    # what a client wrote itself comes first; the proxy adds whom it forwards for last
    assert await _refused(arena, "victim", "a-guess", forwarded_for="198.51.100.7, 203.0.113.5") == ([], p.CLOSE_AUTH_FAILED)
    counted_as = "203.0.113.5" if trusted else "127.0.0.1"
    said, code = await _refused(arena, "victim", token, forwarded_for="203.0.113.5")
    assert code == p.CLOSE_TRY_AGAIN and f"from {counted_as}" in said[0]["message"]
    said, code = await _refused(arena, "victim", token, forwarded_for="198.51.100.7")  # the spoofed one: another client
    assert said[0]["t"] == ("welcome" if trusted else "error")
    await arena.server.shutdown()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("::ffff:127.0.0.1", "127.0.0.1"),  # a dual-stack socket's IPv4 peer
        ("192.0.2.1:80", "192.0.2.1"),
        ("[2001:DB8::1]:443", "2001:db8::1"),
        ("fe80::1%eth0", "fe80::1"),
        (" 203.0.113.5 ", "203.0.113.5"),
        ("unknown", None),
        ("10.0.0.0/8", None),
        ("[::1]", "::1"),
        ("192.0.2.9:zz", None),  # what follows the colon was dropped unread: no port, no address
        ("[::1]:80x", None),
        ("[::1]80", None),
        ("192.0.2.9:123456", None),
    ],
)
def test_an_address_has_one_spelling_whoever_wrote_it(text: str, address: str | None) -> None:
    assert canonical_ip(text) == address


@pytest.mark.trio
async def test_a_trusted_proxy_forwarding_for_no_ip_address_is_said_once_and_counted_as_itself(
    arena_factory: ArenaFactory, caplog: pytest.LogCaptureFixture
) -> None:
    arena = await arena_factory(limits=Limits(login_attempts=1), trusted_proxies=["::ffff:127.0.0.1"])
    token = await arena.register("victim")
    assert await _refused(arena, "victim", "a-guess", forwarded_for="unknown") == ([], p.CLOSE_AUTH_FAILED)
    said, code = await _refused(arena, "victim", token, forwarded_for="192.0.2.1:5000, ")  # another client
    assert said[0]["t"] == "welcome"
    said, code = await _refused(arena, "victim", token, forwarded_for="unknown")
    assert code == p.CLOSE_TRY_AGAIN and "from 127.0.0.1" in said[0]["message"]
    warned = [r.getMessage() for r in caplog.records if "forwarded for" in r.getMessage()]
    assert warned == [
        "a trusted proxy forwarded for 'unknown', no IP address; its clients are counted as the proxy itself (said once)"
    ]
    await arena.server.shutdown()

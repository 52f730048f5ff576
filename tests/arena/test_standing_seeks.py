"""Standing seeks: one seek that plays match after match, until the bot cancels it or leaves.

Real server on loopback, real SQLite file, raw protocol clients.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
import trio

from arena import protocol as p
from arena.server import Limits
from arena.store import Store
from tests.conftest import Arena, ArenaFactory, Client


async def play(client: Client, matches: int) -> list[dict[str, Any]]:
    """Answer every turn with the first legal action until ``matches`` matches have ended; their ends."""
    ends: list[dict[str, Any]] = []
    while len(ends) < matches:
        msg = await client.receive()
        if msg["t"] == "turn":
            fields = {key: msg[key] for key in ("match", "seat", "step", "attempt")}
            await client.send("move", **fields, action=msg["legal"][0])
        elif msg["t"] == "match_end":
            ends.append(msg)
    return ends


async def seated(arena: Arena, bot: str) -> None:
    """Until a standing seek of ``bot`` is seated in a match (read from the server, not from the
    bot's messages: a test that waited for match_start there could pass over its first turn)."""
    with trio.fail_after(10):
        while not arena.server.sessions[bot].standing_in_play():
            await trio.sleep(0.01)


async def seeks_back(arena: Arena, bots: set[str]) -> None:
    """Until a seek of each of ``bots`` waits in the lobby again."""
    with trio.fail_after(10):
        while not bots <= {seek.bot for seek in arena.server.lobby.seeks}:
            await trio.sleep(0.01)


@pytest.mark.trio
async def test_a_standing_seek_plays_match_after_match_without_seeking_again(arena: Arena) -> None:
    ends: dict[str, list[dict[str, Any]]] = {}
    async with arena.bot("stands", acks=True) as a, arena.bot("stays", acks=True) as b:
        for client in (a, b):
            await client.send("seek", games=["tic-tac-toe"], standing=True)
            await client.expect("seeking")

        async def three(name: str, client: Client) -> None:
            ends[name] = await play(client, 3)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(three, "a", a)
            nursery.start_soon(three, "b", b)
        assert not [msg for msg in a.seen + b.seen if msg["t"] == "error"]
        assert [msg["t"] for msg in a.seen].count("seeking") == 1  # one seek, three matches
    played = [end["match"] for end in ends["a"]]
    assert all(end["reason"] == "complete" for end in ends["a"] + ends["b"])
    assert len(set(played)) == 3 and played == [end["match"] for end in ends["b"]]
    store = Store(arena.db, read_only=True)
    assert [store.match(match, turns=False)["status"] for match in played] == ["finished"] * 3  # type: ignore[index]


def standing_of(arena: Arena, bot: str) -> int:
    """The bot's standing seeks, waiting or seated: read as a match_end arrives, each match's
    seeks are back (or seated again) already, for the server puts them back before it is read."""
    return [seek.bot for seek in arena.server.lobby.seeks].count(bot) + arena.server.sessions[bot].standing_in_play()


@pytest.mark.trio
@pytest.mark.parametrize(("games", "stopped"), [(["nim", "tic-tac-toe"], 1), (["nim"], 0)])
async def test_a_cancel_naming_its_game_stops_a_standing_seek_seated_in_a_match(
    arena: Arena, games: list[str], stopped: int
) -> None:
    """Counted among the seeks dropped; its match plays on, and it does not come back. A cancel
    of other games leaves it standing."""
    async with arena.bot("canceller") as a, arena.bot("other") as b:
        for client in (a, b):
            await client.send("seek", games=["tic-tac-toe"], standing=True)
        await seated(arena, "canceller")
        await a.send("cancel", games=games)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, a, 1)
            nursery.start_soon(play, b, 1)
        assert [msg["count"] for msg in a.seen if msg["t"] == "cancelled"] == [stopped]
        assert [msg["reason"] for msg in a.seen if msg["t"] == "match_end"] == ["complete"]
        assert (standing_of(arena, "canceller"), standing_of(arena, "other")) == (1 - stopped, 1)


@pytest.mark.trio
async def test_a_standing_seek_counts_against_max_seeks_while_it_plays(arena_factory: ArenaFactory) -> None:
    """Else a bot could stand any number of them, and each would come back to a lobby that
    holds no more than ``max_seeks`` of its seeks."""
    arena = await arena_factory(limits=Limits(max_seeks=1))
    async with arena.bot("greedy") as a, arena.bot("partner") as b:
        for client in (a, b):
            await client.send("seek", games=["tic-tac-toe"], standing=True)
        await a.expect("match_start")
        await a.send("seek", games=["nim"])
        refused = await a.expect("error")
        assert (refused["code"], refused["ref"]) == (p.BUSY, "seek") and "1 seeks waiting or standing" in refused["message"]


@pytest.mark.trio
async def test_a_standing_seek_ends_with_its_bots_connection(arena_factory: ArenaFactory) -> None:
    """As every seek of a bot does: it seeks again after its next welcome."""
    arena = await arena_factory(limits=Limits(grace_ms=200))
    async with arena.bot("stays") as b:
        async with arena.bot("leaves") as a:
            for client in (a, b):
                await client.send("seek", games=["tic-tac-toe"], standing=True)
            start = await a.expect("match_start")
        (end,) = await play(b, 1)
        assert (end["reason"], end["forfeit_seat"]) == ("disconnect", start["seat"])
        await seeks_back(arena, {"stays"})
        assert [seek.bot for seek in arena.server.lobby.seeks] == ["stays"]


@pytest.mark.trio
async def test_a_connection_that_takes_over_a_bot_ends_the_standing_seek_of_the_one_it_replaces(arena: Arena) -> None:
    """It came back when its match ended, beside the seek the new connection sent after its
    welcome: the bot stood twice, and under a low ``max_seeks`` its own seek was refused
    (found by a QA helper). A bot that resumes over a connection the server still holds is this case."""
    token = await arena.register("dup")
    async with arena.bot("dup", token) as first, arena.bot("other") as other:
        for client in (first, other):
            await client.send("seek", games=["tic-tac-toe"], standing=True)
        await seated(arena, "dup")
        resume = {"session": first.welcome["session"], "last_seq": first.last_seq}
        async with arena.bot("dup", token, resume=resume) as second:
            await second.send("seek", games=["tic-tac-toe"], standing=True)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(play, second, 2)
                nursery.start_soon(play, other, 2)
            assert standing_of(arena, "dup") == 1


@pytest.mark.trio
async def test_a_challenge_that_takes_a_standing_seek_leaves_it_standing(arena: Arena) -> None:
    async with arena.bot("challenger") as challenger, arena.bot("stander", acks=True) as stander:
        await stander.send("seek", games=["tic-tac-toe"], standing=True)
        await stander.expect("seeking")
        await challenger.send("challenge", bot="stander", game="tic-tac-toe")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, challenger, 1)
            nursery.start_soon(play, stander, 1)
        await seeks_back(arena, {"stander"})


@pytest.mark.writer_in_thread
@pytest.mark.trio
async def test_a_table_that_cannot_start_spends_its_standing_seeks(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """As it spends any seek (its bots are told to seek again): kept, they would count against
    ``max_seeks`` for the rest of the connection."""

    def full(store: Store, row: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "open_match", full)
    async with arena.bot("first") as a, arena.bot("second") as b:
        for client in (a, b):
            await client.send("seek", games=["tic-tac-toe"], standing=True)
        for client in (a, b):
            told = await client.expect("error")
            assert (told["code"], told["ref"]) == (p.STORE_UNAVAILABLE, "seek")
        assert arena.server.lobby.seeks == [] and not arena.server.live
        assert [arena.server.sessions[bot].standing for bot in ("first", "second")] == [{}, {}]


@pytest.mark.trio
async def test_standing_must_be_a_boolean(arena: Arena) -> None:
    async with arena.bot("vague") as a:
        await a.send("seek", games=["tic-tac-toe"], standing="yes")
        refused = await a.expect("error")
        assert refused["code"] == p.BAD_MESSAGE and "standing" in refused["message"]
        assert arena.server.lobby.seeks == []

"""A server killed with SIGKILL mid-tournament loses nothing it announced and records
nothing by halves: `arena serve` runs as a real process on a real SQLite file, forty SDK
bots play twenty matches, the process is killed while some matches have ended and others
are live, and a restart on the same store is checked against what the bots saw.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.store import Store
from bots.client import run_bot
from bots.registry import make_bot
from tests.conftest import ServeProcess

GAME = "tic-tac-toe"
BOTS = 40
SLOW = range(30, 40)  # ten bots that take a second a move: every match with one outlives the kill
STARTUP_VOID = "the server stopped before the match ended"


@pytest.mark.slow
@pytest.mark.trio
async def test_a_killed_server_keeps_every_announced_match_and_voids_the_live_ones_at_restart(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    token_file = tmp_path / "admin-token"
    token_file.write_text("crash-admin-token-of-the-test\n")
    token_file.chmod(0o600)
    names = [f"bot-{i:02d}" for i in range(BOTS)]
    store = Store(db)
    tokens = {name: store.register_bot(name) for name in names}
    store.close()

    seen: dict[str, list[dict[str, Any]]] = defaultdict(list)  # bot -> every message it got
    first = ServeProcess("--db", str(db), "--admin-token-file", str(token_file), "--move-ms", "8000")
    try:
        url = await first.start()

        async def play(i: int) -> None:
            bot = make_bot("random", GAME, seed=i)
            delay = 1_000 if i in SLOW else 10 * (i % 5)
            await run_bot(
                bot.act,
                url,
                names[i],
                tokens[names[i]],
                games=[GAME],
                matches=1,
                delay_ms=delay,
                on_message=seen[names[i]].append,
            )

        def matches(kind: str) -> set[str]:
            return {msg["match"] for msgs in seen.values() for msg in msgs if msg["t"] == kind}

        async with trio.open_nursery() as nursery:
            for i in range(BOTS):
                nursery.start_soon(play, i)
            with trio.fail_after(15):
                # every match without a slow bot (ten at least) ends within a second; the others take four
                while not (len(matches("match_start")) == BOTS // 2 and len(matches("match_end")) >= 10):
                    await trio.sleep(0.01)
            first.kill()  # SIGKILL: no shutdown, no flush, no voiding
            live_at_kill = matches("match_start") - matches("match_end")
            ended_at_kill = matches("match_end")
            nursery.cancel_scope.cancel()  # the bots would reconnect forever
    finally:
        first.kill()
    assert live_at_kill, "no match was live at the kill"

    second = ServeProcess("--db", str(db), "--admin-token-file", str(token_file), "--move-ms", "8000")
    try:
        await second.start()  # printed after the startup voiding
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        reader = Store(db, read_only=True)
        records = {m["id"]: reader.match(m["id"]) for m in reader.matches(limit=1000)}
        assert set(records) == matches("match_start")  # every match the bots heard of, and no other
        assert not [r for r in records.values() if r["status"] == "live"]

        for match_id, record in records.items():
            assert record is not None
            seats = [
                dict(row) for row in reader.conn.execute("SELECT * FROM seats WHERE match_id = ? ORDER BY seat", (match_id,))
            ]
            if record["status"] == "finished":  # whole: result, every seat, every turn up to the end
                assert record["reason"] == "complete" and record["returns"] is not None
                assert [(seat["bot"], seat["score"]) for seat in seats] == list(
                    zip(record["players"], record["returns"], strict=True)
                )
                steps = sorted(t["step"] for t in record["turns"] if t["accepted"])
                assert steps == list(range(len(steps))) and steps
            else:  # void, and nothing of its play recorded: seats without results, no turns, no result
                assert record["status"] == "void" and record["reason"] == "void" and record["detail"]
                assert not record["turns"] and record["returns"] is None and record["ended_at"]
                assert all(seat["score"] is None and seat["outcome"] is None for seat in seats)

        for match_id in ended_at_kill:  # announced, so committed, with every turn the bots were asked
            record = records[match_id]
            assert record["status"] == "finished", record
            for bot, msgs in seen.items():
                end = next((m for m in msgs if m["t"] == "match_end" and m["match"] == match_id), None)
                if end is None:
                    continue
                assert end["returns"] == record["returns"]
                asked = sorted({m["step"] for m in msgs if m["t"] == "turn" and m["match"] == match_id})
                stored = sorted(t["step"] for t in record["turns"] if t["accepted"] and t["seat"] == end["seat"])
                assert asked == stored, (bot, match_id)

        voided = {match_id for match_id in live_at_kill if records[match_id]["status"] == "void"}
        assert voided, "a match live at the kill was not voided"
        assert all(records[m]["detail"] == STARTUP_VOID for m in voided)
        assert all(records[m]["status"] == "finished" for m in live_at_kill - voided)  # committed just before the kill
        reader.close()
        assert await second.stop() == 0  # and the restarted server still shuts down cleanly
    finally:
        second.kill()

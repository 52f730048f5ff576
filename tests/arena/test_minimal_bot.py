"""docs/examples/minimal_bot.py, the protocol's worked example, plays a real server.

Two copies run as separate processes (no project code in them, only websockets and
msgpack), seek tic-tac-toe against each other and must both exit 0 after their matches,
which the store must hold as finished, with both bots seated.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio

from arena.store import Store
from tests.conftest import Arena

BOT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minimal_bot.py"
MATCHES = 2


@pytest.mark.trio
async def test_two_minimal_bots_play_their_matches_and_exit_0(arena: Arena) -> None:
    names = ("minimal-a", "minimal-b")
    tokens = [await arena.register(name) for name in names]
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}  # loopback, never a proxy
    done: dict[str, trio.CompletedProcess[bytes]] = {}

    async def run(name: str, token: str) -> None:
        argv = [sys.executable, str(BOT), "--url", arena.url, "--name", name, "--token", token]
        argv += ["--game", "tic-tac-toe", "--matches", str(MATCHES)]
        done[name] = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False, env=env)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for name, token in zip(names, tokens, strict=True):
                nursery.start_soon(run, name, token)

    for name in names:
        result = done[name]
        assert result.returncode == 0, (name, result.stdout.decode(), result.stderr.decode())
        assert result.stdout.decode().count("ended (") == MATCHES, result.stdout.decode()
    store = Store(arena.db, read_only=True)
    for name in names:
        records = store.matches(bot=name)
        assert len(records) == MATCHES
        assert all(r["status"] == "finished" and r["reason"] == "complete" for r in records)
        assert all(r["game"] == "tic-tac-toe" and sorted(r["players"]) == sorted(names) for r in records)
    assert store.count("matches") == MATCHES

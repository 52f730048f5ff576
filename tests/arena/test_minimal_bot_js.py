"""docs/examples/minimal_bot.js, a bot written from PROTOCOL.md alone, plays a real server.

It is the proof that the document is enough for another language: two copies run under
Node.js with no dependencies (their own websocket client over a TCP socket, JSON in text
frames), seek tic-tac-toe against each other and must both exit 0 after their matches,
which the store must hold as finished, with both bots seated.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trio

from arena.store import Store
from tests.conftest import Arena

NODE = shutil.which("node")
BOT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minimal_bot.js"
MATCHES = 2

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: the JavaScript example cannot run")


@pytest.mark.trio
async def test_two_js_bots_play_their_matches_and_exit_0(arena: Arena) -> None:
    assert NODE is not None
    names = ("minimal-js-a", "minimal-js-b")
    tokens = [await arena.register(name) for name in names]
    done: dict[str, trio.CompletedProcess[bytes]] = {}

    async def run(name: str, token: str) -> None:
        argv = [NODE, str(BOT), "--url", arena.url, "--name", name, "--token", token]
        argv += ["--game", "tic-tac-toe", "--matches", str(MATCHES)]
        done[name] = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)

    with trio.fail_after(10):
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


@pytest.mark.trio
async def test_a_refused_hello_exits_non_zero_with_the_close_code(arena: Arena) -> None:
    assert NODE is not None
    await arena.register("minimal-js-c")
    argv = [NODE, str(BOT), "--url", arena.url, "--name", "minimal-js-c", "--token", "wrong", "--matches", "1"]
    with trio.fail_after(10):
        result = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)
    assert result.returncode == 1
    assert "4001" in result.stderr.decode(), result.stderr.decode()

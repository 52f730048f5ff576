"""The protocol's worked examples play a real server: docs/examples/minimal_bot.py (only
websockets and msgpack) and minimal_bot.js, written from PROTOCOL.md alone for Node.js with
its own websocket client and JSON frames, the proof that the document is enough for
another language.

Two copies of an example run as separate processes, seek tic-tac-toe against each other
and must both exit 0 after their matches, which the store must hold as finished, with
both bots seated. A wrong token ends an example with status 1, naming the close code.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import trio

from arena.store import Store
from tests.conftest import Arena

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
NODE = shutil.which("node")
MATCHES = 2
EXAMPLE = pytest.mark.parametrize(
    "example",
    ["minimal_bot.py", pytest.param("minimal_bot.js", marks=pytest.mark.skipif(NODE is None, reason="node is not on PATH"))],
)


async def run_example(example: str, arena: Arena, name: str, token: str) -> trio.CompletedProcess[bytes]:
    program = [str(NODE)] if example.endswith(".js") else [sys.executable]
    argv = [*program, str(EXAMPLES / example), "--url", arena.url, "--name", name, "--token", token]
    argv += ["--game", "tic-tac-toe", "--matches", str(MATCHES)]
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}  # loopback, never a proxy
    return await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False, env=env)


@EXAMPLE
@pytest.mark.trio
async def test_two_copies_play_their_matches_and_exit_0(example: str, arena: Arena) -> None:
    names = ("minimal-a", "minimal-b")
    tokens = [await arena.register(name) for name in names]
    done: dict[str, trio.CompletedProcess[bytes]] = {}

    async def run(name: str, token: str) -> None:
        done[name] = await run_example(example, arena, name, token)

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


@EXAMPLE
@pytest.mark.trio
async def test_a_refused_hello_exits_1_naming_the_close_code(example: str, arena: Arena) -> None:
    await arena.register("minimal-c")
    with trio.fail_after(10):
        result = await run_example(example, arena, "minimal-c", "wrong")
    assert result.returncode == 1
    assert "4001" in result.stderr.decode(), result.stderr.decode()

"""Nothing the server sends crashes the app: a stand-in /watch server (websockets, asyncio)
sends broken frames, malformed messages and a view of an unknown kind. A real server
never does; this is the client's side of "the server never crashes on input"."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from tests.tui.screens import SIZE, plain, wait_until
from tui.app import MatchScreen, WatchApp
from tui.feed import Feed, Status

MATCH = "f" * 32
HOLOGRAM = {"text": "seat 0 floats above the board", "render": [{"type": "hologram", "voxels": [[1, 2, 3]]}]}


async def stand_in(ws: ServerConnection) -> None:
    clock = {"move_ms": 5000, "grace_ms": 500, "bank_ms": 0}
    live = {"match": MATCH, "game": "hologram-chess", "players": ["a", "b"], "step": 0, "started": 0.0, "clock": clock}
    await ws.send("this is not JSON")
    await ws.send("[1, 2, 3]")
    await ws.send(json.dumps({"t": "lobby", "v": 1}))
    await ws.send(json.dumps({"t": "teleport", "v": 1}))
    await ws.send(json.dumps({"t": "lobby", "v": 1, "live": [live], "recent": [], "waiting": []}))
    async for frame in ws:
        msg = json.loads(frame)
        if msg["t"] == "watch":
            await ws.send(json.dumps({"t": "snapshot", "v": 1, **live, "status": "live", "view": HOLOGRAM}))
            await ws.send(json.dumps({"t": "delta", "v": 1, "match": MATCH, "step": "two", "view": {}}))
            await ws.send(json.dumps({"t": "delta", "v": 1, "match": MATCH, "step": 1, "view": HOLOGRAM}))
            await ws.send(json.dumps({"t": "result", "v": 1, "match": MATCH, "game": "hologram-chess", "players": "ab"}))


def test_broken_frames_and_unknown_views_are_reported_not_raised() -> None:
    async def scenario() -> None:
        async with serve(stand_in, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            app = WatchApp(f"ws://127.0.0.1:{port}", fetch_stored=False)
            problems: list[str] = []
            report = app.report

            def record(problem: str) -> None:
                problems.append(problem)
                report(problem)

            app.report = record  # type: ignore[method-assign]
            async with app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: app.lobby.received, what="the good lobby")
                app.open_match(MATCH)
                state = app.matches[MATCH]
                await wait_until(pilot, lambda: state.step == 1 and len(problems) >= 6, what="the watched match")
                await pilot.pause()
                assert isinstance(app.screen, MatchScreen)
                view = plain(app.screen.query_one("#view"))
                assert "seat 0 floats above the board" in view and "unknown block type 'hologram'" in view
                assert "malformed message" in plain(app.screen.query_one("#status"))
                assert app.is_running
        expected = [
            "malformed frame from the server: the frame is not valid JSON",
            "malformed frame from the server: a message must be a map, got a list",
            "malformed message: 'lobby' without 'live'",
            "unknown message type 'teleport' from the server (ignored)",
            "malformed message: 'delta.step' is a str",
            "malformed message: 'result.players' is a str",
        ]
        assert [p for p in problems if not p.startswith("server error")] == expected

    asyncio.run(scenario())


def test_a_server_that_is_not_there_is_retried_with_backoff() -> None:
    async def scenario() -> None:
        app = WatchApp("ws://127.0.0.1:9", fetch_stored=False)  # the discard port: nobody listens on loopback
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.connection.attempt >= 2, what="two failed attempts")
            status: Any = plain(app.screen.query_one("#status"))
            assert "reconnecting in" in status or "connecting to" in status
            assert app.connection.state in ("disconnected", "connecting")

    asyncio.run(scenario())


def test_a_url_with_a_path_fails_at_once_saying_what_to_give() -> None:
    """``ws://host:port/watch`` was retried for ever on its 404, with no hint."""

    async def scenario() -> None:
        async with serve(stand_in, "127.0.0.1", 0, process_request=lambda ws, request: ws.respond(404, "no\n")) as server:
            url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/watch"
            app = WatchApp(url, fetch_stored=False)
            async with app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: app.connection.state == "failed", what="the failure")
                assert app.connection.attempt == 0  # not retried
                assert f"{url} has no /watch: give the server's address, ws://host:port" in plain(app.screen.query_one("#status"))

    asyncio.run(scenario())


def test_a_url_that_cannot_be_connected_to_fails_saying_why_instead_of_connecting_for_ever() -> None:
    """websockets raises a plain ValueError for a port out of range, which ended the feed
    unseen: the status line said 'connecting' for ever."""

    async def scenario() -> None:
        app = WatchApp("ws://127.0.0.1:99999", fetch_stored=False)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.connection.state == "failed", what="the failure", timeout=5)
            assert "bad server URL 'ws://127.0.0.1:99999': Port out of range" in plain(app.screen.query_one("#status"))

    asyncio.run(scenario())


def test_a_full_server_is_said_to_be_full_and_retried_after_the_wait_it_asks() -> None:
    def full(ws: ServerConnection, request: Any) -> Any:
        response = ws.respond(503, '{"error": "server_full", "message": "no room"}\n')
        response.headers["Retry-After"] = "7"
        return response

    async def scenario() -> None:
        async with serve(stand_in, "127.0.0.1", 0, process_request=full) as server:
            url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            app = WatchApp(url, fetch_stored=False)
            async with app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: app.connection.attempt >= 1, what="the refusal")
                assert app.connection.state == "disconnected" and app.connection.retry_in == 7
                status = plain(app.screen.query_one("#status"))
                assert f"{url} is full (it holds as many connections as it takes)" in status, status

    asyncio.run(scenario())


def test_a_websocket_server_that_sends_no_lobby_is_said_to_be_no_arena_and_left() -> None:
    """An echo server showed as connected for ever, the lobby "waiting for the server"."""

    async def echo(ws: ServerConnection) -> None:
        async for frame in ws:
            await ws.send(frame)

    async def scenario() -> list[Status]:
        statuses: list[Status] = []
        async with serve(echo, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            feed = Feed(f"ws://127.0.0.1:{port}", lambda msg: None, statuses.append, lambda problem: None, lobby_wait_s=0.2)
            running = asyncio.create_task(feed.run())
            while sum(status.state == "disconnected" for status in statuses) < 2:
                await asyncio.sleep(0.05)
            running.cancel()
        return statuses

    statuses = asyncio.run(asyncio.wait_for(scenario(), 10))
    # never "connected": it was, all but a blink every 10 s, and the attempts counted from 1 again each time
    assert [status.state for status in statuses[:4]] == ["connecting", "disconnected", "connecting", "disconnected"]
    assert "sent no lobby within 0.2 s: is it an arena server's address?" in statuses[1].detail
    assert [statuses[1].attempt, statuses[3].attempt] == [1, 2]


def test_an_arena_lost_without_a_close_is_a_new_failure_each_time() -> None:
    """Backing off only after a clean close, a killed server or a cut network after a healthy
    session grew the wait and the attempt count as if the arena had never answered (found by a review)."""

    async def greets_then_drops(ws: ServerConnection) -> None:
        await ws.send(json.dumps({"t": "lobby", "v": 1, "seq": 1, "live": [], "recent": [], "waiting": []}))
        await asyncio.sleep(0.1)
        ws.transport.abort()  # no close frame: 1006, as a killed server's

    async def scenario() -> list[Status]:
        statuses: list[Status] = []
        async with serve(greets_then_drops, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            feed = Feed(f"ws://127.0.0.1:{port}", lambda msg: None, statuses.append, lambda problem: None)
            running = asyncio.create_task(feed.run())
            while sum(status.state == "disconnected" for status in statuses) < 3:
                await asyncio.sleep(0.05)
            running.cancel()
        return statuses

    dropped = [status for status in asyncio.run(asyncio.wait_for(scenario(), 10)) if status.state == "disconnected"]
    assert [(status.attempt, status.retry_in) for status in dropped[:3]] == [(1, 0.25)] * 3

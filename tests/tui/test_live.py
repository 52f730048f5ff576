"""The spectator against a real server: ``arena serve`` in a subprocess on loopback, bots
over the wire (``arena bot run``, the SDK), the app driven headless by Textual's Pilot on
asyncio. Every wait is for a condition, with a deadline."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.store import Store
from tests.tui.screens import SIZE, plain, screen_text, wait_until
from tui.app import LeaderboardScreen, MatchScreen, WatchApp
from tui.launch import Children, ServerProcess
from tui.widgets import MatchTable

GAME = "tic-tac-toe"


@contextmanager
def bots_playing(url: str, tokens: dict[str, str], tmp_path: Path, delay_ms: int = 200) -> Iterator[Children]:
    children = Children()
    try:
        for name, token in tokens.items():
            command = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--url", url, "--name", name, "--token", token]
            children.spawn([*command, "--game", GAME, "--delay", str(delay_ms)], log=tmp_path / f"{name}.log")
        yield children
    finally:
        children.stop()


def register(db: Path, *names: str) -> dict[str, str]:
    store = Store(db)
    try:
        return {name: store.register_bot(name) for name in names}
    finally:
        store.close()


def test_a_live_match_from_the_lobby_to_the_leaderboard(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    tokens = register(db, "alpha", "beta")
    server = ServerProcess(db, extra=["--max-matches", "1"])
    url = server.start()

    async def scenario() -> None:
        app = WatchApp(url)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.connection.state == "connected" and app.lobby.received, what="the lobby")
            with bots_playing(url, tokens, tmp_path):
                live = app.screen.query_one("#live", MatchTable)
                for _ in range(5):  # a short match may end before its watch arrives: then take the next one
                    await wait_until(pilot, lambda: live.row_count > 0, what="a live match in the lobby")
                    assert {"alpha", "beta"} == set(app.lobby.live[0].players)
                    live.focus()
                    await pilot.press("enter")
                    await wait_until(pilot, lambda: isinstance(app.screen, MatchScreen), what="the match screen")
                    state = app.matches[app.screen.match]
                    await wait_until(pilot, lambda s=state: s.status != "loading", what="the snapshot")
                    if state.status == "live":
                        break
                    await pilot.press("escape")
                    await wait_until(pilot, lambda: not isinstance(app.screen, MatchScreen), what="the lobby again")
                assert state.status == "live", "never caught a match while it was played"
                assert "│ a │ b │ c │" in plain(app.screen.query_one("#view"))  # the board
                seen = len(state.log)
                await wait_until(pilot, lambda: len(state.log) > seen, what="the move log to grow")
                assert plain(app.screen.query_one("#log")).count("\n") >= len(state.log)
                await wait_until(pilot, lambda: state.over, what="the result")
                assert state.result is not None and state.result.status == "finished"
                await pilot.pause()
                result_line = plain(app.screen.query_one("#result"))
                assert "Result:" in result_line and state.result.outcome_text() in result_line
                await pilot.press("l")
                await wait_until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), what="the leaderboard")
                assert app.screen.game == GAME

                def both_bots() -> bool:
                    board = app.boards.get(GAME)
                    return board is not None and {r["bot"] for r in board.variant_rows()} == {"alpha", "beta"}

                await wait_until(pilot, both_bots, what="both bots on the board")
                await pilot.pause()
                assert app.screen.query_one("#board-main").row_count == 2
                screen = app.export_screenshot()
                assert "alpha" in screen and "beta" in screen

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_the_app_says_when_the_server_goes_and_recovers_when_it_is_back(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    register(db, "alpha")
    first = ServerProcess(db)
    url = first.start()
    port = int(url.rsplit(":", 1)[1])
    second = ServerProcess(db, port=port)

    async def scenario() -> None:
        app = WatchApp(url)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.connection.state == "connected" and app.lobby.received, what="the lobby")
            lobbies = app.received
            await asyncio.to_thread(first.stop)
            await wait_until(pilot, lambda: app.connection.state == "disconnected", what="the disconnect")
            status = plain(app.screen.query_one("#status"))
            assert "disconnected" in status and "reconnecting in" in status
            await asyncio.to_thread(second.start)
            await wait_until(pilot, lambda: app.connection.state == "connected", timeout=20, what="the reconnect")
            await wait_until(pilot, lambda: app.received > lobbies, what="a fresh lobby")
            assert "connected to" in plain(app.screen.query_one("#status"))
            assert app.problem is None

    try:
        asyncio.run(scenario())
    finally:
        first.stop()
        second.stop()


def test_a_match_whose_server_dies_is_shown_unknown_and_keeps_its_board_when_voided(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    tokens = register(db, "alpha", "beta")
    first = ServerProcess(db)
    url = first.start()
    second = ServerProcess(db, port=int(url.rsplit(":", 1)[1]))

    async def scenario() -> None:
        app = WatchApp(url, fetch_stored=False)
        async with app.run_test(size=SIZE) as pilot:
            with bots_playing(url, tokens, tmp_path, delay_ms=1000):
                await wait_until(pilot, lambda: app.lobby.live, what="a live match")
                app.open_match(app.lobby.live[0].match)
                state = app.matches[app.lobby.live[0].match]
                await wait_until(pilot, lambda: state.status == "live" and state.step >= 1, what="a step of the match")
                assert first.process is not None
                first.process.kill()  # no clean shutdown: the app hears nothing but the drop
                await asyncio.to_thread(first.process.wait)
                await wait_until(pilot, lambda: app.connection.state == "disconnected", what="the disconnect")
                await pilot.pause()
                screen = screen_text(app)
                assert f"state unknown · disconnected at step {state.step}; clocks stopped" in screen
                assert " left" not in screen and "▶" not in screen  # no clock runs
                assert app.lobby.stale
                await asyncio.to_thread(second.start)  # it voids what the killed server left live
                await wait_until(pilot, lambda: state.over, timeout=20, what="the void result after the reconnect")
                await pilot.pause()
                screen = screen_text(app)
                assert "Result: void" in screen and "│ a │ b │ c │" in screen and "(no view yet)" not in screen

    try:
        asyncio.run(scenario())
    finally:
        first.stop()
        second.stop()

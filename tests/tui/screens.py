"""Fixed screens of the spectator, drawn from fixed messages (no server, frozen clocks).

The messages in data/ were recorded once from real matches, leaderboards and a replay
(item-negotiation seed 9, tic-tac-toe seed 4, ...), so the screens are what a server
would show, and they never change unless the TUI does. ``draw(name)`` returns the SVG of
one screen; the snapshot tests compare it with snapshots/NAME.svg.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from tui.app import LeaderboardScreen, WatchApp

DATA = Path(__file__).parent / "data"
SIZE = (110, 32)
NOW = 1000.0  # the app's monotonic clock, frozen
WALL = 1_700_000_002.5  # and its wall clock: 2.5 s after the recorded matches started


def load(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def fixed_app() -> WatchApp:
    return WatchApp(None, clock=lambda: NOW, wall=lambda: WALL, fetch_stored=False, tick_s=3600)


def lobby_message() -> dict[str, Any]:
    matches = load("matches")
    live = []
    for game, steps in (("tic-tac-toe", 3), ("item-negotiation", 5), ("kuhn-poker", 1)):
        first = matches[game][0]
        live.append({k: first[k] for k in ("match", "game", "players", "started", "clock")} | {"step": steps})
    recent = [{k: v for k, v in matches[game][-1].items() if k not in ("t", "v", "view")} for game in matches]
    recent.append(
        {
            "match": "00000004aaaabbbbccccddddeeeeffff",
            "game": "public-goods",
            "players": ["giver", "free-rider", "copycat"],
            "status": "finished",
            "reason": "complete",
            "detail": "",
            "returns": [18.0, 31.5, 22.0],
            "outcomes": ["ranked", "ranked", "ranked"],
            "ranks": [3, 1, 2],
            "forfeit_seat": None,
        }
    )
    recent.append(
        {
            "match": "00000005aaaabbbbccccddddeeeeffff",
            "game": "connect-four",
            "players": ["alphabeta", "slowpoke"],
            "status": "finished",
            "reason": "timeout",
            "detail": "seat 1 did not answer within 10000 ms",
            "returns": [1.0, -1.0],
            "outcomes": ["win", "forfeit"],
            "ranks": [1, 2],
            "forfeit_seat": 1,
        }
    )
    recent.append(
        {
            "match": "00000006aaaabbbbccccddddeeeeffff",
            "game": "tic-tac-toe",
            "players": ["perfect-bot", "random-bot"],
            "status": "void",
            "reason": "void",
            "detail": "the server stopped before the match ended",
        }
    )
    waiting = [{"bot": "lonely", "games": ["hanabi"], "config": {}}]
    return {"t": "lobby", "v": 1, "seq": 1, "live": live, "recent": recent, "waiting": waiting}


async def lobby_shown(app: WatchApp, pilot: Pilot[Any]) -> dict[str, Any]:
    """Show ``lobby_message()`` in the app, drawn; the message, for a test to change and send again."""
    lobby = lobby_message()
    app.receive(lobby)
    await settle(pilot)
    return lobby


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    while isinstance(pilot.app, WatchApp) and pilot.app.lobby_redraw:  # a lobby within a second of the last
        await pilot.pause(0.05)


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 15.0, what: str = "") -> None:
    """Let the app run until ``condition()`` holds (no fixed sleeps)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or condition}")
        await pilot.pause(0.05)


_SVG_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')
CELL_WIDTH = 12.2  # Rich's SVG export: 0.61 of its 20px font per terminal cell


def screen_text(app: Any) -> str:
    """The whole screen as plain lines, read back from ``export_screenshot()``."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for found in _SVG_TEXT.finditer(app.export_screenshot()):
        x, y, text = float(found[1]), float(found[2]), html.unescape(found[3]).replace("\xa0", " ")
        rows.setdefault(y, []).append((x, text))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(round(x / CELL_WIDTH)) + text
        lines.append(line.rstrip())
    return "\n".join(lines)


def plain(renderable: Any, width: int = 100) -> str:
    """A Rich renderable (or a Static's content) as plain text."""
    if isinstance(renderable, Static):
        renderable = renderable.content
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def feed_match(app: WatchApp, game: str, upto: int | None = None) -> str:
    """Open the recorded match of ``game`` and feed its snapshot and deltas (all, or ``upto`` messages)."""
    messages = load("matches")[game]
    match = messages[0]["match"]
    app.open_match(match)
    for msg in messages[: upto if upto is not None else len(messages)]:
        app.receive(msg)
    return match


async def _lobby(app: WatchApp, pilot: Pilot[Any]) -> None:
    app.receive(lobby_message())


async def _lobby_light(app: WatchApp, pilot: Pilot[Any]) -> None:
    app.receive(lobby_message())
    await pilot.press("d")


async def _match_ttt(app: WatchApp, pilot: Pilot[Any]) -> None:
    app.receive(lobby_message())
    await settle(pilot)
    feed_match(app, "tic-tac-toe", upto=5)  # the snapshot and four moves


async def _match_ttt_ended(app: WatchApp, pilot: Pilot[Any]) -> None:
    feed_match(app, "tic-tac-toe")


async def _negotiation(app: WatchApp, pilot: Pilot[Any]) -> None:
    feed_match(app, "item-negotiation", upto=6)


async def _kuhn_ended(app: WatchApp, pilot: Pilot[Any]) -> None:
    feed_match(app, "kuhn-poker")


async def _kuhn_ended_light(app: WatchApp, pilot: Pilot[Any]) -> None:
    feed_match(app, "kuhn-poker")
    await pilot.press("d")


async def _leaderboard_game(app: WatchApp, pilot: Pilot[Any]) -> None:
    app.push_screen(LeaderboardScreen("tic-tac-toe"))
    await settle(pilot)
    app.receive(load("leaderboards")["tic-tac-toe"])
    await settle(pilot)
    await pilot.press("right", "right", "enter")  # sort by μ, highest first


async def _leaderboard_overall(app: WatchApp, pilot: Pilot[Any]) -> None:
    await pilot.press("l")
    await settle(pilot)
    app.receive(load("leaderboards")["overall"])


async def _replay(app: WatchApp, pilot: Pilot[Any]) -> None:
    app.receive(load("replay"))
    app.open_replay(load("replay")["match"])
    await settle(pilot)
    await pilot.press("right", "right", "right")


async def _help(app: WatchApp, pilot: Pilot[Any]) -> None:
    await pilot.press("question_mark")


SCREENS: dict[str, Callable[[WatchApp, Pilot[Any]], Awaitable[None]]] = {
    "lobby": _lobby,
    "lobby_light": _lobby_light,
    "match_tic_tac_toe": _match_ttt,
    "match_tic_tac_toe_ended": _match_ttt_ended,
    "match_negotiation": _negotiation,
    "match_kuhn_poker_ended": _kuhn_ended,
    "match_kuhn_poker_ended_light": _kuhn_ended_light,
    "leaderboard_game": _leaderboard_game,
    "leaderboard_overall": _leaderboard_overall,
    "replay": _replay,
    "help": _help,
}


async def draw(name: str) -> str:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await SCREENS[name](app, pilot)
        await settle(pilot)
        return app.export_screenshot(title=name)


if __name__ == "__main__":  # python -m tests.tui.screens OUTDIR: every screen as SVG, to look at
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for screen in SCREENS:
        (out / f"{screen}.svg").write_text(asyncio.run(draw(screen)), encoding="utf-8")
        print(out / f"{screen}.svg")

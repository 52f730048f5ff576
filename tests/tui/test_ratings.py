"""The lobby's TrueSkill μ of a game played with a config: ratings are kept per variant
(the game plus its non-default config), so the lobby must look them up by variant."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat
from arena.store import Store
from arena.store_writer import Call
from bots.registry import make_bot
from tests.conftest import Arena, Client
from tests.tui.screens import SIZE, fixed_app, screen_text, settle
from tui.app import LeaderboardScreen

CONFIG = {"target": 20}
VARIANT = 'pig{"target":20}'


def lobby_screen(messages: list[dict[str, Any]]) -> str:
    async def draw() -> str:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            for msg in messages:
                app.receive(msg)
            await settle(pilot)
            return screen_text(app)

    return asyncio.run(draw())


@pytest.mark.trio
async def test_the_lobby_shows_the_mu_of_a_game_played_with_a_config(arena: Arena) -> None:
    seats = [LocalSeat(make_bot("random", "pig", i), name=name) for i, name in enumerate(("hog", "sow"))]
    result = await play_match(games.get("pig"), seats, config=CONFIG, seed=1)
    assert arena.server.writer is not None
    await arena.server.writer.call(Call(Store.finish_match, result))
    async with arena.bot("hog"), arena.bot("sow"), arena.admin() as admin, arena.socket("/watch") as ws:
        watcher = Client(ws, binary=False)
        await watcher.expect("lobby")
        await admin.send("create_match", bots=["hog", "sow"], game="pig", config=CONFIG)
        await admin.expect("match_created")
        lobby = await watcher.expect("lobby")
        assert [entry["variant"] for entry in lobby["live"]] == [VARIANT]
        await watcher.send("leaderboard", game="pig")
        board = await watcher.expect("leaderboard")
        mu = {row["bot"]: row["mu"] for row in board["variants"][VARIANT]}
    screen = await trio.to_thread.run_sync(lobby_screen, [lobby, board])
    assert f"hog {mu['hog']:.1f} vs sow {mu['sow']:.1f}" in screen


def test_a_cooperative_games_board_shows_the_mean_score_it_is_ranked_by() -> None:
    """Hanabi has no winner: W/D/L are all 0 and only the mean return tells the bots apart."""
    row = {"rank": 1, "mu": 25.0, "sigma": 8.33, "conservative": 0.0, "games": 3, "wins": 0, "draws": 0, "losses": 0}
    rows = [{**row, "bot": "cautious", "mean_return": 17.25}, {**row, "bot": "reckless", "mean_return": 3.5}]

    async def draw() -> str:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(LeaderboardScreen("hanabi"))
            await settle(pilot)
            app.receive({"t": "leaderboard", "game": "hanabi", "variants": {"hanabi": rows}})
            await settle(pilot)
            return screen_text(app)

    screen = asyncio.run(draw())
    assert "mean" in screen and "17.25" in screen and "3.50" in screen


def test_a_board_still_being_computed_is_asked_for_again_after_the_time_the_server_gives() -> None:
    """A big store's board answers `error computing` at first: the screen stayed empty until 'r'."""

    async def asked() -> list[tuple[str, dict[str, Any]]]:
        app = fixed_app()
        sent: list[tuple[str, dict[str, Any]]] = []
        app.send = lambda kind, **fields: sent.append((kind, fields)) is None  # type: ignore[method-assign]
        async with app.run_test(size=SIZE) as pilot:
            await app.push_screen(LeaderboardScreen("nim"))
            await settle(pilot)
            told = "the leaderboard of nim is being computed; ask again in 0.05 s"
            app.receive({"t": "error", "code": "computing", "message": told, "ref": "leaderboard", "retry_after": 0.05})
            await pilot.pause(0.3)
        return sent

    assert asyncio.run(asked()).count(("leaderboard", {"game": "nim"})) == 2


def test_the_lobby_asks_one_board_at_a_time_and_none_while_a_match_is_being_opened() -> None:
    """The server answers a spectator in order: behind the lobby's boards of every game, each
    seconds to compute on a busy server, a match opened showed "loading..." for ten seconds
    (found by a QA helper)."""
    lobby = {"t": "lobby", "game": None, "live": [], "live_count": 0, "recent": [], "waiting": [], "waiting_count": 0}
    lobby["live_games"] = {"nim": 1, "pig": 1, "kuhn-poker": 1}

    async def asked() -> list[list[str]]:
        app = fixed_app()
        sent: list[str] = []
        app.send = lambda kind, **fields: sent.append(fields.get("game", kind)) is None  # type: ignore[method-assign]
        steps = []
        async with app.run_test(size=SIZE) as pilot:
            app.receive(lobby)
            steps.append(list(sent))
            app.receive({"t": "leaderboard", "game": sent[-1], "variants": {}})
            steps.append(list(sent))
            app.pending.append(("watch", "abc"))  # a match being opened
            app.receive({"t": "error", "code": "computing", "message": "later", "ref": "leaderboard", "retry_after": 5})
            app.receive(lobby)
            steps.append(list(sent))
            app.pending.clear()
            app.receive(lobby)
            steps.append(list(sent))
            await pilot.pause()
        return steps

    assert asyncio.run(asked()) == [["kuhn-poker"], ["kuhn-poker", "nim"], ["kuhn-poker", "nim"], ["kuhn-poker", "nim", "pig"]]

"""Browsing a store through a read-only server: every stored match can be reached, however
many newer ones there are (a game filter over every stored game, and more on request)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.tui.screens import SIZE, screen_text, wait_until
from tests.tui.stores import play
from tui import feed
from tui.app import WatchApp
from tui.feed import fetch_matches
from tui.launch import ServerProcess


def test_older_matches_and_games_are_reached_by_filter_and_more(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    kuhn = play(db, "kuhn-poker", 3)  # the oldest: not on the newest page
    play(db, "tic-tac-toe", 6)
    server = ServerProcess(db, read_only=True)
    url = server.start()

    async def scenario() -> None:
        app = WatchApp(url, page=4)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.lobby.stored) == 4 and app.lobby.stored_games, what="the first page")
            screen = screen_text(app)
            assert "kuhn-poker" not in screen and "Recent results  4 · older ones stored: m for more" in screen
            await pilot.press("g")  # the first game in the filter, though the first page holds none of it
            await wait_until(pilot, lambda: {r.game for r in app.lobby.stored} == {"kuhn-poker"}, what="kuhn's page")
            await pilot.pause()
            screen = screen_text(app)
            assert "game: kuhn-poker" in screen and "Recent results  3\n" in screen
            assert all(match[:8] in screen for match in kuhn)
            await pilot.press("G", "m", "m")
            await wait_until(pilot, lambda: len(app.lobby.stored) == 9, what="every match after two pages more")
            await pilot.pause()
            assert "Recent results  9\n" in screen_text(app)
            await pilot.press("m")
            await pilot.pause()
            assert app.problem == "every stored match is listed"

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_fetching_more_than_a_page_reads_page_after_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "arena.db"
    ids = play(db, "nim", 5)
    server = ServerProcess(db, read_only=True)
    url = server.start()
    try:
        newest = [record["id"] for record in fetch_matches(url, limit=10)]
        monkeypatch.setattr(feed, "API_PAGE", 2)
        assert [record["id"] for record in fetch_matches(url, limit=10)] == newest and sorted(newest) == sorted(ids)
        assert [record["id"] for record in fetch_matches(url, limit=3)] == newest[:3]
    finally:
        server.stop()


def test_a_server_that_ignores_before_is_listed_once_not_page_after_page_of_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    first_page = [{"id": f"{i:032x}", "game": "nim"} for i in (9, 8, 7)]
    asked: list[str] = []

    def older_server(url: str, path: str, timeout: float) -> list[dict[str, str]]:
        asked.append(path)
        return first_page  # what a server from before paging answers, whatever ``before`` says

    monkeypatch.setattr(feed.p, "get_json", older_server)
    monkeypatch.setattr(feed, "API_PAGE", 3)
    assert [record["id"] for record in fetch_matches("http://old", limit=10)] == [r["id"] for r in first_page]
    assert len(asked) == 2 and "before=" in asked[1]


def test_live_matches_are_paged_past_not_counted_among_the_stored_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy server's newest records are mostly live matches, which the feed shows already:
    the stored results still fill the page asked for."""
    store = [{"id": f"{i:032x}", "game": "nim", "status": "live" if i > 5 else "finished"} for i in range(12, 0, -1)]

    def server(url: str, path: str, timeout: float) -> list[dict[str, str]]:
        query = parse_qs(urlsplit(path).query)
        before = query.get("before", [None])[0]
        older = [r for r in store if before is None or r["id"] < before]
        return older[: int(query["limit"][0])]

    monkeypatch.setattr(feed.p, "get_json", server)
    monkeypatch.setattr(feed, "API_PAGE", 3)
    assert [int(record["id"], 16) for record in fetch_matches("http://busy", limit=4)] == [5, 4, 3, 2]


def test_more_pressed_while_a_filters_page_is_still_coming_asks_for_more_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pressed before the page of every game came, "m" read the previous filter's last page and
    said every stored match was listed (found as a flaky test on a loaded machine)."""
    import threading

    import tui.app

    release = threading.Event()
    asked: list[int] = []

    def slow(url: str, *, game: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        asked.append(limit)
        release.wait(10)
        return []

    monkeypatch.setattr(tui.app, "fetch_matches", slow)

    async def scenario() -> None:
        app = WatchApp("ws://127.0.0.1:9", page=4)
        async with app.run_test(size=SIZE) as pilot:
            app.lobby.stored_more = False  # the last page read (another game's) was its whole list
            await pilot.press("G", "m")
            assert app.stored_query == (None, 8) and app.problem != "every stored match is listed"
            release.set()

    asyncio.run(scenario())


def test_all_games_asked_again_keeps_the_pages_already_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """G while every game was shown went back to the first page, dropping those read with m (found by a QA helper)."""
    import tui.app

    monkeypatch.setattr(tui.app, "fetch_matches", lambda url, *, game=None, limit=50: [])

    async def scenario() -> None:
        app = WatchApp("ws://127.0.0.1:9", page=4)
        async with app.run_test(size=SIZE) as pilot:
            app.lobby.stored_more = True
            await pilot.press("m")
            await pilot.pause()
            app.lobby.stored_more = True
            await pilot.press("m")
            await pilot.pause()
            app.lobby.stored_more = True
            await pilot.press("G")
            assert app.stored_query == (None, 12)

    asyncio.run(scenario())

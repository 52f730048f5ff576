"""The lobby's keys, on fixed messages (no server)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

from tests.tui.screens import SIZE, feed_match, fixed_app, load, lobby_message, lobby_shown, screen_text, settle
from tui.app import HELP, LobbyScreen, ReplayScreen
from tui.feed import Status
from tui.widgets import MatchTable


def test_replay_takes_the_row_under_the_cursor_and_says_a_live_one_has_none_yet() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            app.receive(lobby_message())
            await settle(pilot)
            assert app.focused is app.screen.query_one("#live", MatchTable)
            await pilot.press("r")
            await settle(pilot)
            assert isinstance(app.screen, LobbyScreen)
            assert "is still on: Enter watches it; a replay comes after its end" in screen_text(app)
            assert (
                app.problem
                == f"match {app.focused.selected_key()[:8]} is still on: Enter watches it; a replay comes after its end"
            )
            app.screen.query_one("#recent", MatchTable).focus()
            await pilot.press("down", "r")  # the second result
            await settle(pilot)
            assert isinstance(app.screen, ReplayScreen) and app.screen.match == app.lobby.recent[1].match

    asyncio.run(scenario())


def test_live_matches_are_marked_as_last_heard_while_disconnected() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            app.receive(lobby_message())
            app.connection_changed(Status("disconnected", "connection lost", retry_in=1.0, attempt=1))
            await settle(pilot)
            screen = screen_text(app)
            assert "as last heard before the disconnect: they may have ended" in screen
            assert " 3?  " in screen  # the tic-tac-toe match's step, no longer known
            app.receive(lobby_message())
            await settle(pilot)
            assert "as last heard" not in screen_text(app)

    asyncio.run(scenario())


def test_a_lobby_never_heard_is_not_called_out_of_date() -> None:
    """A wrong address: the lobby said its matches were "as last heard before the disconnect"."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            app.url = "ws://127.0.0.1:1"  # as given, never reached (set once mounted: no feed runs)
            app.connection_changed(Status("disconnected", "cannot reach", retry_in=1.0, attempt=1))
            await settle(pilot)
            screen = screen_text(app)
            assert "waiting for the server" in screen and "as last heard" not in screen

    asyncio.run(scenario())


def test_a_problem_leaves_the_status_line_after_a_while_unless_another_came() -> None:
    """ "the match is still on: a replay comes after its end" stayed on every screen until the
    next reconnection (found by QA)."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            with patch("tui.app.PROBLEM_SHOWN_S", 0.2):
                app.report("first")
                await asyncio.sleep(0.1)
                app.report("second")
                await asyncio.sleep(0.15)  # the first's time is up: the second stays
                assert app.problem == "second"
                await asyncio.sleep(0.15)
            await settle(pilot)
            assert app.problem is None and "second" not in screen_text(app)

    asyncio.run(scenario())


def test_the_move_log_says_what_it_missed_and_a_replay_keeps_the_result_for_its_end() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            snapshot = load("matches")["tic-tac-toe"][0]
            app.open_match(snapshot["match"])
            app.receive({**snapshot, "step": 7})
            await settle(pilot)
            assert "7 (joined at step 7)" in screen_text(app)
            app.pop_screen()
            ended = load("matches")["kuhn-poker"][-1]
            app.open_match(ended["match"])
            app.receive({**ended, "t": "snapshot", "view": {}})
            await settle(pilot)
            assert "(ended before this app watched: r replays" in screen_text(app)
            app.pop_screen()
            app.receive(load("replay"))
            app.open_replay(load("replay")["match"])
            await settle(pilot)
            screen = screen_text(app)
            assert "Result:" not in screen and "the result shows at the last step (End)" in screen
            await pilot.press("end")
            await settle(pilot)
            assert "Result:" in screen_text(app)

    asyncio.run(scenario())


def test_the_help_names_every_key_and_what_the_clocks_are_sent_as() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=(110, 50)) as pilot:
            await pilot.press("question_mark")
            await settle(pilot)
            screen = screen_text(app)
            for shown in ("Esc, Backspace", "← →, , .", "Enter, s", "PgUp PgDn", "each seat's bank left"):
                assert shown in screen, shown

    asyncio.run(scenario())


def test_the_help_fits_a_narrow_screen_and_scrolls() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=(60, 20)) as pilot:
            await pilot.press("question_mark")
            await settle(pilot)
            box = app.screen.query_one("#help")
            assert box.size.width <= 60 and box.max_scroll_y > 0
            assert "╮" in screen_text(app).splitlines()[1]  # its right edge is on the screen

    asyncio.run(scenario())


def public_goods_result(players: list[str]) -> dict[str, Any]:
    """A finished match of four with fractional returns: the widest result a lobby row holds."""
    return {
        "match": "00000007aaaabbbbccccddddeeeeffff",
        "game": "public-goods",
        "players": players,
        "status": "finished",
        "reason": "complete",
        "returns": [56.75, 63.75, 71.75, 53.75],
        "outcomes": ["ranked"] * 4,
        "ranks": [3, 2, 1, 4],
    }


def test_the_result_column_stays_on_screen_beside_a_match_of_many_long_names() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            lobby = lobby_message()
            lobby["recent"].insert(0, public_goods_result([f"a-rather-long-bot-name-{i}" for i in range(4)]))
            app.receive(lobby)
            await settle(pilot)
            lines = screen_text(app).splitlines()
            assert any(line.endswith("result") for line in lines)  # the last column's header
            row = [line for line in lines if line.startswith(" 00000001")][-1]  # in Recent results
            assert row.count("perfect-bot") == 2  # its players, and its result (perfect-bot won) cut short

    asyncio.run(scenario())


def test_the_help_lists_the_text_view_of_a_replay_and_the_way_back_from_the_leaderboard() -> None:
    sections = dict(HELP)
    assert any(key == "t" for key, _ in sections["Replay"])  # ReplayScreen binds t as MatchScreen does
    assert any(key.startswith("Esc") for key, _ in sections["Leaderboard"])


def test_the_live_table_shrinks_a_long_name_again_when_a_longer_game_joins() -> None:
    """A table keeps its columns' widths across refills; the squeeze must start afresh."""

    async def scenario() -> None:
        app = fixed_app()
        clock = {"move_ms": 10000, "grace_ms": 500, "bank_ms": 0}
        ttt = {"match": "a" * 32, "game": "tic-tac-toe", "players": ["perfect-bot", "x" * 60], "step": 1, "clock": clock}
        ipd = {**ttt, "match": "b" * 32, "game": "iterated-prisoners-dilemma", "players": ["tit-for-tat", "grim"]}
        async with app.run_test(size=SIZE) as pilot:
            app.receive({"t": "lobby", "v": 1, "live": [ttt], "recent": []})
            await settle(pilot)
            app.receive({"t": "lobby", "v": 1, "live": [ttt, ipd], "recent": []})
            app.screen.refresh_data()  # drawn now, before the table's idle pass measures anything
            table = app.screen.query_one("#live", MatchTable)
            before_idle = [column.content_width for column in table.ordered_columns]  # what a frame drawn now shows
            await settle(pilot)
            assert [column.content_width for column in table.ordered_columns] == before_idle
            header = next(line for line in screen_text(app).splitlines() if line.startswith(" match"))
            assert header.endswith("clock")

    asyncio.run(scenario())


def test_the_result_column_stays_on_an_80_column_screen_beside_the_returns_of_four_seats() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=(80, 24)) as pilot:
            lobby = lobby_message()
            lobby["recent"].insert(0, public_goods_result(["pg-a", "pg-b", "pg-c", "pg-d"]))
            app.receive(lobby)
            await settle(pilot)
            lines = screen_text(app).splitlines()
            assert any(line.endswith("result") for line in lines)
            row = next(line for line in lines if line.startswith(" 00000007"))
            assert "#1 pg-c" in row

    asyncio.run(scenario())


def test_a_lobby_that_changes_only_live_steps_leaves_the_results_table_alone() -> None:
    """A busy server sends a lobby on every move; rebuilding a results table of a thousand
    stored matches for each took a tenth of a second, and keys waited seconds behind them."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            lobby = await lobby_shown(app, pilot)
            recent = app.screen.query_one("#recent", MatchTable)
            rows = dict(recent.rows)
            lobby["live"][0]["step"] += 1
            app.receive(lobby)
            await settle(pilot)
            assert all(recent.rows.get(key) is row for key, row in rows.items())
            assert f" {lobby['live'][0]['step']} " in screen_text(app)  # the live table did change

    asyncio.run(scenario())


def counting_draws(screen: Any) -> Callable[[], int]:
    """Count the lobby screen's draws from now on: the function returned says how many."""
    assert isinstance(screen, LobbyScreen)
    drawn = 0
    draw = screen.draw

    def counted() -> None:
        nonlocal drawn
        drawn += 1
        draw()

    screen.draw = counted  # type: ignore[method-assign]
    return lambda: drawn


def test_lobby_messages_that_arrive_together_are_drawn_once_after_the_last() -> None:
    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            draws = counting_draws(app.screen)
            lobby = lobby_message()
            for step in range(50):
                lobby["live"][0]["step"] = step
                app.receive(lobby)
            await settle(pilot)
            assert draws() == 1
            assert " 49 " in screen_text(app)

    asyncio.run(scenario())


def test_a_narrow_terminal_stacks_the_match_view_over_the_players_and_moves() -> None:
    """At 40 columns the side pane kept its 30 and squeezed the board to one cell row (found by QA)."""

    async def scenario() -> str:
        app = fixed_app()
        async with app.run_test(size=(40, 20)) as pilot:
            feed_match(app, "tic-tac-toe")
            await settle(pilot)
            return screen_text(app)

    screen = asyncio.run(scenario())
    board, players = screen.index("│ 1 │ X │ X │ X │"), screen.index("0 perfect-bot win")
    assert board < players  # the whole board row, and the players under it


def test_lobbies_that_come_faster_than_a_second_are_drawn_once_a_second() -> None:
    """A busy server sends four lobbies a second: drawn on each, the spectator took 30% of a core."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            draws = counting_draws(app.screen)
            for _ in range(8):  # two seconds of a busy server
                app.receive(lobby_message())
                await pilot.pause(0.25)
            await settle(pilot)
            assert 2 <= draws() <= 3

    asyncio.run(scenario())


def test_a_cursor_on_the_newest_result_stays_on_the_newest_as_more_come() -> None:
    """Kept on its row as new results came above, it scrolled the table away from them: on a
    busy server the same old rows stayed on screen while the count climbed (found by a QA helper)."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            lobby = await lobby_shown(app, pilot)
            recent = app.screen.query_one("#recent", MatchTable)
            assert recent.cursor_row == 0
            newest = lobby["recent"][-1] | {"match": "00000007aaaabbbbccccddddeeeeffff"}
            lobby = lobby | {"recent": [newest, *lobby["recent"]], "seq": 2}
            app.receive(lobby)
            await settle(pilot)
            assert (recent.cursor_row, recent.selected_key()) == (0, newest["match"])
            recent.move_cursor(row=2)
            chosen = recent.selected_key()
            app.receive(lobby | {"recent": [newest | {"match": "00000008aaaabbbbccccddddeeeeffff"}, *lobby["recent"]], "seq": 3})
            await settle(pilot)
            assert (recent.cursor_row, recent.selected_key()) == (3, chosen)  # a row chosen lower down is kept

    asyncio.run(scenario())


def test_a_void_match_opened_from_the_results_says_it_is_void_everywhere() -> None:
    """Its title said "void · full view", its board "(no view yet)" and its moves "ended before
    this app watched: r replays every move", which r then refused (found by a QA helper)."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            lobby = await lobby_shown(app, pilot)
            void = lobby["recent"][-1]
            app.open_match(void["match"])
            app.receive(void | {"t": "snapshot", "v": 1, "returns": None, "outcomes": None, "ranks": None, "view": {}})
            await settle(pilot)
            screen = screen_text(app)
            assert "void: stopped before its end (no replay)" in screen
            assert "(void: no view)" in screen and "(void: its moves are not shown)" in screen
            assert "full view" not in screen and "(no view yet)" not in screen and "replays every move" not in screen

    asyncio.run(scenario())


def test_on_a_short_terminal_the_lobby_scrolls_and_the_status_line_stays_in_view() -> None:
    """Below 13 rows the lobby's tables pushed the status line off the screen: "disconnected"
    was never shown there (found by a QA helper)."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=(100, 12)) as pilot:
            app.receive(lobby_message())
            app.connection_changed(Status("disconnected", "connection lost", retry_in=1.0, attempt=1))
            await settle(pilot)
            assert "✖ disconnected: connection lost; reconnecting in 1.0s (attempt 1)" in screen_text(app)

    asyncio.run(scenario())


def test_a_status_line_too_long_for_the_screen_ends_in_an_ellipsis() -> None:
    """At 80 columns the line ended at "Connect call failed": the countdown and any problem
    after it were cut off without a sign that there was more (found by a QA helper)."""
    refused = "Multiple exceptions: [Errno 111] Connect call failed ('127.0.0.1', 1), [Errno 99] Cannot assign requested address"

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=(80, 24)) as pilot:
            app.connection_changed(Status("disconnected", refused, retry_in=0.5, attempt=2))
            app.report("could not list the stored matches")
            await settle(pilot)
            [line] = [row for row in screen_text(app).splitlines() if "disconnected" in row]
            assert line.startswith(" ✖ disconnected: Multiple exceptions") and line.rstrip().endswith("…")

    asyncio.run(scenario())


def test_a_cursor_on_the_first_live_match_follows_that_match() -> None:
    """The live table is sorted by game, not newest first: the results' rule of staying on the
    first row moved Enter to a match the spectator never chose (found by a review)."""

    async def scenario() -> None:
        app = fixed_app()
        async with app.run_test(size=SIZE) as pilot:
            lobby = await lobby_shown(app, pilot)
            live = app.screen.query_one("#live", MatchTable)
            chosen = live.selected_key()
            assert live.cursor_row == 0 and chosen is not None
            earlier = lobby["live"][0] | {"match": "00000009aaaabbbbccccddddeeeeffff", "game": "a-game-sorted-first"}
            app.receive(lobby | {"live": [earlier, *lobby["live"]], "seq": 2})
            await settle(pilot)
            assert (live.cursor_row, live.selected_key()) == (1, chosen)

    asyncio.run(scenario())

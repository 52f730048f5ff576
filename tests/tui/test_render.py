"""View blocks drawn with Rich: every known type, and the view's text for anything else."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.tui.screens import load, screen_text
from tests.tui.screens import plain as as_text
from tui.render import DARK, LIGHT, render_view
from tui.state import ClockReading, Result
from tui.widgets import MoveLog, players_panel


def plain(view: Any, players: list[str] | None = None) -> str:
    return as_text(render_view(view, players or ["bob", "alice"]))


def test_every_recorded_view_draws_without_falling_back_to_text() -> None:
    for messages in load("matches").values():
        for msg in messages:
            assert "shown as text" not in plain(msg["view"])


def test_a_board_chat_cards_and_facts_are_drawn() -> None:
    view = {
        "text": "summary",
        "render": [
            {"type": "grid", "rows": [["X", ".", "O"]], "col_labels": ["a", "b", "c"], "title": "the board"},
            {"type": "cards", "groups": [{"label": "seat 0", "cards": ["K", "?"]}, {"label": "pile", "cards": []}]},
            {"type": "chat", "messages": [{"seat": 1, "text": "deal?"}]},
            {"type": "facts", "items": [["pot", "3"]]},
            {"type": "text", "text": "a note"},
        ],
    }
    out = plain(view)
    for expected in ("the board", "│ X │", " K ", " ? ", "alice (seat 1): deal?", "pot", "a note"):
        assert expected in out, expected
    assert "summary" not in out  # the text is only for what cannot be drawn


@pytest.mark.parametrize(
    "render",
    [
        [{"type": "hologram", "data": 1}],
        [{"type": "grid", "rows": "not rows"}],
        [{"type": "chat", "messages": [5]}],
        ["not a block"],
        "not a list",
    ],
)
def test_an_unknown_or_malformed_block_shows_the_views_text(render: Any) -> None:
    out = plain({"text": "X to move in the hologram", "render": render})
    assert "X to move in the hologram" in out
    assert "shown as text" in out


@pytest.mark.parametrize("width", [100, 30, 20, 12])
def test_a_board_keeps_its_pieces_however_narrow_the_screen(width: int) -> None:
    """Rich squeezed a board too wide for it until its cells came out blank (60x20 screens)."""
    rows = [[".", ".", "X", "O", ".", ".", "."], ["O", "X", "X", "O", ".", "X", "."]]
    out = as_text(render_view({"text": "", "render": [{"type": "grid", "rows": rows}]}, ["a", "b"]), width=width)
    drawn = [line for line in out.splitlines() if "X" in line or "O" in line]
    assert [line.count("X") + line.count("O") for line in drawn] == [2, 5], out
    assert max(len(line) for line in out.splitlines()) <= width


def test_known_blocks_still_draw_beside_an_unknown_one() -> None:
    out = plain({"text": "fallback", "render": [{"type": "facts", "items": [["pot", "9"]]}, {"type": "3d"}]})
    assert "pot" in out and "fallback" in out and "unknown block type '3d'" in out


def test_no_view_yet_and_the_light_palette() -> None:
    assert "no view yet" in plain({})
    render_view(load("matches")["tic-tac-toe"][3]["view"], ["a", "b"], LIGHT)


def test_column_labels_are_text_not_markup() -> None:
    """A label with square brackets was read as Rich markup: '[1]' vanished, '[/x]' raised
    while the screen was drawn and took the app down."""
    view = {"text": "t", "render": [{"type": "grid", "rows": [["X", "O"]], "col_labels": ["[1]", "[/x]"]}]}
    drawn = plain(view)
    assert "[1]" in drawn and "[/x]" in drawn


def test_a_clock_stays_on_its_seat_line_in_the_side_panel_of_an_80_column_screen() -> None:
    """Names were padded to 18 cells whatever their length, so at 80 columns every running
    clock broke after its seconds and 'left' went to a line of its own."""
    clocks = [ClockReading(0, True, 19_700.0), ClockReading(1, False, 20_000.0)]
    lines = as_text(players_panel(["c4-b", "c4-a"], clocks, LIGHT), width=28).splitlines()
    assert lines[0].split() == ["▶", "0", "c4-b", "19.7s", "left"] and lines[1].split() == ["1", "c4-a", "20s"]
    result = Result("m", "kuhn-poker", ["kuhn-b", "kuhn-a"], "finished", "complete", returns=[2, -2], outcomes=["win", "loss"])
    lines = as_text(players_panel(["kuhn-b", "kuhn-a"], None, LIGHT, result=result), width=28).splitlines()
    assert lines[0].split() == ["0", "kuhn-b", "win", "+2"] and lines[1].split() == ["1", "kuhn-a", "loss", "-2"]


def test_a_name_of_the_longest_kind_is_cut_so_that_each_seat_keeps_one_line() -> None:
    """A 64-character name wrapped onto lines of its own, and at 80x24 the last seat's outcome
    and the whole move log went out of view (found by a QA helper)."""
    names = ["b" * 64, "a" * 64, "short"]
    result = Result("m", "liars-dice", names, "finished", "complete", returns=[1, -1, 0], outcomes=["win", "loss", "loss"])
    lines = as_text(players_panel(names, None, LIGHT, result=result), width=40).splitlines()
    assert [line.split() for line in lines] == [
        ["0", "b" * 17 + "…", "win", "+1"],
        ["1", "a" * 17 + "…", "loss", "-1"],
        ["2", "short", "loss", "+0"],
    ]


def test_a_replays_move_log_scrolls_the_marked_step_into_view_when_its_lines_wrap() -> None:
    """It scrolled by the count of lines, not the rows they wrap to: at 80x24 the marker of an
    8-seat step was several steps below the view (found by a QA helper)."""
    from textual.app import App

    from tui.state import LogLine

    lines = [LogLine(step, " ".join(f"seat {seat}: bid {step + seat}" for seat in range(8))) for step in range(30)]

    class OneLog(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield MoveLog()

    async def scenario(size: tuple[int, int]) -> None:
        app = OneLog()
        async with app.run_test(size=size) as pilot:
            log = app.query_one(MoveLog)
            log.show(lines, DARK, current=25)
            await pilot.pause()
            await pilot.pause()
            assert "▶ 25" in screen_text(app), size

    asyncio.run(scenario((40, 12)))
    asyncio.run(scenario((40, 2)))  # a narrow terminal's pane: three rows above left the marker below (found by QA)


def test_a_narrow_live_match_leaves_the_clock_note_out_for_its_moves() -> None:
    """Under 80 columns the players and the moves share a third of the screen: the note took two
    of its rows, and no move was left in view (found by a QA helper)."""
    from tests.tui.screens import feed_match, fixed_app, settle

    async def side(size: tuple[int, int]) -> str:
        app = fixed_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            feed_match(app, "tic-tac-toe", upto=6)
            await settle(pilot)
            app.screen.tick()  # as every tick_s in a live match
            await settle(pilot)
            return screen_text(app)

    assert "clocks: the move budget" in asyncio.run(side((100, 30)))
    narrow = asyncio.run(side((60, 20)))
    assert "clocks: the move budget" not in narrow and "Moves" in narrow

"""Small widgets of the spectator: the status line, the players with their clocks, the
move log, the drawn view, and tables that open or sort on Enter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from tui.render import Palette, render_view
from tui.state import ClockReading, LogLine, Result, seconds


class StatusLine(Static):
    """One line at the bottom of every screen: the connection, then the last problem."""

    def show(self, connection: Text, problem: str | None, palette: Palette) -> None:
        line = connection.copy()
        if problem:
            line.append("  ⚠ ", style=f"bold {palette.warn}")
            line.append(problem, style=palette.warn)
        self.update(line)


class MatchTable(DataTable[Any]):
    """A row-cursor table whose Enter opens the row (shown in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open", show=True)]  # noqa: RUF012 (Textual's class API)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)

    def selected_key(self) -> str | None:
        if self.row_count == 0:
            return None
        try:
            return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
        except Exception:
            return None

    def fill(self, rows: Sequence[tuple[str, Sequence[Any]]], *, squeeze: Sequence[int] = (), newest_first: bool = False) -> None:
        """Replace the rows (key, cells), keeping the cursor on the same key where it still is;
        in a table ``newest_first``, unless it is on the first row, which it keeps: a cursor
        kept on its row as new ones came above scrolled the table away from them, so a busy
        server's recent results looked frozen while their count climbed (found by a QA helper).
        The columns in ``squeeze`` are cut short (…), in that order and to 12 cells at the
        least, where the table would be wider than the screen: one column alone cannot make
        room beside the names of a match of four or more."""
        texts = [[Text(c) if isinstance(c, str) else c for c in cells] for _, cells in rows]  # text, never markup
        labels = [cell_len(str(column.label)) for column in self.ordered_columns]
        widths = [max([labels[i]] + [t[i].cell_len for t in texts if i < len(t)]) for i in range(len(labels))]
        if squeeze and self.size.width and texts:
            excess = sum(widths) + 2 * len(widths) + 2 - self.size.width
            for column in squeeze:
                cut = min(max(excess, 0), max(widths[column] - 12, 0))
                excess -= cut
                widths[column] -= cut
                for cells in texts:
                    cells[column] = cells[column].copy()
                    cells[column].truncate(widths[column], overflow="ellipsis")
        keep, row = self.selected_key(), self.cursor_row
        self.clear()
        for column, width in zip(self.ordered_columns, widths, strict=True):
            column.content_width = width  # clear() keeps the widest cell a column ever held: the squeeze could not shrink it
        for (key, _), cells in zip(rows, texts, strict=True):
            self.add_row(*cells, key=key)
        keys = [key for key, _ in rows]
        if keys:  # the same match if it is still listed, else the same place
            kept = keys.index(keep) if keep in keys and (row > 0 or not newest_first) else min(row, len(keys) - 1)
            self.move_cursor(row=kept, animate=False)


class SortTable(DataTable[Any]):
    """A column-cursor table: Enter (or a click on a header) sorts by that column."""

    BINDINGS = [Binding("enter,s", "select_cursor", "Sort by column", show=True)]  # noqa: RUF012

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="column", zebra_stripes=True, **kwargs)


class ViewPane(VerticalScroll):
    """The match's view, drawn from its render blocks (or shown as its raw text)."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="view")

    def show(
        self, view: Any, players: Sequence[str], palette: Palette, *, raw: bool = False, empty: str = "(no view yet)"
    ) -> None:
        static = self.query_one("#view", Static)
        if raw:
            text = view.get("text") if isinstance(view, dict) else None
            static.update(Text(str(text or "(no text)")))
        else:
            static.update(render_view(view, players, palette, empty=empty))


def _marker(step: int, here: bool) -> str:
    """A move log line's first column: its step, marked when it is the replay's current one."""
    return f"{'▶' if here else ' '}{step:>3}"


class MoveLog(VerticalScroll):
    """One line per step; the current one marked (replays), the newest in view (live)."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="log")

    def show(
        self,
        lines: Sequence[LogLine],
        palette: Palette,
        *,
        current: int | None = None,
        follow: bool = True,
        empty: str = "(no moves yet)",
    ) -> None:
        static = self.query_one("#log", Static)
        if not lines:
            static.update(Text(empty, style=palette.muted))
            return
        out = Table.grid(padding=(0, 1), expand=True)
        out.add_column(no_wrap=True, justify="right")
        out.add_column(ratio=1)
        for line in lines:
            here = current is not None and line.step == current
            marker = Text(_marker(line.step, here), style=f"bold {palette.accent}" if here else palette.muted)
            out.add_row(marker, Text(line.text, style="bold" if here else ""))
        static.update(out)
        if current is not None:
            index = next((i for i, line in enumerate(lines) if line.step == current), 0)
            self.call_after_refresh(self._scroll_to_line, lines, index)
        elif follow:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _scroll_to_line(self, lines: Sequence[LogLine], index: int) -> None:
        """Scroll the marked step into view, up to three rows below the top: by the rows the lines
        above it take once wrapped, not by their count (with many seats a step wraps to three
        or four rows, and the marker was left several steps below the view; found by a QA helper)."""
        marker = max(len(_marker(line.step, False)) for line in lines)
        width = max(1, self.scrollable_content_region.width - marker - 1)  # the grid's padding of 1
        rows = sum(len(Text(line.text).wrap(self.app.console, width)) for line in lines[:index])
        # three rows of the steps before, where the pane has them: a pane of two rows (a narrow
        # terminal's) showed only the steps before the marked one (found by a QA helper)
        above = min(3, max(0, (self.scrollable_content_region.height - 1) // 2))
        self.scroll_to(y=max(0, rows - above), animate=False)


NAME_CELLS = 18
"""The widest a bot's name is shown beside its seat."""


def players_panel(
    players: Sequence[str],
    clocks: Sequence[ClockReading] | None,
    palette: Palette,
    *,
    result: Result | None = None,
    clock_note: str = "",
) -> Group:
    """Seat, name, and either the clock (live; ▶ marks the seat to move) or the outcome."""
    lines = []
    # no wider than the names, and a longer one is cut (…): the panel is narrow, and a 64-character
    # name wrapped onto lines of its own pushed the outcomes and the move log out of view (found by QA)
    width = min(NAME_CELLS, max((cell_len(name) for name in players), default=0))
    for seat, name in enumerate(players):
        reading = clocks[seat] if clocks and seat < len(clocks) else None
        running = reading is not None and reading.running
        line = Text()
        line.append("▶ " if running else "  ", style=f"bold {palette.accent}")
        line.append(f"{seat} ", style=palette.muted)
        shown = Text(name, style=f"bold {palette.seat(seat)}")
        shown.truncate(width, overflow="ellipsis", pad=True)
        line.append_text(shown)
        if result is not None:
            outcome = result.outcomes[seat] if result.outcomes and seat < len(result.outcomes) else result.status
            ret = f"{result.returns[seat]:+g}" if result.returns and seat < len(result.returns) else ""
            line.append(f" {outcome:<8} {ret}", style="bold" if outcome == "win" else "")
        elif reading is not None and reading.ms_left is not None:
            left = reading.ms_left
            if running:
                style = f"bold {palette.warn}" if left <= 0 else "bold"
                line.append(f" {seconds(max(0.0, left)):>6} left" + (", in grace" if left <= 0 else ""), style=style)
            else:
                line.append(f"   {seconds(left):>6}", style=palette.muted)
        lines.append(line)
    if clock_note:
        lines.append(Text(clock_note, style=f"italic {palette.muted}"))
    return Group(*lines)

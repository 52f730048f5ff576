"""View blocks to Rich renderables: any game drawn from its generic render structure.

A view is ``{"text": str, "render": [block, ...]}`` (games/render.py, docs/PROTOCOL.md
section 11). ``grid`` becomes a table (a board when its cells are single characters),
``cards`` rows of card chips (a hidden card is ``?``), ``chat`` a log with seat names,
``facts`` label-value pairs, ``text`` text. A block of an unknown type, or one whose
fields are not what the protocol says, is not guessed at: the view's text is shown.

Colours come from a ``Palette`` the app builds from its Textual theme, so they read on
the dark and the light theme alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tui.state import blocks, seat_name


@dataclass(frozen=True)
class Palette:
    """Colours chosen to read on the theme's background: one set for dark, one for light."""

    seats: tuple[str, ...] = ("#5fafff", "#ff7b72", "#7bd88f", "#ffb454", "#c792ea", "#4dd0e1")
    muted: str = "#8c8c8c"
    border: str = "#56636f"
    accent: str = "#ffa62b"
    warn: str = "#ffb454"
    chip_fg: str = "#111111"
    chip_bg: str = "#d6d6d6"
    hidden_bg: str = "#353535"

    def seat(self, seat: int) -> str:
        return self.seats[seat % len(self.seats)]


DARK = Palette()
LIGHT = Palette(
    seats=("#0b5cad", "#b3261e", "#1b7a35", "#8f5400", "#6a3ea1", "#00707d"),
    muted="#5a5a5a",
    border="#6e7a87",
    accent="#a35200",
    warn="#a35200",
    chip_fg="#111111",
    chip_bg="#fafafa",
    hidden_bg="#b5b5b5",
)


class BadBlock(Exception):
    """A block whose fields do not have the protocol's shape."""


def _need(block: Mapping[str, Any], key: str, kind: type) -> Any:
    value = block.get(key)
    if not isinstance(value, kind):
        raise BadBlock(f"{block.get('type')} block: '{key}' is not a {kind.__name__}")
    return value


def _cell_style(cell: str, palette: Palette) -> str:
    """X and O take the first two seats' colours (the common board marks); empty cells are muted."""
    if cell in ("", ".", "-", "·"):
        return palette.muted
    if cell == "X":
        return f"bold {palette.seat(0)}"
    if cell == "O":
        return f"bold {palette.seat(1)}"
    return ""


def render_grid(block: Mapping[str, Any], players: Sequence[str], palette: Palette) -> RenderableType:
    rows = _need(block, "rows", list)
    if not all(isinstance(r, list) for r in rows):
        raise BadBlock("grid block: a row is not a list")
    row_labels = [str(x) for x in block.get("row_labels") or []]
    col_labels = [str(x) for x in block.get("col_labels") or []]
    width = max([len(r) for r in rows] + [len(col_labels)] + [0])
    if width == 0:
        return Text("(nothing yet)", style=palette.muted)
    cells = [str(c) for r in rows for c in r]
    board = bool(cells) and all(len(c) <= 1 for c in cells)

    def table(padding: int) -> Table:
        drawn = Table(
            box=box.SQUARE if board else box.SIMPLE_HEAD,
            show_header=bool(col_labels),
            show_lines=board,
            header_style=f"bold {palette.muted}",
            border_style=palette.border,
            padding=(0, padding),
            pad_edge=True,
            expand=False,
        )
        if row_labels:
            drawn.add_column("", style=f"bold {palette.muted}", justify="right", no_wrap=True)
        for c in range(width):
            drawn.add_column(Text(col_labels[c] if c < len(col_labels) else ""), justify="center", no_wrap=True)  # not markup
        for r, row in enumerate(rows):
            label = [Text(row_labels[r] if r < len(row_labels) else "")] if row_labels else []
            shown = [Text(str(cell) if str(cell) else " ", style=_cell_style(str(cell), palette)) for cell in row]
            shown += [Text("")] * (width - len(row))
            drawn.add_row(*label, *shown)
        return drawn

    def text(gap: str) -> Text:
        return Text("\n".join(gap.join(str(c) or "." for c in row) for row in rows), no_wrap=True, overflow="crop")

    return _Fitted(table(1), table(0), text(" "), text(""))


class _Fitted:
    """The first of its renderings that fits the width given: Rich squeezes a table too
    wide for it until its cells come out blank, an empty-looking board on a narrow screen."""

    def __init__(self, *choices: RenderableType) -> None:
        self.choices = choices

    def _choice(self, console: Console, options: ConsoleOptions) -> RenderableType:
        unbounded = options.update(max_width=10_000)  # Measurement.get clamps to the width it is given
        fits = (c for c in self.choices if Measurement.get(console, unbounded, c).maximum <= options.max_width)
        return next(fits, self.choices[-1])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._choice(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._choice(console, options))


def render_cards(block: Mapping[str, Any], players: Sequence[str], palette: Palette) -> RenderableType:
    groups = _need(block, "groups", list)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("cards"), list):
            raise BadBlock("cards block: a group without a list of cards")
        label = str(group.get("label", ""))
        chips = Text()
        for i, card in enumerate(group["cards"]):
            if i:
                chips.append(" ")
            if str(card) == "?":
                chips.append(" ? ", style=f"{palette.muted} on {palette.hidden_bg}")
            else:
                chips.append(f" {card} ", style=f"bold {palette.chip_fg} on {palette.chip_bg}")
        if not group["cards"]:
            chips.append("—", style=palette.muted)
        grid.add_row(Text(label, style=_label_style(label, players, palette)), chips)
    return grid


def _label_style(label: str, players: Sequence[str], palette: Palette) -> str:
    """A group or fact labelled with a seat ('seat 1', 'Seat 0') or a player's name takes its colour."""
    words = label.lower().split()
    if len(words) == 2 and words[0] == "seat" and words[1].isdigit():
        return f"bold {palette.seat(int(words[1]))}"
    if label in players:
        return f"bold {palette.seat(list(players).index(label))}"
    return "bold"


def render_chat(block: Mapping[str, Any], players: Sequence[str], palette: Palette) -> RenderableType:
    messages = _need(block, "messages", list)
    if not messages:
        return Text("(no messages yet)", style=palette.muted)
    lines = []
    for message in messages:
        if not isinstance(message, dict):
            raise BadBlock("chat block: a message that is not a map")
        seat = message.get("seat")
        name = seat_name(players, seat)
        colour = palette.seat(seat) if isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0 else palette.muted
        line = Text.assemble((name, f"bold {colour}"), (f" (seat {seat})", palette.muted), ": ", str(message.get("text", "")))
        lines.append(line)
    return Group(*lines)


def render_facts(block: Mapping[str, Any], players: Sequence[str], palette: Palette) -> RenderableType:
    items = _need(block, "items", list)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for item in items:
        if not isinstance(item, list) or len(item) != 2:
            raise BadBlock("facts block: an item that is not a [label, value] pair")
        label = str(item[0])
        grid.add_row(Text(label, style=_label_style(label, players, palette)), Text(str(item[1])))
    return grid


def render_text(block: Mapping[str, Any], players: Sequence[str], palette: Palette) -> RenderableType:
    return Text(str(_need(block, "text", str)))


RENDERERS: dict[str, Callable[[Mapping[str, Any], Sequence[str], Palette], RenderableType]] = {
    "grid": render_grid,
    "cards": render_cards,
    "chat": render_chat,
    "facts": render_facts,
    "text": render_text,
}
TITLES = {"grid": "board", "cards": "cards", "chat": "chat", "facts": "facts", "text": ""}


def render_view(
    view: Any, players: Sequence[str], palette: Palette | None = None, *, empty: str = "(no view yet)"
) -> RenderableType:
    """Every block in a panel of its own; the view's text where a block cannot be drawn;
    ``empty`` where there is no view."""
    palette = palette or Palette()
    if not isinstance(view, Mapping) or not view:
        return Text(empty, style=palette.muted)
    text = view.get("text") if isinstance(view.get("text"), str) else ""
    parts: list[RenderableType] = []
    problems: list[str] = []
    render = view.get("render")
    if not isinstance(render, list):
        problems.append("no render blocks")
    for block in blocks(view) if isinstance(render, list) else []:
        kind = block.get("type")
        renderer = RENDERERS.get(kind) if isinstance(kind, str) else None
        if renderer is None:
            problems.append(f"unknown block type {kind!r}")
            continue
        try:
            body = renderer(block, players, palette)
        except BadBlock as error:
            problems.append(str(error))
            continue
        title = block.get("title") if isinstance(block.get("title"), str) else TITLES[kind]
        parts.append(_panel(body, title, palette, fit=kind in ("grid", "cards")))
    if isinstance(render, list) and len(blocks(view)) != len(render):
        problems.append("a block that is not a map")
    if problems:
        note = Text("shown as text: " + "; ".join(problems), style=f"italic {palette.muted}")
        parts.append(_panel(Group(Text(text or "(the view has no text)"), note), "view", palette, fit=False))
    return Group(*parts) if parts else Text(text or "(empty view)")


def _panel(body: RenderableType, title: str, palette: Palette, *, fit: bool) -> Panel:
    return Panel(
        body,
        title=Text(title, style=f"bold {palette.muted}") if title else None,
        title_align="left",
        border_style=palette.border,
        box=box.ROUNDED,
        expand=not fit,
        padding=(0, 1),
    )

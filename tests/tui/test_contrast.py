"""Every run of text on the stored screens reads against what is behind it.

The snapshots hold the exact colours drawn (test_snapshots keeps them equal to the screens),
so the check reads them: each text run's colour against the cell behind it, by WCAG's
contrast ratio. The floor is 3:1, WCAG's for large text and for the lines and marks of a
user interface (a board's grid, a pane's border, a scrollbar's thumb). Light-theme borders
(2.3:1), the sorted column's header (1.9:1) and the light footer's keys (2.9:1) were below it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FLOOR = 3.0
DIMMED = {"help"}
"""Screens under a modal, whose background Textual dims on purpose."""

_STYLE = re.compile(r"\.(terminal-\d+-r\d+) \{ fill: (#[0-9a-fA-F]{6})")
_RECT = re.compile(r'<rect fill="(#[0-9a-fA-F]{6})" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"')
_TEXT = re.compile(r'<text class="([^"]+)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')


def luminance(colour: str) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: str, other: str) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def runs_below(svg: str, floor: float) -> list[tuple[str, str, str, float]]:
    """(text, colour, background, ratio) of each run under ``floor``. A run's background is
    the last rectangle drawn under its first cell, as the export paints them in order."""
    fills = dict(_STYLE.findall(svg))
    rects = [(fill, float(x), float(y), float(w), float(h)) for fill, x, y, w, h in _RECT.findall(svg)]
    low = []
    for style, x, y, raw in _TEXT.findall(svg):
        text = html.unescape(raw).replace("\xa0", " ").strip()
        if not text or style not in fills:
            continue
        left, baseline = float(x) + 1, float(y) - 8
        behind = [fill for fill, rx, ry, rw, rh in rects if rx <= left < rx + rw and ry <= baseline < ry + rh]
        if behind and (ratio := contrast(fills[style], behind[-1])) < floor:
            low.append((text, fills[style], behind[-1], round(ratio, 2)))
    return low


def test_the_ratio_is_wcag_s() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#8a96a3", "#e0e0e0") == pytest.approx(2.28, abs=0.01)  # the light borders that were


def test_a_faint_run_is_found() -> None:
    svg = (
        ".terminal-1-r1 { fill: #8a96a3 }\n.terminal-1-r2 { fill: #1f1f1f }\n"
        '<rect fill="#e0e0e0" x="0" y="0" width="100" height="25"/>'
        '<text class="terminal-1-r1" x="0" y="20">──</text><text class="terminal-1-r2" x="50" y="20">bob</text>'
    )
    assert runs_below(svg, FLOOR) == [("──", "#8a96a3", "#e0e0e0", 2.28)]


@pytest.mark.parametrize(
    "path", sorted(path for path in SNAPSHOTS.glob("*.svg") if path.stem not in DIMMED), ids=lambda path: path.stem
)
def test_every_run_of_a_screen_reads(path: Path) -> None:
    assert runs_below(path.read_text(encoding="utf-8"), FLOOR) == []

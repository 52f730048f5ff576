"""Screens compared with stored SVG snapshots (``App.export_screenshot()``).

The screens are drawn from fixed messages with frozen clocks (tests/tui/screens.py), at a
fixed size. After a deliberate change of the TUI, look at the new screens and store them:

    ARENA_UPDATE_SNAPSHOTS=1 python -m pytest tests/tui/test_snapshots.py

A failing comparison says where it left the new SVG (in pytest's temporary folder), to
open in a browser beside the stored one.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.tui.screens import SCREENS, draw

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("ARENA_UPDATE_SNAPSHOTS") == "1"


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_screen_matches_its_snapshot(name: str, tmp_path: Path) -> None:
    svg = asyncio.run(draw(name))
    stored = SNAPSHOTS / f"{name}.svg"
    fresh = tmp_path / f"{name}.svg"
    if UPDATE or not stored.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        stored.write_text(svg, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"no snapshot for {name}: wrote {stored}; look at it, then run again")
        return
    if svg != stored.read_text(encoding="utf-8"):
        fresh.write_text(svg, encoding="utf-8")
        pytest.fail(f"{name} differs from {stored}; the new screen is in {fresh} (ARENA_UPDATE_SNAPSHOTS=1 stores it)")


def test_the_same_screen_draws_the_same_twice() -> None:
    assert asyncio.run(draw("match_negotiation")) == asyncio.run(draw("match_negotiation"))

"""docs/GAMES.md is exactly what the registries generate, bots included."""

from __future__ import annotations

from pathlib import Path

import games
from bots.catalog import bots_section, catalog_doc, game_doc
from games.catalog import REGENERATE

GAMES_MD = Path(__file__).resolve().parents[2] / "docs" / "GAMES.md"


def test_docs_games_md_is_what_the_registry_generates() -> None:
    written = GAMES_MD.read_text(encoding="utf-8") if GAMES_MD.exists() else ""
    assert written == catalog_doc(), f"docs/GAMES.md is out of date with the registered games and bots; run: {REGENERATE}"


def test_a_games_bots_are_listed_with_the_showcase_first_and_generic_bots_last() -> None:
    [(heading, body)] = bots_section(games.get("connect-four"))
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    assert heading == "Bots"
    assert rows[0].startswith("| `alphabeta` (showcase) | this game | `depth=")
    assert rows[-1].startswith("| `random` | any game | - |")
    plays = [row.split(" | ")[1] for row in rows]
    assert plays == sorted(plays, key=lambda p: p == "any game")


def test_one_games_entry_has_its_bots_section() -> None:
    doc = game_doc("kuhn-poker")
    assert doc.startswith("## Kuhn poker\n") and "### Bots" in doc and "`equilibrium`" in doc

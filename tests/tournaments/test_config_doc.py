"""docs/TOURNAMENTS.md's "Every key" tables against the keys a tournament file is read with:
a key added or renamed in the code and not in the doc fails here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from arena.match import Clock
from tests.doc_tables import doc_tables
from tournaments.config import GAME_KEYS, TOP_KEYS

DOC = Path(__file__).parents[2] / "docs" / "TOURNAMENTS.md"


def keys(rows: list[list[str]]) -> list[str]:
    return [row[0].strip("`") for row in rows]


def test_every_key_of_the_file_is_documented_once() -> None:
    tables = doc_tables(DOC)
    assert set(tables) == {"", "clock", "failure", "games"}
    assert keys(tables[""]) == [key for key in TOP_KEYS if key != "games"]  # [[games]] has a table of its own
    assert keys(tables["games"]) == list(GAME_KEYS)
    assert keys(tables["failure"]) == ["max_retries"]


def test_the_clock_keys_and_defaults_are_the_matchs() -> None:
    rows = doc_tables(DOC)["clock"]
    assert {key.strip("`"): int(default.strip("`")) for key, default, _ in rows} == {
        field.name: field.default for field in dataclasses.fields(Clock)
    }

"""The key tables of a docs page's "## Every key" section, for the tests that hold them to the code."""

from __future__ import annotations

import re
from pathlib import Path

SECTION_LINE = re.compile(r"`\[+(\w+)\]+`|`(\w+)`[,:]")


def doc_tables(page: Path) -> dict[str, list[list[str]]]:
    """The rows of each table under "## Every key", by the TOML section its introducing line
    names first, in brackets (`[ppo]`, `[[games]]`) or as a key (`clock`, `failure`:); "" for the top level."""
    text = page.read_text().split("\n## Every key\n", 1)[1].split("\n## ", 1)[0]
    tables: dict[str, list[list[str]]] = {}
    section, rows = "", None
    for line in text.splitlines():
        if not line.startswith("|"):
            rows = None
            found = SECTION_LINE.match(line)
            section = next(name for name in found.groups() if name) if found else section
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if rows is None:  # the header
            rows = tables.setdefault(section, [])
        elif not set(cells[0]) <= {"-"}:
            rows.append(cells)
    return tables

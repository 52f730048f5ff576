"""bench.server run end to end against ``arena serve`` itself (``--cli``): its bots keep to the
rate the server's welcome states, as well-behaved bots do, and the server's log stays apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


@pytest.mark.slow
def test_the_bench_against_arena_serve_keeps_to_its_rate_limit_and_measures_moves(tmp_path: Path) -> None:
    """Each bot was refused once as rate_limited, its move dropped, and every match stood still
    until its 10 s clock ran out: 0 moves a second, a NaN in the report, and the server's line per
    match drowned the progress lines (found by QA)."""
    argv = [sys.executable, "-m", "bench.server", "--cli", "--bots", "4", "--seconds", "2", "--warmup", "1", "--rounds", "1"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    figures = {row["name"]: row for row in json.loads(done.stdout, parse_constant=_no_constant)["results"]}
    assert figures["errors"]["value"] == 0, figures["errors"]
    assert figures["moves_relayed"]["value"] > 20
    assert figures["matches_finished"]["value"] > 0
    assert all(line.startswith("[bench.server]") for line in done.stderr.splitlines()), done.stderr

"""A stopped bench says so in one line, status 130, no traceback; the tournament bench also
leaves nothing behind: no server process, no temporary folder of SQLite stores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_tournament_bench_exits_130_and_removes_its_files(signum: int, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bench.tournament", "--games-per-pairing", "4", "--concurrency", "2"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert "bare play_match" in first
    time.sleep(0.3)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert out == ""
    assert "Traceback" not in err
    assert "interrupted" in err
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_engine_bench_says_so_in_one_line_without_a_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bench.engine", "--seconds", "30", "--games", "tic-tac-toe"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert proc.stderr.readline() == "tic-tac-toe ...\n"  # measuring: past the imports
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (130, "", "bench.engine: interrupted\n")

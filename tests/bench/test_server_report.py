"""bench.server's report is strict JSON even when a window timed nothing: a figure with no
samples is null, never NaN (which ``json.loads`` elsewhere, ``jq`` and browsers refuse)."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from arena.store import Store
from arena.store_writer import Call, StoreWriter
from bench.server import descendants, loop_waited_s, machine_ticks, report, server_cpu_s, thread_cpu_s, typical


@pytest.mark.parametrize("echo_cpu", [0.0, 0.8], ids=["neither-timed", "echo-timed"])
def test_a_window_with_no_finished_match_reports_null_latencies_not_nan(echo_cpu: float) -> None:
    """With the echo's CPU read and the arena's not (`--cli` at a standstill), the CPU ratio was
    NaN: its guard looked at the echo's figure alone (found by QA)."""
    nan = math.nan
    ours = {
        "moves_per_s": 1000.0,
        "rtt_p50": nan,
        "rtt_p99": nan,
        "rtt_count": 0,
        "server_errors": 0,
        "client_errors": 0,
        "error_codes": {},
        "voided": 0,
        "frames_per_s": 2000.0,
        "rss_start": 90.0,
        "rss_warm": 91.0,
        "rss_end": nan,
        "writer_rss_start": 60.0,
        "writer_rss_end": nan,
        "server_cpu": 0.0,
        "clients_cpu": 0.0,
        "store_writer_cpu": 0.0,
        "matches_per_s": 0.0,
        "turn_frame_bytes": 300.0,
        "turn_frame": b"t" * 301,
        "loop_waiting": nan,  # no /proc to read
        "machine_idle": nan,
    }
    echo = {
        "round_trips_per_s": 4000.0,
        "rtt_p50": 0.4,
        "rtt_p99": 1.3,
        "errors": 0,
        "server_cpu": echo_cpu,
        "clients_cpu": 0.0,
        "loop_waiting": 0.1044,
        "machine_idle": 0.16,
    }
    args = argparse.Namespace(
        bots=2, seconds=0.01, rounds=1, game="hanabi", workers=2, matches_per_bot=1, cli=False, warmup=0.0, profile_server=None
    )
    result = report(args, [(ours, echo)])
    text = json.dumps(result, allow_nan=False)
    figures = {row["name"]: row for row in json.loads(text)["results"]}
    assert figures["turn_rtt_p50"]["value"] is None
    assert figures["turn_rtt_p99"]["samples"] == 0
    assert figures["turn_rtt_p50"]["peer_value"] == 0.4
    assert figures["server_rss_end"]["value"] is None and figures["store_writer_rss"]["value"] is None
    assert figures["moves_per_server_cpu_s"]["value"] is None and figures["moves_per_server_cpu_s"]["ratio"] is None
    assert (figures["turn_frame"]["value"], figures["turn_frame"]["peer_value"]) == (300.0, 301)
    assert (figures["server_loop_waiting"]["value"], figures["server_loop_waiting"]["peer_value"]) == (None, 0.104)
    assert (figures["machine_idle"]["value"], figures["machine_idle"]["peer_value"]) == (None, 0.16)


def test_the_echo_sends_the_turn_frame_nearest_the_mean_not_the_first() -> None:
    """The first turn of a match, the first seen, is its shortest: the echo's frames were 25-50%
    smaller than the arena's in games that keep a transcript (found by QA)."""
    frames = [b"a" * 100, b"b" * 290, b"c" * 320, b"d" * 500]
    assert typical(frames, 302.5) == b"b" * 290
    assert typical([], 300.0) == b""


def _spin(store: Store, seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes' and threads' CPU is read from /proc")
@pytest.mark.trio
async def test_the_store_writers_cpu_is_told_apart_from_the_rest_of_the_server_and_counted_in_it(tmp_path: Path) -> None:
    """The report splits the server's CPU by the store writer's name, in the process the
    writer runs in, a grandchild of the server's: a writer named otherwise would make that
    figure a silent zero, and one not counted would make the server look cheaper."""
    async with trio.open_nursery() as nursery:
        writer = StoreWriter(tmp_path / "arena.db")
        await nursery.start(writer.run)
        family = descendants(os.getpid())
        assert writer.pid in family, (writer.pid, family)
        total, before = server_cpu_s(os.getpid())
        await writer.call(Call(_spin, 0.3))
        total_after, after = server_cpu_s(os.getpid())
        await writer.aclose()
    assert 0.2 <= after - before <= 1.0, (before, after)
    assert round(total_after - total, 2) >= round(after - before, 2), (total, total_after, before, after)  # in clock ticks
    assert thread_cpu_s(os.getpid(), "no such thread") == 0


def test_the_machines_idle_time_counts_waits_on_disks_and_the_whole_counts_stolen_time_but_not_guests_twice(
    tmp_path: Path,
) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 5 20 800 30 0 10 2 7 0\ncpu0 50 2 10 400 15 0 5 1 3 0\nintr 1\n")
    assert machine_ticks(stat) == (830, 967)
    assert machine_ticks(tmp_path / "missing") == (0, 0)


def _spin_thread_s(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="schedstat and affinity are Linux's")
def test_the_loops_wait_is_its_time_ready_to_run_without_a_core_not_its_time_running() -> None:
    """Read from the wrong field, the figure would grow with the loop's own work (time run)."""
    assert math.isnan(loop_waited_s(2**22 + 1))  # above Linux's largest pid: no such process
    pid, kept = os.getpid(), os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(kept)})  # one core, which the rival below shares
    try:
        before = loop_waited_s(pid)
        _spin_thread_s(0.3)
        alone = loop_waited_s(pid) - before
        rival = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(0.1)  # running
            before = loop_waited_s(pid)
            _spin_thread_s(0.3)
            shared = loop_waited_s(pid) - before
        finally:
            rival.kill()
            rival.wait()
    finally:
        os.sched_setaffinity(0, kept)
    assert shared > alone + 0.1, (alone, shared)  # a core shared half and half: about 0.3 s of waiting

"""Live-server load: moves relayed per second by the arena server, beside a bare echo server.

The arena server runs in its own process on loopback, with ``--bots`` registered bots
connected from 2 to 4 worker processes (each running its share of the bots in one trio
event loop, speaking the raw protocol in msgpack over real websockets). Every bot keeps
``--matches-per-bot`` matches of ``--game`` going, with as many standing seeks (sent once,
back in the lobby after each match), and answers each ``turn`` with a random legal action.
After a warm-up, over ``--seconds``:

- ``moves_relayed``: the delta of the server's own ``/metrics`` counter, per second;
- ``turn_rtt_p50`` / ``turn_rtt_p99``: server-side, from the ``turn`` being queued for
  the bot to its ``move`` being taken (the ``think_ms`` the store keeps with every turn),
  over the turns of the matches that ended within the window;
- ``errors``: ``error`` messages and bad closes the server counted, plus the errors the
  bots saw (error messages, dropped connections), over the whole run;
- ``frames_per_s``: websocket messages the server read and wrote per second (``/metrics``
  ``frames_in`` + ``frames_out``), with ``per_move``, and as a ratio of the echo's two per
  round trip: besides a move's ``turn`` and ``move``, each match sends every seat a
  ``match_start`` and a ``match_end``;
- ``server_rss_start`` / ``server_rss_warm`` / ``server_rss_end``: VmRSS of the server
  process once it listens, at the start of the measured window (bots connected, matches
  running) and at its end; ``store_writer_rss``, of the store writer's process, at the end
  (``start``: once the server listened);
- ``server_cpu``: cores used by the server and every process it started (the store writer's
  among them), with ``store_writer_cpu`` the writer's part, and ``moves_per_server_cpu_s``;
- ``server_loop_waiting``: the share of the window the server's event loop was ready to run
  but waited for a core, and ``machine_idle``, the share of all cores' time nobody used: a
  loop that waits while cores idle lost its time to where the scheduler put the processes,
  not to a lack of cores (on 2 cores, 200 bots, over four runs: the arena's loop waited
  17-18% of the window and the echo's 10-14%, while 15-17% of the machine's time went
  unused in either phase).

The peer, in the same run afterwards: a bare ``websockets.trio`` echo server in its own
process, as many connections from as many worker processes, each connection doing
request/response round trips of a real turn frame captured from the arena run (the one
nearest the mean size of its turn frames, reported as ``turn_frame``'s ``peer_value``). The ratio
is moves relayed per second over echo round trips per second. Both servers decline
permessage-deflate (the arena does; an echo that compressed would be handicapped), and the
clients of both offer it, as the SDK does. The bots say ``"acks": false`` in their hello,
as the SDK does: a move then costs the arena one frame in (``move``) and one out (the next
``turn``), as an echo round trip costs one in and one out.

By default the arena server is started by this module (``ArenaServer`` exactly as ``arena
serve`` builds it) with the per-connection rate limit raised, so that a small run with
fast bots is not throttled; ``--cli`` runs ``python -m arena.cli serve`` itself instead
(its 50 messages/s per bot then caps the load: the bots keep to the rate the welcome
states, a little under it). A server's log goes to a file beside its store, and the last
line of it ends the one-line error of a server that did not start.

Both servers share the machine with their clients, so a neighbour's load moves either
phase by a fifth or more. ``--rounds N`` runs the pair N times in turn (a fresh store and
server each time) and reports the round with the median ratio, with every round's moves/s,
echo round trips/s and ratio listed under ``moves_relayed``; errors count over all rounds.
Three by default: one round's ratio ranged from 0.38 to 0.63 within an hour on one machine.

    python -m bench.server [--bots 200] [--seconds 20] [--rounds 3] [--game tic-tac-toe]

Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import http.client
import json
import math
import os
import platform
import random
import re
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.cli import int_from
from bench import game_name, non_negative_float, positive_float, positive_int, quiet_interrupt

HOST = "127.0.0.1"
URL_LINE = re.compile(r"serving on ws://127\.0\.0\.1:(\d+)")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
MAX_BOTS = 10_000
"""Each bot is a connection the server holds, beside its worker's end of it: past the open
files one process may have (the server raises its limit towards 65,536, and this machine's
hard limit may be lower) the run failed after a minute in thousands of tracebacks."""
UNPACED_RATE = 10_000.0
"""A server's per-connection rate (messages a second) from which the bots no longer pace
themselves: the bench's own server is started with a rate no bot reaches."""
RTT_NOTE = "server-side: turn queued for the bot -> its move taken (think_ms of the turns of matches ended in the window)"


class BenchFailed(Exception):
    """The run could not be measured (a server that did not start, workers that did not get
    ready): said in one line, status 1, not a traceback."""


def log(text: str) -> None:
    print(f"[bench.server] {text}", file=sys.stderr, flush=True)


# ---- processes --------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM if the bench itself dies (Linux only)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Procs:
    """Every child process of the bench; all are stopped, in time, whatever happens."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            list(argv),
            start_new_session=True,  # a Ctrl-C reaches the bench only, which then stops them in order
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            **options,
        )
        self.procs.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT_S) -> None:
        """Close its stdin (workers stop on EOF), SIGTERM, and SIGKILL if it lingers."""
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    proc.kill()
                proc.wait(5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            self.stop(proc, timeout=3.0)
        self.procs.clear()


class LineReader:
    """Lines from a child's stdout pipe, with a deadline (no thread)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buffer = b""
        self.eof = False

    def line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer and not self.eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if selector.select(min(left, 0.5)):
                    chunk = os.read(self.fd, 65536)
                    self.eof = not chunk
                    self.buffer += chunk
        if b"\n" not in self.buffer:
            return None if not self.buffer else self._take(len(self.buffer))
        return self._take(self.buffer.index(b"\n") + 1)

    def _take(self, size: int) -> str:
        line, self.buffer = self.buffer[:size], self.buffer[size:]
        return line.decode("utf-8", "replace").rstrip("\n")

    def rest(self, timeout: float) -> str:
        """Everything until EOF (or the deadline)."""
        lines = []
        deadline = time.monotonic() + timeout
        while not self.eof or self.buffer:
            line = self.line(max(0.0, deadline - time.monotonic()))
            if line is None:
                break
            lines.append(line)
        return "\n".join(lines)


def wait_for_port(out_file: Path, proc: subprocess.Popen[bytes], timeout: float = START_TIMEOUT_S) -> int:
    """The port a server prints in its 'serving on ws://127.0.0.1:PORT' line; its stderr goes to
    ``out_file`` with the suffix ``.err``, whose last line a failure quotes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = URL_LINE.search(out_file.read_text(errors="replace")) if out_file.exists() else None
        if found:
            return int(found.group(1))
        if proc.poll() is not None:
            raise BenchFailed(f"the server exited with status {proc.returncode} before listening{last_words(out_file)}")
        time.sleep(0.05)
    raise BenchFailed(f"the server did not print its port within {timeout:g} s{last_words(out_file)}")


def last_words(out_file: Path) -> str:
    """The last line a server wrote on stderr, as the end of a sentence saying it failed."""
    errors = out_file.with_suffix(".err")
    lines = errors.read_text(errors="replace").strip().splitlines() if errors.exists() else []
    return f": {lines[-1]}" if lines else ""


def start_server(procs: Procs, argv: list[str], out_file: Path) -> subprocess.Popen[bytes]:
    """A server process, its stdout in ``out_file`` and its stderr (its log: a line per match
    from ``arena serve``) beside it, off the bench's own progress lines."""
    with out_file.open("wb") as out, out_file.with_suffix(".err").open("wb") as err:
        return procs.start(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_ticks(stat: Path) -> int:
    """User plus system clock ticks in a /proc ``stat`` file (its command, in parentheses, may hold spaces)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a process so far."""
    try:
        return _cpu_ticks(Path(f"/proc/{pid}/stat")) / TICKS
    except OSError:
        return 0.0


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, and by those, and so on (the store's writer process
    is started through multiprocessing's fork server, a child of the server)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # ended meanwhile
            continue
        parents.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def named(pids: Sequence[int], name: str) -> list[int]:
    """Those of ``pids`` whose process name starts with ``name`` (as far as Linux keeps it)."""
    kept = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().startswith(name[:15]):
                kept.append(pid)
    return kept


def server_cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds so far of the server with every process it started, and of its store
    writer (its process, or its thread in the server where it runs there)."""
    from arena.store_writer import WRITER_NAME

    family = descendants(pid)
    total = cpu_s(pid) + sum(cpu_s(child) for child in family)
    writer = thread_cpu_s(pid, WRITER_NAME) + sum(cpu_s(child) for child in named(family, WRITER_NAME))
    return total, writer


def thread_cpu_s(pid: int, name: str) -> float:
    """User plus system CPU seconds so far of the process's threads whose name starts with
    ``name`` (as far as the 15 bytes Linux keeps of a thread's name)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            if (task / "comm").read_text().startswith(name[:15]):
                total += _cpu_ticks(task / "stat")
        except OSError:  # the thread ended
            continue
    return total / TICKS


def metrics(port: int) -> dict[str, Any]:
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        return json.loads(response.read())
    finally:
        connection.close()


def percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def module_argv(*extra: str) -> list[str]:
    return [sys.executable, "-m", "bench.server", *extra]


def split(total: int, parts: int) -> list[tuple[int, int]]:
    """(first, count) for each of ``parts`` nearly equal slices of range(total)."""
    out, first = [], 0
    for i in range(parts):
        count = total // parts + (1 if i < total % parts else 0)
        if count:
            out.append((first, count))
        first += count
    return out


# ---- the measured phases (in the bench process) ----------------------------------------


def start_workers(procs: Procs, role: str, slices: list[tuple[int, int]], common: list[str]) -> list[LineReader]:
    readers = []
    for index, (first, count) in enumerate(slices):
        proc = procs.start(
            module_argv("--role", role, "--first", str(first), "--count", str(count), "--seed", str(index), *common),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        readers.append(LineReader(proc))
    for reader in readers:
        line = reader.line(START_TIMEOUT_S)
        if line != "ready":
            raise BenchFailed(f"a {role} worker did not get ready (said {line!r}, exit status {reader.proc.poll()})")
    return readers


def mark(readers: list[LineReader]) -> None:
    for reader in readers:
        assert reader.proc.stdin is not None
        reader.proc.stdin.write(b"mark\n")
        reader.proc.stdin.flush()


def finish_workers(procs: Procs, readers: list[LineReader]) -> list[dict[str, Any]]:
    """EOF on stdin stops a worker, which then prints its report as one JSON line."""
    reports = []
    for reader in readers:
        assert reader.proc.stdin is not None
        with contextlib.suppress(OSError):
            reader.proc.stdin.close()
    for reader in readers:
        text = reader.rest(STOP_TIMEOUT_S + 5)
        procs.stop(reader.proc)
        lines = [line for line in text.splitlines() if line.startswith("{")]
        if not lines:
            raise BenchFailed(f"a worker ended without a report (exit status {reader.proc.returncode})")
        reports.append(json.loads(lines[-1]))
    return reports


def loop_waited_s(pid: int) -> float:
    """Seconds so far that the process's first thread, a server's event loop, was ready to run
    but waited for a core (Linux schedstat: time run, time waited, slices); NaN where unread."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return math.nan


def machine_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int]:
    """Clock ticks so far of all cores together: idle (waiting on a disk included), and in all
    (the first line of /proc/stat: user, nice, system, idle, iowait, irq, softirq, steal, then
    the guests', which user time counts already)."""
    try:
        ticks = [int(field) for field in stat.read_text().splitlines()[0].split()[1:]]
    except (OSError, IndexError, ValueError):
        return 0, 0
    return ticks[3] + ticks[4], sum(ticks[:8])


class Window:
    """What the machine and a server's event loop did over a measured window."""

    def __init__(self, server_pid: int) -> None:
        self.pid = server_pid
        self.start = time.monotonic()
        self.waited = loop_waited_s(server_pid)
        self.ticks = machine_ticks()

    def close(self) -> dict[str, float]:
        """The window's length and, over it: how much of it the loop waited for a core, and how
        much of the machine's cores' time went idle (NaN where not known)."""
        length = time.monotonic() - self.start
        waited = loop_waited_s(self.pid) - self.waited
        idle, total = (after - before for after, before in zip(machine_ticks(), self.ticks, strict=True))
        return {"window": length, "loop_waiting": waited / length, "machine_idle": idle / total if total else math.nan}


def run_arena(args: argparse.Namespace, procs: Procs, tmp: Path) -> dict[str, Any]:
    from arena.store import Store
    from arena.store_writer import WRITER_NAME

    db = tmp / "arena.db"
    names = [f"bench-{i:04d}" for i in range(args.bots)]
    store = Store(db)
    try:
        tokens = {name: store.register_bot(name) for name in names}
    finally:
        store.close()
    tokens_file = tmp / "tokens.json"
    tokens_file.write_text(json.dumps([[name, tokens[name]] for name in names]))
    admin_file = tmp / "admin-token"
    admin_file.write_text(secrets.token_urlsafe(24))
    admin_file.chmod(0o600)  # arena serve refuses an admin token other accounts may read
    out_file = tmp / "arena.out"
    max_matches = args.matches_per_bot  # a standing seek comes back as its match is released
    if args.cli:
        argv = [sys.executable, "-m", "arena.cli", "serve", "--host", HOST, "--port", "0", "--db", str(db)]
        argv += ["--admin-token-file", str(admin_file), "--max-matches", str(max_matches)]
    else:
        argv = module_argv("--role", "arena-server", "--db", str(db), "--admin-token-file", str(admin_file))
        argv += ["--max-matches", str(max_matches)]
        if args.profile_server:
            argv += ["--profile-server", args.profile_server]
    log(f"arena: starting the server ({server_kind(args)}), {args.bots} bots")
    server = start_server(procs, argv, out_file)
    port = wait_for_port(out_file, server)
    rss_start = rss_mib(server.pid)
    writer_pids = named(descendants(server.pid), WRITER_NAME)
    writer_rss_start = sum(rss_mib(pid) for pid in writer_pids)
    url = f"ws://{HOST}:{port}"
    common = ["--url", url, "--tokens", str(tokens_file), "--game", args.game, "--matches-per-bot", str(args.matches_per_bot)]
    readers = start_workers(procs, "arena-worker", split(args.bots, args.workers), common)
    connected = metrics(port)["bots_connected"]
    log(f"arena: {connected} bots connected on port {port}; warming up {args.warmup:g} s")
    time.sleep(args.warmup)
    worker_pids = [r.proc.pid for r in readers]

    rss_warm = rss_mib(server.pid)
    before = metrics(port)
    measured, wall0 = Window(server.pid), time.time()
    cpu0 = server_cpu_s(server.pid), sum(cpu_s(pid) for pid in worker_pids)
    mark(readers)
    log(f"arena: measuring {args.seconds:g} s")
    time.sleep(args.seconds)
    mark(readers)
    cpu1 = server_cpu_s(server.pid), sum(cpu_s(pid) for pid in worker_pids)
    after = metrics(port)
    seen, wall1 = measured.close(), time.time()
    rss_end = rss_mib(server.pid)
    writer_rss_end = sum(rss_mib(pid) for pid in writer_pids)

    reports = finish_workers(procs, readers)
    procs.stop(server)
    window = seen["window"]
    rtts = turn_round_trips(db, wall0, wall1)
    client_errors = sum(report["errors"] for report in reports)
    codes = merged_counts([report["error_codes"] for report in reports])
    moves = (after["moves_relayed"] - before["moves_relayed"]) / window
    frames = sum(after[key] - before[key] for key in ("frames_in", "frames_out")) / window
    sent = sum(report["moves_in_window"] / report["window_s"] for report in reports if report["window_s"])
    turn_frames = [bytes.fromhex(report["turn_frame"]) for report in reports if report["turn_frame"]]
    mean_turn_frame = sum(r["turn_frame_bytes"] for r in reports) / max(1, sum(r["turn_frames"] for r in reports))
    log(f"arena: {moves:.0f} moves/s relayed (bots sent {sent:.0f}/s), {len(rtts)} turn round trips timed")
    return {
        "moves_per_s": moves,
        "bot_moves_per_s": sent,
        "matches_per_s": (after["matches_finished"] - before["matches_finished"]) / window,
        "rtt_p50": percentile(rtts, 0.50),
        "rtt_p99": percentile(rtts, 0.99),
        "rtt_count": len(rtts),
        "server_errors": after["errors"],
        "client_errors": client_errors,
        "error_codes": codes,
        "voided": after["matches_voided"],
        "rss_start": rss_start,
        "rss_warm": rss_warm,
        "rss_end": rss_end,
        "writer_rss_start": writer_rss_start,
        "writer_rss_end": writer_rss_end,
        "server_cpu": (cpu1[0][0] - cpu0[0][0]) / window,
        "clients_cpu": (cpu1[1] - cpu0[1]) / window,
        "store_writer_cpu": (cpu1[0][1] - cpu0[0][1]) / window,
        "frames_per_s": frames,
        "turn_frame": typical(turn_frames, mean_turn_frame),
        "turn_frame_bytes": mean_turn_frame,
        "loop_waiting": seen["loop_waiting"],
        "machine_idle": seen["machine_idle"],
    }


def typical(frames: Sequence[bytes], mean: float) -> bytes:
    """The frame whose size is nearest ``mean`` (b"" for none): the echo's payload. The first
    turn of a match, the first one seen, is its shortest (its history is empty), which gave
    the echo frames 25-50% smaller than the arena's in the games that keep a transcript."""
    return min(frames, key=lambda frame: abs(len(frame) - mean), default=b"")


def merged_counts(counts: Sequence[dict[str, int]]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for each in counts:
        for key, count in each.items():
            merged[key] = merged.get(key, 0) + count
    return merged


def turn_round_trips(db: Path, start: float, end: float) -> list[float]:
    """The server-side round trip of each turn of the matches that ended in [start, end], sorted."""
    from arena.store import Store, read

    def think_ms(store: Store) -> list[float]:
        sql = f"SELECT t.think_ms FROM matches m JOIN turns t ON {store.turns_of()} WHERE m.ended_at BETWEEN ? AND ?"
        return [row[0] for row in store.conn.execute(sql, (start, end))]

    return sorted(read(db, think_ms))


def run_echo(args: argparse.Namespace, procs: Procs, tmp: Path, payload: bytes) -> dict[str, Any]:
    payload_file = tmp / "payload.bin"
    payload_file.write_bytes(payload)
    out_file = tmp / "echo.out"
    log(f"echo: starting the websockets echo server, {args.bots} connections, {len(payload)}-byte frames")
    server = start_server(procs, module_argv("--role", "echo-server"), out_file)
    port = wait_for_port(out_file, server)
    common = ["--url", f"ws://{HOST}:{port}", "--payload", str(payload_file)]
    readers = start_workers(procs, "echo-worker", split(args.bots, args.workers), common)
    log(f"echo: warming up {args.warmup:g} s")
    time.sleep(args.warmup)
    worker_pids = [r.proc.pid for r in readers]
    measured = Window(server.pid)
    cpu0 = cpu_s(server.pid), sum(cpu_s(pid) for pid in worker_pids)
    mark(readers)
    log(f"echo: measuring {args.seconds:g} s")
    time.sleep(args.seconds)
    mark(readers)
    cpu1 = cpu_s(server.pid), sum(cpu_s(pid) for pid in worker_pids)
    seen = measured.close()
    window = seen["window"]
    reports = finish_workers(procs, readers)
    procs.stop(server)
    rate = sum(report["round_trips_in_window"] / report["window_s"] for report in reports if report["window_s"])
    errors = sum(report["errors"] for report in reports)
    rtts = sorted(ms for report in reports for ms in report["rtt_ms"])
    log(f"echo: {rate:.0f} round trips/s, {errors} errors")
    return {
        "round_trips_per_s": rate,
        "rtt_p50": percentile(rtts, 0.50),
        "rtt_p99": percentile(rtts, 0.99),
        "errors": errors,
        "server_cpu": (cpu1[0] - cpu0[0]) / window,
        "clients_cpu": (cpu1[1] - cpu0[1]) / window,
        "loop_waiting": seen["loop_waiting"],
        "machine_idle": seen["machine_idle"],
    }


Round = tuple[dict[str, Any], dict[str, Any]]  # (the arena phase, the echo phase)


def round_ratio(phases: Round) -> float:
    ours, echo = phases
    return ours["moves_per_s"] / echo["round_trips_per_s"] if echo["round_trips_per_s"] else 0.0


def median_round(rounds: Sequence[Round]) -> Round:
    """The round whose ratio is the median (the lower middle one of an even count)."""
    return sorted(rounds, key=round_ratio)[(len(rounds) - 1) // 2]


def report(args: argparse.Namespace, rounds: Sequence[Round]) -> dict[str, Any]:
    """Every figure comes from the median round, except the errors: those of all rounds count."""

    def r(value: float, digits: int = 1) -> float | None:
        """Rounded; null where nothing was measured (NaN is not JSON that strict parsers read)."""
        return round(value, digits) if math.isfinite(value) else None

    ours, echo = median_round(rounds)
    moves, trips = ours["moves_per_s"], echo["round_trips_per_s"]
    each_round = [
        {"value": r(o["moves_per_s"]), "peer_value": r(e["round_trips_per_s"]), "ratio": round(round_ratio((o, e)), 3)}
        for o, e in rounds
    ]
    ours_eff = moves / ours["server_cpu"] if ours["server_cpu"] else float("nan")
    echo_eff = trips / echo["server_cpu"] if echo["server_cpu"] else float("nan")
    results = [
        {
            "name": "moves_relayed",
            "value": r(moves),
            "unit": "moves/s",
            "peer": "websockets-echo",
            "peer_value": r(trips),
            "ratio": round(round_ratio((ours, echo)), 3) if trips else None,
            "note": "server /metrics moves_relayed delta; peer: echo round trips/s of a same-size frame, same connections",
            "rounds": each_round,
        },
        *(
            {
                "name": f"turn_rtt_{q}",
                "value": r(ours[f"rtt_{q}"], 3),
                "unit": "ms",
                "samples": ours["rtt_count"],
                "note": RTT_NOTE,
                "peer": "websockets-echo round trip (send -> echoed frame received)",
                "peer_value": r(echo[f"rtt_{q}"], 3),
            }
            for q in ("p50", "p99")
        ),
        {
            "name": "errors",
            "value": sum(o["server_errors"] + o["client_errors"] for o, _ in rounds),
            "unit": "count, every round",
            "server": sum(o["server_errors"] for o, _ in rounds),
            "client": sum(o["client_errors"] for o, _ in rounds),
            "codes": merged_counts([o["error_codes"] for o, _ in rounds]),
            "matches_voided": sum(o["voided"] for o, _ in rounds),
            "peer": "websockets-echo",
            "peer_value": sum(e["errors"] for _, e in rounds),
        },
        {
            "name": "frames_per_s",
            "value": r(ours["frames_per_s"]),
            "unit": "websocket messages/s, in and out",
            "per_move": round(ours["frames_per_s"] / moves, 2) if moves else None,
            "peer": "websockets-echo (2 per round trip)",
            "peer_value": r(2 * trips),
            "ratio": round(ours["frames_per_s"] / (2 * trips), 3) if trips else None,
            "note": "server /metrics frames_in + frames_out delta: a move is a turn out and a move in, and each match adds "
            "its match_start and match_end to every seat",
        },
        {"name": "server_rss_start", "value": r(ours["rss_start"]), "unit": "MiB"},
        {
            "name": "server_rss_warm",
            "value": r(ours["rss_warm"]),
            "unit": "MiB",
            "note": "at the start of the measured window: every bot connected, matches running; flat memory means end ~ this",
        },
        {"name": "server_rss_end", "value": r(ours["rss_end"]), "unit": "MiB"},
        {
            "name": "moves_per_server_cpu_s",
            "value": r(ours_eff),
            "unit": "moves/cpu-s",
            "peer": "websockets-echo",
            "peer_value": r(echo_eff),
            "ratio": round(ours_eff / echo_eff, 3) if math.isfinite(ours_eff) and math.isfinite(echo_eff) and echo_eff else None,
            "note": "throughput per CPU-second of the server (its processes, the store writer's among them): the ratio"
            " that does not depend on spare cores",
        },
        {"name": "server_cpu", "value": r(ours["server_cpu"], 2), "unit": "cores", "peer_value": r(echo["server_cpu"], 2)},
        {"name": "clients_cpu", "value": r(ours["clients_cpu"], 2), "unit": "cores", "peer_value": r(echo["clients_cpu"], 2)},
        {
            "name": "store_writer_cpu",
            "value": r(ours["store_writer_cpu"], 2),
            "unit": "cores",
            "note": "the part of server_cpu spent by the store writer, which commits matches (SQLite, ratings): its"
            " process, at a lower priority than the event loop (the server's own event loop pickles the batches it sends)",
        },
        {
            "name": "store_writer_rss",
            "value": r(ours["writer_rss_end"]),
            "unit": "MiB",
            "start": r(ours["writer_rss_start"]),
            "note": "VmRSS of the store writer's process at the end (start: once the server listened)",
        },
        {
            "name": "server_loop_waiting",
            "value": r(ours["loop_waiting"], 3),
            "unit": "fraction of the window",
            "peer": "websockets-echo",
            "peer_value": r(echo["loop_waiting"], 3),
            "note": "the server's event-loop thread ready to run but waiting for a core (Linux schedstat): time it lost"
            " to the other processes, the clients' among them, while it had work. With machine_idle above 0 the cores"
            " were not all busy: the loop waited where the scheduler placed it",
        },
        {
            "name": "machine_idle",
            "value": r(ours["machine_idle"], 3),
            "unit": "fraction of all cores' time",
            "peer": "websockets-echo",
            "peer_value": r(echo["machine_idle"], 3),
            "note": "/proc/stat over the window: the machine's spare time, the server's, clients' and everything else's",
        },
        {"name": "matches_finished", "value": r(ours["matches_per_s"]), "unit": "matches/s"},
        {
            "name": "turn_frame",
            "value": r(ours["turn_frame_bytes"]),
            "unit": "bytes (msgpack, mean)",
            "peer": "the echo's payload: the arena's turn frame nearest this mean",
            "peer_value": len(ours["turn_frame"]),
        },
    ]
    return {
        "bench": "server",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "bots": args.bots,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "game": args.game,
        "workers": args.workers,
        "matches_per_bot": args.matches_per_bot,
        "server": server_kind(args),
        "warmup": args.warmup,
        "results": results,
    }


def server_kind(args: argparse.Namespace) -> str:
    if args.cli:
        return "arena serve (CLI)"
    return "ArenaServer (bench launcher, rate limit raised)" + (", under cProfile" if args.profile_server else "")


class Interrupted(Exception):
    pass


def _on_term(signum: int, frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


def run(args: argparse.Namespace) -> dict[str, Any]:
    procs = Procs()
    previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-server-") as name:
            tmp = Path(name)
            rounds = []
            try:
                for index in range(args.rounds):
                    if args.rounds > 1:
                        log(f"round {index + 1} of {args.rounds}")
                    ours = run_arena(args, procs, Path(tempfile.mkdtemp(prefix=f"round-{index}-", dir=tmp)))
                    if not ours["turn_frame"]:
                        raise BenchFailed("the arena run saw no turn frame to size the echo payload")
                    rounds.append((ours, run_echo(args, procs, tmp, ours["turn_frame"])))
            finally:
                procs.stop_all()
    finally:
        signal.signal(signal.SIGTERM, previous)
    return report(args, rounds)


# ---- the child processes ----------------------------------------------------------------


async def _control(cancel: Any, marks: list[tuple[float, Any]], snapshot: Any) -> None:
    """Read the bench's commands on stdin: 'mark' records a snapshot; EOF stops the worker."""
    import trio

    stdin = trio.lowlevel.FdStream(os.dup(0))
    buffer = b""
    async with stdin:
        while True:
            chunk = await stdin.receive_some(4096)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip() == b"mark":
                    marks.append((time.perf_counter(), snapshot()))
    cancel()


def _measure(start: Callable[[Any], None], ready: Any, snapshot: Callable[[], int]) -> tuple[float, int]:
    """Run a worker's clients (``start(nursery)``) until the bench says stop; returns the
    measured window in seconds and how far ``snapshot``'s count moved within it."""
    import trio

    marks: list[tuple[float, Any]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            start(nursery)
            with trio.fail_after(START_TIMEOUT_S):
                await ready.wait()
            print("ready", flush=True)
            await _control(nursery.cancel_scope.cancel, marks, snapshot)

    trio.run(main)
    if len(marks) < 2:
        return 0.0, 0
    return marks[1][0] - marks[0][0], marks[1][1] - marks[0][1]


def arena_worker(args: argparse.Namespace) -> None:
    """``count`` bots in one event loop: hello, keep matches going, answer turns at random."""
    import msgpack
    import trio
    from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidHandshake
    from websockets.trio.client import connect

    from bots.client import Pacer

    pairs = json.loads(Path(args.tokens).read_text())[args.first : args.first + args.count]
    rng = random.Random(args.seed)
    packb, unpackb = msgpack.packb, msgpack.unpackb
    stats: dict[str, Any] = {"moves": 0, "errors": 0, "codes": {}, "turn_bytes": 0, "frames": []}
    ready = trio.Event()
    welcomed = [0]
    free_game: Any = None

    def error(code: str) -> None:
        stats["errors"] += 1
        stats["codes"][code] = stats["codes"].get(code, 0) + 1

    def free_action(msg: dict[str, Any]) -> str:
        nonlocal free_game
        if free_game is None:
            import games

            free_game = games.get(args.game)
        from games.api import Observation

        observation = msg["observation"]
        return free_game.random_free_action(Observation(observation["text"], observation.get("data") or {}), rng)

    async def bot(name: str, token: str) -> None:
        first = True
        while True:
            try:
                async with connect(args.url + "/bot", proxy=None, max_size=None) as ws:
                    await play(ws, name, token, first)
                return
            except (ConnectionClosed, OSError, InvalidHandshake) as failure:
                error(f"connection: {type(failure).__name__}")
            first = False
            await trio.sleep(0.1)

    async def play(ws: Any, name: str, token: str, first: bool) -> None:
        pace = None  # set by the welcome when the server's rate limit would bind (arena serve's 50 a second)

        async def paced(frame: bytes) -> None:
            """Within the rate the welcome states, as a well-behaved bot keeps: a message refused
            as rate_limited is dropped, and its match then stood still until its move timed out."""
            await pace.wait()
            await ws.send(frame)

        send = ws.send  # read and sent as the echo's clients do, without a coroutine of ours around each
        recv = ws.recv
        await send(packb({"t": "hello", "v": 1, "bot": name, "token": token, "acks": False}))
        seek = packb({"t": "seek", "v": 1, "games": [args.game], "standing": True})
        while True:
            try:
                frame = await recv()
            except ConnectionClosedOK:  # the server closed it as a server stops: the bot's run is over
                return
            msg = unpackb(frame)
            kind = msg["t"]
            if kind == "turn":
                legal = msg.get("legal")
                action = rng.choice(legal) if legal else free_action(msg)
                if len(stats["frames"]) < 1000:
                    stats["frames"].append(frame)
                    stats["turn_bytes"] += len(frame)
                move = {"t": "move", "v": 1, "match": msg["match"], "seat": msg["seat"], "step": msg["step"]}
                move["attempt"] = msg["attempt"]
                move["action"] = action
                await send(packb(move))
                stats["moves"] += 1
            elif kind == "welcome":
                limits = msg.get("limits") or {}
                if limits.get("rate", math.inf) < UNPACED_RATE:  # as the SDK paces a bot, a margin under the limit
                    pace = Pacer(limits)
                    send = paced
                for _ in range(args.matches_per_bot):
                    await send(seek)
                if first:
                    first = False
                    welcomed[0] += 1
                    if welcomed[0] == len(pairs):
                        ready.set()
            elif kind == "error":
                error(str(msg.get("code")))

    def snapshot() -> int:
        return stats["moves"]

    def start(nursery: Any) -> None:
        for name, token in pairs:
            nursery.start_soon(bot, name, token)

    window, moves = _measure(start, ready, snapshot)
    out = {
        "errors": stats["errors"],
        "error_codes": stats["codes"],
        "moves_in_window": moves,
        "window_s": window,
        "turn_frame": typical(stats["frames"], stats["turn_bytes"] / max(1, len(stats["frames"]))).hex(),
        "turn_frames": len(stats["frames"]),
        "turn_frame_bytes": stats["turn_bytes"],
    }
    print(json.dumps(out), flush=True)


def echo_worker(args: argparse.Namespace) -> None:
    """``count`` connections, each sending the payload and waiting for it back, in a loop."""
    import msgpack
    import trio
    from websockets.trio.client import connect

    payload = Path(args.payload).read_bytes()
    unpackb, perf_counter = msgpack.unpackb, time.perf_counter
    count = [0]
    rtts: list[float] = []
    recording = [False]
    errors = [0]
    ready = trio.Event()
    opened = [0]

    async def client() -> None:
        try:
            async with connect(args.url, proxy=None, max_size=None) as ws:
                opened[0] += 1
                if opened[0] == args.count:
                    ready.set()
                while True:
                    started = perf_counter()
                    await ws.send(payload)
                    unpackb(await ws.recv())  # the bots decode every frame too
                    count[0] += 1
                    if recording[0]:
                        rtts.append((perf_counter() - started) * 1000)
        except Exception:  # a dropped connection is an error of the run, counted
            errors[0] += 1

    def snapshot() -> int:
        recording[0] = not recording[0]
        return count[0]

    def start(nursery: Any) -> None:
        for _ in range(args.count):
            nursery.start_soon(client)

    window, trips = _measure(start, ready, snapshot)
    out = {"round_trips_in_window": trips, "window_s": window, "errors": errors[0], "rtt_ms": [round(ms, 4) for ms in rtts]}
    print(json.dumps(out), flush=True)


def echo_server(args: argparse.Namespace) -> None:
    """The peer: a bare websockets.trio echo server, configured as the arena's (no compression)."""
    import trio
    from websockets.exceptions import ConnectionClosed
    from websockets.trio.server import serve

    async def echo(ws: Any) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in ws:
                await ws.send(message)

    async def main() -> None:
        listeners = await trio.open_tcp_listeners(0, host=HOST)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                await nursery.start(functools.partial(serve, echo, listeners=listeners, compression=None))
                port = listeners[0].socket.getsockname()[1]
                print(f"echo serving on ws://{HOST}:{port}", flush=True)
                async for _ in signals:
                    break
                nursery.cancel_scope.cancel()

    trio.run(main)


def arena_server(args: argparse.Namespace) -> None:
    """``arena serve`` as cmd_serve builds it, with a per-connection rate limit the load fits in."""
    import trio

    from arena.match import Clock
    from arena.server import ArenaServer, Limits, bound_port, open_listeners, tune_gc_for_serving

    server = ArenaServer(
        args.db,
        clock=Clock(move_ms=10_000),
        limits=Limits(max_matches=args.max_matches, rate=1e9, burst=1_000_000),
        admin_token=Path(args.admin_token_file).read_text().strip(),
    )

    async def main() -> None:
        listeners = await open_listeners(HOST, 0)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                await nursery.start(server.run, listeners)
                print(f"arena serving on ws://{HOST}:{bound_port(listeners)}", flush=True)
                async for _ in signals:
                    break
                with trio.move_on_after(STOP_TIMEOUT_S / 2):
                    await server.shutdown()
                nursery.cancel_scope.cancel()

    tune_gc_for_serving()
    if not args.profile_server:
        trio.run(main)
        return
    import cProfile

    profiler = cProfile.Profile()
    try:
        profiler.runcall(trio.run, main)
    finally:
        profiler.dump_stats(args.profile_server)


ROLES = {"arena-worker": arena_worker, "echo-worker": echo_worker, "echo-server": echo_server, "arena-server": arena_server}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.server", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bots",
        type=int_from(1, MAX_BOTS),
        default=200,
        help=f"bots (and echo connections) at once, up to {MAX_BOTS:,} (default 200)",
    )
    parser.add_argument("--seconds", type=positive_float, default=20.0, help="measured window of each phase (default 20)")
    parser.add_argument(
        "--warmup", type=non_negative_float, default=None, help="seconds before measuring (default: a fifth, 1 to 3)"
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=3,
        help="arena and echo phases, alternated; the median round is reported (default 3)",
    )
    parser.add_argument("--game", type=game_name, default="tic-tac-toe", help="the game the bots play (default tic-tac-toe)")
    parser.add_argument("--workers", type=positive_int, default=None, help="client processes per phase (default 2 to 4, by CPUs)")
    from arena.server import Limits

    most = Limits().max_seeks  # each is a seek the bot keeps waiting; past the server's limit they were refused
    parser.add_argument(
        "--matches-per-bot", type=int_from(1, most), default=2, help=f"matches each bot keeps going, up to {most} (default 2)"
    )
    parser.add_argument("--cli", action="store_true", help="run the server as `python -m arena.cli serve` (default limits)")
    parser.add_argument("--profile-server", metavar="FILE", help="cProfile the arena server's event loop into FILE")
    hidden = argparse.SUPPRESS
    parser.add_argument("--role", choices=sorted(ROLES), help=hidden)
    for flag in ("--url", "--tokens", "--payload", "--db", "--admin-token-file"):
        parser.add_argument(flag, help=hidden)
    for flag in ("--first", "--count", "--seed", "--max-matches"):
        parser.add_argument(flag, type=int, default=0, help=hidden)
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.role:
        ROLES[args.role](args)
        return None
    import games

    seats = games.get(args.game).Config().players
    if args.bots < seats:  # fewer never make a table: the run found no turn to time and failed in a traceback
        parser.error(f"argument --bots: must be at least {seats} ({args.game} seats {seats} at a table), got {args.bots}")
    if args.warmup is None:
        args.warmup = min(3.0, max(1.0, args.seconds / 5))
    if args.workers is None:
        args.workers = max(2, min(4, (os.cpu_count() or 2) // 2))
    args.workers = max(1, min(args.workers, args.bots))
    if args.profile_server is not None:
        target = Path(args.profile_server).resolve()
        if args.cli:
            parser.error("argument --profile-server: it profiles the bench's own server; --cli runs arena serve unprofiled")
        if not args.profile_server or target.is_dir() or not target.parent.is_dir():
            parser.error(f"argument --profile-server: no file can be written at {args.profile_server!r}")
        args.profile_server = str(target)
    return run(args)


if __name__ == "__main__":
    try:
        with quiet_interrupt("bench.server", Interrupted, cleaned=True):
            result = main()
    except BenchFailed as failure:
        print(f"bench.server: error: {failure}", file=sys.stderr)
        sys.exit(1)
    if result is not None:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")

"""Child processes behind the spectator: an ``arena serve`` on a free port, bots.

``ServerProcess(db, read_only=True).start()`` runs ``python -P -m arena.cli serve --port 0``,
reads the URL from the line it prints ("arena serving on ws://HOST:PORT ..."), and
``stop()`` ends it (SIGTERM, which the server answers by shutting down cleanly, then
SIGKILL if it lingers). ``Children`` does the same for any other commands (bots). On Linux
every child is also told to die with this process, so a crash here leaves no orphans.

Only subprocesses here, no arena imports: the TUI stays a client of the server.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

SERVING = re.compile(r"arena serving on (ws://\S+?)(?: \(read-only\))?, store ")


def arena_command(*args: str, python: str = sys.executable) -> list[str]:
    """The command line of an ``arena`` subcommand, for a child process. ``-P``: ``python -m``
    puts the working directory first on the child's path, and there a user's own ``games/``
    (or ``bots/``, ``arena/``...) package took the place of ours: ``arena watch --db`` failed
    in its folder with "No module named 'games.api'" (found by a QA helper)."""
    return [python, "-P", "-m", "arena.cli", *args]


class LaunchError(RuntimeError):
    """A child that would not start; the message carries the end of its output."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """Linux: SIGTERM this child when the process that started it dies."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _popen(command: Sequence[str], *, stdout: Any, stderr: Any, cwd: str | Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        text=True,
        env=env,
        cwd=cwd,
        preexec_fn=preexec,
    )


def stop_process(process: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """SIGTERM, wait, SIGKILL: the process is gone when this returns."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait()


class ServerProcess:
    """An ``arena serve`` child on ``host:port`` (0: a free port, read from its output)."""

    def __init__(
        self,
        db: str | Path,
        *,
        read_only: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        extra: Sequence[str] = (),
        python: str = sys.executable,
    ) -> None:
        self.command = arena_command("serve", "--host", host, "--port", str(port), "--db", str(db), python=python)
        if read_only:
            self.command.append("--read-only")
        self.command += list(extra)
        self.process: subprocess.Popen[str] | None = None
        self.url: str | None = None
        self.output: collections.deque[str] = collections.deque(maxlen=40)
        self._lines: collections.deque[str] = collections.deque()
        self._arrived = threading.Condition()

    def start(self, timeout: float = 30.0) -> str:
        self.process = _popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=self._drain, args=(stream,), daemon=True).start()
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                while self._lines:
                    found = SERVING.search(self._lines.popleft())
                    if found:
                        self.url = found.group(1)
                        return self.url
                if self.process.poll() is not None and not self._lines:
                    time.sleep(0.05)  # let the drains catch the last words
                    raise LaunchError(f"arena serve exited with status {self.process.returncode}: {self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop()
                    raise LaunchError(f"arena serve did not say where it serves within {timeout:g}s: {self.tail()}")
                self._arrived.wait(min(left, 0.1))

    def _drain(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for line in stream:
            line = line.rstrip("\n")
            with self._arrived:
                self.output.append(line)
                self._lines.append(line)
                self._arrived.notify_all()

    def tail(self) -> str:
        return " | ".join(line for line in self.output if line.strip())[-600:] or "(no output)"

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is not None:
            stop_process(self.process, timeout)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Children:
    """Other child processes (bots), each writing to its own log file, all stopped at once."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self._logs: list[IO[str]] = []

    def spawn(self, command: Sequence[str], log: str | Path | None = None) -> subprocess.Popen[str]:
        out: Any = subprocess.DEVNULL
        if log is not None:
            out = open(log, "w", encoding="utf-8")  # noqa: SIM115 (closed in stop())
            self._logs.append(out)
        process = _popen(command, stdout=out, stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL)
        self.processes.append(process)
        return process

    def stop(self, timeout: float = 5.0) -> None:
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
        deadline = time.monotonic() + timeout
        for process in self.processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                process.wait()
        for handle in self._logs:
            handle.close()
        self.processes.clear()
        self._logs.clear()

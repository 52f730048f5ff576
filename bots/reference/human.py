"""A person at the terminal: shown the observation and the legal actions, types a move.

Prompts go to stderr so that stdout stays clean for `arena play --json`; what the other seats
wrote is shown with its control characters made visible, never obeyed by the terminal.
"""

from __future__ import annotations

import queue
import sys
import threading
import weakref
from typing import TextIO

import trio

from arena.protocol import visible
from arena.seats import SeatForfeit, Turn
from bots.base import Bot
from bots.parsing import extract_action
from bots.registry import register

LINE_POLL_S = 0.05
"""How often a prompt looks for the line typed: a person's move waits at most this long more."""


class _Lines:
    """The lines of one input stream, read by one thread of its own for every prompt.

    A prompt given up (its match ended: the opponent resigned, the clock ran out) must leave
    the next line to the next prompt. A thread reading for each prompt went on waiting once
    its prompt was abandoned, took the line typed for the next match and dropped it, and held
    the command's exit for ten seconds (found by QA)."""

    def __init__(self) -> None:
        self._read: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._reader: threading.Thread | None = None
        self._closed = False

    async def next(self, stream: TextIO) -> str:
        """The next line of ``stream``, or "" once it is closed (or fails: a terminal hung up)."""
        if self._reader is None:
            self._reader = threading.Thread(target=self._read_all, args=(stream,), name="terminal input", daemon=True)
            self._reader.start()
        while not self._closed:
            try:
                line = self._read.get_nowait()
            except queue.Empty:
                await trio.sleep(LINE_POLL_S)
                continue
            self._closed = not line
            return line
        return ""

    def _read_all(self, stream: TextIO) -> None:
        try:
            for line in iter(stream.readline, ""):
                self._read.put(line)
        except OSError:  # the terminal hung up (EIO): as closed, not a prompt that waits for ever
            pass
        finally:
            self._read.put("")


_INPUTS: weakref.WeakKeyDictionary[TextIO, _Lines] = weakref.WeakKeyDictionary()


async def _next_line() -> str:
    """The next line of whatever ``sys.stdin`` is now (a test may put a stream of its own there)."""
    stream = sys.stdin
    lines = _INPUTS.get(stream)
    if lines is None:
        lines = _INPUTS[stream] = _Lines()
    return await lines.next(stream)


@register
class HumanBot(Bot):
    name = "human"
    description = "You, at the terminal: shows your observation and legal actions and reads your move."

    async def act(self, turn: Turn) -> str:  # type: ignore[override]
        out = sys.stderr
        if turn.retry_reason:
            print(visible(f"\nNot accepted: {turn.retry_reason}. Try again."), file=out)
        else:
            print(visible(f"\n--- your turn (seat {turn.seat}, step {turn.step}) ---\n{turn.observation.text}"), file=out)
        if turn.legal_actions is not None:
            print(visible("Legal actions: " + ", ".join(turn.legal_actions)), file=out)
        else:
            print(visible(f"Format: {turn.action_format}"), file=out)
        print("Your move> ", end="", file=out, flush=True)
        line = await _next_line()
        if not line:
            raise SeatForfeit("resign", "the terminal closed its input")
        text = line.strip()
        return extract_action(text) or text

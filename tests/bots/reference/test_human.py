"""The person at the terminal: a prompt given up leaves the input to the next one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import trio

from arena.seats import SeatForfeit, Turn
from bots.reference.human import HumanBot
from games.api import Observation


def tic_tac_toe_turn(step: int) -> Turn:
    return Turn("test", "tic-tac-toe", 0, step, 0, Observation("a board", {}), ("a1", "b1"), None, None)


@pytest.mark.trio
async def test_a_prompt_given_up_leaves_the_line_typed_next_to_the_next_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt of a match that ended as the person typed (its opponent resigned) read on in a
    thread of its own, took the move typed for the next match and dropped it (found by QA)."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stream, os.fdopen(write_end, "w") as typed:
        monkeypatch.setattr(sys, "stdin", stream)
        bot = HumanBot("tic-tac-toe")
        with trio.move_on_after(0.2) as given_up:  # the match ended at this prompt
            await bot.act(tic_tac_toe_turn(0))
        assert given_up.cancelled_caught
        typed.write("b1\n")
        typed.flush()
        with trio.fail_after(5):
            assert await bot.act(tic_tac_toe_turn(1)) == "b1"


class HungUp:
    """A terminal that hung up: reading it fails (EIO)."""

    def readline(self) -> str:
        raise OSError(5, "Input/output error")


@pytest.mark.trio
async def test_a_terminal_that_hung_up_resigns_the_prompt_instead_of_leaving_it_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reading thread died with the error, and the prompt waited for a line for ever (found by QA)."""
    monkeypatch.setattr(sys, "stdin", HungUp())
    with trio.fail_after(5), pytest.raises(SeatForfeit, match="closed its input"):
        await HumanBot("tic-tac-toe").act(tic_tac_toe_turn(0))


def test_a_person_out_of_time_ends_the_command_without_a_wait_for_the_abandoned_prompt() -> None:
    """The abandoned prompt's thread went on reading, and the command waited ten seconds for it
    before it exited."""
    command = [sys.executable, "-m", "arena.cli", "play", "tic-tac-toe", "--seat", "human", "--seat", "random"]
    started = time.monotonic()
    read_end, write_end = os.pipe()  # the input stays open: the person never answers
    try:
        done = subprocess.run([*command, "--move-ms", "300"], stdin=read_end, capture_output=True, text=True, timeout=8)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert done.returncode == 0 and "finished, timeout" in done.stdout, done.stderr
    assert time.monotonic() - started < 8

"""A person at the terminal: shown the observation and the legal actions, types a move.

Prompts go to stderr so that stdout stays clean for `arena play --json`; what the other seats
wrote is shown with its control characters made visible, never obeyed by the terminal.
"""

from __future__ import annotations

import sys

from arena.protocol import visible
from arena.seats import SeatForfeit, Turn
from bots.base import Bot
from bots.parsing import extract_action
from bots.registry import register


@register
class HumanBot(Bot):
    name = "human"
    description = "You, at the terminal: shows your observation and legal actions and reads your move."

    def act(self, turn: Turn) -> str:
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
        line = sys.stdin.readline()
        if not line:
            raise SeatForfeit("resign", "the terminal closed its input")
        text = line.strip()
        return extract_action(text) or text

"""Bouton's winning strategy for Nim: always move to a position whose nim-sum is zero.

From a position with a non-zero nim-sum it never lets a win slip; from a lost position
it takes a single object from a largest heap, which keeps the game long and leaves the
opponent the most room to go wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.nim import action_name, nim_sum


def winning_moves(heaps: Sequence[int]) -> list[str]:
    """Every move that leaves a nim-sum of zero (none when the nim-sum already is zero)."""
    total = nim_sum(heaps)
    return [action_name(heap, size - (size ^ total)) for heap, size in enumerate(heaps, start=1) if size ^ total < size]


def stalling_moves(heaps: Sequence[int]) -> list[str]:
    """Taking one object from each of the largest heaps."""
    largest = max(heaps)
    return [action_name(heap, 1) for heap, size in enumerate(heaps, start=1) if size == largest]


@register
class NimOptimal(Bot):
    name = "nim-optimal"
    showcase = True
    description = "Moves to a zero nim-sum whenever it can (a sure win); otherwise takes 1 from a largest heap."
    games = ("nim",)

    def action_probabilities(self, turn: Turn) -> dict[str, float]:
        heaps = turn.observation.data["heaps"]
        moves = winning_moves(heaps) or stalling_moves(heaps)
        return {move: 1.0 / len(moves) for move in moves}

    def act(self, turn: Turn) -> str:
        return self.rng.choice(list(self.action_probabilities(turn)))

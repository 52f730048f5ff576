"""Level-k reasoning for the beauty contest (Nagel 1995; Stahl and Wilson 1994).

A level-0 player guesses 50, the middle of the range; a level-k player best-responds
to a crowd of level-(k-1) players, so it guesses fraction^k times 50. Experiments find
most people at level 1 or 2, hence the default. After the first round the anchor is
the previous round's average instead of 50: the crowd is assumed to repeat itself.
In a talk step it announces its guess truthfully.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.bargaining import fitting_message
from games.beauty_contest import MAX_GUESS
from games.iterated import TALK

MAX_K = 20
LEVEL_ZERO = MAX_GUESS / 2


def level_k_guess(k: int, fraction: float, anchor: float) -> int:
    """``fraction**k * anchor``, rounded half up to a whole guess within range."""
    return min(MAX_GUESS, max(0, math.floor(fraction**k * anchor + 0.5)))


@register
class LevelK(Bot):
    name = "level-k"
    showcase = True
    description = "Guesses fraction^k times 50 (22 for k=2 and 2/3), later times the last round's average."
    games = ("beauty-contest",)

    def __init__(self, game: str, seed: int = 0, k: int = 2) -> None:
        super().__init__(game, seed)
        if not 0 <= k <= MAX_K:
            raise BotSpecError(f"bot 'level-k': option 'k' must be between 0 and {MAX_K}, got {k}")
        self.k = k

    def guess(self, data: Mapping[str, Any]) -> int:
        averages = data["averages"]
        return level_k_guess(self.k, data["fraction"], averages[-1] if averages else LEVEL_ZERO)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        guess = self.guess(data)
        return fitting_message(f"I will guess {guess}.", data["message_chars"]) if data["phase"] == TALK else str(guess)

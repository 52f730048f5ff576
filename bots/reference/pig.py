"""Hold at 20: the classic simple Pig rule, and a strong one for its simplicity.

Twenty is where one more roll of a six-sided die stops paying on average: it gains 4
five times in six (the mean of 2 to 6) and loses the turn total once in six. It also
holds as soon as holding reaches the target, since nothing more is to be had.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.pig import HOLD, ROLL


@register
class PigHoldAt(Bot):
    name = "pig-hold-at"
    showcase = True
    description = "Rolls until the turn total reaches a threshold (20 by default) or would win, then holds."
    games = ("pig",)

    def __init__(self, game: str, seed: int = 0, threshold: int = 20) -> None:
        super().__init__(game, seed)
        if threshold < 1:
            raise BotSpecError(f"bot 'pig-hold-at': option 'threshold' must be at least 1, got {threshold}")
        self.threshold = threshold

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        total = data["turn_total"]
        if total == 0:
            return ROLL
        if total >= self.threshold or data["scores"][data["seat"]] + total >= data["target"]:
            return HOLD
        return ROLL

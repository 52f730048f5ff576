"""Hold at 20: the classic simple Pig rule, and a strong one for its simplicity.

Twenty is where one more roll of a six-sided die stops paying on average: it gains 4
five times in six (the mean of 2 to 6) and loses the turn total once in six. With a die of
``d`` faces the same reasoning gives ``(d - 1)(d + 2) / 2``, which the bot holds at unless
told a threshold: 20 held at on a two-faced die needs ten 2s in a row, and its matches
ran out of steps. It also holds as soon as holding reaches the target, since nothing more
is to be had.
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
    description = (
        "Rolls until the turn total reaches a threshold or would win, then holds; by default the total where"
        " one more roll stops paying on average (20 with a six-faced die)."
    )
    games = ("pig",)

    def __init__(self, game: str, seed: int = 0, threshold: int = 0) -> None:
        super().__init__(game, seed)
        if threshold < 0:
            raise BotSpecError(
                f"bot 'pig-hold-at': option 'threshold' must be at least 1, or 0 for the die's own, got {threshold}"
            )
        self.threshold = threshold

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        total = data["turn_total"]
        if total == 0:
            return ROLL
        if total >= (self.threshold or break_even(data["die"])) or data["scores"][data["seat"]] + total >= data["target"]:
            return HOLD
        return ROLL


def break_even(faces: int) -> int:
    """The turn total at which one more roll of a ``faces``-sided die gains on average what it risks."""
    return (faces - 1) * (faces + 2) // 2

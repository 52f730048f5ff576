"""The timing convention for ascending cards: wait in proportion to your lowest number.

With no talk, the only shared signal is the clock. If every player plays a card numbered
c at tick c / highest card * last tick, the cards come out in order unless two numbers
fall in the same tick, the convention The Mind's players find. It is the bar a learner
must reach without being told the convention.
"""

from __future__ import annotations

import math

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.ascending_cards import PLAY, WAIT


@register
class MindTimer(Bot):
    name = "mind-timer"
    showcase = True
    description = "Plays its lowest card once the clock reaches that card's share of the clock (card / highest card * ticks)."
    games = ("ascending-cards",)

    def __init__(self, game: str, seed: int = 0, pace: float = 1.0) -> None:
        """``pace`` scales the wait: below 1 it plays earlier, leaving spare ticks at the end.
        Above 1 the highest cards would fall due after the last tick and be lost."""
        super().__init__(game, seed)
        if not 0.0 <= pace <= 1.0:
            raise BotSpecError(f"bot '{self.name}': option 'pace' must be between 0 and 1, got {pace}")
        self.pace = pace

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        due = math.ceil(self.pace * data["hand"][0] / data["max_card"] * data["ticks"])
        return PLAY if data["tick"] >= due else WAIT

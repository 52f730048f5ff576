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
from bots.registry import register
from games.ascending_cards import PLAY, WAIT


@register
class MindTimer(Bot):
    name = "mind-timer"
    showcase = True
    description = "Plays its lowest card once the clock reaches that card's share of the clock (card / highest card * ticks)."
    games = ("ascending-cards",)

    def __init__(self, game: str, seed: int = 0, pace: float = 1.0) -> None:
        """``pace`` scales the wait: below 1 it plays earlier, leaving spare ticks at the end."""
        super().__init__(game, seed)
        self.pace = pace

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        due = math.ceil(self.pace * data["hand"][0] / data["max_card"] * data["ticks"])
        return PLAY if data["tick"] >= due else WAIT

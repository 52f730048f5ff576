"""Harvesters for the commons: one that keeps the stock productive, one that strips it.

Logistic regrowth is fastest at half capacity, so the largest catch that can be taken
for ever is the regrowth there (growth_rate * capacity / 4 a round). The sustainable
harvester aims the stock at that level: together, players of its kind take only what
lies above it, split equally, and settle into the maximum sustainable yield.
"""

from __future__ import annotations

import math

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.bargaining import fitting_message
from games.iterated import TALK

GAME = "commons-harvest"


@register
class SustainableHarvester(Bot):
    name = "sustainable-harvester"
    showcase = True
    games = (GAME,)
    description = "Takes an equal share of the stock above `target` of capacity (0.5: where regrowth is fastest)."

    def __init__(self, game: str, seed: int = 0, target: float = 0.5) -> None:
        super().__init__(game, seed)
        if not 0.0 <= target <= 1.0:
            raise BotSpecError(f"bot 'sustainable-harvester': option 'target' must be from 0 to 1, got {target}")
        self.target = target

    def quota(self, stock: int, capacity: int, players: int, max_harvest: int) -> int:
        """This seat's equal share of the stock above the target level."""
        surplus = max(0, stock - math.floor(self.target * capacity))
        return min(max_harvest, surplus // players)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        n = self.quota(data["stock"], data["capacity"], data["players"], data["max_harvest"])
        if data["phase"] == TALK:
            message = f"Let's keep the stock near {self.target * data['capacity']:g}: I take {n} this round, and so should you."
            return fitting_message(message, data["message_chars"])
        return f"harvest {n}"


@register
class GreedyHarvester(Bot):
    name = "greedy-harvester"
    games = (GAME,)
    description = "Takes as much as it may every round, whatever the stock."

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        return "" if data["phase"] == TALK else f"harvest {data['max_harvest']}"

"""The uniformly random bot: plays every game, the floor every other bot must beat."""

from __future__ import annotations

import games
from arena.seats import Turn
from bots.base import Bot
from bots.registry import register


@register
class RandomBot(Bot):
    name = "random"
    description = "Picks a uniformly random legal action (a random well-formed one in free-form games)."

    def act(self, turn: Turn) -> str:
        if turn.legal_actions is not None:
            return self.rng.choice(turn.legal_actions)
        return games.get(turn.game).random_free_action(turn.observation, self.rng)

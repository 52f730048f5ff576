"""A rule-of-thumb Leduc hold'em player: bets its strong hands, calls with middling ones,
gives up its weak ones, and bluffs now and then.

It reads nothing into the opponent's betting, so a learner should beat it by far more
than a random player does; it is the baseline a newcomer's first agent should already
beat, and a fixed opponent against which exploitation can be measured.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register


@register
class LeducHeuristic(Bot):
    name = "leduc-heuristic"
    showcase = True
    description = "Raises with a pair or a K, calls with a Q, checks or folds a J; bluffs a J with probability 'bluff'."
    games = ("leduc-holdem",)

    def __init__(self, game: str, seed: int = 0, bluff: float = 0.1) -> None:
        super().__init__(game, seed)
        if not 0.0 <= bluff <= 1.0:
            raise BotSpecError(f"bot 'leduc-heuristic': option 'bluff' must be between 0 and 1, got {bluff}")
        self.bluff = bluff

    def action_probabilities(self, turn: Turn) -> dict[str, float]:
        data = turn.observation.data
        legal = turn.legal_actions or ()
        card = data["card"]
        if card == "K" or card == data["public_card"]:
            return {"raise" if "raise" in legal else "call": 1.0}
        if card == "Q":
            return {"call" if "call" in legal else "check": 1.0}
        if "check" in legal:
            return {"check": 1.0 - self.bluff, "raise": self.bluff}
        return {"fold": 1.0}

    def act(self, turn: Turn) -> str:
        probabilities = self.action_probabilities(turn)
        draw = self.rng.random()
        for action, probability in probabilities.items():
            if draw < probability:
                return action
            draw -= probability
        return next(iter(probabilities))

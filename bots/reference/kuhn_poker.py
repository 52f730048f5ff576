"""A Nash equilibrium Kuhn poker player: unexploitable, so it is the yardstick others are
measured against. No opponent does better against it than the value of the game: on
average -1/18 chip a hand in seat 0 and +1/18 in seat 1.

Kuhn (1950) found the whole family of equilibria in closed form, one for each
``alpha`` in [0, 1/3]: the first player bluffs a J with probability alpha, bets a K
with probability 3 * alpha, and calls with a Q with probability alpha + 1/3; the second
player's strategy is the same in all of them. The strategy depends only on the own card
and the public betting, which is all an information set holds.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register

THIRD = 1.0 / 3.0


def bet_probabilities(alpha: float) -> dict[tuple[str, tuple[str, ...]], float]:
    """The probability of the aggressive action (bet, or call when facing a bet) for
    each (own card, betting so far) at which a player acts."""
    return {
        # Seat 0, first to act: bet or check.
        ("J", ()): alpha,
        ("Q", ()): 0.0,
        ("K", ()): 3.0 * alpha,
        # Seat 0 after check, bet: call or fold.
        ("J", ("check", "bet")): 0.0,
        ("Q", ("check", "bet")): alpha + THIRD,
        ("K", ("check", "bet")): 1.0,
        # Seat 1 after a check: bet or check.
        ("J", ("check",)): THIRD,
        ("Q", ("check",)): 0.0,
        ("K", ("check",)): 1.0,
        # Seat 1 facing a bet: call or fold.
        ("J", ("bet",)): 0.0,
        ("Q", ("bet",)): THIRD,
        ("K", ("bet",)): 1.0,
    }


@register
class KuhnEquilibrium(Bot):
    name = "equilibrium"
    showcase = True
    description = "Kuhn's closed-form Nash equilibrium; alpha in [0, 1/3] picks the first player's bluffing rate."
    games = ("kuhn-poker",)

    def __init__(self, game: str, seed: int = 0, alpha: float = THIRD) -> None:
        super().__init__(game, seed)
        # A typed-in 0.3333333333 (or 1/3 rounded up by the last bit) means 1/3.
        if not 0.0 <= alpha <= THIRD + 1e-9:
            raise BotSpecError(f"bot 'equilibrium': option 'alpha' must be between 0 and 1/3, got {alpha}")
        self.alpha = min(alpha, THIRD)
        self.strategy = bet_probabilities(self.alpha)

    def action_probabilities(self, turn: Turn) -> dict[str, float]:
        data = turn.observation.data
        legal = turn.legal_actions or ()
        aggressive = "call" if "call" in legal else "bet"
        passive = "fold" if aggressive == "call" else "check"
        p = self.strategy[(data["card"], tuple(data["history"]))]
        return {passive: 1.0 - p, aggressive: p}

    def act(self, turn: Turn) -> str:
        probabilities = self.action_probabilities(turn)
        (passive, p_passive), (aggressive, _) = probabilities.items()
        return passive if self.rng.random() < p_passive else aggressive

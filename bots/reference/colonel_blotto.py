"""A Colonel Blotto commander that contests a random majority of the battlefields.

Carrying a majority is all that counts, so it picks at random which majority (or more)
to fight for and spreads its troops over those fields with some jitter. The random
choice keeps it hard to counter; the spread beats both the uniformly random split and
the even split, which is the best fixed answer to random play. In a talk step it
states its rule, truthfully.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.bargaining import fitting_message
from games.colonel_blotto import allocation_name
from games.iterated import TALK


@register
class BlottoSpread(Bot):
    name = "blotto-spread"
    showcase = True
    description = "Spreads its troops, with some jitter, over a random majority (or more) of the battlefields."
    games = ("colonel-blotto",)
    message = "I will fight for a majority of the battlefields; which ones, I decide at random."
    """What it says in every talk step: its rule, truthfully."""

    def __init__(self, game: str, seed: int = 0, jitter: float = 0.5) -> None:
        """``jitter``: each chosen field's weight is drawn from (1 - jitter, 1]; 0 splits evenly
        over the chosen fields, 1 lets a chosen field get next to nothing."""
        super().__init__(game, seed)
        if not 0.0 <= jitter <= 1.0:
            raise BotSpecError(f"bot 'blotto-spread': option 'jitter' must be between 0 and 1, got {jitter}")
        self.jitter = jitter

    def allocate(self, troops: int, fields: int) -> list[int]:
        rng = self.rng
        chosen = rng.sample(range(fields), rng.randint(fields // 2 + 1, fields))
        weights = [1.0 - self.jitter * rng.random() for _ in chosen]
        total = sum(weights)
        shares = [troops * w / total for w in weights]
        whole = [int(s) for s in shares]
        # Largest remainders take the troops that rounding down left over.
        by_remainder = sorted(range(len(chosen)), key=lambda i: shares[i] - whole[i], reverse=True)
        for i in by_remainder[: troops - sum(whole)]:
            whole[i] += 1
        allocation = [0] * fields
        for field, count in zip(chosen, whole, strict=True):
            allocation[field] = count
        return allocation

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == TALK:
            return fitting_message(self.message, data["message_chars"])
        return allocation_name(self.allocate(data["troops"], data["fields"]))

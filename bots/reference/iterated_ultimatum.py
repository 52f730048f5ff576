"""Scripted players of the iterated ultimatum game: the fair one people are, the greedy one theory predicts.

The fair proposer plays as people do in the laboratory (offers of 40 to 50 percent,
rejections below about 30); the greedy proposer plays the subgame-perfect equilibrium
of the one-shot game (offer the least positive amount, take anything positive). Between
them they show whether an agent rewards fairness and how it handles being lowballed.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from arena.seats import Turn
from bots.base import Bot
from bots.reference.negotiation import check_fraction, say
from bots.registry import BotSpecError, register
from games.bargaining import ACCEPT
from games.iterated_ultimatum import OFFER, PROPOSE_PHASE, REJECT

SLACK = 1e-9
"""Tolerance when comparing a whole offer with a share of the pie (0.3 x 10 is 3.0000000000000004)."""


class UltimatumBot(Bot):
    """Offers an amount when it proposes, accepts or rejects when it responds; says what it does."""

    games: ClassVar[tuple[str, ...] | None] = ("iterated-ultimatum",)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        pie: int = data["pie"]
        if data["phase"] == PROPOSE_PHASE:
            amount = min(pie, self.offer(data))
            return say(data, f"{OFFER} {amount}", f"I offer you {amount} of {pie}.")
        offer: int = data["offer"]
        if self.accepts(offer, pie):
            return say(data, ACCEPT, f"I accept {offer}.")
        return say(data, REJECT, f"{offer} of {pie} is too little.")

    @abstractmethod
    def offer(self, data: Mapping[str, Any]) -> int:
        """What it offers the responder this round."""

    @abstractmethod
    def accepts(self, offer: int, pie: int) -> bool:
        """Whether it accepts ``offer`` out of ``pie``."""


@register
class FairProposer(UltimatumBot):
    name = "fair-proposer"
    showcase = True
    description = (
        "Offers 40 to 50 percent of the pie (the whole share nearest to that on a pie too small to hold one), accepts "
        "offers of at least 30 percent and rejects the rest."
    )

    def __init__(self, game: str, seed: int = 0, low: float = 0.4, high: float = 0.5, accept_at: float = 0.3) -> None:
        """``low``, ``high``: the range of shares of the pie it offers (drawn uniformly among the whole numbers
        in it); ``accept_at``: the least share it accepts."""
        super().__init__(game, seed)
        for key, value in (("low", low), ("high", high), ("accept_at", accept_at)):
            check_fraction(self.name, key, value)
        if low > high:
            raise BotSpecError(f"bot '{self.name}': option 'low' ({low}) must not exceed 'high' ({high})")
        self.low, self.high, self.accept_at = low, high, accept_at

    def offer(self, data: Mapping[str, Any]) -> int:
        pie: int = data["pie"]
        least, most = math.ceil(self.low * pie - SLACK), math.floor(self.high * pie + SLACK)
        if least <= most:
            return self.rng.randint(least, most)
        # no whole share in the range: the nearer of those on either side (round() gave 2 of a pie of 3, 67%)
        below, above = most, least
        return below if self.low * pie - below <= above - self.high * pie else above

    def accepts(self, offer: int, pie: int) -> bool:
        return offer + SLACK >= self.accept_at * pie


@register
class GreedyProposer(UltimatumBot):
    name = "greedy-proposer"
    description = "Offers the least positive amount and accepts any positive offer: the one-shot game's equilibrium."

    def __init__(self, game: str, seed: int = 0, offer: int = 1) -> None:
        """``offer``: what it offers the responder (capped at the pie)."""
        super().__init__(game, seed)
        if offer < 0:
            raise BotSpecError(f"bot '{self.name}': option 'offer' must be at least 0, got {offer}")
        self.amount = offer

    def offer(self, data: Mapping[str, Any]) -> int:
        return self.amount

    def accepts(self, offer: int, pie: int) -> bool:
        return offer > 0

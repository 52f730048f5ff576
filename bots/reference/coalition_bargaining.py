"""A scripted coalition builder for coalition bargaining: buy the cheapest majority.

It plays the stationary equilibrium logic of Baron and Ferejohn (1989): if a vote fails,
every seat can expect an equal share of the next, smaller pie (nobody knows yet who will
be in the next coalition), and nothing after the last round. As proposer it gives just
enough others that continuation value, rounded up, and keeps the rest; a seat that has
voted down a share before is priced above it, so it buys the cheapest majority it can
see. As voter it says yes when its share is at least its continuation value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.reference.negotiation import say
from bots.registry import BotSpecError, register
from games.coalition_bargaining import NO, PROPOSE, PROPOSE_PHASE, YES

SLACK = 1e-9
"""Tolerance when rounding expected values to whole shares."""


def continuation_value(data: Mapping[str, Any]) -> float:
    """What a seat can expect if the current proposal fails: an equal share of the next pie, or 0 after the last round."""
    pies: list[int] = data["pies"]
    following = data["round"]  # the 0-based index of the next round
    return pies[following] / data["players"] if following < len(pies) else 0.0


def asking_prices(data: Mapping[str, Any]) -> dict[int, int]:
    """The least share each other seat should accept: its continuation value rounded up, or one more
    than a share it has already voted down, if that is higher."""
    base = math.ceil(continuation_value(data) - SLACK)
    prices = {seat: base for seat in range(data["players"]) if seat != data["seat"]}
    for past in data["votes"]:
        for seat, (share, vote) in enumerate(zip(past["shares"], past["votes"], strict=True)):
            if seat in prices and vote == NO:
                prices[seat] = max(prices[seat], share + 1)
    return prices


@register
class MinimalWinning(Bot):
    name = "minimal-winning"
    showcase = True
    description = (
        "Proposes to buy the cheapest majority, giving just enough others what they can expect if the vote fails; "
        "votes yes when its share is at least what it can expect if the vote fails."
    )
    games = ("coalition-bargaining",)

    def __init__(self, game: str, seed: int = 0, sweetener: int = 0) -> None:
        """``sweetener``: extra points it gives each seat it buys, to win over voters who want more than the minimum."""
        super().__init__(game, seed)
        if sweetener < 0:
            raise BotSpecError(f"bot '{self.name}': option 'sweetener' must be at least 0, got {sweetener}")
        self.sweetener = sweetener

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == PROPOSE_PHASE:
            return self.propose(data)
        share: int = data["proposal"][data["seat"]]
        expected = continuation_value(data)
        if share + SLACK >= expected:
            return say(data, YES, f"Yes: {share} is at least what I can expect if this fails.")
        return say(data, NO, f"No: I can expect about {expected:.0f} if this fails.")

    def propose(self, data: Mapping[str, Any]) -> str:
        """Buy the ``players // 2`` cheapest other seats (ties drawn at random) at their asking
        price plus the sweetener, as far as the pie allows; keep the rest."""
        me, players, pie = data["seat"], data["players"], data["pie"]
        prices = asking_prices(data)
        others = list(prices)
        self.rng.shuffle(others)
        bought = sorted(others, key=prices.__getitem__)[: players // 2]
        shares = [0] * players
        left = pie
        for seat in bought:
            shares[seat] = min(left, prices[seat] + self.sweetener)
            left -= shares[seat]
        shares[me] = left
        named = " and ".join(f"seat {seat} gets {shares[seat]}" for seat in sorted(bought))
        return say(data, f"{PROPOSE} {' '.join(map(str, shares))}", f"S{named[1:]}: at least what waiting would give you.")

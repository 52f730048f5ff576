"""A scripted trader for buyer-seller bargaining: anchor high, concede toward a fair price.

It aims at the midpoint of cost and value (the Nash bargaining price), using the other
side's number when the information regime shows it and an estimate when it does not: the
middle of the other's range, moved by what the other side's offers reveal (a buyer who
bids p values the item at p or more; a seller who asks p has a cost of p or less). It
never trades at a loss, and on the last turn takes any offer that is not one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.reference.negotiation import check_fraction, progress, say
from bots.registry import register
from games.bargaining import ACCEPT
from games.buyer_seller import OFFER, SELLER, parse_action


def others_offers(data: Mapping[str, Any]) -> list[int]:
    """The prices the other side has offered so far."""
    prices = []
    for entry in data["history"]:
        if entry["seat"] != data["seat"]:
            price, _ = parse_action(entry["action"])
            if price is not None:
                prices.append(price)
    return prices


def estimate(data: Mapping[str, Any]) -> tuple[float, float]:
    """(cost, value) as this seat knows or guesses them."""
    theirs = others_offers(data)
    cost: float | None = data["cost"]
    value: float | None = data["value"]
    if cost is None:
        low, high = data["cost_range"]
        cost = min([(low + high) / 2, *theirs])
    if value is None:
        low, high = data["value_range"]
        value = max([(low + high) / 2, *theirs])
    return cost, value


@register
class FairTrader(Bot):
    name = "fair-trader"
    showcase = True
    description = (
        "Opens at a price favourable to itself, concedes toward the midpoint of its estimate of cost and value, "
        "accepts any offer at least as good as its own next one."
    )
    games = ("buyer-seller",)

    def __init__(self, game: str, seed: int = 0, concede: float = 1.0) -> None:
        """``concede``: how much of the way from its opening price to the midpoint it goes by the last turn."""
        super().__init__(game, seed)
        check_fraction(self.name, "concede", concede)
        self.concede = concede

    def ask(self, data: Mapping[str, Any]) -> int:
        """The price it offers now: from the far end of the other's range (or the other's known number) toward the
        midpoint, rounded in its own favour, within the price range and never at a loss."""
        cost, value = estimate(data)
        seller = data["seat"] == SELLER
        other, far = ("value", data["value_range"][1]) if seller else ("cost", data["cost_range"][0])
        opening = far if data[other] is None else data[other]
        target = (cost + value) / 2
        price = opening + (target - opening) * self.concede * progress(data["turn"], data["max_turns"])
        low, high = data["price_range"]
        if seller:
            return min(high, max(math.ceil(price), data["cost"]))
        return max(low, min(math.floor(price), data["value"]))

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        ask = self.ask(data)
        standing = data["standing_offer"]
        if standing is not None:
            price = standing["price"]
            seller = data["seat"] == SELLER
            gain = price - data["cost"] if seller else data["value"] - price
            at_least_as_good = price >= ask if seller else price <= ask
            if gain >= 0 and (at_least_as_good or data["turn"] == data["max_turns"]):
                return say(data, ACCEPT, f"Deal at {price}.")
        pitch = "I can let it go for" if data["seat"] == SELLER else "I can pay"
        return say(data, f"{OFFER} {ask}", f"{pitch} {ask}.")

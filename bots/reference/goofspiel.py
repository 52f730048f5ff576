"""The classic Goofspiel baseline: bid the card equal to the prize.

Every prize card has a card of the same value in each hand, so a player who always
matches the prize spends each card on "its" prize and always can; it wins every prize a
random bidder under-bids and costs nothing to compute, so it is the yardstick any
thinking player must beat.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.goofspiel import ACTION_OF


@register
class GoofspielMatching(Bot):
    name = "goofspiel-matching"
    showcase = True
    description = "Bids the card equal to the prize (the nearest card it still holds if that one is gone)."
    games = ("goofspiel",)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        prize = data["prize"]
        # Only a hand that has strayed from matching (another policy played it before) can lack the prize's card.
        card = min(data["hand"], key=lambda c: (abs(c - prize), c))
        return ACTION_OF[card]

"""Pure coordination bots: the focal-point picker and the follower of the group's habit.

Two answers to "what will the others choose?": what stands out before anyone has moved
(the first option listed, as heads before tails), and what most players chose last round.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.bargaining import fitting_message
from games.iterated import TALK


@register
class FocalPoint(Bot):
    name = "focal-point"
    showcase = True
    description = "Always picks the most salient option: the first one listed."
    games = ("coordination",)

    def act(self, turn: Turn) -> str:
        return _say(turn.observation.data, turn.observation.data["options"][0])


@register
class FollowMajority(Bot):
    name = "follow-majority"
    description = (
        "Picks at random in the first round, then the option most players chose last round (the first listed among ties)."
    )
    games = ("coordination",)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        options: list[str] = data["options"]
        if not data["moves"]:
            return _say(data, self.rng.choice(options))
        counts = Counter(data["moves"][-1])
        return _say(data, max(options, key=lambda option: counts[option]))


def _say(data: Mapping[str, Any], option: str) -> str:
    """The option as the move, or in a talk step as the message announcing it, if it fits the limit."""
    return fitting_message(option, data["message_chars"]) if data["phase"] == TALK else option

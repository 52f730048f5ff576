"""Contributors and free-riders for the public goods game.

Experiments (Fischbacher, Gächter and Fehr 2001) find most people are conditional
cooperators: they give about what they expect the others to give. Against such players
free-riding pays for a while and then drags everyone's contributions down; with the
punishment step on, the conditional cooperator fines the worst free-rider, which is what
keeps contributions up in the experiments.
"""

from __future__ import annotations

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.bargaining import fitting_message
from games.iterated import MOVE, TALK
from games.public_goods import NONE

GAME = "public-goods"


@register
class ConditionalCooperator(Bot):
    name = "conditional-cooperator"
    showcase = True
    games = (GAME,)
    description = (
        "Gives half its endowment first, then the others' average contribution of the previous round; "
        "punishes the lowest contributor when it gave less than half."
    )

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == TALK:
            return fitting_message("I will give what the rest of you gave on average last round.", data["message_chars"])
        seat, endowment = data["seat"], data["endowment"]
        if data["phase"] == MOVE:
            if not data["moves"]:
                return f"contribute {endowment // 2}"
            others = [given for other, given in enumerate(data["moves"][-1]) if other != seat]
            return f"contribute {int(sum(others) / len(others) + 0.5)}"
        given = data["moves"][-1]
        lowest = min((other for other in range(data["players"]) if other != seat), key=lambda other: given[other])
        return f"punish {lowest}" if 2 * given[lowest] < endowment else NONE


@register
class FreeRider(Bot):
    name = "free-rider"
    games = (GAME,)
    description = "Contributes nothing and never punishes: lives off the others' contributions."

    def act(self, turn: Turn) -> str:
        phase = turn.observation.data["phase"]
        if phase == TALK:
            return ""
        return "contribute 0" if phase == MOVE else NONE

"""The classic strategies of Axelrod's iterated prisoner's dilemma tournaments.

They are the yardsticks a learning agent is measured against: a good agent should
cooperate with the nice ones, not be exploited by always-defect, and exploit
always-cooperate only if it wants to. In a talk step each says honestly what it will do.
The strategies are written for any two-move iterated game whose moves are (nice, nasty),
read from the observation, so the same rules serve the stag hunt (stag, hare) and
chicken (swerve, straight): in the stag hunt tit-for-tat coordinates on the stag and
recovers from a miscoordination; in chicken it yields to a yielder and stands up to a
bully, at the cost of crashes while the bully persists.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.bargaining import fitting_message
from games.iterated import TALK


class DilemmaBot(Bot):
    """A fixed strategy: talks by announcing its rule, moves from the two move histories."""

    games: ClassVar[tuple[str, ...] | None] = ("iterated-prisoners-dilemma", "iterated-stag-hunt", "iterated-chicken")
    message: ClassVar[str]
    """What the bot says in every talk step: its rule, truthfully; {nice} and {nasty} name the moves."""

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        nice, nasty = data["actions"]
        if data["phase"] == TALK:
            return fitting_message(self.message.format(nice=nice, nasty=nasty), data["message_chars"])
        return self.move(data["my_moves"], data["their_moves"], nice, nasty)

    @abstractmethod
    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        """This round's move, from both players' moves in the rounds played so far."""


@register
class TitForTat(DilemmaBot):
    name = "tit-for-tat"
    showcase = True
    description = "Plays the nice move (cooperate, stag, swerve) first, then copies the other player's previous move."
    message = "I will play {nice} as long as you do, and answer {nasty} with {nasty}."

    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        return theirs[-1] if theirs else nice


@register
class Grim(DilemmaBot):
    name = "grim"
    description = "Plays nice until the other player plays nasty once, then nasty for ever."
    message = "I will play {nice} until you play {nasty} once; after that I will always play {nasty}."

    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        return nasty if nasty in theirs else nice


@register
class WinStayLoseShift(DilemmaBot):
    name = "win-stay-lose-shift"
    description = "Pavlov: repeats its move after the other played nice, switches after the other played nasty."
    message = "I will repeat my move when you play {nice} and switch it when you play {nasty}."

    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        if not mine:
            return nice
        if theirs[-1] == nice:
            return mine[-1]
        return nasty if mine[-1] == nice else nice


@register
class AlwaysDefect(DilemmaBot):
    name = "always-defect"
    description = "Plays the nasty move (defect, hare, straight) every round."
    message = "I will play {nasty}."

    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        return nasty


@register
class AlwaysCooperate(DilemmaBot):
    name = "always-cooperate"
    description = "Plays the nice move (cooperate, stag, swerve) every round."
    message = "I will play {nice}."

    def move(self, mine: list[str], theirs: list[str], nice: str, nasty: str) -> str:
        return nice

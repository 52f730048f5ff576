"""The classic strategies of Axelrod's iterated prisoner's dilemma tournaments.

They are the yardsticks a learning agent is measured against: a good agent should
cooperate with the nice ones, not be exploited by always-defect, and exploit
always-cooperate only if it wants to. In a talk step each says honestly what it will do.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.iterated_prisoners_dilemma import COOPERATE, DEFECT, TALK


class PrisonersDilemmaBot(Bot):
    """A fixed strategy: talks by announcing its rule, moves from the two move histories."""

    games: ClassVar[tuple[str, ...] | None] = ("iterated-prisoners-dilemma",)
    message: ClassVar[str]
    """What the bot says in every talk step: its rule, truthfully."""

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == TALK:
            return self.message
        return self.move(data["my_moves"], data["their_moves"])

    @abstractmethod
    def move(self, mine: list[str], theirs: list[str]) -> str:
        """This round's move, from both players' moves in the rounds played so far."""


@register
class TitForTat(PrisonersDilemmaBot):
    name = "tit-for-tat"
    showcase = True
    description = "Cooperates first, then copies the other player's previous move."
    message = "I will cooperate as long as you do, and answer a defection with a defection."

    def move(self, mine: list[str], theirs: list[str]) -> str:
        return theirs[-1] if theirs else COOPERATE


@register
class Grim(PrisonersDilemmaBot):
    name = "grim"
    description = "Cooperates until the other player defects once, then defects for ever."
    message = "I will cooperate until you defect once; after that I will always defect."

    def move(self, mine: list[str], theirs: list[str]) -> str:
        return DEFECT if DEFECT in theirs else COOPERATE


@register
class WinStayLoseShift(PrisonersDilemmaBot):
    name = "win-stay-lose-shift"
    description = "Pavlov: repeats its move after the other cooperated, switches after the other defected."
    message = "I will repeat my move when you cooperate and switch it when you defect."

    def move(self, mine: list[str], theirs: list[str]) -> str:
        if not mine:
            return COOPERATE
        if theirs[-1] == COOPERATE:
            return mine[-1]
        return DEFECT if mine[-1] == COOPERATE else COOPERATE


@register
class AlwaysDefect(PrisonersDilemmaBot):
    name = "always-defect"
    description = "Defects every round."
    message = "I will defect."

    def move(self, mine: list[str], theirs: list[str]) -> str:
        return DEFECT


@register
class AlwaysCooperate(PrisonersDilemmaBot):
    name = "always-cooperate"
    description = "Cooperates every round."
    message = "I will cooperate."

    def move(self, mine: list[str], theirs: list[str]) -> str:
        return COOPERATE

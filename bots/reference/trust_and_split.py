"""Splitters for Trust-and-Split: fair, greedy, and honest-but-wary.

Splitting evenly is the safe social norm and ignores the values; grabbing everything is
the one-shot temptation. The hand-aware splitter shows what talk is for: it tells its
hand truthfully, and when the other names a hand too it gives the coins to whoever's hand
wins (the split worth most to the pair), until the other is caught lying about its hand;
from then on it splits evenly.
"""

from __future__ import annotations

import re

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.bargaining import fitting_message
from games.iterated import TALK
from games.iterated_rock_paper_scissors import BEATS, MOVES

GAME = "trust-and-split"
_HAND = re.compile(r"\b(" + "|".join(MOVES) + r")\b", re.IGNORECASE)


def claimed_hand(message: str) -> str | None:
    """The one hand a message names, or None if it names none or several."""
    named = {hand.lower() for hand in _HAND.findall(message)}
    return named.pop() if len(named) == 1 else None


@register
class SplitEvenly(Bot):
    name = "split-evenly"
    showcase = True
    games = (GAME,)
    description = "Takes half the coins every round (rounded down) and says so."

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        half = data["coins"] // 2
        if data["phase"] == TALK:
            return fitting_message(f"Let's split evenly: I take {half}.", data["message_chars"])
        return f"take {half}"


@register
class GreedySplitter(Bot):
    name = "greedy-splitter"
    games = (GAME,)
    description = "Takes every coin every round, saying nothing."

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        return "" if data["phase"] == TALK else f"take {data['coins']}"


@register
class HandAware(Bot):
    name = "hand-aware"
    games = (GAME,)
    description = "Tells its hand; if the other names one, the winner takes all; splits evenly once the other has lied."

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        hand = data["hand"]
        if data["phase"] == TALK:
            return fitting_message(f"My hand is {hand}. Whoever's hand wins takes all the coins.", data["message_chars"])
        other = 1 - data["seat"]
        claims = {m["round"]: claimed_hand(m["text"]) for m in data["messages"] if m["seat"] == other}
        lied = any(claims.get(number) not in (None, held) for number, held in enumerate(data["their_hands"], start=1))
        theirs = claims.get(data["round"])
        if lied or theirs is None or theirs == hand:
            return f"take {data['coins'] // 2}"
        return f"take {data['coins']}" if BEATS[hand] == theirs else "take 0"

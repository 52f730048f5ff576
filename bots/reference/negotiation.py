"""A scripted negotiator for item negotiation: greedy at first, conceding as time runs out.

It is the baseline a language model must beat at bargaining. It never sees the other
player's values, so it guesses them from the other's proposals (what they keep, they
probably value) and offers them the items they seem to want that it values least.
The module also holds what every bot of the bargaining games shares: option checks and
the schedule of concessions against a deadline.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.bargaining import fitting_message
from games.bargaining import format_action as format_move
from games.item_negotiation import format_action, parse_action, worth

PROPOSE_MESSAGE = "Would this work for you?"
ACCEPT_MESSAGE = "Thank you, that works for me. Deal."


def check_fraction(bot: str, key: str, value: float) -> None:
    """The options of negotiating bots that are shares of something lie between 0 and 1."""
    if not 0.0 <= value <= 1.0:
        raise BotSpecError(f"bot '{bot}': option '{key}' must be between 0 and 1, got {value}")


def say(data: Mapping[str, Any], move: str, message: str) -> str:
    """The action ``move`` with ``message``, dropped if it is over the match's message limit."""
    return format_move(move, fitting_message(message, data["message_chars"]))


def progress(turn: int, max_turns: int) -> float:
    """How far a negotiation with a deadline has run: 0 on the first turn, 1 on the last."""
    return (turn - 1) / (max_turns - 1) if max_turns > 1 else 1.0


@register
class NegotiationHeuristic(Bot):
    name = "negotiation-heuristic"
    showcase = True
    description = "Keeps the items it values most, concedes as the turns run out, accepts offers worth enough to it."
    games = ("item-negotiation",)

    def __init__(self, game: str, seed: int = 0, accept_at: float = 0.6, concede: float = 0.5) -> None:
        """``accept_at``: the share of its total value it accepts on the first turns;
        ``concede``: how much of that threshold it gives up by the last turn."""
        super().__init__(game, seed)
        check_fraction(self.name, "accept_at", accept_at)
        check_fraction(self.name, "concede", concede)
        self.accept_at = accept_at
        self.concede = concede

    def thresholds(self, turn: int, max_turns: int) -> tuple[float, float]:
        """(accept at, demand) as shares of its total value: the acceptance threshold falls
        from ``accept_at`` by ``concede`` over the game; the demand falls from everything to it."""
        done = progress(turn, max_turns)
        accept = self.accept_at * (1.0 - self.concede * done)
        return accept, accept + (1.0 - accept) * (1.0 - done)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        values: list[int] = data["my_values"]
        total: int = data["total_value"]
        accept, demand = self.thresholds(data["turn"], data["max_turns"])
        proposal = self.proposal(data, demand * total)
        standing = data["standing_proposal"]
        if standing is not None:
            offered = worth(values, standing["mine"])
            last_turn = data["turn"] == data["max_turns"]
            if last_turn or offered >= accept * total or offered >= worth(values, proposal):
                return say(data, format_action(None), ACCEPT_MESSAGE)
        return say(data, format_action(proposal), PROPOSE_MESSAGE)

    def proposal(self, data: Mapping[str, Any], target: float) -> tuple[int, ...]:
        """What to keep: a share worth at least ``target`` to it that leaves the other
        player the most by its guess of their values (then the most for itself)."""
        values: list[int] = data["my_values"]
        counts: list[int] = data["counts"]
        guess = self.guess_their_values(data)
        shares = itertools.product(*(range(count + 1) for count in counts))
        enough = (keep for keep in shares if worth(values, keep) >= target)

        def score(keep: tuple[int, ...]) -> tuple[float, int]:
            left = sum(g * (c - k) for g, c, k in zip(guess, counts, keep, strict=True))
            return left, worth(values, keep)

        return max(enough, key=score)

    def guess_their_values(self, data: Mapping[str, Any]) -> Sequence[float]:
        """A weight per item type: the average share of it the other player kept in their
        proposals, with one imagined proposal that keeps everything as the prior."""
        items: list[str] = data["items"]
        counts: list[int] = data["counts"]
        kept = [1.0] * len(counts)
        seen = 1
        for entry in data["history"]:
            if entry["seat"] == data["seat"]:
                continue
            take, _ = parse_action(entry["action"], items)
            if take is not None:
                seen += 1
                for i, (n, count) in enumerate(zip(take, counts, strict=True)):
                    kept[i] += n / count
        return [k / seen for k in kept]

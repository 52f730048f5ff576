"""A Liar's dice player that trusts arithmetic: its own dice are known, everyone else's
are assumed to be fair, independent rolls.

It makes the strongest bid that is at least as likely true as not and calls "liar" on a
bid unlikely to hold, ignoring what the others' bids suggest about their dice. That makes it a sound baseline
and an exploitable one: an agent that reads bids (and bluffs) should beat it.
"""

from __future__ import annotations

from functools import cache
from math import comb

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.liars_dice import LIAR, count_matching, parse_bid

LIKELY = 0.5
"""A bid at least this likely to hold is one the bot is willing to make."""


@cache
def at_least(needed: int, unknown: int, p: float) -> float:
    """The probability that at least ``needed`` of ``unknown`` dice match, each with probability ``p``."""
    if needed <= 0:
        return 1.0
    return sum(comb(unknown, k) * p**k * (1.0 - p) ** (unknown - k) for k in range(needed, unknown + 1))


def holds_probability(quantity: int, face: int, dice: list[int], unknown: int, faces: int, wild_ones: bool) -> float:
    """The chance that a bid holds, given one's own ``dice`` and ``unknown`` dice rolled by others."""
    p = (2 if wild_ones and face != 1 else 1) / faces
    return at_least(quantity - count_matching(dice, face, wild_ones), unknown, p)


@register
class LiarsDiceHeuristic(Bot):
    name = "liars-dice-heuristic"
    showcase = True
    description = (
        "Calls liar when the last bid holds with probability under 'challenge_below' (from its own dice and fair odds "
        "for the rest) or is likelier false than the raise it would make is true; else makes that raise: the strongest bid at "
        "least as likely true as not (when none is, the likeliest)."
    )
    games = ("liars-dice",)

    def __init__(self, game: str, seed: int = 0, challenge_below: float = 0.5) -> None:
        super().__init__(game, seed)
        if not 0.0 <= challenge_below <= 1.0:
            raise BotSpecError(
                f"bot 'liars-dice-heuristic': option 'challenge_below' must be between 0 and 1, got {challenge_below}"
            )
        self.challenge_below = challenge_below

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        dice = data["dice"]
        unknown = data["total_dice"] - len(dice)
        faces, wild = data["faces"], data["wild_ones"]
        options = [
            (action, holds_probability(*parse_bid(action), dice, unknown, faces, wild))
            for action in turn.legal_actions or ()
            if action != LIAR
        ]
        # The strongest bid at least as likely true as not puts the most pressure on the next player;
        # when every bid is a long shot, the likeliest one.
        likely = [option for option in options if option[1] >= LIKELY]
        best, best_odds = likely[-1] if likely else max(options, key=lambda option: option[1], default=(LIAR, 0.0))
        current = data["current_bid"]
        if current is not None:
            odds = holds_probability(current["quantity"], current["face"], dice, unknown, faces, wild)
            # Challenge a doubtful bid, or any bid likelier to be a lie than the best answer is to hold.
            if odds < self.challenge_below or 1.0 - odds > best_odds:
                return LIAR
        return best

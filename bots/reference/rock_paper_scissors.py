"""Pattern players for iterated rock-paper-scissors.

Against a uniformly random opponent nothing beats chance, so these bots are yardsticks
of a different kind: ``rps-frequency`` punishes an opponent with a favourite hand (and is
itself predictable one step further on), ``rps-cycle`` is a fixed pattern that a good
player should spot and beat within a few rounds.
"""

from __future__ import annotations

from collections import Counter

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpecError, register
from games.iterated import TALK
from games.iterated_rock_paper_scissors import BEATEN_BY, MOVES

GAME = "iterated-rock-paper-scissors"


@register
class RpsFrequency(Bot):
    name = "rps-frequency"
    showcase = True
    games = (GAME,)
    description = "Plays what beats the other's most frequent hand (of its last `window` hands; 0 means all of them)."

    def __init__(self, game: str, seed: int = 0, window: int = 0) -> None:
        super().__init__(game, seed)
        if window < 0:
            raise BotSpecError(f"bot 'rps-frequency': option 'window' must be 0 (every round) or more, got {window}")
        self.window = window

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == TALK:
            return ""
        theirs = data["their_moves"][-self.window :] if self.window else data["their_moves"]
        if not theirs:
            return self.rng.choice(MOVES)
        counts = Counter(theirs)
        top = max(counts.values())
        # Of the hands played most often, the one played most recently is the likeliest next.
        likely = next(hand for hand in reversed(theirs) if counts[hand] == top)
        return BEATEN_BY[likely]


@register
class RpsCycle(Bot):
    name = "rps-cycle"
    games = (GAME,)
    description = "Plays rock, paper, scissors, rock, ... in turn: a pattern to spot and beat."

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == TALK:
            return ""
        return MOVES[(data["round"] - 1) % len(MOVES)]

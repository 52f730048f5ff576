"""Iterated rock-paper-scissors: the zero-sum game where the only safe strategy is chance.

Its one equilibrium is to play each hand a third of the time, which scores nothing on
average; everything above that comes from reading the opponent's patterns and hiding
one's own. It tests opponent modelling, and (with cheap talk on) whether an agent can
use or see through words that bind nobody.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import GameSpec
from games.iterated import MatrixConfig, MatrixGame

ROCK = "rock"
PAPER = "paper"
SCISSORS = "scissors"
MOVES: tuple[str, ...] = (ROCK, PAPER, SCISSORS)
BEATS = {ROCK: SCISSORS, PAPER: ROCK, SCISSORS: PAPER}
"""Each hand and the hand it beats."""
BEATEN_BY = {beaten: winner for winner, beaten in BEATS.items()}
"""Each hand and the hand that beats it."""


def outcome(mine: str, theirs: str) -> int:
    """+1 if ``mine`` beats ``theirs``, -1 if it loses, 0 on a tie."""
    if mine == theirs:
        return 0
    return 1 if BEATS[mine] == theirs else -1


@dataclass(frozen=True)
class IteratedRockPaperScissorsConfig(MatrixConfig):
    def moves(self) -> tuple[str, ...]:
        return MOVES

    def payoff(self, mine: str, theirs: str) -> float:
        return float(outcome(mine, theirs))

    def payoff_parameters(self) -> dict[str, float]:
        return {"win": 1.0, "draw": 0.0, "loss": -1.0}


RULES = """\
Iterated rock-paper-scissors between two players (seat 0 and seat 1), over a fixed number \
of rounds (10 by default; both players know how many). Each round both players show a \
hand at the same time: rock, paper or scissors. Rock beats scissors, scissors beat paper, \
paper beats rock; the same hand is a draw. Each round pays at once: the winner +1, the \
loser -1, a draw 0 each. It is zero-sum: your goal is to score more than the other \
player. After each round both hands are shown to both players. Answer "rock", "paper" or \
"scissors" (or just "r", "p" or "s"). With cheap talk on, each round first has a talk \
step: both players send a message at the same time (any text up to the character limit, \
possibly empty); both are shown before the hands. Messages bind nobody. The game ends \
after the last round; the total of your round payoffs is your return."""


class IteratedRockPaperScissors(MatrixGame):
    spec = GameSpec(
        name="iterated-rock-paper-scissors",
        title="Iterated rock-paper-scissors",
        category="competitive",
        description="Rock, paper or scissors, round after round: read the opponent, hide your own pattern.",
        rules=RULES,
        default_config=IteratedRockPaperScissorsConfig(),
        simultaneous=True,
        zero_sum=True,
    )
    Config = IteratedRockPaperScissorsConfig
    config: IteratedRockPaperScissorsConfig
    SAMPLE_MESSAGES = ("I'm playing rock.", "Paper, for sure.", "Scissors next.", "")

"""The iterated prisoner's dilemma: each round both players cooperate or defect at once.

The classic social dilemma (Axelrod's tournaments): defecting pays more in any one
round, yet two players who keep cooperating earn more than two who keep defecting. It
tests whether an agent can build and keep trust, punish, forgive, and (with cheap talk
on) say what it means and mean what it says. The rounds, the talk step and the views
are the shared iterated machinery (games.iterated); this module holds the payoffs.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import ConfigError, GameSpec
from games.iterated import MatrixConfig, MatrixGame, require_order
from games.render import number

COOPERATE = "cooperate"
DEFECT = "defect"
MOVES: tuple[str, ...] = (COOPERATE, DEFECT)


@dataclass(frozen=True)
class IteratedPrisonersDilemmaConfig(MatrixConfig):
    temptation: float = 5.0
    reward: float = 3.0
    punishment: float = 1.0
    sucker: float = 0.0

    def check(self) -> None:
        super().check()
        order = (("temptation", ">", "reward"), ("reward", ">", "punishment"), ("punishment", ">", "sucker"))
        require_order(self, order, "a dilemma needs temptation > reward > punishment > sucker")
        if not 2 * self.reward > self.temptation + self.sucker:
            got = f"reward={number(self.reward)}, temptation={number(self.temptation)}, sucker={number(self.sucker)}"
            raise ConfigError(
                "config key 'reward' must satisfy 2*reward > temptation + sucker (else taking turns to exploit "
                f"each other pays as much as cooperating, or more), got {got}"
            )

    def moves(self) -> tuple[str, ...]:
        return MOVES

    def payoff(self, mine: str, theirs: str) -> float:
        if mine == COOPERATE:
            return float(self.reward if theirs == COOPERATE else self.sucker)
        return float(self.temptation if theirs == COOPERATE else self.punishment)

    def payoff_parameters(self) -> dict[str, float]:
        return {
            "temptation": float(self.temptation),
            "reward": float(self.reward),
            "punishment": float(self.punishment),
            "sucker": float(self.sucker),
        }


RULES = """\
Iterated prisoner's dilemma between two players (seat 0 and seat 1), played over a fixed \
number of rounds (10 by default; both players know how many). Each round both players \
choose at the same time, without seeing the other's choice: cooperate or defect. Each \
round pays at once (default payoffs, yours / theirs): both cooperate 3 / 3; you cooperate \
and they defect 0 / 5; you defect and they cooperate 5 / 0; both defect 1 / 1. Defecting \
always pays more in a single round, but two players who keep cooperating earn far more \
than two who keep defecting. Your goal is the highest total score of your own; it is not \
a zero-sum game. After each round both moves are shown to both players. Answer \
"cooperate" or "defect" (or just "c" or "d"). With cheap talk on, each round first has a \
talk step: both players send a message at the same time (any text up to the character \
limit, possibly empty); both messages are shown before the moves. Messages bind nobody. \
The game ends after the last round; the total of your round payoffs is your return."""


class IteratedPrisonersDilemma(MatrixGame):
    spec = GameSpec(
        name="iterated-prisoners-dilemma",
        title="Iterated prisoner's dilemma",
        category="social_dilemma",
        description="Cooperate or defect, round after round; optional cheap talk before each move.",
        rules=RULES,
        default_config=IteratedPrisonersDilemmaConfig(),
        simultaneous=True,
    )
    Config = IteratedPrisonersDilemmaConfig
    config: IteratedPrisonersDilemmaConfig
    SAMPLE_MESSAGES = (
        "Let's both cooperate.",
        "I will cooperate if you do.",
        "Cooperate and we both win.",
        "Don't cross me.",
        "I'm thinking it over.",
        "",
    )

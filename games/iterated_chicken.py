"""Iterated chicken: two drivers head at each other; who swerves?

The game of brinkmanship (Russell's metaphor for nuclear standoffs; the hawk-dove game of
evolutionary biology): going straight beats swerving when the other swerves, but if
neither swerves both crash, the worst outcome of all. The pure equilibria are unequal,
so repeated play is about taking turns, signalling commitment and avoiding the crash.
Negative payoffs are the point: the crash must hurt more than losing face.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import GameSpec
from games.iterated import MatrixConfig, MatrixGame, require_order

SWERVE = "swerve"
STRAIGHT = "straight"
MOVES: tuple[str, ...] = (SWERVE, STRAIGHT)


@dataclass(frozen=True)
class IteratedChickenConfig(MatrixConfig):
    """Payoffs are named ``<your move>_<their move>``: what you get. Any values in the order
    straight_swerve > swerve_swerve > swerve_straight > straight_straight make a game of
    chicken; 4 / 3 / 2 / 0 (in that order) is a variant without negative payoffs."""

    swerve_swerve: float = 0.0
    swerve_straight: float = -1.0
    straight_swerve: float = 1.0
    straight_straight: float = -10.0

    def check(self) -> None:
        super().check()
        order = (
            ("straight_swerve", ">", "swerve_swerve"),
            ("swerve_swerve", ">", "swerve_straight"),
            ("swerve_straight", ">", "straight_straight"),
        )
        require_order(self, order, "chicken needs straight_swerve > swerve_swerve > swerve_straight > straight_straight")

    def moves(self) -> tuple[str, ...]:
        return MOVES


RULES = """\
Iterated chicken between two players (seat 0 and seat 1), over a fixed number of rounds \
(10 by default; both players know how many). Each round both drivers head at each other \
and choose at the same time, without seeing the other's choice: "swerve" or "straight". \
Each round pays at once (default payoffs, yours / theirs): both swerve 0 / 0; you swerve \
and they go straight -1 / +1; you go straight and they swerve +1 / -1; both go straight \
(a crash) -10 / -10. Going straight wins when the other swerves, but two who go straight \
crash, the worst outcome for both. Your goal is the highest total score of your own; it \
is not a zero-sum game. After each round both moves are shown to both players. Answer \
"swerve" or "straight" ("sw" and "st" are accepted). With cheap talk on, each round first \
has a talk step: both players send a message at the same time (any text up to the \
character limit, possibly empty); both are shown before the moves. Messages bind nobody. \
The game ends after the last round; the total of your round payoffs is your return."""


class IteratedChicken(MatrixGame):
    spec = GameSpec(
        name="iterated-chicken",
        title="Iterated chicken",
        category="social_dilemma",
        description="Swerve or go straight, round after round: brinkmanship where the crash hurts both.",
        rules=RULES,
        default_config=IteratedChickenConfig(),
        simultaneous=True,
    )
    Config = IteratedChickenConfig
    config: IteratedChickenConfig
    SAMPLE_MESSAGES = ("I will swerve if you do.", "I'm not swerving.", "Let's take turns.", "")

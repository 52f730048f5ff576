"""The iterated stag hunt: hunt the stag together, or take the safe hare alone.

Rousseau's parable, Skyrms's model of social contract: a stag feeds both hunters
handsomely but only if both hunt it; a hare is a smaller meal that either can catch
alone. Unlike the prisoner's dilemma, cooperating is a best reply to cooperation, so the
question is not temptation but trust: will the other show up? It tests whether an agent
can coordinate on the risky, better equilibrium and recover from a miscoordination.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import GameSpec
from games.iterated import MatrixConfig, MatrixGame, require_order

STAG = "stag"
HARE = "hare"
MOVES: tuple[str, ...] = (STAG, HARE)


@dataclass(frozen=True)
class IteratedStagHuntConfig(MatrixConfig):
    """Payoffs are named ``<your move>_<their move>``: what you get."""

    stag_stag: float = 4.0
    stag_hare: float = 0.0
    hare_stag: float = 3.0
    hare_hare: float = 3.0

    def check(self) -> None:
        super().check()
        order = (("stag_stag", ">", "hare_stag"), ("hare_stag", ">=", "hare_hare"), ("hare_hare", ">", "stag_hare"))
        require_order(self, order, "a stag hunt needs stag_stag > hare_stag >= hare_hare > stag_hare")

    def moves(self) -> tuple[str, ...]:
        return MOVES


RULES = """\
Iterated stag hunt between two players (seat 0 and seat 1), over a fixed number of rounds \
(10 by default; both players know how many). Each round both players choose at the same \
time, without seeing the other's choice: hunt the stag ("stag") or hunt a hare ("hare"). \
The stag can only be caught together; a hare can be caught alone. Each round pays at once \
(default payoffs, yours / theirs): both stag 4 / 4; you stag and they hare 0 / 3; you hare \
and they stag 3 / 0; both hare 3 / 3. Hunting hare is safe (by default it pays 3 whatever \
the other does); hunting stag pays most but only if the other hunts stag too. Your goal is \
the highest total score of your own; it is not a zero-sum game. After each round both \
moves are shown to both players. Answer "stag" or "hare" (or just "s" or "h"). With cheap \
talk on, each round first has a talk step: both players send a message at the same time \
(any text up to the character limit, possibly empty); both are shown before the moves. \
Messages bind nobody. The game ends after the last round; the total of your round payoffs \
is your return."""


class IteratedStagHunt(MatrixGame):
    spec = GameSpec(
        name="iterated-stag-hunt",
        title="Iterated stag hunt",
        category="social_dilemma",
        description="Hunt the stag together or the hare alone, round after round: a game of trust.",
        rules=RULES,
        default_config=IteratedStagHuntConfig(),
        simultaneous=True,
    )
    Config = IteratedStagHuntConfig
    config: IteratedStagHuntConfig
    SAMPLE_MESSAGES = ("Let's hunt the stag.", "I will hunt stag if you do.", "I'm going for hare this time.", "")

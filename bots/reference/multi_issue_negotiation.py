"""A scripted logroller for multi-issue negotiation: give way where it matters least to you.

Its demand falls from everything to a floor as the turns run out; to meet each demand it
concedes whole issues in order of its own weight, the least important first (among
equals, those the other side seems to care about most, judged by how hard they pushed
on them). It says which issue matters most to it, so a partner can trade back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.reference.negotiation import check_fraction, progress, say
from bots.registry import register
from games.bargaining import ACCEPT
from games.multi_issue_negotiation import PROPOSE, TOTAL_WEIGHT, parse_action, utility


def guess_their_care(data: Mapping[str, Any]) -> list[float]:
    """Per issue, how close to their own end the other player asked for it, averaged over
    their proposals (0 to 1; one half for every issue before they propose anything)."""
    top = data["options"] - 1
    issues: list[str] = data["issues"]
    theirs_high = data["prefers"] == "low"
    pushes: list[list[float]] = [[] for _ in issues]
    for entry in data["history"]:
        if entry["seat"] == data["seat"]:
            continue
        package, _ = parse_action(entry["action"], issues)
        if package is not None:
            for i, level in enumerate(package):
                pushes[i].append((level if theirs_high else top - level) / top)
    return [sum(p) / len(p) if p else 0.5 for p in pushes]


@register
class Logroller(Bot):
    name = "logroller"
    showcase = True
    description = (
        "Concedes whole issues it weighs least first (trading them for the ones it weighs most), "
        "lowering its demand toward a floor as the turns run out."
    )
    games = ("multi-issue-negotiation",)

    def __init__(self, game: str, seed: int = 0, floor: float = 0.5) -> None:
        """``floor``: the share of its best score it still demands on the last turns."""
        super().__init__(game, seed)
        check_fraction(self.name, "floor", floor)
        self.floor = floor

    def demand(self, turn: int, max_turns: int) -> float:
        """The least score it proposes or accepts now: 100 on the first turn, the floor on the last."""
        return TOTAL_WEIGHT * (1.0 - (1.0 - self.floor) * progress(turn, max_turns))

    def proposal(self, data: Mapping[str, Any], demand: float) -> tuple[int, ...]:
        """Start from its own end on every issue; move issues toward the other end, least important
        to it first, one level at a time, as long as the package still meets ``demand``."""
        weights: list[int] = data["my_weights"]
        seat: int = data["seat"]
        top = data["options"] - 1
        mine, step = (top, -1) if data["prefers"] == "high" else (0, 1)
        theirs = top - mine
        care = guess_their_care(data)
        package = [mine] * len(weights)
        for issue in sorted(range(len(weights)), key=lambda i: (weights[i], -care[i])):
            while package[issue] != theirs:
                package[issue] += step
                if utility(weights, package, data["options"], seat) < demand:
                    package[issue] -= step
                    break
        return tuple(package)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        demand = self.demand(data["turn"], data["max_turns"])
        standing = data["standing_proposal"]
        if standing is not None and (standing["my_utility"] >= demand or data["turn"] == data["max_turns"]):
            return say(data, ACCEPT, "Agreed.")
        package = self.proposal(data, demand)
        return say(data, f"{PROPOSE} {' '.join(str(level) for level in package)}", self.pitch(data, package))

    def pitch(self, data: Mapping[str, Any], package: Sequence[int]) -> str:
        """Says which issue matters most to it and which it gave way on: the information logrolling runs on."""
        issues: list[str] = data["issues"]
        weights: list[int] = data["my_weights"]
        mine = data["options"] - 1 if data["prefers"] == "high" else 0
        given = [name for name, level in zip(issues, package, strict=True) if level != mine]
        most = issues[max(range(len(issues)), key=lambda i: weights[i])]
        said = f"I give way on {', '.join(given)}; {most} matters most to me." if given else f"{most} matters most to me."
        return said[0].upper() + said[1:]

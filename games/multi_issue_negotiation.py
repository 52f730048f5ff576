"""Multi-issue negotiation: agree on a package of several issues weighted privately.

The integrative bargaining of negotiation courses (Raiffa, "The Art and Science of
Negotiation", 1982): on every issue the two players want opposite ends, so each issue
alone is a tug of war, but each weighs the issues differently and in secret, so trading
(logrolling: giving way on what matters little to you for what matters much) makes both
better off than splitting every issue down the middle. It tests whether an agent can
discover the other side's priorities from offers and talk, and trade on them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, GameSpec, IllegalAction, Observation, View
from games.bargaining import (
    ACCEPT,
    AlternatingOffers,
    AlternatingOffersConfig,
    chat,
    example_message,
    format_action,
    message_hint,
    named_numbers,
    no_arguments,
    read_move,
    whole_numbers,
)
from games.chance import ChanceRng

ISSUE_NAMES = ("price", "delivery", "warranty", "volume", "payment", "support")
"""The names of the issues in order; a config with n issues uses the first n."""
MAX_OPTIONS = 11
TOTAL_WEIGHT = 100
WEIGHT_STEP = 5
"""Weights are multiples of 5: round numbers a player can reason with."""
PROPOSE = "propose"
VERBS = (PROPOSE, ACCEPT)
PREFERS = ("high", "low")
"""Seat 0 gains from high levels on every issue, seat 1 from low ones."""
SAMPLE_MESSAGES: tuple[str, ...] = (
    "This package works for me.",
    "I care most about the first issue.",
    "Give me this one and take the rest.",
    "Let's meet in the middle.",
    "",
)
"""What a random player says with its action."""


@dataclass(frozen=True)
class MultiIssueConfig(AlternatingOffersConfig):
    issues: int = 3
    options: int = 5

    def check(self) -> None:
        super().check()
        if not 1 <= self.issues <= len(ISSUE_NAMES):
            raise ConfigError(f"config key 'issues' must be between 1 and {len(ISSUE_NAMES)}, got {self.issues}")
        if not 2 <= self.options <= MAX_OPTIONS:
            raise ConfigError(f"config key 'options' must be between 2 and {MAX_OPTIONS}, got {self.options}")

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(TOTAL_WEIGHT))

    def names(self) -> tuple[str, ...]:
        return ISSUE_NAMES[: self.issues]


def draw_weights(rng: ChanceRng, issues: int) -> tuple[int, ...]:
    """Weights, multiples of 5 of at least 5, that sum to 100, uniform over all such splits: cut 5..95 at issues - 1 points."""
    cuts: set[int] = set()
    while len(cuts) < issues - 1:
        cuts.add(WEIGHT_STEP * (1 + rng.randrange(TOTAL_WEIGHT // WEIGHT_STEP - 1)))
    return tuple(b - a for a, b in itertools.pairwise([0, *sorted(cuts), TOTAL_WEIGHT]))


def utility(weights: Sequence[int], package: Sequence[int], options: int, seat: int) -> float:
    """What ``package`` is worth to ``seat`` (0 to 100): each issue's weight times how close its
    level is to the seat's end (high levels for seat 0, low ones for seat 1)."""
    top = options - 1
    gained = sum(w * (level if seat == 0 else top - level) for w, level in zip(weights, package, strict=True))
    return gained / top


def parse_action(action: str, names: Sequence[str]) -> tuple[tuple[int, ...] | None, str]:
    """Read an action as (the package proposed, or None for accept; the message). Grammar only."""
    grammar = f"write 'propose <{'> <'.join(names)}>' with a level for each issue, or 'accept'"
    verb, args, message = read_move(action, VERBS, grammar)
    if verb == ACCEPT:
        no_arguments(verb, args)
        return None, message
    package = named_numbers(args, names, "issue", "the proposal must give a level for every issue")
    if package is None:
        package = whole_numbers(args, len(names))
    if package is None:
        raise IllegalAction(
            f"a proposal is 'propose' and {len(names)} whole numbers, the level of {', '.join(names)} in that order "
            f"(put any message after a colon, as in 'propose {' '.join('0' * len(names))}: my offer')"
        )
    return package, message


RULES = """\
Multi-issue negotiation. Two players (seat 0 and seat 1) must agree on a package: one \
level for each of several issues (3 by default: price, delivery and warranty), each \
level a whole number from 0 to the top level (4 by default). On every issue seat 0 \
gains from high levels and seat 1 from low levels. Each player has private weights \
over the issues, multiples of 5 (at least 5) that sum to 100, drawn at random; you see \
only your own. A package is worth to you the sum over issues of your weight times how \
close the level is to your end: for seat 0, weight x level / top; for seat 1, weight x \
(top - level) / top; so a score runs from 0 to 100. Because the weights differ, giving \
way on issues that matter little to you in return for issues that matter much \
(logrolling) can leave both players well above 50. Players take turns, seat 0 first, \
for at most a fixed number of turns in all (10 by default). On your turn either propose \
a package, "propose" then the levels in issue order, e.g. "propose 4 0 2" (or by name, \
"propose price=4 delivery=0 warranty=2"), or accept the other player's standing \
proposal (their latest one) with "accept", which ends the game: each scores the agreed \
package by their own weights. Either action may end with a colon and a message, e.g. \
"propose 4 0 2: price matters most to me", unless the match turns messages off (your \
turn says so). If the turns run out without an acceptance, \
there is no deal and both score 0, so a proposal made on the last turn can never be \
accepted. Your goal is the highest score of your own; it is not zero-sum."""


class MultiIssueNegotiation(AlternatingOffers[tuple[int, ...]]):
    spec = GameSpec(
        name="multi-issue-negotiation",
        title="Multi-issue negotiation",
        category="negotiation",
        description="Agree on a package of issues you weigh in secret; trade what matters little for what matters much.",
        rules=RULES,
        default_config=MultiIssueConfig(),
        chance=True,
        hidden_information=True,
        free_text=True,
    )
    Config = MultiIssueConfig
    sample_messages = SAMPLE_MESSAGES

    config: MultiIssueConfig
    weights: tuple[tuple[int, ...], tuple[int, ...]]
    """Each seat's private weights per issue, indexed by seat. An offer is a package: a level per issue."""

    def _deal(self) -> None:
        rng = self.chance()
        self.weights = (draw_weights(rng, self.config.issues), draw_weights(rng, self.config.issues))

    def parse(self, action: str) -> tuple[tuple[int, ...] | None, str]:
        return parse_action(action, self.config.names())

    def check_offer(self, offer: tuple[int, ...]) -> None:
        top = self.config.options - 1
        for name, level in zip(self.config.names(), offer, strict=True):
            if level > top:
                raise IllegalAction(f"levels run from 0 to {top}, but {name} got {level}")

    def offer_move(self, offer: tuple[int, ...]) -> str:
        return f"{PROPOSE} {' '.join(str(level) for level in offer)}"

    def deal_rewards(self) -> tuple[float, float]:
        assert self.standing is not None
        return (self.utility(0, self.standing), self.utility(1, self.standing))

    @classmethod
    def random_offer(cls, data: Mapping[str, Any], rng: Any) -> str:
        return f"{PROPOSE} {' '.join(str(rng.randrange(data['options'])) for _ in data['issues'])}"

    def utility(self, seat: int, package: Sequence[int]) -> float:
        return utility(self.weights[seat], package, self.config.options, seat)

    def action_format(self, seat: int) -> str:
        names = self.config.names()
        accept = "or 'accept' to take the other player's standing proposal, " if self.standing is not None else ""
        example = format_action(
            self.offer_move([self.config.options // 2] * len(names)), example_message(self.config.message_chars)
        )
        return (
            f"'propose <{'> <'.join(names)}>' with a level from 0 to {self.config.options - 1} for each issue, "
            f"{accept}{message_hint(self.config.message_chars)}, e.g. '{example}'"
        )

    def private_info(self, seat: int) -> list[int]:
        return list(self.weights[seat])

    # ---- rendering ---------------------------------------------------------------------

    def _package_text(self, package: Sequence[int]) -> str:
        return ", ".join(f"{name} {level}" for name, level in zip(self.config.names(), package, strict=True))

    def _weights_text(self, seat: int) -> str:
        return ", ".join(f"{name} {w}" for name, w in zip(self.config.names(), self.weights[seat], strict=True))

    def _end_text(self, seat: int | None) -> str:
        if not self.agreed:
            return "No deal: the turns ran out. Both players score 0."
        assert self.standing is not None
        package = self._package_text(self.standing)
        if seat is None:
            return f"Deal: {package}."
        return f"Deal: {package}; worth {render.number(self.utility(seat, self.standing))} to you."

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        top = cfg.options - 1
        names = cfg.names()
        lines = [
            f"Multi-issue negotiation. You are seat {seat}; the other player is seat {1 - seat}.",
            f"Issues: {', '.join(names)}; each gets a level from 0 to {top}. "
            f"You gain from {PREFERS[seat]} levels on every issue; the other player from {PREFERS[1 - seat]} levels.",
            f"Your weights (private): {self._weights_text(seat)}. A package is worth to you the sum of weight x "
            f"{'level' if seat == 0 else f'({top} - level)'} / {top} (0 to 100). "
            "The other player's weights also sum to 100, but you cannot see them.",
        ]
        standing: dict[str, Any] | None = None
        if self.standing is not None and not self.is_over:
            by = self.proposer()
            mine = self.utility(seat, self.standing)
            standing = {"by": by, "package": list(self.standing), "my_utility": mine}
            lines.append(
                f"Standing proposal ({'yours' if by == seat else 'theirs'}): {self._package_text(self.standing)} "
                f"(worth {render.number(mine)} to you)."
            )
        lines += self.transcript_lines(seat)
        lines += [self._end_text(seat)] if self.is_over else self.prompt_lines(seat)
        deal: dict[str, Any] | None = None
        if self.agreed:
            assert self.standing is not None
            deal = {"package": list(self.standing), "my_utility": self.utility(seat, self.standing)}
        data: dict[str, Any] = {
            "seat": seat,
            "issues": list(names),
            "options": cfg.options,
            "prefers": PREFERS[seat],
            "my_weights": list(self.weights[seat]),
            "standing_proposal": standing,
            **self.protocol_data(),
            "deal": deal,
        }
        return Observation(text="\n".join(lines), data=data)

    def _blocks(self) -> list[dict[str, Any]]:
        facts: dict[str, Any] = {
            "issues": ", ".join(self.config.names()),
            "levels": f"0 to {self.config.options - 1} (seat 0 wants high, seat 1 low)",
            "turn": f"{self.turn_number()} of {self.config.max_turns}",
        }
        if self.standing is not None:
            facts["deal" if self.agreed else f"proposal by seat {self.proposer()}"] = self._package_text(self.standing)
        return [render.facts(facts), chat(self.said()), render.text("\n".join(self.transcript_lines(None)))]

    def _status(self) -> str:
        return self._end_text(None) if self.is_over else self.progress_text()

    def public_view(self) -> View:
        return render.view(self._status(), *self._blocks())

    def full_view(self) -> View:
        private: dict[str, Any] = {f"seat {s} weights": self._weights_text(s) for s in (0, 1)}
        if self.agreed:
            assert self.standing is not None
            private |= {f"seat {s} scores": f"{render.number(self.utility(s, self.standing))}" for s in (0, 1)}
        return render.view(self._status(), *self._blocks(), render.facts(private, title="private weights"))

"""Trust-and-Split: split coins whose worth depends on a hidden game of rock-paper-scissors.

From Advantage Alignment (Duque et al., 2024), a test of reciprocity under private
information. Each round both players hold a secret rock-paper-scissors hand; whoever's
hand wins values the coins highly, the other hardly at all. Giving the coins to the one
who values them most is best for the pair, but only the players know their own hands, so
that takes honest talk and trust that the favour will be returned in later rounds;
grabbing is safe in the short run and ruinous if both do it.

Choices made here where the paper leaves room: hands never tie (each round draws one of
the six unequal pairs, so there is always a winner), over-claims are scaled down in
proportion with fractional coins allowed, and a round's hands are shown to both players
once the round is over (each could work the other's out from its own reward anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, GameSpec, View
from games.iterated import MAX_AMOUNT, Choices, IteratedConfig, IteratedGame, amount
from games.iterated_rock_paper_scissors import BEATS
from games.iterated_rock_paper_scissors import MOVES as HANDS

PAIRS: tuple[tuple[str, str], ...] = tuple((a, b) for a in HANDS for b in HANDS if a != b)
"""The six (seat 0's hand, seat 1's hand) deals, equally likely."""
TAKE = "take"


def split(takes: Sequence[int], coins: int) -> tuple[float, ...]:
    """The coins each player receives: what it took, or, when the claims add up to more
    than there are, its claim scaled down in proportion (claim * coins / sum of claims)."""
    total = sum(takes)
    if total <= coins:
        return tuple(float(take) for take in takes)
    return tuple(take * coins / total for take in takes)


def winner(hands: Sequence[str]) -> int:
    """The seat whose hand beats the other's (hands never tie)."""
    return 0 if BEATS[hands[0]] == hands[1] else 1


@dataclass(frozen=True)
class TrustAndSplitConfig(IteratedConfig):
    rounds: int = 5
    cheap_talk: bool = True
    coins: int = 10
    high_value: float = 10.0
    """What a coin is worth to the player whose hand wins."""
    low_value: float = 1.0
    """What a coin is worth to the player whose hand loses."""

    def check(self) -> None:
        super().check()
        self.at_least("coins", 1)
        self.at_most("coins", MAX_AMOUNT)
        if self.low_value < 0:
            raise ConfigError(f"config key 'low_value' must be at least 0, got {render.number(self.low_value)}")
        if not self.high_value > self.low_value:
            raise ConfigError(
                f"config key 'high_value' must be greater than 'low_value' (the winner of the hands values coins more), "
                f"got high_value={render.number(self.high_value)}, low_value={render.number(self.low_value)}"
            )

    def move_space(self) -> tuple[str, ...]:
        return tuple(f"{TAKE} {n}" for n in range(self.coins + 1))

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, self.rounds * self.coins * self.high_value)


RULES = """\
Trust-and-Split between two players (seat 0 and seat 1), over a fixed number of rounds (5 \
by default; both players know how many). At the start of each round each player is dealt \
a secret rock-paper-scissors hand: you see your own hand, never the other's during the \
round. The two hands are always different, so one wins (rock beats scissors, scissors \
beat paper, paper beats rock). This round, the player whose hand wins values each coin at \
the high value (10 points by default), the other at the low value (1 point by default). \
With cheap talk on (as by default), each round first has a talk step: both players send \
one message at the same time (any text up to the character limit, possibly empty); \
messages bind nobody. Then both players say at the same time how many of the round's \
coins (10 by default) they take: "take <n>" with n from 0 to all of them (or just the \
number). If the two claims add up to no more than the coins, each gets what it took (the \
rest is lost); if they add up to more, each gets its claim scaled down: claim * coins / \
(sum of claims), fractions of coins allowed. Your observation gives this match's coins \
and values. Each round pays at once: the coins you got times what a coin is worth to \
you. After the round both hands, both claims and both payoffs are shown to both players. \
Your goal is the highest total score of your own; it is not a zero-sum game. Giving the \
coins to whoever values them at the high value earns the pair the most, but only honest \
talk can tell who that is."""


class TrustAndSplit(IteratedGame):
    spec = GameSpec(
        name="trust-and-split",
        title="Trust-and-Split",
        category="social_dilemma",
        description="Split coins whose worth depends on secret rock-paper-scissors hands: talk, trust, reciprocate.",
        rules=RULES,
        default_config=TrustAndSplitConfig(),
        simultaneous=True,
        chance=True,
        hidden_information=True,
        free_text=True,  # its default config talks: a message is an action
    )
    Config = TrustAndSplitConfig
    config: TrustAndSplitConfig
    SAMPLE_MESSAGES = (
        "My hand is rock.",
        "My hand is paper.",
        "My hand is scissors.",
        "Let's give the coins to whoever wins the hands.",
        "Let's split evenly.",
        "",
    )

    hands: list[tuple[str, str]]
    """Each round's hands (seat 0's, seat 1's), the current round's included."""
    _takes: Choices

    def _prepare(self) -> None:
        self.hands = []
        self._takes = Choices.numbered(TAKE, 0, self.config.coins)

    def _start_round(self) -> None:
        self.hands.append(PAIRS[self.chance().randrange(len(PAIRS))])

    def _choices(self, seat: int) -> Choices:
        return self._takes

    def values(self, index: int) -> tuple[float, float]:
        """What a coin was worth to each seat in round ``index`` (0-based)."""
        high, low = float(self.config.high_value), float(self.config.low_value)
        return (high, low) if winner(self.hands[index]) == 0 else (low, high)

    def received(self, index: int) -> tuple[float, ...]:
        """The coins each seat got in the completed round ``index``."""
        return split([amount(take) for take in self.moves[index]], self.config.coins)

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        index = len(self.moves) - 1
        values = self.values(index)
        return [got * value for got, value in zip(self.received(index), values, strict=True)]

    def private_info(self, seat: int) -> dict[str, str] | None:
        return None if self.is_over else {"hand": self.hands[-1][seat]}

    def _move_value(self, move: str) -> Any:
        return amount(move)

    # ---- rendering -----------------------------------------------------------------------

    def _situation_lines(self, seat: int) -> list[str]:
        cfg = self.config
        lines = [
            f"Each round {cfg.coins} coins are split. The player whose rock-paper-scissors hand wins values a coin "
            f"at {render.number(cfg.high_value)}, the other at {render.number(cfg.low_value)} "
            "(rock beats scissors, scissors beat paper, paper beats rock; the hands never tie).",
            f"If the claims add up to more than {cfg.coins}, each gets claim * {cfg.coins} / (sum of claims) coins.",
        ]
        if not self.is_over:
            lines.append(
                f"Your hand this round: {self.hands[-1][seat]}. The other player cannot see it; theirs is one of the "
                "two other hands."
            )
        return lines

    def _describe(self, seat: int, index: int) -> str:
        hands, got, values = self.hands[index], self.received(index), self.values(index)
        parts = [
            f"{self._name(seat, s)} had {hands[s]} and took {amount(self.moves[index][s])} "
            f"({render.number(got[s])} coins worth {render.number(values[s])} each)"
            for s in (seat, 1 - seat)
        ]
        return "; ".join(parts)

    def _stage_prompt(self, seat: int) -> str:
        return f"Now: split of round {self.current_round}. How many coins do you take? Answer {self._takes.hint}."

    def _cell(self, seat: int, index: int) -> str:
        return f"{amount(self.moves[index][seat])} {self.hands[index][seat]}"

    def _grid_title(self) -> str:
        return "coins taken, and the hand held"

    def _game_data(self, seat: int) -> dict[str, Any]:
        played = range(len(self.moves))
        return {
            "hand": None if self.is_over else self.hands[-1][seat],
            "my_hands": [self.hands[i][seat] for i in played],
            "their_hands": [self.hands[i][1 - seat] for i in played],
            "coins": self.config.coins,
            "high_value": float(self.config.high_value),
            "low_value": float(self.config.low_value),
        }

    def full_view(self) -> View:
        view = self.public_view()
        if not self.is_over:
            hands = self.hands[-1]
            view["render"].append(render.facts({f"seat {seat} hand": hand for seat, hand in enumerate(hands)}, title="hands"))
        return view

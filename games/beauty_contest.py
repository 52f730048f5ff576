"""The Keynesian beauty contest: everyone guesses a number; the guess closest to 2/3 of the average wins.

Keynes's metaphor (1936) made into an experiment by Nagel (1995): the only Nash
equilibrium is everyone guessing 0, yet people stop after one or two steps of "they
will guess lower, so I should guess lower still". It tests how many levels of
reasoning about others an agent does and, over several rounds, how fast it learns
where the group is heading. Rounds and the optional talk step are the shared iterated
machinery (games.iterated); this module holds the guesses and the scoring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from games.api import MAX_NUMBER_DIGITS, ConfigError, GameSpec, IllegalAction
from games.iterated import MOVE, Choices, IteratedConfig, IteratedGame
from games.render import number

MAX_GUESS = 100
GUESSES: tuple[str, ...] = tuple(str(n) for n in range(MAX_GUESS + 1))
_GUESS_CHOICES = Choices(GUESSES, {name: name for name in GUESSES}, f"a whole number from 0 to {MAX_GUESS}, such as 33")
_WORDED = re.compile(r"(?:i\s+)?(?:guess\s*(?::\s*)?)?(-?(?:\d+(?:\.\d*)?|\.\d+))")
"""A number, maybe after "guess" or "I guess"; validation then insists on a whole one in range."""
MIN_PLAYERS = 2
MAX_PLAYERS = 8
MAX_FRACTION = 2.0
MAX_DENOMINATOR = 10**6


def exact_fraction(value: float) -> Fraction:
    """The fraction a config's float stands for: the nearest one with a denominator of at
    most a million when that one rounds to the same float, so 0.6666666666666666 is
    exactly 2/3 and 0.7 exactly 7/10, and guesses equally close to the intended target
    tie; else the float's own exact value."""
    simple = Fraction(value).limit_denominator(MAX_DENOMINATOR)
    return simple if float(simple) == value else Fraction(value)


@dataclass(frozen=True)
class BeautyContestConfig(IteratedConfig):
    players: int = 3
    rounds: int = 1
    fraction: float = 2 / 3
    """The target is this fraction of the average guess."""

    def check(self) -> None:
        super().check()
        if not 0.0 < self.fraction <= MAX_FRACTION:
            raise ConfigError(
                f"config key 'fraction' must be greater than 0 and at most {number(MAX_FRACTION)}, got {self.fraction}"
            )

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.rounds))

    def move_space(self) -> tuple[str, ...]:
        return GUESSES


class RoundResult(NamedTuple):
    guesses: tuple[int, ...]
    target: float
    winners: tuple[int, ...]

    @property
    def average(self) -> float:
        return sum(self.guesses) / len(self.guesses)


def score_round(guesses: Sequence[int], fraction: Fraction) -> RoundResult:
    """The target and the seats whose guesses are closest to it. Distances are compared
    in integers (scaled by the denominators of the fraction and of the average), so two
    guesses equally close to the target always tie."""
    top, bottom = fraction.numerator, fraction.denominator
    total, count = sum(guesses), len(guesses)
    scaled_target = top * total
    distances = [abs(bottom * count * guess - scaled_target) for guess in guesses]
    best = min(distances)
    winners = tuple(seat for seat, d in enumerate(distances) if d == best)
    return RoundResult(tuple(guesses), scaled_target / (bottom * count), winners)


RULES = """\
The Keynesian beauty contest ("guess 2/3 of the average"), for 2 to 8 players (3 by \
default). Each round every player picks a whole number from 0 to 100, all at the same \
time, without seeing the others' numbers. The target is a fraction (2/3 by default) of \
the average of all the numbers picked, including your own. The player whose number is \
closest to the target wins the round and scores 1 point; if several are equally close \
they share the point equally (two winners get 1/2 each). Everyone else scores 0 for the \
round. After each round all numbers, the average, the target and the winners are shown \
to everyone; with several rounds (1 by default) your return is the total of your \
points. It is not zero-sum: only your own total counts. Answer with one whole number, \
such as 33. With cheap talk on, each round first has a talk step: every player sends a \
message at the same time (any text up to the character limit, possibly empty), shown to \
all before the guesses. Messages bind nobody."""


class BeautyContest(IteratedGame):
    spec = GameSpec(
        name="beauty-contest",
        title="Keynesian beauty contest",
        category="social_dilemma",
        description="Guess 2/3 of the average guess: how many steps ahead of the others do you think?",
        rules=RULES,
        default_config=BeautyContestConfig(),
        min_players=MIN_PLAYERS,
        max_players=MAX_PLAYERS,
        simultaneous=True,
    )
    Config = BeautyContestConfig
    config: BeautyContestConfig
    SAMPLE_MESSAGES = ("Let's all say 0.", "I'm going with 33.", "Nobody goes above 50, right?", "")

    _fraction: Fraction

    def _prepare(self) -> None:
        self._fraction = exact_fraction(self.config.fraction)

    def _choices(self, seat: int) -> Choices:
        return _GUESS_CHOICES

    def validate(self, seat: int, action: str) -> str:
        if self.phase != MOVE or seat not in self._seats:
            return super().validate(seat, action)
        guess = _GUESS_CHOICES.aliases.get(action)
        if guess is not None:
            return guess
        match = _WORDED.fullmatch(action.strip().lower())
        if match is None or len(match[1]) > MAX_NUMBER_DIGITS:
            raise IllegalAction(f"'{action}' is not a guess; answer with one whole number from 0 to {MAX_GUESS}, such as 33")
        number = Fraction(match[1])
        if number.denominator != 1:
            raise IllegalAction(f"{match[1]} is not a whole number; guesses are whole numbers from 0 to {MAX_GUESS}")
        if not 0 <= number <= MAX_GUESS:
            raise IllegalAction(f"{match[1]} is out of range; guesses go from 0 to {MAX_GUESS}")
        return str(number)

    def result(self, index: int) -> RoundResult:
        """Round ``index`` (0-based): its guesses, target and winners."""
        return score_round([int(guess) for guess in self.moves[index]], self._fraction)

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        winners = score_round([int(guess) for guess in joint], self._fraction).winners
        share = 1.0 / len(winners)
        rewards = [0.0] * self.num_players
        for seat in winners:
            rewards[seat] = share
        return rewards

    # ---- rendering ---------------------------------------------------------------------

    def _fraction_text(self) -> str:
        fraction = self._fraction
        return str(fraction) if fraction.denominator <= 100 else f"{number(float(fraction))}"

    def _situation_lines(self, seat: int) -> list[str]:
        return [
            f"Target: {self._fraction_text()} of the average of all guesses (yours included); the closest guess "
            "wins the round's point, shared equally on a tie."
        ]

    def _describe(self, seat: int, index: int) -> str:
        result = self.result(index)
        guesses = ", ".join(f"{self._name(seat, s)} {result.guesses[s]}" for s in self._viewer_first(seat))
        winners = " and ".join(self._name(seat, s) for s in result.winners)
        return f"{guesses}; average {result.average:.2f}, target {result.target:.2f}, won by {winners}"

    def _cell(self, seat: int, index: int) -> str:
        return self.moves[index][seat]

    def _grid_title(self) -> str:
        return "guesses"

    def _move_value(self, move: str) -> Any:
        return int(move)

    def _game_data(self, seat: int) -> dict[str, Any]:
        results = [self.result(index) for index in range(len(self.moves))]
        return {
            "fraction": self.config.fraction,
            "averages": [r.average for r in results],
            "targets": [r.target for r in results],
            "winners": [list(r.winners) for r in results],
        }

    def _facts(self) -> dict[str, Any]:
        return {"fraction": self._fraction_text()}

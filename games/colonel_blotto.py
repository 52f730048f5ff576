"""Colonel Blotto: two commanders split their troops over battlefields at the same time.

Borel's game (1921): each field goes to whoever sends more troops there, and the
commander who carries more fields wins. No allocation is best against everything,
so it tests reasoning about an opponent's likely split and mixing one's own. The
action set grows combinatorially with troops and fields; small games list every
allocation, large ones take allocations as free text. Rounds and the optional talk
step are the shared iterated machinery (games.iterated); this module holds the
allocations and the battles.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from games.api import ConfigError, GameSpec, IllegalAction, Observation, read_number
from games.iterated import MOVE, Choices, IteratedConfig, IteratedGame

MAX_TROOPS = 1_000
MAX_FIELDS = 20
MAX_LISTED = 10_000
"""The most allocations a config may ask to list; beyond it listing costs too much memory."""
_OUTCOMES = ((0.0, 0.0), (1.0, -1.0), (-1.0, 1.0))
"""Rewards by round winner: nobody, seat 0, seat 1 (indexed by winner + 1)."""
_SEPARATORS = re.compile(r"[\s,;/]+")

Allocation = tuple[int, ...]


def allocation_name(allocation: Sequence[int]) -> str:
    """The canonical action: troops per field, comma-separated, no spaces."""
    return ",".join(map(str, allocation))


def allocation_count(troops: int, fields: int) -> int:
    """How many ways to split ``troops`` over ``fields`` (stars and bars)."""
    return math.comb(troops + fields - 1, fields - 1)


def parse_allocation(action: str) -> Allocation:
    """The troops per field of a canonical action."""
    return tuple(int(p) for p in action.split(","))


def example_split(troops: int, fields: int) -> Allocation:
    """An even split (the remainder to the first fields), to show the answer format."""
    share, extra = divmod(troops, fields)
    return tuple(share + (f < extra) for f in range(fields))


@lru_cache(maxsize=32)
def all_allocations(troops: int, fields: int) -> tuple[str, ...]:
    """Every allocation, in lexicographic order of the troops per field."""

    def splits(left: int, fields_left: int) -> list[Allocation]:
        if fields_left == 1:
            return [(left,)]
        return [(first, *rest) for first in range(left + 1) for rest in splits(left - first, fields_left - 1)]

    return tuple(allocation_name(a) for a in splits(troops, fields))


def random_allocation(troops: int, fields: int, rng: Any) -> str:
    """A uniformly random allocation: ``fields - 1`` bars placed among ``troops`` stars."""
    bars = sorted(rng.sample(range(troops + fields - 1), fields - 1))
    edges = [-1, *bars, troops + fields - 1]
    return allocation_name(edges[i + 1] - edges[i] - 1 for i in range(fields))


def fields_won(first: Allocation, second: Allocation) -> tuple[int, int]:
    """How many fields each side carries; a tied field goes to nobody."""
    wins = [0, 0]
    for a, b in zip(first, second, strict=True):
        if a != b:
            wins[a < b] += 1
    return wins[0], wins[1]


def round_winner(first: Allocation, second: Allocation) -> int | None:
    """The seat carrying more fields, or None when they carry as many."""
    won = fields_won(first, second)
    return None if won[0] == won[1] else int(won[1] > won[0])


@dataclass(frozen=True)
class ColonelBlottoConfig(IteratedConfig):
    rounds: int = 1
    troops: int = 10
    fields: int = 3
    max_listed: int = 100
    """List every allocation as a legal action when there are at most this many."""

    def check(self) -> None:
        super().check()
        if not 1 <= self.troops <= MAX_TROOPS:
            raise ConfigError(f"config key 'troops' must be 1 to {MAX_TROOPS}, got {self.troops}")
        if not 2 <= self.fields <= MAX_FIELDS:
            raise ConfigError(f"config key 'fields' must be 2 to {MAX_FIELDS}, got {self.fields}")
        if not 0 <= self.max_listed <= MAX_LISTED:
            raise ConfigError(f"config key 'max_listed' must be 0 to {MAX_LISTED}, got {self.max_listed}")

    @property
    def listed(self) -> bool:
        """Whether legal actions list every allocation (else they are free text)."""
        return allocation_count(self.troops, self.fields) <= self.max_listed

    def return_bounds(self) -> tuple[float, float]:
        return (-float(self.rounds), float(self.rounds))

    def action_space(self) -> tuple[str, ...] | None:
        return super().action_space() if self.listed else None

    def move_space(self) -> tuple[str, ...]:
        return all_allocations(self.troops, self.fields)


@lru_cache(maxsize=32)
def allocation_choices(troops: int, fields: int, listed: bool) -> Choices:
    """The listed allocations (none when there are too many to list) and how to write one,
    built once per game size rather than once per match."""
    actions = all_allocations(troops, fields) if listed else ()
    example = allocation_name(example_split(troops, fields))
    hint = (
        f"{fields} non-negative whole numbers separated by commas, one per battlefield in order, "
        f"adding up to exactly {troops} (e.g. {example})"
    )
    return Choices(actions, {a: a for a in actions}, hint)


RULES = """\
Colonel Blotto. Two players (seat 0 and seat 1) each command the same number of troops \
(10 by default) and split them over the same battlefields (3 by default), both at the \
same time, without seeing the other's split. Each battlefield is won by the player who \
sent more troops there; a battlefield with equal troops is won by nobody. The player \
who wins more battlefields wins the round (+1, the other -1); equal counts are a draw \
(0 each). With several rounds (1 by default) the troops are split afresh each round, \
every round pays at once, both splits are shown after each round, and your return is \
the sum. Answer with the troops you send to each battlefield in order, as non-negative \
whole numbers separated by commas that add up to exactly your troops: with 10 troops \
and 3 battlefields, "4,3,3" sends 4 to battlefield 1 and 3 each to battlefields 2 and 3. \
With cheap talk on, each round first has a talk step: both players send a message at the \
same time (any text up to the character limit, possibly empty), shown to both before \
the splits. Messages bind nobody."""


class ColonelBlotto(IteratedGame):
    spec = GameSpec(
        name="colonel-blotto",
        title="Colonel Blotto",
        category="competitive",
        description="Split troops over battlefields at once; carry more fields than the other commander.",
        rules=RULES,
        default_config=ColonelBlottoConfig(),
        simultaneous=True,
        zero_sum=True,
    )
    Config = ColonelBlottoConfig
    config: ColonelBlottoConfig
    SAMPLE_MESSAGES = ("I'm going all in on the first battlefield.", "Expect an even split.", "You won't see it coming.", "")

    _allocation_choices: Choices
    _listed: bool

    def _prepare(self) -> None:
        config = self.config
        self._listed = config.listed
        self._allocation_choices = allocation_choices(config.troops, config.fields, self._listed)

    def _choices(self, seat: int) -> Choices:
        return self._allocation_choices

    def legal_actions(self, seat: int) -> Sequence[str] | None:
        if self.phase == MOVE and not self._listed:
            return None
        return super().legal_actions(seat)

    def validate(self, seat: int, action: str) -> str:
        if self.phase != MOVE or seat not in self._seats:
            return super().validate(seat, action)
        if action in self._allocation_choices.aliases:
            return action
        troops, fields = self.config.troops, self.config.fields
        parts = [p for p in _SEPARATORS.split(action.strip().strip("[](){}")) if p]
        if parts and all(p.removeprefix("-").isdecimal() for p in parts) and any(p.startswith("-") for p in parts):
            raise IllegalAction("troops per battlefield cannot be negative")
        allocation = [n for n in map(read_number, parts) if n is not None]
        if not parts or len(allocation) != len(parts):
            raise IllegalAction(f"'{action}' is not an allocation; answer {self._allocation_choices.hint}")
        if len(parts) != fields:
            raise IllegalAction(f"you gave {len(parts)} numbers; give exactly one per battlefield ({fields})")
        if sum(allocation) != troops:
            raise IllegalAction(f"your allocation uses {sum(allocation)} troops; it must use exactly {troops}")
        return allocation_name(allocation)

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        winner = round_winner(parse_allocation(joint[0]), parse_allocation(joint[1]))
        return _OUTCOMES[0 if winner is None else winner + 1]

    # ---- rendering ---------------------------------------------------------------------

    def _situation_lines(self, seat: int) -> list[str]:
        config = self.config
        return [
            f"Each side has {config.troops} troops to split over {config.fields} battlefields each round. "
            "More troops carries a battlefield (equal troops: nobody); more battlefields wins the round."
        ]

    def _describe(self, seat: int, index: int) -> str:
        joint = self.moves[index]
        mine, theirs = joint[seat], joint[1 - seat]
        won = fields_won(parse_allocation(mine), parse_allocation(theirs))
        outcome = "you won" if won[0] > won[1] else "they won" if won[1] > won[0] else "a draw"
        return f"you {mine}, they {theirs}: battlefields {won[0]} to {won[1]}, {outcome}"

    def _cell(self, seat: int, index: int) -> str:
        return self.moves[index][seat]

    def _grid_title(self) -> str:
        return "troops per battlefield"

    def _move_value(self, move: str) -> Any:
        return list(parse_allocation(move))

    def _game_data(self, seat: int) -> dict[str, Any]:
        return {"troops": self.config.troops, "fields": self.config.fields}

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        data = observation.data
        if data["phase"] == MOVE:
            return random_allocation(data["troops"], data["fields"], rng)
        return super().random_free_action(observation, rng)

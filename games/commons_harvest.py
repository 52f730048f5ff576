"""Commons harvest: a shared stock that regrows only from what the players leave.

Hardin's tragedy of the commons, in the form Ostrom studied and GovSim put to language
models: a fishery regrows logistically, fastest at half its capacity, so restraint keeps
everyone fed for ever while over-harvesting collapses it for all. Each player gains by
taking more this round; the group loses its future. It tests restraint, planning over
the regrowth and (with cheap talk on) agreeing on quotas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from games.api import ConfigError, GameSpec
from games.iterated import MAX_AMOUNT, Choices, IteratedConfig, IteratedGame, amount
from games.render import count, number

HARVEST = "harvest"


def share_out(requests: Sequence[int], stock: int) -> tuple[int, ...]:
    """What each seat gets: its request when the stock covers all of them; otherwise the
    whole stock, in proportion to the requests, in whole units by the largest-remainder
    method (each gets the floor of its exact share; the units left over go one each to the
    largest fractional parts, ties to the lower seat)."""
    demand = sum(requests)
    if demand <= stock:
        return tuple(requests)
    got = [request * stock // demand for request in requests]
    remainders = [request * stock % demand for request in requests]
    for seat in sorted(range(len(requests)), key=lambda s: (-remainders[s], s))[: stock - sum(got)]:
        got[seat] += 1
    return tuple(got)


def regrow(stock: int, capacity: int, rate: float) -> int:
    """The stock after a season of logistic growth: + rate * stock * (1 - stock/capacity),
    rounded down. The rate is read as the decimal it was written as (0.3 is 3/10), so the
    rounding never depends on binary floating point."""
    return stock + math.floor(Fraction(repr(rate)) * stock * (capacity - stock) / capacity)


@dataclass(frozen=True)
class CommonsHarvestConfig(IteratedConfig):
    players: int = 4
    rounds: int = 20
    stock: int = 100
    """The stock at the start."""
    capacity: int = 100
    """The most the stock can hold; regrowth stops there."""
    growth_rate: float = 0.25
    max_harvest: int = 10
    """The most one player may take in one round."""

    def check(self) -> None:
        super().check()
        self.at_least("capacity", 1)
        if not 1 <= self.stock <= self.capacity:
            raise ConfigError(f"config key 'stock' must be from 1 to the capacity ({self.capacity}), got {self.stock}")
        if not 0 < self.growth_rate <= 1:
            raise ConfigError(f"config key 'growth_rate' must be greater than 0 and at most 1, got {number(self.growth_rate)}")
        self.at_least("max_harvest", 1)
        self.at_most("max_harvest", MAX_AMOUNT)

    def move_space(self) -> tuple[str, ...]:
        return tuple(f"{HARVEST} {n}" for n in range(self.max_harvest + 1))

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.rounds * self.max_harvest))


RULES = """\
Commons harvest for 2 to 8 players (4 by default), over a fixed number of rounds (20 by \
default; everyone knows how many) unless the stock collapses first. The players share a \
stock of fish that can hold up to its capacity (100 units by default) and starts at a \
given size (100 units, full, by default). Each round every player, at the same time, \
harvests from 0 up to a maximum (10 units by default): answer "harvest <n>" (or just the \
number). If the requests add up to no more than the stock, each gets what it asked; \
otherwise the whole stock is shared in proportion to the requests, in whole units (each \
gets the floor of its exact share; leftover units go one each to the largest fractional \
parts, ties to the lower seat). What remains then regrows at the growth rate (0.25 by \
default): stock + floor(growth rate * stock * (1 - stock / capacity)), so regrowth is \
fastest at half capacity and nothing regrows from nothing. If the stock reaches 0 it has \
collapsed and the game ends at once. Your observation gives this match's stock, capacity, \
growth rate and largest harvest. Each round pays at once: your reward is the units you \
got. After each round everyone's requests, harvests and the new stock are shown to all. \
With cheap talk on, each round first has a talk step: every player sends a message at the \
same time (any text up to the character limit, possibly empty); messages bind nobody. Your \
goal is the highest total harvest of your own; it is not a zero-sum game."""


class CommonsHarvest(IteratedGame):
    spec = GameSpec(
        name="commons-harvest",
        title="Commons harvest",
        category="social_dilemma",
        description="Harvest a shared stock that regrows only from what is left: restraint or collapse.",
        rules=RULES,
        default_config=CommonsHarvestConfig(),
        min_players=2,
        max_players=8,
        simultaneous=True,
    )
    Config = CommonsHarvestConfig
    config: CommonsHarvestConfig
    SAMPLE_MESSAGES = ("Let's each take only 2.", "Leave the stock at half capacity.", "I need a big catch this round.", "")

    stocks: list[int]
    """The stock at the start of each round, then the stock now."""
    _harvests: Choices

    def _prepare(self) -> None:
        self.stocks = [self.config.stock]
        self._harvests = Choices.numbered(HARVEST, 0, self.config.max_harvest)

    @property
    def stock(self) -> int:
        return self.stocks[-1]

    def _choices(self, seat: int) -> Choices:
        return self._harvests

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        got = share_out([amount(action) for action in joint], self.stock)
        left = self.stock - sum(got)
        self.stocks.append(regrow(left, self.config.capacity, self.config.growth_rate))
        return [float(units) for units in got]

    def _ended_early(self) -> bool:
        return self.stock == 0

    def harvests(self, index: int) -> list[int]:
        """What each seat got in the completed round ``index`` (0-based): what it was paid."""
        return [int(units) for units in self.paid[index]]

    def _move_value(self, move: str) -> Any:
        return amount(move)

    # ---- rendering -----------------------------------------------------------------------

    def _situation_lines(self, seat: int) -> list[str]:
        cfg = self.config
        return [
            f"The shared stock holds {self.stock} units (capacity {cfg.capacity}). Each round every player harvests 0 to "
            f"{cfg.max_harvest} units at the same time; if the requests exceed the stock it is shared in proportion.",
            f"What remains regrows by floor({number(cfg.growth_rate)} * stock * (1 - stock / {cfg.capacity})), fastest at half "
            "capacity. If the stock reaches 0 it has collapsed and the game ends.",
        ]

    def _describe(self, seat: int, index: int) -> str:
        asked = [amount(action) for action in self.moves[index]]
        got = self.harvests(index)
        taken = ", ".join(
            f"{self._name(seat, s)} took {got[s]}" + ("" if got[s] == asked[s] else f" (asked {asked[s]})")
            for s in self._viewer_first(seat)
        )
        left = self.stocks[index] - sum(got)
        after = f"{left} left, regrew to {self.stocks[index + 1]}" if left else "nothing left: the stock collapsed"
        return f"stock {self.stocks[index]}; {taken}; {after}"

    def _stage_prompt(self, seat: int) -> str:
        return f"Now: harvest of round {self.current_round}. Answer {self._harvests.hint}."

    def _end_text(self) -> str:
        if self.stock == 0:
            return f"Game over after {count(self.round, 'round')}: the stock collapsed."
        return super()._end_text()

    def _facts(self) -> dict[str, Any]:
        return {"stock": f"{self.stock} of {self.config.capacity}"}

    def _cell(self, seat: int, index: int) -> str:
        got, asked = self.harvests(index)[seat], amount(self.moves[index][seat])
        return str(got) if got == asked else f"{got}/{asked}"

    def _grid_title(self) -> str:
        return "units harvested (got/asked when the stock ran short)"

    def _game_data(self, seat: int) -> dict[str, Any]:
        cfg = self.config
        return {
            "harvests": [self.harvests(index) for index in range(len(self.moves))],
            "stock": self.stock,
            "stocks": list(self.stocks),
            "capacity": cfg.capacity,
            "growth_rate": float(cfg.growth_rate),
            "max_harvest": cfg.max_harvest,
        }

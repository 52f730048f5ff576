"""The public goods game: contribute to a pot that grows and is shared by all, or free-ride.

The workhorse of experimental economics (Isaac and Walker; Fehr and Gächter added the
punishment step): each token put in the pot returns less than a token to its giver but
more than a token to the group, so everyone keeping everything is the equilibrium and
everyone giving everything the social optimum. It tests whether agents sustain
contributions over rounds, condition on others, and (with punishment on) pay to enforce
a norm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.api import ConfigError, GameSpec
from games.iterated import MAX_AMOUNT, MOVE, Choices, IteratedConfig, IteratedGame, amount
from games.render import number

CONTRIBUTE = "contribute"
PUNISH = "punish"
NONE = "none"


@dataclass(frozen=True)
class PublicGoodsConfig(IteratedConfig):
    players: int = 4
    rounds: int = 5
    endowment: int = 10
    """Tokens each player gets each round, to keep or contribute."""
    multiplier: float = 1.6
    """The pot is multiplied by this, then shared equally among all players."""
    punishment: bool = False
    """Whether each round ends with a step where every player may punish one other."""
    punish_cost: float = 1.0
    """What punishing costs the punisher."""
    punish_fine: float = 3.0
    """What being punished costs the punished, per punisher."""

    def check(self) -> None:
        super().check()
        self.at_least("players", 2)
        self.at_least("endowment", 1)
        self.at_most("endowment", MAX_AMOUNT)
        if not 1 < self.multiplier < self.players:
            raise ConfigError(
                f"config key 'multiplier' must be greater than 1 and less than the number of players ({self.players}) "
                f"for a real dilemma (above 1 a contribution gains the group, below the player count it costs the "
                f"giver), got {number(self.multiplier)}"
            )
        if self.punish_cost < 0:
            raise ConfigError(f"config key 'punish_cost' must be at least 0, got {number(self.punish_cost)}")
        if self.punish_fine <= 0:
            raise ConfigError(f"config key 'punish_fine' must be greater than 0, got {number(self.punish_fine)}")

    def move_space(self) -> tuple[str, ...]:
        contributions = tuple(f"{CONTRIBUTE} {n}" for n in range(self.endowment + 1))
        if not self.punishment:
            return contributions
        return (*contributions, NONE, *(f"{PUNISH} {seat}" for seat in range(self.players)))

    def return_bounds(self) -> tuple[float, float]:
        n, e, m = self.players, self.endowment, self.multiplier
        low = m * e / n
        if self.punishment:
            low -= (n - 1) * self.punish_fine + self.punish_cost
        return (self.rounds * low, self.rounds * (e + m * e * (n - 1) / n))


RULES = """\
Public goods game for 2 to 8 players (4 by default), over a fixed number of rounds (5 by \
default; everyone knows how many). Each round every player gets the same number of tokens \
(10 by default) and chooses, at the same time as the others, how many of them (0 to all) \
to contribute to a common pot; it keeps the rest. The pot is multiplied by the multiplier \
(1.6 by default; always more than 1 and less than the number of players) and shared \
equally among all players, contributors or not. So each token you contribute returns \
multiplier / players to you and as much to every other player (1.6 / 4 = 0.4 by \
default): the group gains from every contribution, the giver loses. Your round payoff is \
your tokens - your contribution + your share of the pot; each round pays at once. Answer \
"contribute <n>" (or just the number). Optionally (config punishment=true) each round \
then has a punishment step: each player, at the same time, either answers "none" or \
"punish <seat>" naming one other seat; punishing costs the punisher some points (1 by \
default) and fines the punished some points (3 by default), per punisher. Your observation gives this \
match's tokens, multiplier and punishment cost and fine. After each step everyone's \
choices are shown to all. With cheap talk on, each round first has a talk step: every \
player sends a message at the same time (any text up to the character limit, possibly \
empty); messages bind nobody. Your goal is the highest total score of your own; it is not \
a zero-sum game. The game ends after the last round."""


class PublicGoods(IteratedGame):
    spec = GameSpec(
        name="public-goods",
        title="Public goods game",
        category="social_dilemma",
        description="Contribute to a shared pot that grows, or free-ride on the others; optional costly punishment.",
        rules=RULES,
        default_config=PublicGoodsConfig(),
        min_players=2,
        max_players=8,
        simultaneous=True,
    )
    Config = PublicGoodsConfig
    config: PublicGoodsConfig
    SAMPLE_MESSAGES = ("Let's all contribute everything.", "I will match the average.", "I'm keeping my tokens.", "")

    punishments: list[tuple[str, ...]]
    """Each round's punishment-step actions, by seat."""
    _contributions: Choices
    _punish: tuple[Choices, ...]
    """Each seat's punishment choices: none, or another seat."""

    def _round_stages(self) -> tuple[str, ...]:
        return (MOVE, PUNISH) if self.config.punishment else (MOVE,)

    def _prepare(self) -> None:
        self.punishments = []
        self._contributions = Choices.numbered(CONTRIBUTE, 0, self.config.endowment)
        self._punish = tuple(self._punish_choices(seat) for seat in self._seats)

    def _punish_choices(self, seat: int) -> Choices:
        others = [other for other in self._seats if other != seat]
        actions = (NONE, *(f"{PUNISH} {other}" for other in others))
        # no bare seat number: "0" had just meant "contribute 0", and read as "punish 0" it
        # fined seat 0 at the answerer's cost; it is refused with the hint instead
        aliases = {NONE: NONE, "nobody": NONE} | {a: a for a in actions[1:]}
        hint = f"none, or punish <seat> naming one other seat ({', '.join(map(str, others))})"
        return Choices(actions, aliases, hint)

    def _choices(self, seat: int) -> Choices:
        return self._contributions if self.phase == MOVE else self._punish[seat]

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        cfg = self.config
        if self.phase == MOVE:
            given = [amount(action) for action in joint]
            share = cfg.multiplier * sum(given) / self.num_players
            return [cfg.endowment - gift + share for gift in given]
        self.punishments.append(joint)
        rewards = [0.0] * self.num_players
        for seat, target in enumerate(self._targets(joint)):
            if target is not None:
                rewards[seat] -= cfg.punish_cost
                rewards[target] -= cfg.punish_fine
        return rewards

    @staticmethod
    def _targets(joint: Sequence[str]) -> list[int | None]:
        return [None if action == NONE else amount(action) for action in joint]

    def _move_value(self, move: str) -> Any:
        return amount(move)

    # ---- rendering -----------------------------------------------------------------------

    def _situation_lines(self, seat: int) -> list[str]:
        cfg, n = self.config, self.num_players
        lines = [
            f"Each round every player gets {cfg.endowment} tokens and contributes 0 to {cfg.endowment} of them to a "
            f"common pot, keeping the rest; the pot is multiplied by {number(cfg.multiplier)} and shared equally among all "
            f"{n} players. Each token you contribute returns {number(cfg.multiplier / n)} to you and as much "
            "to every other player.",
        ]
        if cfg.punishment:
            lines.append(
                f"After the contributions each player may punish one other player: it costs the punisher "
                f"{number(cfg.punish_cost)} and fines the punished {number(cfg.punish_fine)} (per punisher)."
            )
        return lines

    def _describe(self, seat: int, index: int) -> str:
        given = [amount(action) for action in self.moves[index]]
        pot = sum(given)
        listed = ", ".join(f"{self._name(seat, s)} {given[s]}" for s in self._viewer_first(seat))
        grown = self.config.multiplier * pot
        shared = f"pot {pot} x {number(self.config.multiplier)} = {number(grown)}, {number(grown / self.num_players)} each"
        text = f"contributions: {listed}; {shared}"
        if index < len(self.punishments):
            acts = [(s, t) for s, t in enumerate(self._targets(self.punishments[index])) if t is not None]
            done = ", ".join(f"{self._name(seat, s)} punished {self._name(seat, t)}" for s, t in acts)
            text += f"; {done or 'nobody punished'}"
        return text

    def _stage_prompt(self, seat: int) -> str:
        number = self.current_round
        if self.phase == MOVE:
            return (
                f"Now: contributions of round {number}. How many of your {self.config.endowment} tokens do you "
                f"contribute? Answer {self._contributions.hint}."
            )
        return f"Now: punishment step of round {number}. Answer {self._punish[seat].hint}."

    def _cell(self, seat: int, index: int) -> str:
        cell = str(amount(self.moves[index][seat]))
        if index < len(self.punishments) and self.punishments[index][seat] != NONE:
            cell += f" p{amount(self.punishments[index][seat])}"
        return cell

    def _grid_title(self) -> str:
        return "contributions (pN: punished seat N)" if self.config.punishment else "contributions"

    def _game_data(self, seat: int) -> dict[str, Any]:
        cfg = self.config
        data: dict[str, Any] = {
            "endowment": cfg.endowment,
            "multiplier": float(cfg.multiplier),
            "punishment": cfg.punishment,
        }
        if cfg.punishment:
            data["punish_cost"] = float(cfg.punish_cost)
            data["punish_fine"] = float(cfg.punish_fine)
            data["punished"] = [self._targets(joint) for joint in self.punishments]
        return data

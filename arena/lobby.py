"""Seeks and pairing: bots ask for games, the lobby forms tables.

A seek is one seat wanted in one of some games under one config. When enough
compatible seeks wait, the lobby seats them together, preferring opponents of close
rating (closest TrueSkill mu, once ratings exist) and otherwise the longest waiting. A bot
is never paired with itself unless both of its seeks asked for self-play.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Seek:
    id: int
    bot: str
    games: tuple[str, ...]
    config: Mapping[str, Any]
    self_play: bool = False

    @functools.cached_property
    def config_key(self) -> str:
        """Computed once: pairing compares it for every pair of waiting seeks."""
        return json.dumps(dict(self.config), sort_keys=True)


@dataclass(frozen=True)
class Pairing:
    game: str
    bots: tuple[str, ...]  # in seat order
    config: Mapping[str, Any]
    seeks: tuple[Seek, ...]


@dataclass
class Lobby:
    """The waiting seeks. ``players`` says how many seats a game needs under a config;
    ``rating`` gives a bot's rating in a game (None when unrated); ``capacity`` says how
    many more matches a bot may start now."""

    players: Callable[[str, Mapping[str, Any]], int]
    rating: Callable[[str, str], float | None] = lambda bot, game: None
    capacity: Callable[[str], int] = lambda bot: 1
    rng: random.Random = field(default_factory=random.Random)
    seeks: list[Seek] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def seek(self, bot: str, games: Sequence[str], config: Mapping[str, Any], self_play: bool = False) -> Seek:
        entry = Seek(next(self._ids), bot, tuple(games), dict(config), self_play)
        self.seeks.append(entry)
        return entry

    def cancel(self, bot: str, games: Sequence[str] | None = None) -> int:
        """Drop a bot's seeks (those naming any of ``games``, or all); how many went."""
        keep = [s for s in self.seeks if s.bot != bot or (games is not None and not set(games) & set(s.games))]
        dropped = len(self.seeks) - len(keep)
        self.seeks = keep
        return dropped

    def pair(self) -> list[Pairing]:
        """Form every table the waiting seeks allow, oldest seeks first.

        One pass is enough: forming a table only removes seeks and uses up seats, so a seek
        that found no table earlier in the pass finds none later either."""
        formed: list[Pairing] = []
        seated: Counter[str] = Counter()  # seats given in this pass, not yet started matches
        taken: set[int] = set()
        for seek in list(self.seeks):
            if seek.id in taken:
                continue
            pairing = self._table_for(seek, lambda bot: self.capacity(bot) > seated[bot])
            if pairing is not None:
                taken.update(used.id for used in pairing.seeks)
                self.seeks = [s for s in self.seeks if s.id not in taken]
                seated.update(set(pairing.bots))
                formed.append(pairing)
        return formed

    def _table_for(self, first: Seek, available: Callable[[str], bool]) -> Pairing | None:
        if not available(first.bot):
            return None
        for game in first.games:
            needed = self.players(game, first.config)
            mine = self.rating(first.bot, game)
            candidates = [
                s
                for s in self.seeks
                if s is not first
                and game in s.games
                and s.config_key == first.config_key
                and (s.bot != first.bot or (s.self_play and first.self_play))
                and available(s.bot)
            ]
            candidates.sort(key=lambda s: (_distance(mine, self.rating(s.bot, game)), s.id))
            table = [first]
            for candidate in candidates:
                if len(table) == needed:
                    break
                seated_here = [s for s in table if s.bot == candidate.bot]
                if seated_here and not (candidate.self_play and all(s.self_play for s in seated_here)):
                    continue  # a bot sits twice only when every one of its seeks here asked for self-play
                table.append(candidate)
            if len(table) == needed:
                self.rng.shuffle(table)  # seat order: nobody always moves first
                return Pairing(game, tuple(s.bot for s in table), dict(first.config), tuple(table))
        return None

    def waiting(self) -> list[dict[str, Any]]:
        return [{"bot": s.bot, "games": list(s.games), "config": dict(s.config)} for s in self.seeks]


def _distance(mine: float | None, theirs: float | None) -> float:
    if mine is None or theirs is None:
        return 0.0
    return abs(mine - theirs)

"""Seeks and pairing: bots ask for games, the lobby forms tables.

A seek is one seat wanted in one of some games under one config. When enough
compatible seeks wait, the lobby seats them together, preferring opponents of close
rating (closest TrueSkill mu, once ratings exist) and otherwise the longest waiting. A bot
is never paired with itself unless both of its seeks asked for self-play.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Seek:
    id: int
    bot: str
    games: tuple[str, ...]
    config: Mapping[str, Any]  # as sent, or as every game named reads it
    self_play: bool = False
    read: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per game named, the config as that game reads it (``"1"`` is 1.0 for a number, True for a
    boolean); a game left out reads ``config``. The seek sits with any other asking the same of
    that game."""
    standing: bool = False
    """Back in the lobby each time a match it formed ends, until cancelled (``Lobby.again``)."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """Each game's config as pairing compares it (``config_key``), computed once by the lobby:
    pairing compares them for every pair of waiting seeks, and a standing seek comes back
    after each of its matches, hundreds of times a second on a busy server."""

    def config_of(self, game: str) -> Mapping[str, Any]:
        return self.read.get(game, self.config)

    def names_any(self, games: Sequence[str] | None) -> bool:
        """Whether a cancel of ``games`` (None: every game) drops this seek."""
        return games is None or not set(games).isdisjoint(self.games)


def config_key(config: Mapping[str, Any]) -> str:
    """A config as pairing compares them: the same values (as the server read them), whatever
    the order of its keys."""
    return json.dumps(dict(config), sort_keys=True)


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

    def seek(
        self,
        bot: str,
        games: Sequence[str],
        config: Mapping[str, Any],
        self_play: bool = False,
        read: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        standing: bool = False,
    ) -> Seek:
        names = tuple(dict.fromkeys(games))  # a game named twice is one
        reads = dict(read or {})
        keys = {game: config_key(reads.get(game, config)) for game in names}  # as Seek.config_of reads it
        entry = Seek(next(self._ids), bot, names, dict(config), self_play, reads, standing, keys)
        self.seeks.append(entry)
        return entry

    def again(self, seek: Seek) -> Seek:
        """A standing seek back after its match: behind the seeks waiting now, as a new one is."""
        entry = replace(seek, id=next(self._ids))
        self.seeks.append(entry)
        return entry

    def waiting_of(self, bot: str) -> int:
        """How many seeks the bot has waiting."""
        return sum(1 for seek in self.seeks if seek.bot == bot)

    def take(self, bot: str, game: str, config: Mapping[str, Any]) -> Seek | None:
        """Withdraw the bot's oldest seek that would sit at ``game`` under ``config`` (as pairing
        compares them), None when it has none."""
        key = config_key(config)
        for index, seek in enumerate(self.seeks):
            if seek.bot == bot and seek.keys.get(game) == key:
                return self.seeks.pop(index)
        return None

    def cancel(self, bot: str, games: Sequence[str] | None = None) -> int:
        """Drop a bot's seeks (those naming any of ``games``, or all); how many went."""
        keep = [s for s in self.seeks if s.bot != bot or not s.names_any(games)]
        dropped = len(self.seeks) - len(keep)
        self.seeks = keep
        return dropped

    def pair(self) -> list[Pairing]:
        """Form every table the waiting seeks allow, oldest seeks first.

        One pass is enough: forming a table only removes seeks and uses up seats, so a seek
        that found no table earlier in the pass finds none later either."""
        pools: dict[tuple[str, str], _Pool] = {}
        for seek in self.seeks:
            for game, key in seek.keys.items():
                pool = pools.get((game, key))
                if pool is None:
                    pool = pools[(game, key)] = _Pool()
                pool.add(seek, self.rating(seek.bot, game))
        for pool in pools.values():
            pool.ranked.sort()

        formed: list[Pairing] = []
        seated: Counter[str] = Counter()  # seats given in this pass, not yet started matches
        taken: set[int] = set()
        for seek in self.seeks:
            if seek.id in taken or self.capacity(seek.bot) <= seated[seek.bot]:
                continue
            pairing = self._table_for(seek, pools, lambda s: self.capacity(s.bot) > seated[s.bot])
            if pairing is not None:
                for used in pairing.seeks:
                    taken.add(used.id)
                    for game, key in used.keys.items():
                        pools[(game, key)].remove(used)
                seated.update(set(pairing.bots))
                formed.append(pairing)
        if taken:
            self.seeks = [s for s in self.seeks if s.id not in taken]
        return formed

    def _table_for(
        self, first: Seek, pools: Mapping[tuple[str, str], _Pool], available: Callable[[Seek], bool]
    ) -> Pairing | None:
        for game, key in first.keys.items():
            config = first.config_of(game)
            needed = self.players(game, config)
            pool = pools[(game, key)]
            table = [first]
            for candidate in pool.nearest(pool.rating_of[first.id]):
                if len(table) == needed:
                    break
                if candidate is first or not available(candidate):
                    continue
                seated_here = [s for s in table if s.bot == candidate.bot]
                if seated_here and not (candidate.self_play and all(s.self_play for s in seated_here)):
                    continue  # a bot sits twice only when every one of its seeks here asked for self-play
                table.append(candidate)
            if len(table) == needed:
                self.rng.shuffle(table)  # seat order: nobody always moves first
                return Pairing(game, tuple(s.bot for s in table), dict(config), tuple(table))
        return None

    def waiting(self) -> list[dict[str, Any]]:
        return [{"bot": s.bot, "games": list(s.games), "config": dict(s.config)} for s in self.seeks]


class _Pool:
    """The waiting seeks of one game under one config, during one pairing pass.

    It keeps them by age and the rated ones by rating too, so that a seek's nearest
    opponents come from a walk outwards from its own rating: sorting the pool for every
    seek would make a pass over a burst of seeks (every bot back after a restart) quadratic.
    """

    def __init__(self) -> None:
        self.by_age: dict[int, Seek] = {}  # seek ids grow with age
        self.rating_of: dict[int, float | None] = {}
        self.ranked: list[tuple[float, int]] = []  # (rating, seek id) of the rated, sorted once filled
        self.unrated: dict[int, Seek] = {}

    def add(self, seek: Seek, rating: float | None) -> None:
        self.by_age[seek.id] = seek
        self.rating_of[seek.id] = rating
        if rating is None:
            self.unrated[seek.id] = seek
        else:
            self.ranked.append((rating, seek.id))

    def remove(self, seek: Seek) -> None:
        del self.by_age[seek.id]
        rating = self.rating_of.pop(seek.id)
        if rating is None:
            del self.unrated[seek.id]
        else:
            del self.ranked[bisect.bisect_left(self.ranked, (rating, seek.id))]

    def nearest(self, mine: float | None) -> Iterator[Seek]:
        """Every seek, by distance of its rating from ``mine``, then oldest first; an unrated
        seek (or an unrated ``mine``) is at no distance from anyone."""
        if mine is None:
            yield from self.by_age.values()
            return
        ranked = self.ranked
        low, high = bisect.bisect_left(ranked, (mine, -1)), bisect.bisect_right(ranked, (mine, math.inf))
        same = [self.by_age[seek_id] for _, seek_id in ranked[low:high]]
        yield from heapq.merge(self.unrated.values(), same, key=lambda seek: seek.id)
        below, above = low - 1, high
        while below >= 0 or above < len(ranked):
            down = mine - ranked[below][0] if below >= 0 else math.inf
            up = ranked[above][0] - mine if above < len(ranked) else math.inf
            ring: list[int] = []  # the ids at the next distance, on either side
            if down <= up:
                rating = ranked[below][0]
                while below >= 0 and ranked[below][0] == rating:
                    ring.append(ranked[below][1])
                    below -= 1
            if up <= down:
                rating = ranked[above][0]
                while above < len(ranked) and ranked[above][0] == rating:
                    ring.append(ranked[above][1])
                    above += 1
            yield from (self.by_age[seek_id] for seek_id in sorted(ring))

"""Stores with finished matches in them, played in-process by reference bots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat
from arena.store import Store
from bots.registry import make_bot


def play(db: Path, game: str, count: int, specs: Sequence[str] = ("random", "random"), seed: int = 0) -> list[str]:
    """``count`` finished matches of ``game`` (seeds from ``seed`` on), stored; their ids."""
    store = Store(db)
    try:
        ids = []
        for n in range(seed, seed + count):
            seats = [LocalSeat(make_bot(spec, game, i), name=f"{spec}-bot{i}") for i, spec in enumerate(specs)]
            result = trio.run(lambda s=seats, n=n: play_match(games.get(game), s, seed=n))
            store.finish_match(result)
            ids.append(result.match_id)
        return ids
    finally:
        store.close()

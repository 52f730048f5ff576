"""The games' caches of computed answers stay bounded in a server that runs for months.

Configs, hands and bids are chosen by clients: a cache keyed by them grows with every new
one. Goofspiel's legal bids, cached by hand with no bound, grew by about a hundred entries
(29 KiB) with every 52-card match (found by a QA helper's soak of the server).
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Iterator
from typing import Any

import games
import games.goofspiel

UNBOUNDED = {
    "games.tic_tac_toe.legal_cells": "a board's empty cells: 2**9 masks",
    "games.tic_tac_toe.board_rows": "a board: 3**9 at most",
    "games.tic_tac_toe.render_board": "a board: 3**9 at most",
    "games.connect_four.geometry": "a board size within the config's bounds",
    "games.connect_four.legal_columns": "a board size and its full columns: 2**columns masks",
}
"""Caches whose keys the game itself bounds, with how."""


def cached_functions() -> Iterator[tuple[str, Any]]:
    for module_info in pkgutil.iter_modules(games.__path__, "games."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            members = [(name, value)]
            if isinstance(value, type) and value.__module__ == module.__name__:
                members = [(f"{name}.{key}", getattr(member, "__func__", member)) for key, member in vars(value).items()]
            for qualified, member in members:
                if hasattr(member, "cache_info") and getattr(member, "__module__", None) == module.__name__:
                    yield f"{module.__name__}.{qualified}", member


def test_every_cache_of_a_game_is_bounded_or_said_to_be() -> None:
    found = dict(cached_functions())
    assert "games.goofspiel.bids_in" in found and "games.iterated.Choices.numbered" in found  # the walk sees them
    unbounded = {name for name, function in found.items() if function.cache_info().maxsize is None}
    assert unbounded == set(UNBOUNDED) & set(found) and set(UNBOUNDED) <= set(found), unbounded ^ set(UNBOUNDED)


def test_many_52_card_goofspiel_matches_leave_the_bids_cache_bounded() -> None:
    bids_in, rng = games.goofspiel.bids_in, random.Random(0)
    bids_in.cache_clear()
    for seed in range(1000):  # about thirty new hands a match: until more than the cache keeps
        state = games.get("goofspiel").new({"cards": 52}, seed=seed)
        while not state.is_over:
            state.step({seat: rng.choice(state.legal_actions(seat)) for seat in state.to_move()})
        if bids_in.cache_info().misses > bids_in.cache_info().maxsize:
            break
    assert bids_in.cache_info().misses > bids_in.cache_info().maxsize == bids_in.cache_info().currsize

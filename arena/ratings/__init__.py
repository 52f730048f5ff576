"""Ratings: TrueSkill after every match, Nash averaging on demand, LMArena-style ranks.

Pure functions on values and arrays; the store, server and CLI decide when to call them.
Nash averaging's names are imported when first asked for: they bring in scipy, which took
half of every store-opening command's start (0.45 s of 0.85 s to import ``arena.store``).
"""

from __future__ import annotations

import importlib
from typing import Any

from arena.ratings.trueskill import (
    DuplicateMatch,
    Rating,
    duplicate_ranks,
    interval95,
    rank_by_intervals,
    ranks_from_returns,
    rate_match,
    win_probability,
)

__all__ = [
    "AgentTaskNash",
    "DuplicateMatch",
    "Rating",
    "WinCounts",
    "agent_task_nash",
    "bootstrap",
    "duplicate_ranks",
    "interval95",
    "logodds_matrix",
    "maxent_nash",
    "nash_ratings",
    "rank_by_intervals",
    "ranks_from_returns",
    "rate_match",
    "win_matrix",
    "win_probability",
]

_NASH = {
    "AgentTaskNash",
    "WinCounts",
    "agent_task_nash",
    "bootstrap",
    "logodds_matrix",
    "maxent_nash",
    "nash_ratings",
    "win_matrix",
}


def __getattr__(name: str) -> Any:
    if name in _NASH:
        return getattr(importlib.import_module("arena.ratings.nash"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

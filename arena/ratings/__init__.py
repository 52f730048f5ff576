"""Ratings: TrueSkill after every match, Nash averaging on demand, LMArena-style ranks.

Pure functions on values and arrays; the store, server and CLI decide when to call them.
"""

from arena.ratings.nash import (
    AgentTaskNash,
    WinCounts,
    agent_task_nash,
    bootstrap,
    logodds_matrix,
    maxent_nash,
    nash_ratings,
    win_matrix,
)
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

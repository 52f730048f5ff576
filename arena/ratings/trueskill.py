"""TrueSkill through the ``trueskill`` package, plus the pure ranking helpers it needs.

Why a wrapper: the package keeps a global environment and raises FloatingPointError on
big upsets with its default backend. Here every call uses an explicit environment (the
documented defaults: mu 25, sigma 25/3, beta sigma/2, tau sigma/100, draw probability
0.10), and an upset is retried with the mpmath backend, as the package advises, so one
surprising result never stops the rating of a match. Two teams (every 1v1 match) are
updated in closed form instead, which is exact and far faster; the package serves three
teams and more. Ratings are plain frozen values; the store decides where they live (one
per bot and game variant).

Ranks everywhere here are 1-based with ties shared (rank 1 is best; two bots of rank 1
drew), which is what ``trueskill.rate`` needs (lower is better, equal is a draw).
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import mpmath
import numpy as np
import trueskill as _ts

from arena.match import competition_ranks

__all__ = [
    "BETA",
    "DRAW_PROBABILITY",
    "MU",
    "SIGMA",
    "TAU",
    "DuplicateMatch",
    "Rating",
    "duplicate_ranks",
    "interval95",
    "rank_by_intervals",
    "ranks_from_returns",
    "rate_match",
    "win_probability",
]

MU = 25.0
SIGMA = MU / 3.0
BETA = SIGMA / 2.0
TAU = SIGMA / 100.0
DRAW_PROBABILITY = 0.10
Z95 = 1.959963984540054  # the two-sided 95% normal quantile (the "1.96")
_MPMATH_DIGITS = (15, 30, 60, 120, 240)  # precisions tried in turn after the float backend fails
_AGREEMENT = 1e-12  # how close two precisions' ratings must be for the answer to be taken
_MPMATH = threading.Lock()


@dataclass(frozen=True, slots=True)
class Rating:
    """A TrueSkill belief: skill ~ Normal(mu, sigma^2)."""

    mu: float = MU
    sigma: float = SIGMA

    @property
    def conservative(self) -> float:
        """``mu - 3 sigma``: the skill we are 99.7% sure the bot exceeds; it orders the bots of one rank."""
        return self.mu - 3.0 * self.sigma

    def __reduce__(self) -> tuple[type[Rating], tuple[float, float]]:
        """Pickled as its two numbers: for a frozen dataclass with slots, pickle's default walks
        ``dataclasses.fields`` on both ends, and the new ratings of every stored match cross
        back from the store writer's process (``arena.store_writer``) to the event loop's."""
        return Rating, (self.mu, self.sigma)


@lru_cache(maxsize=8)
def _environment(mu: float, sigma: float, beta: float, tau: float, draw_probability: float, backend: str | None) -> _ts.TrueSkill:
    return _ts.TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=tau, draw_probability=draw_probability, backend=backend)


def rate_match(
    teams: Sequence[Sequence[Rating]],
    ranks: Sequence[int],
    *,
    mu: float = MU,
    sigma: float = SIGMA,
    beta: float = BETA,
    tau: float = TAU,
    draw_probability: float = DRAW_PROBABILITY,
) -> list[list[Rating]]:
    """New ratings after one match of two or more teams (lower rank is better, equal ranks drew).

    Uses an explicit environment; on FloatingPointError or ValueError (an upset the default
    backend's precision cannot handle) the same update is recomputed with the mpmath backend, at
    15 significant digits and then more (an upset between ratings 10^5 apart needs 30, 10^8
    apart 60), until two precisions in a row agree: too few digits can fail as the float
    backend does, or return ratings that are wrong.
    Two teams too far in the tail for the closed form go to mpmath at once: the float
    backend fails on the same subnormal probabilities, with wrong numbers or a ValueError.
    """
    if len(teams) < 2:
        raise ValueError(f"TrueSkill needs at least two teams, got {len(teams)}")
    if len(ranks) != len(teams):
        raise ValueError(f"{len(ranks)} ranks for {len(teams)} teams")
    if any(len(team) == 0 for team in teams):
        raise ValueError("every team needs at least one rating")
    if not 0.0 <= draw_probability < 1.0:
        raise ValueError(f"draw_probability must be at least 0 and below 1, got {draw_probability}")
    if draw_probability == 0.0 and len(set(ranks)) < len(ranks):
        # a draw the model calls impossible: the update divided by its zero probability, or
        # (three teams or more) returned sigmas grown past their priors
        raise ValueError("a draw cannot be rated with draw_probability 0: the model gives it no chance")
    settings = (float(mu), float(sigma), float(beta), float(tau), float(draw_probability))
    if len(teams) == 2:
        rated = _rate_two_teams(teams, ranks, float(beta), float(tau), float(draw_probability))
        if rated is not None:
            return rated
    else:
        try:
            return _rate(_environment(*settings, None), teams, ranks)
        except (FloatingPointError, ValueError):  # ValueError: a precision of 0 reached math.sqrt
            pass
    env = _environment(*settings, "mpmath")
    previous: list[list[Rating]] | None = None
    with _MPMATH:  # mpmath's precision is process-global: one retry at a time
        for digits in _MPMATH_DIGITS:
            with mpmath.workdps(digits):
                try:
                    rated = _rate(env, teams, ranks)
                except (FloatingPointError, ValueError):  # ValueError: a precision of 0 reached math.sqrt
                    continue
            if previous is not None and _agree(previous, rated):
                return rated
            previous = rated
    raise FloatingPointError(
        f"TrueSkill update failed even at {_MPMATH_DIGITS[-1]} digits: ratings {[[(r.mu, r.sigma) for r in t] for t in teams]} "
        "are too far apart to update"
    )


def _agree(one: Sequence[Sequence[Rating]], other: Sequence[Sequence[Rating]]) -> bool:
    """Whether two precisions' answers are the same to 12 digits: a precision too low for the
    upset does not always fail, it can return a sigma grown past its prior (impossible after
    an observation), 10^4 times too big, or 10^-7 off; only agreement with more digits shows
    the answer holds."""
    pairs = [(a, b) for team, rated in zip(one, other, strict=True) for a, b in zip(team, rated, strict=True)]
    return all(
        math.isclose(getattr(a, key), getattr(b, key), rel_tol=_AGREEMENT, abs_tol=_AGREEMENT)
        for a, b in pairs
        for key in ("mu", "sigma")
    )


def _rate_two_teams(
    teams: Sequence[Sequence[Rating]], ranks: Sequence[int], beta: float, tau: float, draw_probability: float
) -> list[list[Rating]] | None:
    """The same update for two teams, in closed form (Herbrich et al. 2007, eqs. 2-5).

    Two teams need no message passing: the team-difference factor is the only truncation,
    so one Gaussian step is exact. This takes microseconds where the package builds a
    factor graph per call (a tenth of the live server's busy time went there). It uses the
    exact normal CDF and agrees with the package's mpmath backend to 1e-12 for ratings within
    5 spreads (c) of each other; rounding grows with the square of the gap, to about 1e-9 some
    35 spreads apart. The package's float backend approximates erfc and lands within a few
    1e-6. None when the result's
    probability is below the smallest normal float, where a subnormal keeps only a few
    digits (a 1% error in sigma, 200% in a draw's mu): the caller then uses mpmath."""
    variances = [[r.sigma * r.sigma + tau * tau for r in team] for team in teams]
    players = len(variances[0]) + len(variances[1])
    c2 = sum(variances[0]) + sum(variances[1]) + players * beta * beta
    c = math.sqrt(c2)
    margin = _NORMAL.inv_cdf((draw_probability + 1.0) / 2.0) * math.sqrt(players) * beta / c
    first = 0 if ranks[0] <= ranks[1] else 1  # the winner, or either side of a draw
    t = (sum(r.mu for r in teams[first]) - sum(r.mu for r in teams[1 - first])) / c
    if ranks[0] == ranks[1]:
        a, b = margin - abs(t), -margin - abs(t)
        mass = _cdf(a) - _cdf(b)
        if mass < _SMALLEST_NORMAL:
            return None
        v = (_pdf(b) - _pdf(a)) / mass * (-1.0 if t < 0 else 1.0)
        w = v * v + (a * _pdf(a) - b * _pdf(b)) / mass
    else:
        x = t - margin
        mass = _cdf(x)
        if mass < _SMALLEST_NORMAL:
            return None
        v = _pdf(x) / mass
        w = v * (v + x)
    if not 0.0 < w < 1.0:
        return None
    rated: list[list[Rating]] = [[], []]
    for side, sign in ((first, 1.0), (1 - first, -1.0)):
        for rating, var in zip(teams[side], variances[side], strict=True):
            rated[side].append(Rating(rating.mu + sign * var / c * v, math.sqrt(var * (1.0 - var / c2 * w))))
    return rated


_NORMAL = NormalDist()
_SMALLEST_NORMAL = sys.float_info.min


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _rate(env: _ts.TrueSkill, teams: Sequence[Sequence[Rating]], ranks: Sequence[int]) -> list[list[Rating]]:
    groups = [tuple(env.create_rating(r.mu, r.sigma) for r in team) for team in teams]
    rated = env.rate(groups, ranks=list(ranks))
    return [[Rating(float(r.mu), float(r.sigma)) for r in team] for team in rated]


def win_probability(a: Rating, b: Rating, beta: float = BETA) -> float:
    """P(a beats b) = Phi((mu_a - mu_b) / sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)).

    Not ``trueskill.quality``, which is a draw probability.
    """
    spread = math.sqrt(2.0 * beta * beta + a.sigma * a.sigma + b.sigma * b.sigma)
    return 0.5 * math.erfc(-(a.mu - b.mu) / (spread * math.sqrt(2.0)))


def interval95(rating: Rating) -> tuple[float, float]:
    """The 95% interval ``mu +- 1.96 sigma``."""
    half = Z95 * rating.sigma
    return rating.mu - half, rating.mu + half


def rank_by_intervals(intervals: Sequence[tuple[float, float]]) -> list[int]:
    """LMArena ranks: 1 + the number of bots whose interval lies wholly above this bot's.

    Bots whose intervals overlap cannot be told apart and may share a rank; the ranks are
    not necessarily consecutive.
    """
    if not intervals:
        return []
    bounds = np.asarray(intervals, dtype=float)
    if bounds.ndim != 2 or bounds.shape[1] != 2 or np.any(bounds[:, 0] > bounds[:, 1]):
        raise ValueError("intervals must be (low, high) pairs with low <= high")
    lows = np.sort(bounds[:, 0])
    above = len(lows) - np.searchsorted(lows, bounds[:, 1], side="right")  # lows strictly above each high
    return [int(1 + k) for k in above]


def ranks_from_returns(
    returns: Sequence[float],
    forfeit_seat: int | Collection[int] | None = None,
    teams: Sequence[Sequence[int]] | None = None,
) -> list[int]:
    """The ranks ``rate_match`` needs for one finished match, one per team (or per seat).

    Two-seat zero-sum games: the higher return wins, equal returns draw; other games:
    seats (or teams, by their mean return) ranked by return, ties shared. ``teams`` lists
    the seats of each team where the game has teams (a cooperative game has one team of
    all seats, which gives a single rank: rate it with ``duplicate_ranks`` instead).
    A forfeiting seat, or a team containing one, ranks last, below every team that did
    not forfeit (its minimum return could otherwise tie with an honest loser's).
    """
    seats = len(returns)
    forfeits = {forfeit_seat} if isinstance(forfeit_seat, int) else set(forfeit_seat or ())
    if any(not 0 <= s < seats for s in forfeits):
        raise ValueError(f"forfeit seat out of range for {seats} seats: {sorted(forfeits)}")
    groups = [list(team) for team in teams] if teams is not None else [[s] for s in range(seats)]
    members = [s for team in groups for s in team]
    if sorted(members) != list(range(seats)):
        raise ValueError(f"teams must partition the seats 0..{seats - 1}, got {groups}")
    team_returns = [sum(float(returns[s]) for s in team) / len(team) for team in groups]
    failed = [index for index, team in enumerate(groups) if any(s in forfeits for s in team)]
    return competition_ranks(team_returns, failed)


@dataclass(frozen=True, slots=True)
class DuplicateMatch:
    """One match of a duplicate group: the team that played it, the shared seed, its score."""

    team: tuple[str, ...]
    seed: int
    score: float


def duplicate_ranks(group: Sequence[DuplicateMatch], size: int) -> dict[tuple[str, ...], int] | None:
    """Ranks of the teams of a completed duplicate group (cooperative games), or None.

    A cooperative game has no opponent inside the match, so teams that played the same
    seeds (the same deals) are compared, as in duplicate bridge: each team's mean score
    over the seeds every team played. A group with fewer than ``size`` matches is not
    finished and rates nobody (None), so that a team is never judged on easier deals
    than its rivals; so does a group of one partnership (the same bots, whatever their seats:
    a tournament's pair of games with seats swapped), or with no seed in common.

    When teams share a bot (a tournament's duplicate format seats every participant with
    every other, in both seat orders), TrueSkill cannot put one player on two teams of one
    update, so each bot is ranked alone by the mean score of the teams it played in: how
    well it does with the same partners on the same deals as its rivals (cross-play).
    """
    if len(group) < size:
        return None
    by_team: dict[tuple[str, ...], dict[int, list[float]]] = {}
    for match in group:
        by_team.setdefault(tuple(match.team), {}).setdefault(match.seed, []).append(float(match.score))
    if len({frozenset(team) for team in by_team}) < 2:
        return None
    shared = set.intersection(*(set(seeds) for seeds in by_team.values()))
    if not shared:
        return None
    means = {team: sum(sum(seeds[s]) / len(seeds[s]) for s in shared) / len(shared) for team, seeds in by_team.items()}
    bots = [bot for team in means for bot in team]
    if len(set(bots)) < len(bots):
        by_bot: dict[tuple[str, ...], list[float]] = {}
        for team, mean in means.items():
            for bot in dict.fromkeys(team):
                by_bot.setdefault((bot,), []).append(mean)
        if len(by_bot) < 2:
            return None
        means = {bot: sum(values) / len(values) for bot, values in by_bot.items()}
    teams = list(means)
    return dict(zip(teams, competition_ranks([means[t] for t in teams]), strict=True))

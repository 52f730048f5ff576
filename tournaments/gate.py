"""The nightly promotion gate: does the new checkpoint beat the old one, as far as the
head-to-head results can tell?

A checkpoint becomes "current" only when a test supports "new beats old", never on a
lucky streak. Two tests, chosen by name:

- ``sprt``: Wald's sequential probability ratio test on the per-match scores of new
  against old (win 1, draw 1/2, loss 0). H0: the expected score is ``p0`` (no better,
  0.5 by default); H1: it is ``p1`` (better by a margin). Each match adds
  ``s·ln(p1/p0) + (1 − s)·ln((1 − p1)/(1 − p0))`` to the log-likelihood ratio: the
  Bernoulli likelihood for a win or a loss, and for a draw half a win and half a loss
  (the usual "draw as 0.5" approximation of the trinomial model; it needs no draw-rate
  parameter, and any score in [0, 1] fits it). The matches are read in the order they
  were played and the test stops at the first crossing of Wald's bounds
  ``ln(β/(1 − α))`` and ``ln((1 − β)/α)``: accept H1 (promote), reject it (keep the old
  one), or continue (not enough matches yet; keep the old one).
- ``bootstrap``: a percentile bootstrap interval of the mean score minus 0.5; promote
  only when the whole interval lies above zero.

The statistics are pure functions; ``head_to_head`` is the one reader, of a Store.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import games
from arena.store import FINISHED, Store

METHODS = ("sprt", "bootstrap")
RESAMPLES_MOST = 1_000_000  # far past what a percentile interval needs; each costs 8 bytes held at once
ACCEPT, REJECT, CONTINUE = "accept", "reject", "continue"


@dataclass(frozen=True)
class SprtResult:
    """Where the test stopped: after ``n`` matches, with this log-likelihood ratio."""

    llr: float
    lower: float
    upper: float
    decision: str  # accept (H1: new is better by the margin), reject (H0), continue
    n: int


@dataclass(frozen=True)
class Interval:
    statistic: float  # mean score minus the baseline
    low: float
    high: float


@dataclass(frozen=True)
class Decision:
    """The gate's verdict, as the nightly report records it."""

    promote: bool
    method: str
    new: str
    old: str
    statistic: float  # sprt: the log-likelihood ratio; bootstrap: mean score - 0.5
    interval: tuple[float, float] | None  # sprt: Wald's (lower, upper) bounds; bootstrap: the interval; None without data
    n: int  # matches the statistic used
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_scores(scores: Sequence[float]) -> np.ndarray:
    values = np.asarray(scores, dtype=float)
    if values.ndim != 1 or not np.all((values >= 0) & (values <= 1)):
        raise ValueError("scores must be a flat sequence of numbers in [0, 1] (win 1, draw 0.5, loss 0)")
    return values


def sprt(scores: Sequence[float], *, p0: float = 0.5, p1: float = 0.6, alpha: float = 0.05, beta: float = 0.05) -> SprtResult:
    """Wald's SPRT over ``scores`` in the order played (see the module docstring for the model).

    ``alpha`` is the chance of promoting a checkpoint whose expected score is only ``p0``;
    ``beta`` of keeping out one whose expected score is ``p1``.
    """
    if not 0 < p0 < p1 < 1:
        raise ValueError(f"sprt needs 0 < p0 < p1 < 1, got p0={p0}, p1={p1}")
    if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
        raise ValueError(f"sprt needs alpha, beta in (0, 1) with alpha + beta < 1, got alpha={alpha}, beta={beta}")
    values = _check_scores(scores)
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    win, loss = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    llr = 0.0
    for n, score in enumerate(values.tolist(), start=1):
        llr += score * win + (1 - score) * loss
        if llr >= upper:
            return SprtResult(llr, lower, upper, ACCEPT, n)
        if llr <= lower:
            return SprtResult(llr, lower, upper, REJECT, n)
    return SprtResult(llr, lower, upper, CONTINUE, len(values))


def bootstrap_interval(
    scores: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0, baseline: float = 0.5
) -> Interval:
    """Percentile bootstrap interval of ``mean(scores) - baseline``, the same for the same seed.

    With scores in [0, 1] and ``baseline`` 0.5 this is the head-to-head score's edge over
    an even match; with per-match return differences and ``baseline`` 0 it is the mean
    return difference.
    """
    values = np.asarray(scores, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("bootstrap_interval needs at least one score")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not 1 <= resamples <= RESAMPLES_MOST:
        raise ValueError(f"resamples must be from 1 to {RESAMPLES_MOST:,}, got {resamples:,}")
    if seed < 0:  # numpy's own refusal names no key
        raise ValueError(f"seed must be at least 0, got {seed}")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 1_000_000 // values.size)  # bounds the index matrix to about 8 MB
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        means[start : start + rows] = values[rng.integers(0, values.size, size=(rows, values.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(float(values.mean() - baseline), float(low - baseline), float(high - baseline))


def promotion_decision(
    new: str,
    old: str,
    results: Sequence[float],
    method: str = "sprt",
    *,
    p0: float = 0.5,
    p1: float = 0.6,
    alpha: float = 0.05,
    beta: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Decision:
    """Promote ``new`` over ``old`` only if the chosen test supports "new beats old".

    ``results`` are new's per-match scores against old in the order played (``head_to_head``).
    """
    if method not in METHODS:
        raise ValueError(f"unknown promotion method {method!r}; choose one of {', '.join(METHODS)}")
    values = _check_scores(results)
    n = len(values)
    if n == 0:
        reason = f"no finished head-to-head matches of {new} against {old}; keep {old}"
        return Decision(False, method, new, old, 0.0, None, 0, reason)
    if method == "sprt":
        test = sprt(values, p0=p0, p1=p1, alpha=alpha, beta=beta)
        mean = float(values[: test.n].mean())
        context = f"after {test.n} matches (mean score {mean:.3f}; H0 score {p0:g}, H1 score {p1:g})"
        if test.decision == ACCEPT:
            reason = f"promote {new}: SPRT log-likelihood ratio {test.llr:.3f} reached the upper bound {test.upper:.3f} {context}"
        elif test.decision == REJECT:
            reason = f"keep {old}: SPRT log-likelihood ratio {test.llr:.3f} reached the lower bound {test.lower:.3f} {context}"
        else:
            reason = (
                f"keep {old} for now: SPRT log-likelihood ratio {test.llr:.3f} is still between {test.lower:.3f} and "
                f"{test.upper:.3f} {context}; more matches needed"
            )
        return Decision(test.decision == ACCEPT, method, new, old, test.llr, (test.lower, test.upper), test.n, reason)
    interval = bootstrap_interval(values, confidence=confidence, resamples=resamples, seed=seed)
    bounds = f"{confidence:.0%} bootstrap interval of mean score - 0.5 is [{interval.low:.3f}, {interval.high:.3f}]"
    promote = interval.low > 0
    verdict = "excludes zero: promote " + new if promote else "does not lie above zero: keep " + old
    reason = f"{new} scored {interval.statistic + 0.5:.3f} over {n} matches against {old}; the {bounds}, which {verdict}"
    return Decision(promote, method, new, old, interval.statistic, (interval.low, interval.high), n, reason)


def head_to_head(store: Store, new_bot: str, old_bot: str, game: str | None = None) -> list[float]:
    """New's score in each finished two-seat match between the two bots, in the order played.

    Either seat order counts. A forfeit is a loss for the side that forfeited whatever the
    returns say; otherwise the higher return wins (1), equal returns draw (0.5). Void
    matches, tables of more seats and cooperative games (both seats one team, so the
    match says nothing about who is better) are left out.
    """
    if new_bot == old_bot:
        raise ValueError(f"head_to_head needs two different bots, got {new_bot!r} twice")
    if game is not None:
        game = games.get(game).spec.name
    sql = """SELECT game, players, returns, forfeit_seat FROM matches
             WHERE status = ? AND (? IS NULL OR game = ?)
               AND id IN (SELECT match_id FROM seats WHERE bot = ?) AND id IN (SELECT match_id FROM seats WHERE bot = ?)
             ORDER BY created_at, id"""
    args = (FINISHED, game, game, new_bot, old_bot)
    scores = []
    for row in store.conn.execute(sql, args):
        players = json.loads(row["players"])
        if len(players) != 2 or games.get(row["game"]).spec.teams == "all":
            continue
        mine = players.index(new_bot)
        theirs = 1 - mine
        returns = json.loads(row["returns"])
        if row["forfeit_seat"] is not None:
            scores.append(0.0 if row["forfeit_seat"] == mine else 1.0)
        else:
            scores.append(1.0 if returns[mine] > returns[theirs] else 0.5 if returns[mine] == returns[theirs] else 0.0)
    return scores

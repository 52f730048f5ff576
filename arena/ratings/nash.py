"""Nash averaging (Balduzzi et al., "Re-evaluating evaluation", 2018), as pure array functions.

Why Nash averaging: an average win rate rewards whoever the population happens to be full
of (add ten copies of a weak bot and everyone who beats it climbs). The maximum-entropy
Nash equilibrium of the meta-game weights opponents by how much they matter, so exact
copies share one agent's mass and change nobody's rating.

Agent versus agent
------------------
``A`` is antisymmetric (``A_ij`` = log-odds that i beats j). The Nash set of the symmetric
zero-sum game is the polytope N = {p in simplex : A p <= 0}; we want its point of maximum
entropy. General convex solvers (OpenSpiel uses cvxpy) struggle because N has *implicit
equalities*: on the support of every equilibrium, ``(A p)_i = 0`` holds for all of N, so
N has no strictly feasible point and interior-point methods stall or fail. We remove the
equalities exactly before doing any convex optimisation:

1. **Partition by one LP.** Every matrix game has a strictly complementary equilibrium
   (Bohnenblust, Karlin and Shapley 1950; Goldman-Tucker for LPs): a p in N with, for
   every agent i, either ``p_i > 0`` or ``(A p)_i < 0``. One linear program (HiGHS via
   scipy) finds it by maximising the smallest margin ``s <= p_i - (A p)_i``. Because any
   two equilibria p, q satisfy ``q_i (A p)_i = 0`` (complementary slackness), this splits
   the agents exactly into S (in the support of *some* equilibrium: ``(A p)_S = 0`` and
   ``p_T = 0`` on all of N) and T (beaten by *some* equilibrium). Above 100 agents the
   LP runs on a guess of S (near-best responses to 1,000 steps of regret matching+,
   about two thirds of the agents for random matrices); every agent left out must be
   strictly beaten by the result, else it joins the guess and the LP runs again. The
   check makes the answer exact whatever the guess; the guess only saves time.
2. **Reduce.** N = {p_S >= 0 : A_SS p_S = 0, sum p_S = 1, A_TS p_S <= 0}. An SVD of the
   equality system gives a point and an orthonormal basis Z of its null space; the LP
   point, projected onto it, is strictly inside every remaining inequality (p_S > 0 and
   A_TS p_S < 0). With a unique equilibrium (the generic case) Z is empty and we stop.
3. **Maximise entropy** over y (p_S = p0 + Z y, a handful of dimensions) with a barrier
   method (Boyd and Vandenberghe ch. 11): damped Newton on
   ``t * sum p log p - sum log(p) - sum log(-(A_TS p))`` along a geometric path of t,
   until the duality gap (constraints / t) is below 1e-11. Every iterate is strictly
   feasible, so the answer is a valid equilibrium even if Newton stops early.
4. **Validate** ``A p <= 1e-7``, ``p >= 0``, ``sum p = 1``. If any step fails numerically
   we fall back to the (validated) LP equilibrium, then to a plain maximin LP; we never
   return an unchecked mixture.

Agent versus task
-----------------
``S`` is agents x games. The agent side maximises ``p^T S q``, the game side minimises it.
The optimal p's and the optimal q's form two polytopes (a product), so the maximum-
entropy equilibrium maximises each entropy separately. Step 1 becomes one LP over
(p, q, value, margin) whose constraints force p and q optimal; steps 2 to 4 run once per
side, with the value v as an extra unknown of the equality system so that the LP's
rounding of v cannot make the equations inconsistent. (The block matrix
[[0, S], [-S^T, 0]] that some implementations use is not the same game: on a non-negative
S it puts all mass on the agents.)

A caveat that follows from the maths, not from this code: exact copies change no rating
when the equilibrium of the original game is unique (the generic case) or when copies
are the only source of non-uniqueness. If the original Nash set is a segment for another
reason (two cycles of exactly equal strength), a copy adds ``mass * log 2`` to the entropy
of its half, which moves the maximum-entropy point and can move ratings of agents
outside the support.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import linprog

__all__ = [
    "TOLERANCE",
    "AgentTaskNash",
    "WinCounts",
    "agent_task_nash",
    "bootstrap",
    "bootstrap_counts",
    "count_wins",
    "logodds_matrix",
    "maxent_nash",
    "nash_ratings",
    "win_matrix",
]

Array = NDArray[np.float64]
T = TypeVar("T")

TOLERANCE = 1e-7
"""How far an equilibrium may violate its inequalities (``A p <= TOLERANCE``)."""

_GAP = 1e-11  # duality gap at which the barrier method stops (entropy is this close to its maximum)
_PATH_STEP = 20.0  # factor by which the barrier weight t grows between centring steps
_CENTRING = 1e-14  # Newton decrement^2 / 2 (in entropy units) below which a centring step is done
_SMALL = 100  # up to this many agents the partition LP runs on the whole matrix at once
_GUESS_STEPS = 1000  # regret-matching steps for the support guess of larger matrices
_GUESS_WIDTH = 10.0  # agents within this many times the guess's exploitability of a best response are candidates
_GUESS_ROUNDS = 4  # LPs on a growing guess before solving the whole matrix
_STRICT = 1e-9  # an agent left out must be beaten by at least this much (well above LP rounding)
_MAX_NEWTON = 100  # Newton steps per centring step: a guard against looping, not a working limit


class _Numerical(Exception):
    """A step of the exact method failed (rounding, a singular system); the caller falls back."""


# ---------------------------------------------------------------------------- results to A


class WinCounts(NamedTuple):
    """Pairwise results: ``wins[i, j]`` is i's score against j (a draw counts half), ``games[i, j]`` the games played."""

    agents: list[Hashable]
    wins: Array
    games: Array


def win_matrix(results: Iterable[tuple[Hashable, Hashable, float]], agents: Sequence[Hashable] | None = None) -> WinCounts:
    """Count pairwise wins from ``(a, b, score_of_a)`` results (1 win, 0.5 draw, 0 loss).

    ``agents`` fixes the row order (needed so that bootstrap resamples line up); by default
    agents are numbered in order of first appearance. A result naming an agent outside a
    given ``agents`` list is an error, not silently dropped.
    """
    order: list[Hashable] = list(agents) if agents is not None else []
    index = {a: i for i, a in enumerate(order)}
    if len(index) != len(order):
        raise ValueError("agents contains a duplicate name")
    rows: list[int] = []
    cols: list[int] = []
    scores: list[float] = []
    for a, b, score in results:
        for name in (a, b):
            if name not in index:
                if agents is not None:
                    raise ValueError(f"result names agent {name!r}, which is not in agents")
                index[name] = len(order)
                order.append(name)
        if a == b:
            raise ValueError(f"agent {a!r} cannot play itself in a pairwise result")
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score {score!r} of {a!r} against {b!r} is not in [0, 1]")
        rows.append(index[a])
        cols.append(index[b])
        scores.append(float(score))
    wins, games = count_wins(len(order), np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp), np.asarray(scores))
    return WinCounts(order, wins, games)


def count_wins(
    n: int, rows: NDArray[np.intp], cols: NDArray[np.intp], scores: Array, weights: Array | None = None
) -> tuple[Array, Array]:
    """The ``wins`` and ``games`` matrices of ``n`` agents from results as index arrays (row
    agent, column agent, the row's score), each counted ``weights`` times (once by default):
    a bootstrap resample is then a weighting, computed by numpy, not a list re-read."""
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
    wins = np.zeros((n, n))
    games = np.zeros((n, n))
    np.add.at(wins, (rows, cols), scores * w)
    np.add.at(wins, (cols, rows), (1.0 - scores) * w)
    np.add.at(games, (rows, cols), w)
    np.add.at(games, (cols, rows), w)
    return wins, games


def logodds_matrix(wins: ArrayLike, games: ArrayLike) -> Array:
    """Antisymmetric payoff ``A_ij = log(p_ij / (1 - p_ij))`` with ``p_ij = (wins_ij + 1) / (games_ij + 2)``.

    The +1/+2 smoothing keeps a 3-0 record finite (an unsmoothed 1.0 would be an infinite
    payoff) and makes unplayed pairs exactly even (A_ij = 0).
    """
    w = np.asarray(wins, dtype=float)
    g = np.asarray(games, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or g.shape != w.shape:
        raise ValueError(f"wins and games must be square arrays of one shape, got {w.shape} and {g.shape}")
    if np.any(w < 0) or np.any(w > g + 1e-9):
        raise ValueError("wins must lie between 0 and games")
    a = np.log(w + 1.0) - np.log(g - w + 1.0)
    a = (a - a.T) / 2.0  # exact antisymmetry even if wins + wins.T differs from games by rounding
    np.fill_diagonal(a, 0.0)
    return a


# ---------------------------------------------------------------------------- shared pieces


def _as_antisymmetric(a: ArrayLike) -> Array:
    m = np.asarray(a, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"A must be a non-empty square matrix, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("A has a NaN or infinite entry")
    scale = max(1.0, float(np.abs(m).max()))
    if np.abs(m + m.T).max() > 1e-9 * scale:
        raise ValueError("A must be antisymmetric (A == -A.T): it is the payoff of a symmetric zero-sum game")
    return (m - m.T) / 2.0


def _clean_simplex(p: Array) -> Array:
    """Clip rounding-level negatives and renormalise; the caller validates the result."""
    q = np.where(p > 0.0, p, 0.0)
    total = q.sum()
    if not np.isfinite(total) or total <= 0.0:
        raise _Numerical("mixture has no positive mass")
    return q / total


def _on_simplex(p: Array) -> bool:
    return bool(np.all(np.isfinite(p)) and np.all(p >= 0.0) and abs(p.sum() - 1.0) <= 1e-9)


def _lp(
    c: Array, a_ub: sp.spmatrix, b_ub: Array, a_eq: sp.spmatrix, b_eq: Array, bounds: list[tuple[float | None, float | None]]
) -> Array:
    result = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if result.status != 0 or result.x is None:
        raise _Numerical(f"linear program failed: {result.message}")
    return np.asarray(result.x, dtype=float)


def _maximin(m: Array) -> Array:
    """A plain optimal mixed strategy p maximising ``min_j (m^T p)_j`` (the last-resort fallback)."""
    rows, cols = m.shape
    c = np.zeros(rows + 1)
    c[-1] = -1.0
    a_ub = sp.csr_matrix(np.hstack([-m.T, np.ones((cols, 1))]))
    a_eq = sp.csr_matrix(np.r_[np.ones(rows), 0.0][None, :])
    x = _lp(c, a_ub, np.zeros(cols), a_eq, np.ones(1), [(0.0, None)] * rows + [(None, None)])
    return _clean_simplex(x[:rows])


def _maxent_affine(e: Array, b: Array, g: Array, h: Array, z0: Array, n_ent: int, bonus: Array | None = None) -> Array:
    """Maximise ``entropy(z[:n_ent]) + bonus . z[:n_ent]`` over {E z = b, G z <= h}.

    ``z0`` must satisfy the equalities up to LP rounding and the inequalities strictly,
    with ``z0[:n_ent] > 0``: that is what the partition LP guarantees, and what makes a
    barrier method applicable. ``bonus`` (log multiplicities of merged copies) defaults
    to 0. Raises _Numerical when the start is not strictly inside after projection.
    """
    u, sv, vt = np.linalg.svd(e, full_matrices=True)
    tol = max(e.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0.0)
    rank = int(np.count_nonzero(sv > tol))
    residual = e @ z0 - b
    z0 = z0 - vt[:rank].T @ ((u[:, :rank].T @ residual) / sv[:rank])
    p0, r0 = z0[:n_ent], h - g @ z0
    if not (np.all(p0 > 0.0) and np.all(r0 > 0.0)):
        raise _Numerical("the LP point is not strictly inside the reduced Nash set")
    basis = vt[rank:].T
    if basis.shape[1] == 0:
        return z0  # a single point: the equilibrium is unique on this side
    zp, gz = basis[:n_ent], g @ basis
    linear = np.zeros(n_ent) if bonus is None else np.asarray(bonus, dtype=float)

    def objective(y: Array, weight: float) -> float:
        """Negative entropy (minus bonus) plus the log barrier of p > 0 and G z < h, weighted 1/t.

        The barrier on p is what makes damped Newton safe: ``p log p`` alone is not
        self-concordant near 0, and Newton then drives small coordinates to 0. Scaling
        by 1/t (rather than t on the entropy) keeps values O(1), so the line search
        compares numbers float can resolve.
        """
        p, r = p0 + zp @ y, r0 - gz @ y
        if np.any(p <= 0.0) or np.any(r <= 0.0):
            return math.inf
        log_p = np.log(p)
        return float(np.dot(p, log_p - linear) - weight * (log_p.sum() + np.log(r).sum()))

    y = np.zeros(basis.shape[1])
    t = 1.0
    while True:
        weight = 1.0 / t
        for _ in range(_MAX_NEWTON):
            p, r = p0 + zp @ y, r0 - gz @ y
            grad = zp.T @ (np.log(p) + 1.0 - linear - weight / p) + weight * (gz.T @ (1.0 / r))
            hess = (zp.T * (1.0 / p + weight / p**2)) @ zp + weight * ((gz.T / r**2) @ gz)
            try:
                step = -cho_solve(cho_factor(hess), grad)
            except LinAlgError:
                step = -np.linalg.lstsq(hess, grad, rcond=None)[0]
            decrement = float(-grad @ step)
            if not np.isfinite(decrement):
                raise _Numerical("Newton step is not finite")
            if decrement / 2.0 <= _CENTRING:
                break
            dp, dr = zp @ step, -(gz @ step)
            limits = np.concatenate([-p[dp < 0] / dp[dp < 0], -r[dr < 0] / dr[dr < 0]])
            alpha = min(1.0, 0.99 * float(limits.min())) if limits.size else 1.0
            here = objective(y, weight)
            while alpha > 1e-14 and objective(y + alpha * step, weight) > here - 0.25 * alpha * decrement:
                alpha *= 0.5
            if alpha <= 1e-14:
                break  # no progress at float precision: this centre is as good as it gets
            y = y + alpha * step
        if (n_ent + len(h)) / t < _GAP:
            break
        t *= _PATH_STEP
    return z0 + basis @ y


# ---------------------------------------------------------------------------- agent versus agent


def _partition_lp(a: Array) -> tuple[Array, Array]:
    """A strictly complementary equilibrium x of A and the slack w = -A x (one LP, see the module docstring).

    Variables (x, w, s): maximise s subject to A x + w = 0, sum x = 1, x_i + w_i >= s,
    x >= 0, w >= 0, s <= 1. The slack variables keep the dense block to one copy of A.
    """
    n = len(a)
    c = np.zeros(2 * n + 1)
    c[-1] = -1.0
    eye = sp.identity(n, format="csr")
    a_eq = sp.vstack(
        [
            sp.hstack([sp.csr_matrix(a), eye, sp.csr_matrix((n, 1))]),
            sp.csr_matrix(np.r_[np.ones(n), np.zeros(n + 1)][None, :]),
        ],
        format="csr",
    )
    b_eq = np.r_[np.zeros(n), 1.0]
    a_ub = sp.hstack([-eye, -eye, sp.csr_matrix(np.ones((n, 1)))], format="csr")
    x = _lp(c, a_ub, np.zeros(n), a_eq, b_eq, [(0.0, None)] * (2 * n) + [(None, 1.0)])
    if x[-1] <= 0.0:
        raise _Numerical("partition LP found no strictly complementary equilibrium")
    return x[:n], x[n : 2 * n]


def _regret_matching(a: Array, iterations: int) -> Array:
    """An approximate equilibrium by regret matching+ in self-play (cheap: one product with A per step).

    Against itself a mixture p scores ``p^T A p = 0``, so the regret of agent i is the sum
    of ``(A p_t)_i``; no regret means the (linearly weighted) average p satisfies A p <= eps.
    """
    n = len(a)
    regret, p, total = np.zeros(n), np.full(n, 1.0 / n), np.zeros(n)
    for step in range(1, iterations + 1):
        regret = np.maximum(regret + a @ p, 0.0)
        mass = regret.sum()
        p = regret / mass if mass > 0.0 else np.full(n, 1.0 / n)
        total += step * p
    return total / total.sum()


def _symmetric_partition(a: Array) -> tuple[Array, Array]:
    """A strictly complementary equilibrium x of A and the slack w = -A x.

    The LP is the expensive step, and it only needs the agents that can be in the support.
    For large A we guess them (agents that are nearly best responses to a regret-matching
    approximation), solve the LP on the guess, and check every agent left out: if each is
    strictly beaten by x (``(A x)_j < 0``), x is an equilibrium of the whole game and still
    strictly complementary; otherwise the offenders join the guess and we solve again.
    The answer is exact whatever the guess; the guess only decides the speed.
    """
    n = len(a)
    if n <= _SMALL:
        return _partition_lp(a)
    guess = _regret_matching(a, _GUESS_STEPS)
    payoff = a @ guess
    candidates = payoff >= -_GUESS_WIDTH * max(float(payoff.max()), 1e-12)
    for _ in range(_GUESS_ROUNDS):
        idx = np.flatnonzero(candidates)
        if len(idx) == n:
            break
        x_c, _ = _partition_lp(a[np.ix_(idx, idx)])
        x = np.zeros(n)
        x[idx] = x_c
        w = -(a @ x)
        beaten = w > _STRICT
        if np.all(beaten[~candidates]):
            return x, np.where(candidates, np.maximum(w, 0.0), w)
        candidates |= ~beaten
    return _partition_lp(a)


def _valid_symmetric(a: Array, p: Array) -> bool:
    return _on_simplex(p) and float((a @ p).max()) <= TOLERANCE


def _maxent_symmetric(a: Array, bonus: Array) -> Array:
    x, w = _symmetric_partition(a)
    support = x > w
    lp_point = _clean_simplex(np.where(support, x, 0.0))
    try:
        s, t = np.flatnonzero(support), np.flatnonzero(~support)
        e = np.vstack([a[np.ix_(s, s)], np.ones((1, len(s)))])
        b = np.r_[np.zeros(len(s)), 1.0]
        z = _maxent_affine(e, b, a[np.ix_(t, s)], np.zeros(len(t)), lp_point[s], len(s), bonus[s])
        p = np.zeros(len(a))
        p[s] = z
        p = _clean_simplex(p)
        if _valid_symmetric(a, p):
            return p
    except (_Numerical, LinAlgError, ValueError, FloatingPointError):
        pass
    if _valid_symmetric(a, lp_point):
        return lp_point  # a valid equilibrium with the right support, if not the entropy maximum
    raise _Numerical("no valid point from the partition LP")


def _copies(m: Array, axis: int) -> tuple[Array, Array, Array]:
    """Classes of exact copies along ``axis``: (first member of each class, class of each item, class sizes).

    Merging copies before solving is exact: the best mixture splits a class's mass evenly
    (entropy is concave and the constraints see only the class total), and a class of c
    copies adds ``mass * log c`` to the entropy, which the solver takes as a linear bonus.
    It also makes exact copies cost nothing, however many there are.
    """
    _, first, inverse, counts = np.unique(m, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts.astype(float)


def maxent_nash(a: ArrayLike) -> Array:
    """The maximum-entropy Nash equilibrium p* of the symmetric zero-sum game A (antisymmetric).

    Returns a mixture over agents with ``A p* <= 1e-7`` and ``sum p* = 1``; see the module
    docstring for the algorithm. Never returns an unvalidated mixture: if the exact method
    fails numerically it falls back to a plain LP equilibrium, and raises RuntimeError only
    if even that does not validate.
    """
    m = _as_antisymmetric(a)
    first, inverse, counts = _copies(m, axis=0)
    reduced = m[np.ix_(first, first)]
    p: Array | None = None
    if len(reduced) == 1:
        p = np.ones(1)
    else:
        try:
            p = _maxent_symmetric(reduced, np.log(counts))
        except (_Numerical, LinAlgError, ValueError, FloatingPointError):
            p = None
    if p is not None:
        full = p[inverse] / counts[inverse]
        if _valid_symmetric(m, full):
            return full
    try:
        full = _maximin(m)  # the row player of A maximises min_j (A^T p)_j = min_j -(A p)_j
    except _Numerical as error:
        raise RuntimeError(f"no Nash equilibrium found for a {len(m)}x{len(m)} matrix: {error}") from error
    if not _valid_symmetric(m, full):
        raise RuntimeError(f"no Nash equilibrium found for a {len(m)}x{len(m)} matrix within tolerance {TOLERANCE}")
    return full


def nash_ratings(a: ArrayLike) -> tuple[Array, Array]:
    """Nash averaging: ``(A p*, p*)``. Rating 0 means unbeatable by the equilibrium; negative is worse.

    Agents with ``p*_i > 0`` all rate (numerically) 0; they are the ones that matter.
    """
    m = _as_antisymmetric(a)
    p = maxent_nash(m)
    return m @ p, p


# ---------------------------------------------------------------------------- agent versus task


@dataclass(frozen=True)
class AgentTaskNash:
    """The maximum-entropy equilibrium of the agents-versus-games meta-game.

    ``skill = S q`` (games the equilibrium finds hard count more) and ``difficulty = -S^T p``,
    both on the column-normalised S. Games in ``dropped`` (every agent scored the same, so
    they carry no information) get ``q = 0`` and ``difficulty = nan``.
    """

    skill: Array
    difficulty: Array
    p: Array
    q: Array
    value: float
    dropped: tuple[int, ...]


def _normalise_columns(scores: Array) -> tuple[Array, Array]:
    low, high = scores.min(axis=0), scores.max(axis=0)
    spread = high - low
    informative = spread > 1e-12 * np.maximum(1.0, np.maximum(np.abs(low), np.abs(high)))
    safe = np.where(informative, spread, 1.0)
    return (scores - low) / safe, informative


def _bimatrix_partition(s: Array) -> tuple[Array, Array, Array, Array, float]:
    """A strictly complementary optimal pair (p, q) of the zero-sum game S, with slacks (one LP).

    Variables (p, q, a, b, v, margin): S q + a = v, S^T p - b = v (so p guarantees at least
    v and q concedes at most v, which together force both optimal and v the value),
    sum p = sum q = 1, p_i + a_i >= margin, q_j + b_j >= margin; maximise the margin.
    """
    m, g = s.shape
    size = 2 * (m + g) + 2
    c = np.zeros(size)
    c[-1] = -1.0
    ones_m, ones_g = np.ones((m, 1)), np.ones((g, 1))
    eye_m, eye_g = sp.identity(m, format="csr"), sp.identity(g, format="csr")
    zero = sp.csr_matrix
    # column order: p (m), q (g), a (m), b (g), v, margin
    a_eq = sp.vstack(
        [
            sp.hstack([zero((m, m)), zero(s), eye_m, zero((m, g)), zero(-ones_m), zero((m, 1))]),
            sp.hstack([zero(s.T), zero((g, g)), zero((g, m)), -eye_g, zero(-ones_g), zero((g, 1))]),
            zero(np.r_[np.ones(m), np.zeros(g + m + g + 2)][None, :]),
            zero(np.r_[np.zeros(m), np.ones(g), np.zeros(m + g + 2)][None, :]),
        ],
        format="csr",
    )
    b_eq = np.r_[np.zeros(m + g), 1.0, 1.0]
    a_ub = sp.vstack(
        [
            sp.hstack([-eye_m, zero((m, g)), -eye_m, zero((m, g)), zero((m, 1)), zero(ones_m)]),
            sp.hstack([zero((g, m)), -eye_g, zero((g, m)), -eye_g, zero((g, 1)), zero(ones_g)]),
        ],
        format="csr",
    )
    bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * (2 * (m + g)) + [(None, None), (None, 1.0)]
    x = _lp(c, a_ub, np.zeros(m + g), a_eq, b_eq, bounds)
    if x[-1] <= 0.0:
        raise _Numerical("partition LP found no strictly complementary equilibrium")
    p, q = x[:m], x[m : m + g]
    slack_a, slack_b = x[m + g : 2 * m + g], x[2 * m + g : 2 * (m + g)]
    return p, q, slack_a, slack_b, float(x[-2])


def _equilibrium_gap(s: Array, p: Array, q: Array) -> float:
    """How much either side could gain by deviating: 0 at an equilibrium."""
    return float((s @ q).max() - (s.T @ p).min())


def _maxent_side(payoff: Array, own: Array, other: Array, start: Array, value: float, bonus: Array) -> Array:
    """Max-entropy optimal strategy x of the side whose payoff rows are ``payoff`` (x^T payoff >= v).

    ``own``: this side's support; ``other``: the other side's support (its columns are
    the implicit equalities x^T payoff_j = v). The value v is an extra unknown.
    """
    s_idx, eq, ineq = np.flatnonzero(own), np.flatnonzero(other), np.flatnonzero(~other)
    k = len(s_idx)
    e = np.vstack(
        [
            np.hstack([payoff[np.ix_(s_idx, eq)].T, -np.ones((len(eq), 1))]),
            np.r_[np.ones(k), 0.0][None, :],
        ]
    )
    b = np.r_[np.zeros(len(eq)), 1.0]
    g = np.hstack([-payoff[np.ix_(s_idx, ineq)].T, np.ones((len(ineq), 1))])
    z = _maxent_affine(e, b, g, np.zeros(len(ineq)), np.r_[start[s_idx], value], k, bonus[s_idx])
    x = np.zeros(len(own))
    x[s_idx] = z[:k]
    return _clean_simplex(x)


def _solve_agent_task(s: Array, agent_bonus: Array, game_bonus: Array) -> tuple[Array, Array]:
    p_lp, q_lp, slack_a, slack_b, value = _bimatrix_partition(s)
    agents, games = p_lp > slack_a, q_lp > slack_b
    p_lp = _clean_simplex(np.where(agents, p_lp, 0.0))
    q_lp = _clean_simplex(np.where(games, q_lp, 0.0))
    try:
        p = _maxent_side(s, agents, games, p_lp, value, agent_bonus)
        q = _maxent_side(-s.T, games, agents, q_lp, -value, game_bonus)
        if _equilibrium_gap(s, p, q) <= TOLERANCE:
            return p, q
    except (_Numerical, LinAlgError, ValueError, FloatingPointError):
        pass
    if _equilibrium_gap(s, p_lp, q_lp) <= TOLERANCE:
        return p_lp, q_lp
    raise _Numerical("no valid point from the partition LP")


def _agent_task_equilibrium(s: Array) -> tuple[Array, Array]:
    """Merge exact copies of agents and of games, solve, expand; fall back to plain LPs if needed."""
    rows, row_class, row_counts = _copies(s, axis=0)
    cols, col_class, col_counts = _copies(s, axis=1)
    try:
        p_red, q_red = _solve_agent_task(s[np.ix_(rows, cols)], np.log(row_counts), np.log(col_counts))
        p = p_red[row_class] / row_counts[row_class]
        q = q_red[col_class] / col_counts[col_class]
        if _on_simplex(p) and _on_simplex(q) and _equilibrium_gap(s, p, q) <= TOLERANCE:
            return p, q
    except (_Numerical, LinAlgError, ValueError, FloatingPointError):
        pass
    try:
        p, q = _maximin(s), _maximin(-s.T)
    except _Numerical as error:
        raise RuntimeError(f"no equilibrium found for a {s.shape[0]}x{s.shape[1]} agent-task matrix: {error}") from error
    if _equilibrium_gap(s, p, q) > TOLERANCE:
        raise RuntimeError(f"no equilibrium found for a {s.shape[0]}x{s.shape[1]} agent-task matrix within {TOLERANCE}")
    return p, q


def agent_task_nash(scores: ArrayLike) -> AgentTaskNash:
    """Maximum-entropy Nash averaging of agents (rows) against games (columns).

    Each game column is normalised to [0, 1] so that no game counts more for its scale;
    constant columns are left out and listed in ``dropped``. The agent side maximises
    ``p^T S q``, the game side minimises it; (p, q) is the equilibrium of maximum entropy
    on each side, solved directly (see the module docstring).
    """
    raw = np.asarray(scores, dtype=float)
    if raw.ndim != 2 or raw.shape[0] == 0 or raw.shape[1] == 0:
        raise ValueError(f"scores must be a non-empty agents x games matrix, got shape {raw.shape}")
    if not np.all(np.isfinite(raw)):
        raise ValueError("scores has a NaN or infinite entry; every agent needs a score on every game")
    normalised, informative = _normalise_columns(raw)
    m, n_games = raw.shape
    dropped = tuple(int(j) for j in np.flatnonzero(~informative))
    q_full = np.zeros(n_games)
    difficulty = np.full(n_games, np.nan)
    if not informative.any():
        return AgentTaskNash(np.zeros(m), difficulty, np.full(m, 1.0 / m), q_full, float("nan"), dropped)
    s = normalised[:, informative]
    p, q = _agent_task_equilibrium(s)
    q_full[informative] = q
    difficulty[informative] = -(s.T @ p)
    return AgentTaskNash(s @ q, difficulty, p, q_full, float(p @ s @ q), dropped)


# ---------------------------------------------------------------------------- uncertainty


def bootstrap(
    matches: Sequence[T],
    compute: Callable[[list[T]], ArrayLike],
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Array, Array]:
    """Percentile bootstrap intervals: resample whole matches with replacement, recompute.

    ``compute`` maps a list of matches to a fixed-length rating vector (fix the agent
    order, e.g. ``win_matrix(..., agents=...)``, so entries line up across resamples).
    Returns ``(low, high)`` arrays at the central ``level`` percentiles. Resampling matches
    (not games inside a pair) keeps whatever correlation a match carries.
    """

    def resampled(counts: NDArray[np.intp]) -> ArrayLike:
        return compute([match for match, times in zip(matches, counts.tolist(), strict=True) for _ in range(times)])

    return bootstrap_counts(len(matches), resampled, resamples=resamples, seed=seed, level=level)


def bootstrap_counts(
    n: int,
    compute: Callable[[NDArray[np.intp]], ArrayLike],
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Array, Array]:
    """``bootstrap`` of ``n`` matches for a ``compute`` that takes how often each match was
    drawn (``n`` counts): one that weights what it prepared once per match then costs numpy
    per resample, where re-reading every drawn match in Python cost seconds at 30,000."""
    if n < 1:
        raise ValueError("bootstrap needs at least one match")
    if resamples < 2:
        raise ValueError("bootstrap needs at least two resamples")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    draws = [np.asarray(compute(np.bincount(rng.integers(0, n, size=n), minlength=n)), dtype=float) for _ in range(resamples)]
    shapes = {d.shape for d in draws}
    if len(shapes) != 1:
        raise ValueError(f"compute returned vectors of different shapes {sorted(shapes)}: fix the agent order")
    stacked = np.stack(draws)
    tail = (1.0 - level) / 2.0 * 100.0
    return np.percentile(stacked, tail, axis=0), np.percentile(stacked, 100.0 - tail, axis=0)

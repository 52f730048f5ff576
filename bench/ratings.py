"""Rating speed: TrueSkill updates per second, Nash averaging time, bootstrap time.

Nash averaging runs on random antisymmetric matrices (fixed seeds) of 50, 200 and 500
agents; beside it, where cvxpy is installed, the formulation OpenSpiel's nash_averaging
uses (maximise sum(entr(p)) s.t. A p <= 0, p on the simplex) runs on the same matrices,
one after the other. For times, ``ratio`` is the peer's time over ours (above 1: we are
faster). The bootstrap resamples 4,900 matches (50 agents, every pair 4 times) 200 times
and recomputes Nash ratings for each. Targets: 500 agents under 5 s, bootstrap under 30 s.

    python -m bench.ratings [--no-peer] [--seconds 2]

Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from typing import Any

import numpy as np

from arena.ratings.nash import bootstrap, logodds_matrix, maxent_nash, nash_ratings, win_matrix
from arena.ratings.trueskill import Rating, rate_match
from bench import positive_float, quiet_interrupt

SIZES = (50, 200, 500)


def trueskill_rate(seconds: float) -> float:
    """Two-player updates per second, over a stream of results among 20 bots."""
    rng = np.random.default_rng(0)
    ratings = [Rating() for _ in range(20)]
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 20, size=(100_000, 2)) if a != b]  # no bot meets itself
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a, b = pairs[count % len(pairs)]
        [[ratings[a]], [ratings[b]]] = rate_match([[ratings[a]], [ratings[b]]], [1, 2] if a < b else [2, 1])
        count += 1
    return count / (time.perf_counter() - start)


def random_antisymmetric(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m - m.T


def time_once(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def cvxpy_peer(a: np.ndarray) -> float | None:
    """Seconds for OpenSpiel's convex formulation, or None when cvxpy is missing or fails."""
    try:
        import cvxpy as cp
    except ImportError:
        return None
    start = time.perf_counter()
    x = cp.Variable(len(a))
    problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [a @ x <= 0, cp.sum(x) == 1, x >= 0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem.solve()
    except Exception:  # a failed solve is a result to report, not a crash
        return None
    if problem.status not in ("optimal", "optimal_inaccurate"):
        return None
    return time.perf_counter() - start


def round_robin(agents: int, per_pair: int, seed: int) -> list[tuple[int, int, float]]:
    """Matches with a hidden strength per agent and a rock-paper-scissors twist, so the equilibrium is mixed."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(size=agents)
    style = rng.integers(0, 3, size=agents)
    matches = []
    for i in range(agents):
        for j in range(i + 1, agents):
            edge = strength[i] - strength[j] + 0.8 * (1 if (style[i] - style[j]) % 3 == 1 else -1 if style[i] != style[j] else 0)
            p = 1.0 / (1.0 + np.exp(-edge))
            for _ in range(per_pair):
                u = rng.random()
                matches.append((i, j, 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0))
    return matches


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.ratings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_float, default=2.0, help="time for the TrueSkill rate (default 2)")
    parser.add_argument("--no-peer", action="store_true", help="skip the cvxpy peer (it takes the longest)")
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []

    print("trueskill ...", file=sys.stderr)
    results.append({"name": "trueskill/2-player", "value": round(trueskill_rate(args.seconds), 1), "unit": "updates/s"})

    maxent_nash(random_antisymmetric(10, 0))  # warm up imports and HiGHS
    for n in SIZES:
        print(f"nash {n} ...", file=sys.stderr)
        a = random_antisymmetric(n, seed=n)
        ours = min(time_once(maxent_nash, a) for _ in range(3 if n < 500 else 1))
        entry: dict[str, Any] = {"name": f"nash/{n}-agents", "value": round(ours, 4), "unit": "s"}
        if not args.no_peer:
            peer = cvxpy_peer(a)
            entry |= {"peer": "cvxpy (OpenSpiel's formulation)", "peer_value": None if peer is None else round(peer, 4)}
            if peer is not None:
                entry["ratio"] = round(peer / ours, 2)
        results.append(entry)

    print("bootstrap ...", file=sys.stderr)
    agents = list(range(50))
    matches = round_robin(50, per_pair=4, seed=1)

    def ratings(sample: list[tuple[int, int, float]]) -> np.ndarray:
        counts = win_matrix(sample, agents=agents)
        return nash_ratings(logodds_matrix(counts.wins, counts.games))[0]

    elapsed = time_once(bootstrap, matches, ratings, 200, 0)
    results.append({"name": f"nash/bootstrap-200x-50-agents-{len(matches)}-matches", "value": round(elapsed, 3), "unit": "s"})
    return {"bench": "ratings", "python": platform.python_version(), "cpus": os.cpu_count(), "results": results}


if __name__ == "__main__":
    with quiet_interrupt("bench.ratings"):
        result = main()
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")

"""Nash averaging: the properties Balduzzi et al. promise, maximum entropy checked against an
independent convex solver, and robustness on many random matrices."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from arena.ratings import nash
from arena.ratings.nash import (
    agent_task_nash,
    bootstrap,
    bootstrap_counts,
    count_wins,
    logodds_matrix,
    maxent_nash,
    nash_ratings,
    win_matrix,
)

RPS = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


def random_antisymmetric(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m - m.T


def sparse_counts(n: int, seed: int) -> np.ndarray:
    """Log-odds from few games per pair (0 to 3): many ties and unplayed pairs, like a young leaderboard."""
    rng = np.random.default_rng(seed)
    games = np.triu(rng.integers(0, 4, size=(n, n)), 1)
    games = games + games.T
    wins = np.triu(rng.binomial(games, 0.5), 1)
    wins = wins + np.tril(games - wins.T, -1)
    return logodds_matrix(wins, games)


def degenerate(seed: int) -> np.ndarray:
    """A small game with payoffs in {-1, 0, 1} (ties everywhere) plus exact copies, shuffled."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 9))
    base = np.triu(rng.integers(-1, 2, size=(k, k)).astype(float), 1)
    base = base - base.T
    idx = np.r_[np.arange(k), rng.integers(0, k, size=int(rng.integers(1, 5)))]
    order = rng.permutation(len(idx))
    idx = idx[order]
    return base[np.ix_(idx, idx)]


def degenerate_large(n: int, seed: int) -> np.ndarray:
    """Payoffs in {-1, 0, 1} among n agents: massively tied, with many equilibria."""
    base = np.triu(np.random.default_rng(seed).integers(-1, 2, size=(n, n)).astype(float), 1)
    return base - base.T


def assert_equilibrium(a: np.ndarray, p: np.ndarray) -> None:
    assert np.all(p >= 0.0)
    assert abs(p.sum() - 1.0) <= 1e-9
    assert (a @ p).max() <= 1e-7


def entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


# ------------------------------------------------------------------ results to payoffs


def test_win_matrix_counts_draws_as_half_wins() -> None:
    counts = win_matrix([("a", "b", 1.0), ("a", "b", 0.5), ("b", "c", 0.0)])
    assert counts.agents == ["a", "b", "c"]
    assert counts.wins[0, 1] == 1.5 and counts.wins[1, 0] == 0.5
    assert counts.wins[2, 1] == 1.0 and counts.games[1, 2] == counts.games[2, 1] == 1.0
    with pytest.raises(ValueError, match="not in agents"):
        win_matrix([("a", "z", 1.0)], agents=["a", "b"])


def test_logodds_are_smoothed_and_antisymmetric() -> None:
    wins = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    games = np.array([[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    a = logodds_matrix(wins, games)
    assert a[0, 1] == pytest.approx(math.log(4.0))  # 3-0: p = 4/5, odds 4, never infinite
    assert a[0, 2] == pytest.approx(0.0)  # 1-1 is even
    assert a[1, 2] == 0.0  # never played: even
    np.testing.assert_array_equal(a, -a.T)


# ------------------------------------------------------------------ agent versus agent


def test_rock_paper_scissors_gives_uniform_mass_and_zero_ratings() -> None:
    ratings, p = nash_ratings(RPS)
    np.testing.assert_allclose(p, [1 / 3, 1 / 3, 1 / 3], atol=1e-9)
    np.testing.assert_allclose(ratings, 0.0, atol=1e-9)


def test_strictly_transitive_set_puts_all_mass_on_the_best_agent() -> None:
    strength = np.array([0.3, 2.0, -1.0, 0.9, 1.4])
    a = strength[:, None] - strength[None, :]
    ratings, p = nash_ratings(a)
    np.testing.assert_allclose(p, [0, 1, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(ratings, strength - 2.0, atol=1e-12)


@pytest.mark.parametrize("copied", ["in the support", "outside the support"])
def test_exact_copy_changes_no_rating_and_splits_its_mass_evenly(copied: str) -> None:
    a = random_antisymmetric(9, seed=3)
    ratings, p = nash_ratings(a)
    support, outside = np.flatnonzero(p > 1e-9), np.flatnonzero(p <= 1e-9)
    assert len(support) >= 3 and len(outside) >= 1  # the example exercises both cases
    k = int(support[0] if copied == "in the support" else outside[0])
    idx = np.r_[np.arange(9), k]
    ratings2, p2 = nash_ratings(a[np.ix_(idx, idx)])
    np.testing.assert_allclose(ratings2[:9], ratings, atol=1e-6)
    assert ratings2[9] == pytest.approx(ratings[k], abs=1e-6)
    assert p2[k] == pytest.approx(p[k] / 2, abs=1e-6) and p2[9] == pytest.approx(p[k] / 2, abs=1e-6)
    others = [i for i in range(9) if i != k]
    np.testing.assert_allclose(p2[others], p[others], atol=1e-6)


def test_dominated_agent_gets_no_mass() -> None:
    # "rock-lite" does everything rock does, only worse: strictly dominated
    a = np.zeros((4, 4))
    a[:3, :3] = RPS
    a[3, :3] = RPS[0, :3] - 0.5
    a[:3, 3] = -a[3, :3]
    ratings, p = nash_ratings(a)
    assert p[3] == 0.0
    np.testing.assert_allclose(p[:3], 1 / 3, atol=1e-9)
    assert ratings[3] == pytest.approx(-0.5)


def test_maximum_entropy_matches_an_independent_convex_solver_on_degenerate_matrices() -> None:
    cp = pytest.importorskip("cvxpy")
    for seed in range(20):
        a = degenerate(seed)
        ours = maxent_nash(a)
        x = cp.Variable(len(a))
        problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [a @ x <= 0, cp.sum(x) == 1, x >= 0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "solution may be inaccurate": the implicit equalities cvxpy struggles with
            problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
        reference = np.asarray(x.value)
        assert_equilibrium(a, ours)
        np.testing.assert_allclose(ours, reference, atol=1e-4, err_msg=f"seed {seed}")
        assert entropy(ours) >= entropy(np.clip(reference, 0, None)) - 1e-6


def test_degenerate_examples_really_have_many_equilibria() -> None:
    """Guard for the test above: uniqueness would make 'maximum entropy' trivially true."""
    several = 0
    for seed in range(20):
        a = degenerate(seed)
        p = maxent_nash(a)
        lp = nash._maximin(a)  # a vertex of the Nash set
        several += bool(np.abs(p - lp).max() > 1e-3)
    assert several >= 10


@pytest.mark.parametrize("n", [8, 50])
def test_solver_returns_a_valid_equilibrium_on_100_random_matrices(n: int) -> None:
    for seed in range(100):
        a = random_antisymmetric(n, seed) if seed % 2 else sparse_counts(n, seed)
        assert_equilibrium(a, maxent_nash(a))


def test_support_guess_for_large_matrices_gives_the_same_answer_as_the_whole_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    matrices = [random_antisymmetric(150, 1), sparse_counts(150, 2), degenerate_large(150, 3)]
    guessed = [maxent_nash(a) for a in matrices]
    monkeypatch.setattr(nash, "_GUESS_WIDTH", 0.0)  # a guess far too small: the check must grow it
    narrow = [maxent_nash(a) for a in matrices]
    monkeypatch.setattr(nash, "_SMALL", 10_000)  # no guess at all
    whole = [maxent_nash(a) for a in matrices]
    for a, p, q, r in zip(matrices, guessed, narrow, whole, strict=True):
        assert_equilibrium(a, p)
        np.testing.assert_allclose(p, r, atol=1e-9)
        np.testing.assert_allclose(q, r, atol=1e-9)


def test_falls_back_to_a_valid_equilibrium_when_a_step_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    a = degenerate(4)

    def broken(*args: object, **kwargs: object) -> np.ndarray:
        raise nash._Numerical("simulated")

    monkeypatch.setattr(nash, "_maxent_affine", broken)
    assert_equilibrium(a, maxent_nash(a))
    monkeypatch.setattr(nash, "_symmetric_partition", broken)
    assert_equilibrium(a, maxent_nash(a))


def test_rejects_a_matrix_that_is_not_antisymmetric() -> None:
    with pytest.raises(ValueError, match="antisymmetric"):
        maxent_nash(np.ones((2, 2)))


# ------------------------------------------------------------------ agent versus task


def game_value_bounds(s: np.ndarray, p: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    return float((s.T @ p).min()), float((s @ q).max())


def test_agent_task_mixtures_both_carry_mass() -> None:
    # three specialists, each best at one game, and a mediocre generalist
    scores = np.array([[1.0, 0.2, 0.1], [0.1, 1.0, 0.2], [0.2, 0.1, 1.0], [0.3, 0.3, 0.3]])
    result = agent_task_nash(scores)
    np.testing.assert_allclose(result.p, [1 / 3, 1 / 3, 1 / 3, 0.0], atol=1e-9)
    np.testing.assert_allclose(result.q, [1 / 3, 1 / 3, 1 / 3], atol=1e-9)
    assert np.all(result.skill > 0)  # the block-matrix mistake would give q = 0 and skills 0
    # a generalist who is decent everywhere beats every specialist's average: all agent mass on it
    scores[3] = 0.5
    result = agent_task_nash(scores)
    np.testing.assert_allclose(result.p, [0, 0, 0, 1], atol=1e-9)
    assert np.count_nonzero(result.q > 1e-6) == 3
    normalised = (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=0))
    low, high = game_value_bounds(normalised, result.p, result.q)
    assert low == pytest.approx(high, abs=1e-7) == pytest.approx(result.value, abs=1e-7)
    random = np.random.default_rng(5).random((12, 6))
    result = agent_task_nash(random)
    assert np.count_nonzero(result.p > 1e-9) >= 2 and np.count_nonzero(result.q > 1e-9) >= 2


def test_agent_task_copy_of_a_game_changes_no_skill() -> None:
    scores = np.random.default_rng(11).random((10, 6))
    before = agent_task_nash(scores)
    k = int(np.argmax(before.q))
    after = agent_task_nash(np.c_[scores, scores[:, k]])
    np.testing.assert_allclose(after.skill, before.skill, atol=1e-6)
    assert after.q[k] == pytest.approx(before.q[k] / 2, abs=1e-6) == pytest.approx(after.q[6], abs=1e-6)


def test_agent_task_copy_of_an_agent_changes_no_difficulty() -> None:
    scores = np.random.default_rng(12).random((10, 6))
    before = agent_task_nash(scores)
    k = int(np.argmax(before.p))
    after = agent_task_nash(np.r_[scores, scores[k : k + 1]])
    np.testing.assert_allclose(after.difficulty, before.difficulty, atol=1e-6)
    assert after.p[k] == pytest.approx(before.p[k] / 2, abs=1e-6) == pytest.approx(after.p[10], abs=1e-6)


def test_agent_task_leaves_out_and_reports_constant_games() -> None:
    scores = np.array([[3.0, 7.0, 1.0], [1.0, 7.0, 2.0], [2.0, 7.0, 0.0]])
    result = agent_task_nash(scores)
    assert result.dropped == (1,)
    assert result.q[1] == 0.0 and math.isnan(result.difficulty[1])
    assert np.all(np.isfinite(result.difficulty[[0, 2]]))


def test_agent_task_mixtures_match_an_independent_convex_solver() -> None:
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(21)
    base = rng.integers(0, 3, size=(5, 4)).astype(float)
    scores = base[[0, 1, 2, 3, 4, 1, 2]][:, [0, 1, 2, 3, 3]]  # ties and copies on both sides
    result = agent_task_nash(scores)
    keep = [j for j in range(scores.shape[1]) if j not in result.dropped]
    s = scores[:, keep]
    s = (s - s.min(axis=0)) / (s.max(axis=0) - s.min(axis=0))
    for mixture, constraint, size in ((result.p, lambda x: s.T @ x >= result.value - 1e-9, len(s)),
                                      (result.q[keep], lambda x: s @ x <= result.value + 1e-9, s.shape[1])):  # fmt: skip
        x = cp.Variable(size)
        problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [constraint(x), cp.sum(x) == 1, x >= 0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
        np.testing.assert_allclose(mixture, np.asarray(x.value), atol=1e-4)


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_gives_percentile_intervals_reproducibly() -> None:
    matches = [("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10 + [("b", "c", 1.0)] * 20 + [("b", "c", 0.5)] * 20
    matches += [("a", "c", 1.0)] * 5
    agents = ["a", "b", "c"]

    def ratings(sample: list[tuple[str, str, float]]) -> np.ndarray:
        counts = win_matrix(sample, agents=agents)
        return nash_ratings(logodds_matrix(counts.wins, counts.games))[0]

    low, high = bootstrap(matches, ratings, resamples=50, seed=7)
    again = bootstrap(matches, ratings, resamples=50, seed=7)
    np.testing.assert_array_equal(low, again[0])
    point = ratings(matches)
    assert np.all(low <= point + 1e-9) and np.all(point <= high + 1e-9)
    assert high[2] < 0  # c never beats anyone: below the equilibrium in every resample


def test_resampling_by_counts_gives_the_same_intervals_as_resampling_the_list() -> None:
    """The leaderboard weights each match's pairs by how often it was drawn instead of
    re-reading the drawn matches: the same draws must give the same intervals, exactly."""
    matches = [("a", "b", 1.0)] * 7 + [("a", "b", 0.5)] * 3 + [("b", "c", 0.0)] * 4 + [("a", "c", 1.0)] * 2
    agents = ["a", "b", "c"]
    rows = np.array([agents.index(a) for a, _, _ in matches])
    cols = np.array([agents.index(b) for _, b, _ in matches])
    scores = np.array([score for _, _, score in matches])

    def from_list(sample: list[tuple[str, str, float]]) -> np.ndarray:
        counts = win_matrix(sample, agents=agents)
        return nash_ratings(logodds_matrix(counts.wins, counts.games))[0]

    def from_counts(drawn: np.ndarray) -> np.ndarray:
        return nash_ratings(logodds_matrix(*count_wins(3, rows, cols, scores, drawn)))[0]

    listed = bootstrap(matches, from_list, resamples=40, seed=3)
    counted = bootstrap_counts(len(matches), from_counts, resamples=40, seed=3)
    np.testing.assert_array_equal(listed[0], counted[0])
    np.testing.assert_array_equal(listed[1], counted[1])
    wins, games = count_wins(3, np.array([0, 0]), np.array([1, 2]), np.array([1.0, 0.5]), np.array([3, 2]))
    assert wins.tolist() == [[0, 3, 1], [0, 0, 0], [1, 0, 0]] and games.tolist() == [[0, 3, 2], [3, 0, 0], [2, 0, 0]]


def test_bootstrap_of_identical_matches_has_no_spread() -> None:
    low, high = bootstrap([1.0] * 10, lambda sample: np.array([sum(sample)]), resamples=20, seed=0)
    assert low[0] == high[0] == 10.0

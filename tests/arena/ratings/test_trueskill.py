"""TrueSkill wrapper and ranking helpers, checked against the trueskill package and hand-computed numbers."""

from __future__ import annotations

import math
import pickle
import random

import mpmath
import pytest
import trueskill

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


def package_env(backend: str | None = None) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.10, backend=backend)


def test_a_known_sequence_matches_the_package() -> None:
    # (team of players, ...), ranks: a 1v1 win, a draw, an upset, a three-way with a tie, a 2v1
    sequence = [
        ([["ann"], ["bob"]], [1, 2]),
        ([["bob"], ["cat"]], [1, 1]),
        ([["ann"], ["cat"]], [2, 1]),
        ([["ann"], ["bob"], ["cat"]], [1, 2, 2]),
        ([["bob", "cat"], ["ann"]], [1, 2]),
    ]
    ours = {name: Rating() for name in ("ann", "bob", "cat")}
    env = package_env()
    theirs = {name: env.create_rating() for name in ("ann", "bob", "cat")}
    for teams, ranks in sequence:
        new = rate_match([[ours[n] for n in team] for team in teams], ranks)
        for team, rated in zip(teams, new, strict=True):
            ours.update(zip(team, rated, strict=True))
        expected = env.rate([tuple(theirs[n] for n in team) for team in teams], ranks=ranks)
        for team, rated in zip(teams, expected, strict=True):
            theirs.update(zip(team, rated, strict=True))
    for name in ours:  # two-team steps are exact here; the package's float backend approximates erfc
        assert ours[name].mu == pytest.approx(theirs[name].mu, rel=1e-5)
        assert ours[name].sigma == pytest.approx(theirs[name].sigma, rel=1e-5)
    assert ours["ann"].mu != 25.0  # the sequence really moved the ratings


@pytest.mark.parametrize("sizes", [(1, 1), (2, 1), (1, 3), (2, 2)])
@pytest.mark.parametrize("ranks", [[1, 2], [2, 1], [1, 1]])
def test_two_teams_are_rated_in_closed_form_as_the_package_does_at_high_precision(
    sizes: tuple[int, int], ranks: list[int]
) -> None:
    rng = random.Random(f"{sizes}{ranks}")
    exact = package_env("mpmath")
    for _ in range(20):
        teams = [[Rating(rng.uniform(0.0, 50.0), rng.uniform(0.5, 9.0)) for _ in range(size)] for size in sizes]
        ours = rate_match(teams, ranks)
        with mpmath.workdps(30):
            theirs = exact.rate([tuple(exact.create_rating(r.mu, r.sigma) for r in team) for team in teams], ranks=ranks)
        for rated, expected in zip(ours, theirs, strict=True):
            for mine, other in zip(rated, expected, strict=True):
                assert mine.mu == pytest.approx(float(other.mu), rel=1e-10)
                assert mine.sigma == pytest.approx(float(other.sigma), rel=1e-10)


def test_an_extreme_upset_breaks_the_package_default_but_is_rated_here() -> None:
    underdog, favourite = Rating(0.0, 1.0), Rating(500.0, 1.0)
    env = package_env()
    with pytest.raises(FloatingPointError):
        env.rate([(env.create_rating(0.0, 1.0),), (env.create_rating(500.0, 1.0),)], ranks=[0, 1])
    [[winner], [loser]] = rate_match([[underdog], [favourite]], [1, 2])
    assert winner.mu > underdog.mu and loser.mu < favourite.mu
    assert all(math.isfinite(x) for x in (winner.mu, winner.sigma, loser.mu, loser.sigma))
    slow = package_env("mpmath")
    [(expected,), _] = slow.rate([(slow.create_rating(0.0, 1.0),), (slow.create_rating(500.0, 1.0),)], ranks=[0, 1])
    assert winner.mu == pytest.approx(float(expected.mu), rel=1e-9)


def test_an_upset_that_needs_more_than_default_mpmath_precision_is_rated() -> None:
    [[winner], [loser]] = rate_match([[Rating(0.0, 1.0)], [Rating(1e8, 1.0)]], [1, 2])
    assert 0.0 < winner.mu < loser.mu < 1e8


@pytest.mark.parametrize(("sigma", "gap"), [(1e-6, 1e6), (1.0, 1e6), (8.333, 1e8)])
def test_a_draw_too_far_apart_for_15_digits_is_rated_at_the_precision_it_needs(sigma: float, gap: float) -> None:
    # at 15 digits mpmath grew sigma past its prior, raised ValueError, or was 10^4 times off
    teams = [[Rating(25.0, sigma)], [Rating(25.0 + gap, sigma)]]
    rated = rate_match(teams, [1, 1])
    exact = package_env("mpmath")
    with mpmath.workdps(60):
        expected = exact.rate([(exact.create_rating(r.mu, r.sigma),) for [r] in teams], ranks=[1, 1])
    for [mine], (other,) in zip(rated, expected, strict=True):
        assert mine.mu == pytest.approx(float(other.mu), rel=1e-12)
        assert mine.sigma == pytest.approx(float(other.sigma), rel=1e-12)
        assert mine.sigma <= math.hypot(sigma, 25 / 300)  # an observation never widens the belief


def herbrich_two_players(a: Rating, b: Rating, drew: bool) -> list[tuple[float, float]]:
    """Herbrich et al. 2007, eqs. 2-5, for a beating (or drawing with) b, at 50 digits."""
    with mpmath.workdps(50):
        beta, tau = mpmath.mpf(25) / 6, mpmath.mpf(25) / 300
        var_a, var_b = mpmath.mpf(a.sigma) ** 2 + tau**2, mpmath.mpf(b.sigma) ** 2 + tau**2
        c2 = var_a + var_b + 2 * beta**2
        c = mpmath.sqrt(c2)
        margin = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf("0.1")) * mpmath.sqrt(2) * beta / c
        t = (mpmath.mpf(a.mu) - mpmath.mpf(b.mu)) / c
        if drew:
            hi, lo = margin - abs(t), -margin - abs(t)
            mass = mpmath.ncdf(hi) - mpmath.ncdf(lo)
            v = (mpmath.npdf(lo) - mpmath.npdf(hi)) / mass * mpmath.sign(t)
            w = v * v + (hi * mpmath.npdf(hi) - lo * mpmath.npdf(lo)) / mass
        else:
            x = t - margin
            v = mpmath.npdf(x) / mpmath.ncdf(x)
            w = v * (v + x)
        return [
            (float(a.mu + var_a / c * v), float(mpmath.sqrt(var_a * (1 - var_a / c2 * w)))),
            (float(b.mu - var_b / c * v), float(mpmath.sqrt(var_b * (1 - var_b / c2 * w)))),
        ]


@pytest.mark.parametrize(("gap", "ranks"), [(231.45, [1, 2]), (233.6, [1, 1]), (233.85, [1, 1])])
def test_an_upset_whose_probability_is_a_subnormal_float_is_rated_exactly(gap: float, ranks: list[int]) -> None:
    # P(result) lies between 1e-323 and 2e-308: floats keep only a few digits of it there, which
    # turned sigma 1% wrong, a draw's mu 200% wrong, or crashed the package's float backend
    a, b = Rating(0.0, 1.0), Rating(gap, 1.0)
    rated = rate_match([[a], [b]], ranks)
    expected = herbrich_two_players(a, b, drew=ranks[0] == ranks[1])
    for [mine], (mu, sigma) in zip(rated, expected, strict=True):
        assert mine.mu == pytest.approx(mu, rel=1e-9)
        assert mine.sigma == pytest.approx(sigma, rel=1e-9)


def test_a_three_way_draw_far_in_the_tail_is_rated_by_mpmath_not_a_crash() -> None:
    # the package's float backend raises ValueError (math domain error) here, not FloatingPointError
    teams = [[Rating(0.0, 1.0)], [Rating(135.0, 1.0)], [Rating(270.0, 1.0)]]
    rated = rate_match(teams, [1, 1, 1])
    exact = package_env("mpmath")
    with mpmath.workdps(30):
        expected = exact.rate([(exact.create_rating(r.mu, r.sigma),) for [r] in teams], ranks=[1, 1, 1])
    for [mine], (other,) in zip(rated, expected, strict=True):
        assert mine.mu == pytest.approx(float(other.mu), rel=1e-9)
        assert mine.sigma == pytest.approx(float(other.sigma), rel=1e-9)


def test_rate_match_rejects_a_single_team() -> None:
    with pytest.raises(ValueError, match="at least two teams"):
        rate_match([[Rating(), Rating()]], [1])


def test_a_draw_under_draw_probability_zero_is_refused_and_a_win_is_rated() -> None:
    """Two teams divided by the draw's zero probability (ZeroDivisionError), three grew sigmas
    past their priors (found by QA)."""
    far = [[Rating(6.678516988788247, 4.485517381138282)], [Rating(10.451977461768196, 6.524956141947941)]]
    for teams in (far, [[Rating()], [Rating()], [Rating()]]):
        with pytest.raises(ValueError, match="draw_probability 0"):
            rate_match(teams, [1] * len(teams), draw_probability=0.0)
    (winner,), (loser,) = rate_match(far, [1, 2], draw_probability=0.0)
    assert winner.mu > far[0][0].mu and loser.mu < far[1][0].mu
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="at least 0 and below 1"):
            rate_match(far, [1, 2], draw_probability=bad)


def test_conservative_skill_and_interval() -> None:
    r = Rating(30.0, 2.0)
    assert r.conservative == 24.0
    low, high = interval95(r)
    assert low == pytest.approx(30.0 - 3.919927969, abs=1e-8) and high == pytest.approx(33.919927969, abs=1e-8)


def test_win_probability_on_a_hand_computed_case() -> None:
    # 2 beta^2 + 3^2 + (sqrt 8)^2 = 8 + 9 + 8 = 25: the spread is 5, mu differs by 5, so Phi(1)
    assert win_probability(Rating(30.0, 3.0), Rating(25.0, math.sqrt(8.0)), beta=2.0) == pytest.approx(0.8413447460685429)
    assert win_probability(Rating(), Rating()) == 0.5
    a, b = Rating(27.0, 4.0), Rating(22.0, 6.0)
    assert win_probability(a, b) + win_probability(b, a) == pytest.approx(1.0)


# ------------------------------------------------------------------ ranks


def test_two_seat_outcome_gives_win_loss_or_draw() -> None:
    assert ranks_from_returns([1.0, -1.0]) == [1, 2]
    assert ranks_from_returns([-1.0, 1.0]) == [2, 1]
    assert ranks_from_returns([0.0, 0.0]) == [1, 1]
    assert ranks_from_returns([0.1 + 0.2, 0.3]) == [1, 1]  # float noise is not a win


def test_many_seats_rank_by_return_with_shared_ties() -> None:
    assert ranks_from_returns([3.0, 1.0, 2.0, 2.0]) == [1, 4, 2, 2]


def test_a_forfeit_ranks_last() -> None:
    assert ranks_from_returns([1.0, -1.0], forfeit_seat=0) == [2, 1]  # even with the better return
    assert ranks_from_returns([5.0, 3.0, 1.0], forfeit_seat=0) == [3, 1, 2]
    assert ranks_from_returns([5.0, 3.0, 1.0, 0.0], forfeit_seat=[0, 3]) == [3, 1, 2, 3]


def test_teams_rank_together_and_a_cooperative_game_is_one_team() -> None:
    assert ranks_from_returns([1.0, 1.0, 0.0, 0.0], teams=[[0, 2], [1, 3]]) == [1, 1]
    assert ranks_from_returns([0.0, 1.0, 0.0, 1.0], teams=[[0, 2], [1, 3]]) == [2, 1]
    assert ranks_from_returns([0.0, 1.0, 0.0, 1.0], forfeit_seat=3, teams=[[0, 2], [1, 3]]) == [1, 2]
    assert ranks_from_returns([4.0, 4.0, 4.0], teams=[[0, 1, 2]]) == [1]
    with pytest.raises(ValueError, match="partition"):
        ranks_from_returns([1.0, 0.0], teams=[[0]])


def test_duplicate_group_ranks_the_higher_scoring_team_first_once_complete() -> None:
    red, blue = ("alice", "bert"), ("carol", "dan")
    group = [
        DuplicateMatch(red, seed=1, score=10.0),
        DuplicateMatch(blue, seed=1, score=12.0),
        DuplicateMatch(red, seed=2, score=5.0),
        DuplicateMatch(blue, seed=2, score=4.0),  # blue: 16 over both deals, red 15
    ]
    ranks = duplicate_ranks(group, size=4)
    assert ranks == {blue: 1, red: 2}
    assert duplicate_ranks(group[:3], size=4) is None  # blue has not played deal 2: nobody is rated
    [[red_after, _], [blue_after, _]] = rate_match([[Rating(), Rating()], [Rating(), Rating()]], [ranks[red], ranks[blue]])
    assert blue_after.mu > 25.0 > red_after.mu


def test_duplicate_group_ties_and_single_team() -> None:
    group = [DuplicateMatch(("a",), 1, 3.0), DuplicateMatch(("b",), 1, 3.0)]
    assert duplicate_ranks(group, size=2) == {("a",): 1, ("b",): 1}
    assert duplicate_ranks([DuplicateMatch(("a",), 1, 3.0), DuplicateMatch(("a",), 2, 1.0)], size=2) is None


def test_duplicate_group_of_overlapping_teams_ranks_each_bot_by_its_teams_mean() -> None:
    scores = {("a", "b"): 6.0, ("b", "a"): 6.0, ("a", "c"): 4.0, ("c", "a"): 4.0, ("b", "c"): 1.0, ("c", "b"): 1.0}
    group = [DuplicateMatch(team, seed=7, score=score) for team, score in scores.items()]
    assert duplicate_ranks(group, size=6) == {("a",): 1, ("b",): 2, ("c",): 3}  # means 5, 3.5 and 2.5
    # one partnership in both seat orders has no rival: a and b always scored together, so
    # the data cannot tell them apart (rating them would be a draw between partners)
    assert duplicate_ranks(group[:2], size=2) is None
    assert duplicate_ranks([DuplicateMatch(("a", "a", "b"), 7, 2.0), DuplicateMatch(("b", "a", "b"), 7, 9.0)], size=2) is None


def test_rank_by_intervals_counts_bots_wholly_above() -> None:
    intervals = [(10.0, 20.0), (25.0, 30.0), (18.0, 26.0), (0.0, 5.0), (21.0, 22.0)]
    # bot 0 (10-20): 1 and 4 lie wholly above; bot 2 (18-26) overlaps everyone above it
    assert rank_by_intervals(intervals) == [3, 1, 1, 5, 2]
    assert rank_by_intervals([]) == []
    assert rank_by_intervals([(1.0, 2.0), (2.0, 3.0)]) == [1, 1]  # touching is not wholly above


def test_a_rating_pickles_to_an_equal_one() -> None:
    """The store writer's process sends the new ratings back pickled (``Rating.__reduce__``)."""
    rating = Rating(31.25, 2.5e-3)
    copied = pickle.loads(pickle.dumps(rating, pickle.HIGHEST_PROTOCOL))
    assert copied == rating and type(copied) is Rating

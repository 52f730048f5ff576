"""The promotion gate: SPRT and bootstrap on hand-computed numbers, and both ways on results
recorded in a real store by matches between bots of different strength."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

import games
from arena.match import MatchResult, play_match
from arena.seats import LocalSeat
from arena.store import Store
from bots.registry import make_bot
from games.api import GameError
from tournaments.gate import Interval, bootstrap_interval, head_to_head, promotion_decision, sprt

# ln(0.6/0.5) = ln 1.2 = 0.1823215568 per win, ln(0.4/0.5) = ln 0.8 = -0.2231435513 per loss under p0 = 0.5, p1 = 0.6.


def test_sprt_adds_the_bernoulli_log_likelihood_ratio_with_a_draw_as_half_a_win_and_half_a_loss() -> None:
    result = sprt([1, 1, 0, 1, 0.5], p0=0.5, p1=0.6, alpha=0.05, beta=0.1)
    # 3 wins: 0.5469646704; 1 loss: -0.2231435513; the draw: (0.1823215568 - 0.2231435513) / 2 = -0.0204109973
    assert result.llr == pytest.approx(0.3034101218, abs=1e-9)
    # Wald's bounds: ln(beta / (1 - alpha)) = ln(0.1 / 0.95), ln((1 - beta) / alpha) = ln(0.9 / 0.05) = ln 18
    assert result.lower == pytest.approx(-2.2512917986, abs=1e-9)
    assert result.upper == pytest.approx(2.8903717579, abs=1e-9)
    assert (result.decision, result.n) == ("continue", 5)


def test_sprt_stops_at_the_first_crossing_and_ignores_what_follows() -> None:
    # p1 = 0.9: a win adds ln 1.8 = 0.5877866649, a loss ln 0.2 = -1.6094379124; bounds -/+ ln 9 = 2.1972245773.
    # Three wins (1.763) stay inside, the fourth (2.351) crosses; the five losses after it do not count.
    won = sprt([1, 1, 1, 1, 0, 0, 0, 0, 0], p0=0.5, p1=0.9, alpha=0.1, beta=0.1)
    assert (won.decision, won.n) == ("accept", 4) and won.llr == pytest.approx(2.3511466596, abs=1e-9)
    # One loss (-1.609) stays inside, the second (-3.219) crosses the lower bound.
    lost = sprt([0, 0, 1, 1, 1, 1], p0=0.5, p1=0.9, alpha=0.1, beta=0.1)
    assert (lost.decision, lost.n) == ("reject", 2) and lost.llr == pytest.approx(-3.2188758249, abs=1e-9)


@pytest.mark.parametrize(
    ("scores", "options", "message"),
    [
        ([1, 1.5], {}, "scores must be a flat sequence of numbers in [0, 1]"),
        ([1], {"p0": 0.6, "p1": 0.5}, "sprt needs 0 < p0 < p1 < 1, got p0=0.6, p1=0.5"),
        ([1], {"alpha": 0.6, "beta": 0.5}, "alpha + beta < 1"),
    ],
)
def test_sprt_refuses_bad_input_with_a_clear_message(scores: list[float], options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        sprt(scores, **options)


def test_bootstrap_interval_is_close_to_the_binomial_interval_and_fixed_by_its_seed() -> None:
    scores = [1.0] * 70 + [0.0] * 30
    interval = bootstrap_interval(scores, confidence=0.95, resamples=20_000, seed=3)
    # mean 0.7, edge 0.2; standard error sqrt(0.7 * 0.3 / 100) = 0.0458, so about 0.2 -/+ 1.96 * 0.0458 = [0.110, 0.290]
    assert interval.statistic == pytest.approx(0.2)
    assert interval.low == pytest.approx(0.110, abs=0.015) and interval.high == pytest.approx(0.290, abs=0.015)
    assert bootstrap_interval(scores, resamples=500, seed=3) == bootstrap_interval(scores, resamples=500, seed=3)
    assert bootstrap_interval(scores, resamples=500, seed=3) != bootstrap_interval(scores, resamples=500, seed=4)
    # every resample of a constant is that constant; return differences are measured against 0
    assert bootstrap_interval([1.0] * 8, resamples=50, seed=0) == Interval(0.5, 0.5, 0.5)
    assert bootstrap_interval([2.0, 2.0], resamples=10, seed=0, baseline=0.0).low == pytest.approx(2.0)
    with pytest.raises(ValueError, match="at least one score"):
        bootstrap_interval([], resamples=10, seed=0)


def test_the_decision_promotes_only_when_the_chosen_test_says_new_beats_old() -> None:
    by_sprt = promotion_decision("new", "old", [1, 1, 1, 1, 0], "sprt", p1=0.9, alpha=0.1, beta=0.1)
    assert by_sprt.promote and by_sprt.n == 4 and by_sprt.statistic == pytest.approx(2.3511466596, abs=1e-9)
    assert by_sprt.interval == pytest.approx((-2.1972245773, 2.1972245773))
    assert "upper bound" in by_sprt.reason and "\n" not in by_sprt.reason
    pending = promotion_decision("new", "old", [1, 1, 0, 1, 0.5], "sprt", alpha=0.05, beta=0.1)
    assert not pending.promote and "more matches needed" in pending.reason
    clear = promotion_decision("new", "old", [1.0] * 70 + [0.0] * 30, "bootstrap", resamples=4000, seed=1)
    assert clear.promote and clear.interval is not None and clear.interval[0] > 0 and clear.n == 100
    # 55 to 45: edge 0.05 with standard error 0.0497, so the 95% interval reaches below zero
    close = promotion_decision("new", "old", [1.0] * 55 + [0.0] * 45, "bootstrap", resamples=4000, seed=1)
    assert not close.promote and close.interval is not None and close.interval[0] < 0 < close.interval[1]
    assert "keep old" in close.reason
    empty = promotion_decision("new", "old", [], "bootstrap")
    assert not empty.promote and empty.n == 0 and empty.interval is None and "no finished head-to-head" in empty.reason
    with pytest.raises(ValueError, match="unknown promotion method 'elo'; choose one of sprt, bootstrap"):
        promotion_decision("new", "old", [1], "elo")


@dataclass
class Recorded:
    db: Path
    strong: list[MatchResult]  # perfect as "ckpt-new" against random as "ckpt-old"


async def _record(db: Path) -> Recorded:
    store = Store(db)
    strong = []
    for i in range(30):  # seats swapped every other match
        pairs = [("perfect", "ckpt-new"), ("random", "ckpt-old")]
        if i % 2:
            pairs.reverse()
        seats = [
            LocalSeat(make_bot(spec, "tic-tac-toe", 100 * i + k), name=name, threaded=False)
            for k, (spec, name) in enumerate(pairs)
        ]
        strong.append(await play_match(games.get("tic-tac-toe"), seats, seed=i))
        store.finish_match(strong[-1])
    for i in range(30):  # two bots of one strength
        names = ["even-a", "even-b"] if i % 2 == 0 else ["even-b", "even-a"]
        seats = [
            LocalSeat(make_bot("random", "tic-tac-toe", 500 + 2 * i + k), name=n, threaded=False) for k, n in enumerate(names)
        ]
        store.finish_match(await play_match(games.get("tic-tac-toe"), seats, seed=i))
    store.close()
    return Recorded(db, strong)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return trio.run(_record, tmp_path_factory.mktemp("gate") / "arena.db")


def test_head_to_head_reads_new_s_score_in_either_seat_in_the_order_played(recorded: Recorded) -> None:
    store = Store(recorded.db, read_only=True)
    scores = head_to_head(store, "ckpt-new", "ckpt-old")
    reverse = head_to_head(store, "ckpt-old", "ckpt-new", game="tic-tac-toe")
    store.close()
    expected = []
    for result in recorded.strong:
        seat = result.players.index("ckpt-new")
        expected.append({"win": 1.0, "draw": 0.5, "loss": 0.0}[result.outcomes[seat]])
    assert scores == expected and reverse == [1 - s for s in expected]
    assert 0.0 not in scores and scores.count(1.0) > 20  # perfect play never loses to random moves


@pytest.mark.parametrize("method", ["sprt", "bootstrap"])
def test_a_checkpoint_that_clearly_beats_the_old_one_is_promoted_and_the_reverse_is_not(recorded: Recorded, method: str) -> None:
    store = Store(recorded.db, read_only=True)
    better = promotion_decision("ckpt-new", "ckpt-old", head_to_head(store, "ckpt-new", "ckpt-old"), method)
    worse = promotion_decision("ckpt-old", "ckpt-new", head_to_head(store, "ckpt-old", "ckpt-new"), method)
    even = promotion_decision("even-a", "even-b", head_to_head(store, "even-a", "even-b"), method)
    store.close()
    assert better.promote and better.method == method and better.n > 0
    assert not worse.promote and not even.promote
    if method == "sprt":
        assert worse.statistic <= worse.interval[0]  # type: ignore[index]  # rejected, not merely undecided
    else:
        assert worse.interval is not None and worse.interval[1] < 0


def test_head_to_head_scores_forfeits_as_losses_and_leaves_out_void_cooperative_and_other_matches(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    store.finish_match(match_record("iterated-prisoners-dilemma", ["new", "old"], [9.0, 14.0]))  # lower return: 0
    store.finish_match(
        match_record("iterated-prisoners-dilemma", ["old", "new"], [0.0, 0.0], forfeit=1)
    )  # tied returns, new forfeited: 0
    store.finish_match(match_record("iterated-prisoners-dilemma", ["old", "new"], [3.0, 0.0], forfeit=0))  # old forfeited: 1
    store.finish_match(match_record("iterated-prisoners-dilemma", ["new", "old"], [12.0, 12.0]))  # equal returns: 0.5
    store.finish_match(match_record("iterated-prisoners-dilemma", ["new", "old"], [30.0, 0.0], status="void"))
    store.finish_match(match_record("iterated-prisoners-dilemma", ["new", "other"], [30.0, 0.0]))
    store.finish_match(match_record("mini-hanabi", ["new", "old"], [5.0, 5.0]))  # partners, not opponents
    store.finish_match(match_record("tic-tac-toe", ["old", "new"], [-1.0, 1.0]))
    assert head_to_head(store, "new", "old", game="iterated-prisoners-dilemma") == [0.0, 0.0, 1.0, 0.5]
    assert head_to_head(store, "new", "old") == [0.0, 0.0, 1.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="two different bots"):
        head_to_head(store, "new", "new")
    with pytest.raises(GameError, match="unknown game 'tic-tac-to'"):
        head_to_head(store, "new", "old", game="tic-tac-to")
    store.close()

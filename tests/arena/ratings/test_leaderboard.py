"""Ratings kept by the store and the leaderboards built from it: TrueSkill in the match's
transaction, duplicate groups for cooperative games, `arena ratings` and `arena report`."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import mpmath
import pytest
import trio
import trueskill

import games
import games.registry
from arena.cli import main
from arena.match import MatchResult, play_match
from arena.ratings.leaderboard import NOTHING_RATED, _solved, fixed, record_text, variant_leaderboard
from arena.ratings.trueskill import Rating, rate_match
from arena.seats import LocalSeat
from arena.store import Store
from bots.registry import make_bot
from games.tic_tac_toe import TicTacToe


def test_trueskill_after_a_known_sequence_equals_the_packages_own_numbers(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    sequence = [
        (["ann", "bob"], [1.0, -1.0]),
        (["bob", "cat"], [0.0, 0.0]),
        (["cat", "ann"], [1.0, -1.0]),
        (["ann", "bob"], [-1.0, 1.0]),
    ]
    # the package's exact backend: its float one approximates erfc to about 1e-6 in the ratings
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.10, backend="mpmath")
    expected = {name: env.create_rating() for name in ("ann", "bob", "cat")}
    for players, returns in sequence:
        store.finish_match(match_record("tic-tac-toe", players, returns))
        ranks = [0, 1] if returns[0] > returns[1] else [1, 0] if returns[0] < returns[1] else [0, 0]
        with mpmath.workdps(30):
            (a,), (b,) = env.rate([(expected[players[0]],), (expected[players[1]],)], ranks=ranks)
        expected[players[0]], expected[players[1]] = a, b
    for name, rating in expected.items():
        mine = store.rating(name, "tic-tac-toe")
        assert mine.mu == pytest.approx(float(rating.mu), abs=1e-9) and mine.sigma == pytest.approx(float(rating.sigma), abs=1e-9)
    assert store.count("rating_history") == 2 * len(sequence)


def test_a_forfeit_lowers_the_forfeiter_and_a_void_changes_nothing(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    # A forfeit in a game that is not zero-sum: the forfeiter's return could tie or beat the other's; it still loses.
    store.finish_match(match_record("iterated-prisoners-dilemma", ["quitter", "stayer"], [0.0, 0.0], forfeit=0))
    assert store.rating("quitter", "iterated-prisoners-dilemma").mu < 25 < store.rating("stayer", "iterated-prisoners-dilemma").mu
    before = store.ratings()
    store.finish_match(match_record("tic-tac-toe", ["quitter", "stayer"], [0.0, 0.0], status="void"))
    assert store.ratings() == before


def test_a_forfeit_loses_in_nash_averaging_even_when_its_return_ties(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    from arena.ratings.leaderboard import variant_leaderboard

    store = Store(tmp_path / "a.db")
    for players, quitter in ((["quitter", "stayer"], 0), (["stayer", "quitter"], 1)):
        store.finish_match(match_record("iterated-prisoners-dilemma", players, [0.0, 0.0], forfeit=quitter))
    rows = {row["bot"]: row for row in variant_leaderboard(store, "iterated-prisoners-dilemma", resamples=10)}
    assert rows["stayer"]["mass"] == pytest.approx(1.0) and rows["quitter"]["nash"] < 0


def test_returns_equal_but_for_their_last_bit_draw_in_nash_averaging_as_in_trueskill(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    from arena.ratings.leaderboard import variant_leaderboard

    store = Store(tmp_path / "a.db")
    # public-goods pays 6.6 and 6.6000000000000005 for one payoff; TrueSkill rates a draw
    store.finish_match(match_record("public-goods", ["ann", "bob"], [6.6, 6.6000000000000005]))
    assert store.rating("ann", "public-goods").mu == pytest.approx(store.rating("bob", "public-goods").mu)
    rows = {row["bot"]: row for row in variant_leaderboard(store, "public-goods", resamples=10)}
    # a draw: p = (0.5 + 1) / (1 + 2) = 1/2 both ways, A = 0, and the equilibrium splits its mass
    assert rows["ann"]["mass"] == pytest.approx(0.5) and rows["bob"]["mass"] == pytest.approx(0.5)


def test_self_play_is_not_rated(tmp_path: Path, match_record: Callable[..., MatchResult]) -> None:
    store = Store(tmp_path / "a.db")
    store.finish_match(match_record("tic-tac-toe", ["mirror", "mirror"], [1.0, -1.0]))
    assert store.ratings() == []


def duplicate(
    match_record: Callable[..., MatchResult], store: Store, team: list[str], seed: int, score: float, group: str, size: int
) -> None:
    record = replace(match_record("mini-hanabi", team, [score, score]), seed=seed)
    store.finish_match(record, meta={"group_id": group, "group_size": size})


def test_a_completed_duplicate_group_rates_the_higher_scoring_team_up(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    duplicate(match_record, store, ["ace", "ace-2"], 1, 5.0, "g1", 4)
    duplicate(match_record, store, ["dud", "dud-2"], 1, 1.0, "g1", 4)
    duplicate(match_record, store, ["ace", "ace-2"], 2, 4.0, "g1", 4)
    assert store.ratings() == []  # an incomplete group rates nobody
    duplicate(match_record, store, ["dud", "dud-2"], 2, 2.0, "g1", 4)
    ratings = {row["bot"]: row["mu"] for row in store.ratings(game="mini-hanabi")}
    assert ratings["ace"] == ratings["ace-2"] > 25 > ratings["dud"] == ratings["dud-2"]


def test_a_competitive_duplicate_group_is_rated_and_counted_once_every_table_has_played_its_deal(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Rated and counted at its end, the first table's result showed on the board while the
    second table held the same cards."""
    store = Store(tmp_path / "a.db")
    first = replace(match_record("kuhn-poker", ["ann", "bob"], [2.0, -2.0]), seed=7)
    second = replace(match_record("kuhn-poker", ["bob", "ann"], [1.0, -1.0]), seed=7)
    assert store.finish_match(first, {"group_id": "g", "group_size": 2}) == {}
    assert store.ratings() == [] and variant_leaderboard(store, "kuhn-poker", resamples=10) == []
    rated = store.finish_match(second, {"group_id": "g", "group_size": 2})
    [ann_after_first], [bob_after_first] = rate_match([[Rating()], [Rating()]], [0, 1])
    [bob_after_both], [ann_after_both] = rate_match([[bob_after_first], [ann_after_first]], [0, 1])
    assert rated == {("ann", "kuhn-poker"): ann_after_both, ("bob", "kuhn-poker"): bob_after_both}  # in the order played
    rows = {row["bot"]: row for row in variant_leaderboard(store, "kuhn-poker", resamples=10)}
    assert (rows["ann"]["games"], rows["ann"]["wins"], rows["ann"]["losses"]) == (2, 1, 1)
    assert rows["ann"]["mu"] == pytest.approx(ann_after_both.mu)
    store.close()


def open_live(store: Store, record: MatchResult, **group: Any) -> None:
    """``record``'s match as the server opens it: live in the store until it ends."""
    row = {
        **group,
        "id": record.match_id,
        "game": record.game,
        "variant": record.game,
        "config": record.config,
        "seed": record.seed,
        "players": record.players,
        "max_retries": record.max_retries,
        "clock": asdict(record.clock),
        "source": "server",
        "created_at": record.started_at,
    }
    assert store.open_match(row) is None


def two_live_tables(store: Store, match_record: Callable[..., MatchResult], second: list[str]) -> tuple[MatchResult, MatchResult]:
    """Two kuhn-poker matches dealt from seed 7, live in ``store``, the second begun a second
    after the first; in each the first seat wins (ann beats bob in the first)."""
    first = replace(match_record("kuhn-poker", ["ann", "bob"], [2.0, -2.0]), seed=7)
    later = replace(match_record("kuhn-poker", second, [1.0, -1.0]), seed=7, started_at=first.started_at + 1)
    open_live(store, first)
    open_live(store, later)
    return first, later


@pytest.mark.parametrize("twin_ends", ["finished", "void", "engine fault"])
def test_a_match_whose_seed_a_live_match_deals_from_is_rated_once_that_one_ends(
    tmp_path: Path, match_record: Callable[..., MatchResult], twin_ends: str
) -> None:
    """Two tables dealt from one seed outside a group (an admin's seed, twice): rated at its end,
    the first table's win moved the winner's rating on the board while the second table still
    held the same cards; the board's counts already waited."""
    store = Store(tmp_path / "a.db")
    first, second = two_live_tables(store, match_record, ["cid", "dan"])
    elsewhere = replace(match_record("kuhn-poker", ["eve", "fay"], [1.0, -1.0]), seed=8)
    assert store.finish_match(first) == {}
    assert store.ratings() == [] and variant_leaderboard(store, "kuhn-poker", resamples=10) == []
    assert set(store.finish_match(elsewhere)) == {("eve", "kuhn-poker"), ("fay", "kuhn-poker")}  # its seed is its own
    [ann], [bob] = rate_match([[Rating()], [Rating()]], [0, 1])
    if twin_ends == "finished":
        [cid], [dan] = rate_match([[Rating()], [Rating()]], [0, 1])
        rated = store.finish_match(second)
        assert rated == {
            ("ann", "kuhn-poker"): ann,
            ("bob", "kuhn-poker"): bob,
            ("cid", "kuhn-poker"): cid,
            ("dan", "kuhn-poker"): dan,
        }
    elif twin_ends == "void":
        assert store.void_match(second.match_id, "aborted by the admin") == {
            ("ann", "kuhn-poker"): ann,
            ("bob", "kuhn-poker"): bob,
        }
    else:
        assert store.finish_match(replace(second, status="void")) == {("ann", "kuhn-poker"): ann, ("bob", "kuhn-poker"): bob}
    ratings = {row["bot"]: row["mu"] for row in store.ratings()}
    assert ratings["ann"] == pytest.approx(ann.mu) and ratings["bob"] == pytest.approx(bob.mu)
    assert ("cid" in ratings) == (twin_ends == "finished")
    assert store.conn.execute("SELECT COUNT(*) FROM rating_history WHERE match_id = ?", (first.match_id,)).fetchone()[0] == 2
    store.finish_match(replace(match_record("kuhn-poker", ["ann", "bob"], [1.0, -1.0]), seed=7))  # the seed again, alone
    assert {row["bot"]: row["matches"] for row in store.ratings() if row["bot"] in ("ann", "bob")} == {"ann": 2, "bob": 2}
    store.close()


def test_a_match_held_for_a_live_twin_is_rated_when_a_restart_voids_the_twin(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    first, _ = two_live_tables(store, match_record, ["cid", "dan"])
    store.finish_match(first)
    assert store.ratings() == []
    assert store.void_live_matches("the server stopped before the match ended") == 1
    assert {row["bot"] for row in store.ratings()} == {"ann", "bob"}
    store.close()


def test_matches_waiting_on_one_seed_are_rated_in_the_order_they_began_whichever_ended_first(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    store = Store(tmp_path / "a.db")
    first, second = two_live_tables(store, match_record, ["bob", "ann"])
    assert store.finish_match(second) == {}
    rated = store.finish_match(first)
    [ann_first], [bob_first] = rate_match([[Rating()], [Rating()]], [0, 1])
    [bob_then], [ann_then] = rate_match([[bob_first], [ann_first]], [0, 1])
    assert rated == {("ann", "kuhn-poker"): ann_then, ("bob", "kuhn-poker"): bob_then}
    store.close()


@pytest.mark.parametrize("group_first", [True, False], ids=["a group's match ends last", "a group completes first"])
def test_a_group_and_a_match_outside_it_dealt_from_one_seed_wait_for_each_other(
    tmp_path: Path, match_record: Callable[..., MatchResult], group_first: bool
) -> None:
    """A match outside the group waited for the group's live match and was never rated (only a
    match outside a group released what waited); a group completed while the other table
    played its seed moved its winners' ratings at once."""
    store = Store(tmp_path / "a.db")
    grouped = replace(match_record("kuhn-poker", ["ann", "bob"], [2.0, -2.0]), seed=7)
    alone = replace(match_record("kuhn-poker", ["cid", "dan"], [2.0, -2.0]), seed=7, started_at=grouped.started_at + 1)
    group = {"group_id": "g", "group_size": 1}
    open_live(store, grouped, **group)
    open_live(store, alone)
    ending = [(grouped, group), (alone, {})]
    if not group_first:
        ending.reverse()
    (early, early_meta), (late, late_meta) = ending
    assert store.finish_match(early, early_meta) == {}
    assert store.ratings() == []
    assert {bot for bot, _ in store.finish_match(late, late_meta)} == {"ann", "bob", "cid", "dan"}
    assert store.conn.execute("SELECT COUNT(*) FROM rating_waits").fetchone()[0] == 0
    store.close()


def as_schema_9(db: Path) -> None:
    """The store as an arena of schema 9 would have left it: its rating history indexed by
    bot and by match, no list of the matches rated at their end, and turns indexed by match."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("ALTER TABLE matches DROP COLUMN first_turn")
        conn.execute("ALTER TABLE matches DROP COLUMN last_turn")
        conn.execute("CREATE INDEX turns_by_match ON turns (match_id, step, seat)")
        conn.execute("DROP TABLE rated_at_end")
        conn.execute("DROP INDEX rating_history_by_variant")
        conn.execute("CREATE INDEX rating_history_by_variant ON rating_history (variant, bot, at)")
        conn.execute("CREATE INDEX rating_history_by_match ON rating_history (match_id)")
        conn.execute("UPDATE schema_version SET version = 9")
    conn.close()


def test_a_group_match_an_older_arena_rated_at_its_end_is_not_rated_again_when_the_group_completes(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Arenas before schema 7 rated a duplicate group's match at its end. A store one left with
    the group incomplete keeps knowing which, through the upgrade that drops the rating
    history's index by match (schema 10), and the group's end rates only the others."""
    store = Store(tmp_path / "a.db")
    first = replace(match_record("kuhn-poker", ["ann", "bob"], [2.0, -2.0]), seed=7)
    store.finish_match(first, {"group_id": "g", "group_size": 2})
    store._apply_ratings([("ann",), ("bob",)], [0, 1], "kuhn-poker", "kuhn-poker", first.match_id)  # as it was then
    store.finish_match(match_record("kuhn-poker", ["cid", "dan"], [1.0, -1.0]))  # rated at its end, in no group
    store.close()
    as_schema_9(tmp_path / "a.db")
    store = Store(tmp_path / "a.db")
    assert [row[0] for row in store.conn.execute("SELECT match_id FROM rated_at_end")] == [first.match_id]
    store.finish_match(
        replace(match_record("kuhn-poker", ["bob", "ann"], [1.0, -1.0]), seed=7), {"group_id": "g", "group_size": 2}
    )
    assert {row["bot"]: row["matches"] for row in store.ratings()} == {"ann": 2, "bob": 2, "cid": 1, "dan": 1}
    assert store.conn.execute("SELECT COUNT(*) FROM rating_history").fetchone()[0] == 6
    store.close()


def test_a_cooperative_match_outside_a_group_rates_nobody_and_the_table_says_so(
    tmp_path: Path, match_record: Callable[..., MatchResult], capsys: pytest.CaptureFixture[str]
) -> None:
    """The table showed the prior, 25.00 8.33 0.00, for every bot: a tie, as far as anyone could tell."""
    store = Store(tmp_path / "a.db")
    store.finish_match(match_record("mini-hanabi", ["ace", "ace-2"], [5.0, 5.0]))
    assert store.ratings() == []
    store.close()
    assert main(["ratings", "--db", str(tmp_path / "a.db"), "--game", "mini-hanabi"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if " ace" in line]
    assert [row[2:5] for row in rows] == [["-", "-", "-"]] * 2


async def fill(store_path: Path, pairings: list[tuple[str, str, str]], rounds: int) -> None:
    store = Store(store_path)
    for i in range(rounds):
        for game, strong, weak in pairings:
            specs = [strong, weak] if i % 2 == 0 else [weak, strong]
            seats = [LocalSeat(make_bot(spec, game, 100 * i + k), name=spec, threaded=False) for k, spec in enumerate(specs)]
            store.finish_match(await play_match(games.get(game), seats, seed=i))
    store.close()


@pytest.mark.trio
async def test_arena_ratings_ranks_strong_bots_above_weak_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"
    await fill(db, [("tic-tac-toe", "perfect", "random"), ("kuhn-poker", "equilibrium", "random")], 120)

    def ratings(*argv: str) -> object:
        assert main(["ratings", "--db", str(db), "--json", "--resamples", "50", *argv]) == 0
        return json.loads(capsys.readouterr().out)

    ttt = ratings("--game", "tic-tac-toe")["tic-tac-toe"]  # type: ignore[index]
    assert [r["bot"] for r in ttt] == ["perfect", "random"] and ttt[0]["rank"] == 1 and ttt[1]["rank"] == 2
    assert ttt[0]["losses"] == 0 and ttt[0]["mass"] == pytest.approx(1.0) and ttt[1]["nash_high"] < 0
    kuhn = ratings("--game", "kuhn-poker")["kuhn-poker"]  # type: ignore[index]
    assert kuhn[0]["bot"] == "equilibrium" and kuhn[0]["mean_return"] > kuhn[1]["mean_return"]
    whole = ratings()
    assert [r["bot"] for r in whole["bots"]][-1] == "random"  # type: ignore[index]
    assert main(["ratings", "--db", str(db), "--game", "tic-tac-toe"]) == 0
    table = capsys.readouterr().out
    assert "perfect" in table and "Nash [95%]" in table and "mu-3σ" in table


@pytest.mark.trio
async def test_the_report_writes_a_page_and_non_trivial_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"
    await fill(db, [("tic-tac-toe", "perfect", "random"), ("nim", "nim-optimal", "random")], 10)
    out = tmp_path / "report"
    assert await trio.to_thread.run_sync(main, ["report", "--db", str(db), "--out", str(out), "--resamples", "20"]) == 0
    page = (out / "README.md").read_text()
    plots = sorted(p.name for p in out.glob("*.png"))
    assert set(plots) == {f"{g}-{kind}.png" for g in ("nim", "tic-tac-toe") for kind in ("mixture", "trueskill", "winrates")} | {
        "scores.png"
    }
    for plot in plots:
        assert (out / plot).stat().st_size > 10_000 and plot in page
    assert "| 1 | perfect |" in page
    assert "| mean return | forfeits | format errors |" in page  # as `arena ratings` has: ranked games' W/D/L is "-"


def test_the_reports_plots_show_the_best_bots_of_a_big_field_and_its_table_every_bot(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Two hundred bots made a heatmap of 182 megapixels (6 GB and minutes to draw, no viewer
    opens it) and a legend of 200 lines (found by QA)."""
    import struct

    from arena.ratings.report import PLOTTED_BOTS, write_report

    store = Store(tmp_path / "arena.db")
    bots = [f"bot-{k:02d}" for k in range(PLOTTED_BOTS + 5)]
    with store.atomic():
        for k, bot in enumerate(bots):  # a ladder: each beats the next
            store.finish_match(match_record("nim", [bot, bots[(k + 1) % len(bots)]], [1.0, -1.0]))
    page = write_report(store, tmp_path / "report", resamples=5).read_text()
    assert all(f"| {bot} |" in page for bot in bots)
    assert f"The plots show the {PLOTTED_BOTS} bots of best Nash rating, of {len(bots)}." in page
    width, height = struct.unpack(">II", (tmp_path / "report" / "nim-winrates.png").read_bytes()[16:24])
    assert width * height < 8_000_000


def test_the_report_of_a_store_without_finished_matches_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Store(tmp_path / "arena.db").close()
    assert main(["report", "--db", str(tmp_path / "arena.db"), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "README.md").read_text()
    assert f"No finished matches in {tmp_path / 'arena.db'} yet" in page and not list((tmp_path / "report").glob("*.png"))


def test_a_variant_played_only_in_self_play_says_why_it_has_no_table_and_no_plots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match_record: Callable[..., MatchResult]
) -> None:
    """Its board printed headers alone, and the report an empty section with three blank plots."""
    db = tmp_path / "arena.db"
    store = Store(db)
    store.finish_match(match_record("nim", ["random", "random"], [1.0, -1.0]))
    store.close()
    assert main(["ratings", "--db", str(db), "--game", "nim"]) == 0
    assert capsys.readouterr().out.split("\n")[1:3] == ["nim", NOTHING_RATED]
    out = tmp_path / "report"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    assert f"## nim\n\n{NOTHING_RATED.capitalize()}." in (out / "README.md").read_text()
    assert not list(out.glob("nim-*.png"))


def test_ratings_on_a_missing_store_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ratings", "--db", str(tmp_path / "none.db")]) == 2
    assert capsys.readouterr().err.startswith("arena: error: no store at")


def test_ratings_as_json_of_a_store_without_finished_matches_has_the_same_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store(tmp_path / "arena.db").close()
    assert main(["ratings", "--db", str(tmp_path / "arena.db"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"bots": [], "games": []}  # as /api/leaderboard: empty, not null


def test_costs_and_tokens_add_up_per_bot_in_the_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match_record: Callable[..., MatchResult]
) -> None:
    from arena.match import TurnRecord

    store = Store(tmp_path / "arena.db")

    def turn(seat: int, step: int, cost: float, tokens: tuple[int, int], accepted: bool = True) -> TurnRecord:
        return TurnRecord(
            seat=seat, step=step, attempt=0, observation="", legal_actions=None, action="a1", accepted=accepted,
            cost=cost, tokens_in=tokens[0], tokens_out=tokens[1], format_error=not accepted,
        )  # fmt: skip

    won = replace(
        match_record("tic-tac-toe", ["llm", "rock"], [1.0, -1.0]), turns=[turn(0, 0, 0.25, (100, 10)), turn(0, 2, 0.5, (200, 20))]
    )
    lost = replace(match_record("tic-tac-toe", ["rock", "llm"], [1.0, -1.0]), turns=[turn(1, 1, 0.25, (50, 5), accepted=False)])
    store.finish_match(won)
    store.finish_match(lost)
    store.close()
    assert main(["ratings", "--db", str(tmp_path / "arena.db"), "--game", "tic-tac-toe", "--json", "--resamples", "10"]) == 0
    rows = {row["bot"]: row for row in json.loads(capsys.readouterr().out)["tic-tac-toe"]}
    llm = rows["llm"]
    assert (
        llm["cost"] == pytest.approx(1.0)
        and llm["cost_per_match"] == pytest.approx(0.5)
        and llm["cost_per_win"] == pytest.approx(1.0)
    )
    assert (llm["tokens_in"], llm["tokens_out"], llm["format_errors"]) == (350, 35, 1)
    assert rows["rock"]["cost"] == 0 and rows["rock"]["cost_per_win"] == 0


def test_costs_that_add_up_to_no_number_are_not_shown_as_none_spent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match_record: Callable[..., MatchResult]
) -> None:
    """Costs are stored as given: +inf and -inf summed to NaN, which SQLite gives as null, and
    the bot's cost read 0, as if it had spent nothing."""
    from arena.match import TurnRecord

    store = Store(tmp_path / "arena.db")
    turns = [
        TurnRecord(seat=0, step=step, attempt=0, observation="", legal_actions=None, action="a1", accepted=True, cost=cost)
        for step, cost in ((0, math.inf), (2, -math.inf))
    ]
    store.finish_match(replace(match_record("tic-tac-toe", ["llm", "rock"], [1.0, -1.0]), turns=turns))
    store.close()
    assert main(["ratings", "--db", str(tmp_path / "arena.db"), "--game", "tic-tac-toe", "--json", "--resamples", "10"]) == 0
    rows = {row["bot"]: row for row in json.loads(capsys.readouterr().out)["tic-tac-toe"]}
    assert rows["llm"]["cost"] is None and rows["llm"]["cost_per_match"] is None and rows["llm"]["cost_per_win"] is None
    assert rows["rock"]["cost"] == 0  # no cost given: none spent
    assert main(["ratings", "--db", str(tmp_path / "arena.db"), "--game", "tic-tac-toe", "--resamples", "10"]) == 0
    rows = {line.split()[1]: line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("1 ")}
    assert rows["llm"][-1] == "nan" and rows["rock"][-1] == "0"  # the cost/match column


def test_token_counts_stored_past_what_sqlite_sums_still_give_a_leaderboard(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Before moves' counts were bounded, two turns of 2**63 - 1 tokens made SUM raise
    "integer overflow" on every leaderboard of the game, for good."""
    from arena.match import TurnRecord

    store = Store(tmp_path / "arena.db")
    huge = 2**63 - 1
    turns = [
        TurnRecord(seat=0, step=step, attempt=0, observation="", legal_actions=None, action="a1", accepted=True,
                   tokens_in=huge, tokens_out=huge)
        for step in (0, 2)
    ]  # fmt: skip
    store.finish_match(replace(match_record("tic-tac-toe", ["greedy", "rock"], [1.0, -1.0]), turns=turns))
    rows = {row["bot"]: row for row in variant_leaderboard(store, "tic-tac-toe", resamples=10)}
    assert rows["greedy"]["tokens_in"] == rows["greedy"]["tokens_out"] == huge  # capped at what an integer holds
    store.close()


def test_self_play_is_left_out_of_the_records_as_it_is_out_of_the_ratings(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    from arena.match import TurnRecord
    from arena.ratings.leaderboard import overall, variant_leaderboard

    store = Store(tmp_path / "a.db")
    paid = TurnRecord(seat=0, step=0, attempt=0, observation="", legal_actions=None, action="a1", accepted=True, cost=1.0)
    for _ in range(3):
        store.finish_match(replace(match_record("tic-tac-toe", ["random", "random"], [1.0, -1.0]), turns=[paid]))
    store.finish_match(match_record("tic-tac-toe", ["random", "perfect"], [-1.0, 1.0]))
    row = {row["bot"]: row for row in variant_leaderboard(store, "tic-tac-toe", resamples=10)}["random"]
    record = (row["games"], row["wins"], row["draws"], row["losses"], row["mean_return"], row["cost"])
    assert record == (1, 0, 0, 1, -1.0, 0)
    whole = overall(store)
    assert whole is not None
    assert {r["bot"]: r["games"] for r in whole.rows()} == {"perfect": 1, "random": 1}
    # a team of copies of one bot is how a cooperative game measures it: counted, once a match
    store.finish_match(match_record("coordination", ["random", "random"], [1.0, 1.0]))
    (team,) = variant_leaderboard(store, "coordination", resamples=10)
    assert (team["bot"], team["games"], team["mean_return"]) == ("random", 1, 1.0)
    whole = overall(store)  # and once across games too, where its two seats were two games
    assert whole is not None
    assert {r["bot"]: r["games"] for r in whole.rows()} == {"perfect": 1, "random": 2}


def test_a_small_variants_leaderboard_reads_its_own_matches_not_the_whole_store(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Leaving self-play out read every seat of the store, three times per variant: a game's
    leaderboard took seconds per variant of a handful of matches in a store of 60,000."""
    from arena.ratings.leaderboard import variant_leaderboard
    from tests.arena.test_store import sqlite_work

    store = Store(tmp_path / "a.db")
    small = games.get("nim").Config(heaps=(1, 2)).to_dict()
    for _ in range(3):
        store.finish_match(replace(match_record("nim", ["a", "b"], [1.0, -1.0]), config=small))
    variant = 'nim{"heaps":[1,2]}'
    alone = sqlite_work(store, lambda: variant_leaderboard(store, variant, resamples=10))
    with store.atomic():
        for index in range(2000):
            store.finish_match(match_record("nim", [f"other{index % 5}", f"other{index % 7 + 5}"], [1.0, -1.0]))
    assert sqlite_work(store, lambda: variant_leaderboard(store, variant, resamples=10)) < 2 * alone


def test_w_d_l_count_a_forfeit_as_the_loss_it_is_and_add_up_to_the_games(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """The forfeit's winner had it in W, its loser nowhere in L: W/D/L did not add up."""
    store = Store(tmp_path / "a.db")
    store.finish_match(match_record("tic-tac-toe", ["random", "perfect"], [-1.0, 1.0], forfeit=0))
    store.finish_match(match_record("tic-tac-toe", ["random", "perfect"], [0.0, 0.0]))
    store.finish_match(match_record("tic-tac-toe", ["random", "perfect"], [-1.0, 1.0]))
    store.finish_match(match_record("public-goods", ["random", "perfect", "first"], [1.0, 2.0, 3.0], forfeit=0))
    rows = {row["bot"]: row for row in variant_leaderboard(store, "tic-tac-toe", resamples=10)}
    wdl = {bot: (row["games"], row["wins"], row["draws"], row["losses"], row["forfeits"]) for bot, row in rows.items()}
    assert wdl == {"random": (3, 0, 1, 2, 1), "perfect": (3, 2, 1, 0, 0)}
    (ranked,) = [row for row in variant_leaderboard(store, "public-goods", resamples=10) if row["bot"] == "random"]
    assert (ranked["wins"], ranked["losses"], ranked["forfeits"]) == (0, 0, 1)  # no W/D/L where nobody wins
    assert (record_text(rows["random"]), record_text(ranked)) == ("0/1/2", "-")  # tables said 0/0/0: "never won"
    store.close()


def test_what_the_solver_leaves_of_a_zero_is_shown_as_zero() -> None:
    """-2.4e-13 printed as -0.00 in the Nash columns."""
    assert f"{_solved(-2.4e-13):.2f}" == "0.00" and _solved(-0.25) == -0.25 and _solved(1e-6) == 1e-6


def test_a_plot_title_is_wrapped_to_its_figure() -> None:
    """A variant's name with its config written out ran past the heatmap's edge, cut off."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from arena.ratings.report import TITLE_CHARS_PER_INCH, _title

    fig, ax = plt.subplots(figsize=(5, 4))
    variant = 'iterated-prisoners-dilemma{"rounds":7}'
    _title(ax, f"{variant}: score against each opponent", "(games played in brackets)")
    lines = ax.get_title().split("\n")
    plt.close(fig)
    assert len(lines) == 3 and all(len(line) <= 5 * TITLE_CHARS_PER_INCH for line in lines)
    assert " ".join(lines) == f"{variant}: score against each opponent (games played in brackets)"


def test_a_cooperative_team_of_copies_counts_once_in_the_mean_return(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Averaged per seat, a team of copies weighed twice in the mean return while counting
    once in the games, and the board disagreed with the across-games score."""
    from arena.ratings.leaderboard import overall

    store = Store(tmp_path / "a.db")
    store.finish_match(match_record("coordination", ["random", "random"], [1.0, 1.0]))
    store.finish_match(match_record("coordination", ["random", "first"], [4.0, 4.0]))
    rows = {row["bot"]: row for row in variant_leaderboard(store, "coordination", resamples=10)}
    assert (rows["random"]["games"], rows["random"]["mean_return"]) == (2, 2.5)
    whole = overall(store)
    assert whole is not None
    assert whole.scores[whole.agents.index("random"), whole.variants.index("coordination")] == 2.5
    store.close()


def test_a_number_that_rounds_to_zero_is_shown_without_a_minus() -> None:
    """A Nash rating of -0.004 was shown as -0.00 (found by QA)."""
    assert [fixed(-0.004), fixed(-0.006), fixed(0.0), fixed(2.345, 1)] == ["0.00", "-0.01", "0.00", "2.3"]
    assert [fixed(-0.004, sign=True), fixed(1.1, sign=True), fixed(-1.1, sign=True)] == ["+0.00", "+1.10", "-1.10"]


def test_trueskill_over_time_counts_matches_in_whole_numbers(
    tmp_path: Path, match_record: Callable[..., MatchResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rated matches drew ticks at 1.25, 1.5, 1.75."""
    import matplotlib.pyplot as plt

    from arena.ratings.report import trueskill_over_time

    closed: list[Any] = []
    monkeypatch.setattr(plt, "close", closed.append)
    store = Store(tmp_path / "arena.db")
    with store.atomic():
        for _ in range(2):
            store.finish_match(match_record("nim", ["a", "b"], [1.0, -1.0]))
    trueskill_over_time(store, "nim", ["a", "b"], tmp_path / "mu.png")
    (axes,) = closed[0].axes
    assert [tick.get_text() for tick in axes.get_xticklabels() if tick.get_text()] and all(
        float(tick).is_integer() for tick in axes.get_xticks()
    )


def test_the_report_keeps_held_out_games_out_of_the_table_across_games(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """The nightly's report pooled its held-out game into 'Across games', unmarked (found by a QA helper)."""
    from arena.ratings.report import write_report

    store = Store(tmp_path / "arena.db")
    with store.atomic():
        for bot, other in (("a", "b"), ("b", "c"), ("c", "a")):
            store.finish_match(match_record("nim", [bot, other], [1.0, -1.0]))
            store.finish_match(match_record("kuhn-poker", [other, bot], [1.0, -1.0]))
    page = write_report(store, tmp_path / "report", resamples=5, held_out={"kuhn-poker"}).read_text()
    across = page.split("## Across games", 1)[1].split("\n## ", 1)[0]
    assert "| nim |" in across and "kuhn-poker" not in across
    assert "## kuhn-poker (held-out game)" in page and "## nim\n" in page
    store.close()


class _GoneTicTacToe(TicTacToe):
    """A plugin's game, uninstalled once its matches were stored."""

    spec = replace(TicTacToe.spec, name="gone-tic-tac-toe")


@pytest.mark.trio
async def test_a_game_whose_plugin_was_uninstalled_keeps_its_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's leaderboard kept it; ``arena ratings --game`` said "unknown game" (found by a QA helper)."""
    db = tmp_path / "arena.db"
    monkeypatch.setitem(games.registry._load(), _GoneTicTacToe.spec.name, _GoneTicTacToe)
    store = Store(db)
    for seed in range(4):
        seats = [LocalSeat(make_bot("random", "tic-tac-toe", seed + k), name=f"r{k}", threaded=False) for k in range(2)]
        store.finish_match(await play_match(_GoneTicTacToe, seats, seed=seed))
    store.close()
    monkeypatch.delitem(games.registry._load(), _GoneTicTacToe.spec.name)
    assert main(["ratings", "--db", str(db), "--json", "--resamples", "20", "--game", _GoneTicTacToe.spec.name]) == 0
    board = json.loads(capsys.readouterr().out)[_GoneTicTacToe.spec.name]
    assert sorted((row["bot"], row["games"]) for row in board) == [("r0", 4), ("r1", 4)]
    assert main(["ratings", "--db", str(db), "--game", "gone-tic-tac-to"]) == 2
    assert "unknown game 'gone-tic-tac-to'; did you mean 'tic-tac-toe'?" in capsys.readouterr().err


@pytest.mark.filterwarnings("error")  # matplotlib's "Tight layout not applied", for the long name on an axis
def test_variants_whose_names_differ_in_punctuation_or_are_long_get_plots_of_their_own(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """``sucker=-0.5`` and ``sucker=0.5`` wrote one set of PNGs, which both sections showed; a
    459-character variant failed the whole report ("File name too long"), and a report written
    again left the plots of games no longer in it (found by a QA helper)."""
    from arena.ratings.report import PLOT_LINK, write_report

    game = "iterated-prisoners-dilemma"
    long_options = [f"option-{k:02d}-" + "x" * 20 for k in range(12)]
    configs = [{"sucker": -0.5}, {"sucker": 0.5}, {"options": long_options}]
    store = Store(tmp_path / "arena.db")
    for config in configs:
        name = "coordination" if "options" in config else game
        base = games.get(name).spec.default_config.to_dict()
        store.finish_match(replace(match_record(name, ["a", "b"], [2.0, 1.0]), config={**base, **config}))
    out = tmp_path / "report"
    page = write_report(store, out, resamples=5).read_text()
    sections = [line for line in page.splitlines() if line.startswith("## ") and line != "## Across games"]
    assert len(sections) == 3
    linked = PLOT_LINK.findall(page)
    assert len(linked) == len(set(linked)) == 3 * 3 + 1 and sorted(p.name for p in out.glob("*.png")) == sorted(linked)
    store.close()
    store = Store(tmp_path / "other.db")
    store.finish_match(match_record("nim", ["a", "b"], [1.0, -1.0]))
    page = write_report(store, out, resamples=5).read_text()
    assert (
        sorted(p.name for p in out.glob("*.png"))
        == sorted(PLOT_LINK.findall(page))
        == [f"nim-{kind}.png" for kind in ("mixture", "trueskill", "winrates")] + ["scores.png"]
    )
    # a page of the user's own, and its images, are no report's to remove (found by a QA helper reviewing the change)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("# My project\n\n![Logo](logo.png)\n![Nim](nim-winrates.png)\n")
    for name in ("logo.png", "nim-winrates.png"):
        (mine / name).write_bytes(b"png")
    (out / "logo.png").write_bytes(b"png")
    (out / "README.md").write_text((out / "README.md").read_text() + "\n![Logo](logo.png)\n")
    write_report(store, mine, resamples=5)
    write_report(store, out, resamples=5)
    assert (mine / "logo.png").read_bytes() == b"png" and (out / "logo.png").read_bytes() == b"png"


def test_the_report_refuses_a_folder_whose_readme_is_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match_record: Callable[..., MatchResult]
) -> None:
    """`arena report --out .` in a project replaced its README.md without a word (found by a QA helper)."""
    store = Store(tmp_path / "arena.db")
    store.finish_match(match_record("nim", ["a", "b"], [1.0, -1.0]))
    store.close()
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# My project\n")
    assert main(["report", "--db", str(tmp_path / "arena.db"), "--out", str(project), "--resamples", "5"]) == 2
    assert "README.md is not a ratings report, and the report would replace it" in capsys.readouterr().err
    assert (project / "README.md").read_text() == "# My project\n"
    assert main(["report", "--db", str(tmp_path / "arena.db"), "--out", str(tmp_path / "r"), "--resamples", "5"]) == 0
    assert main(["report", "--db", str(tmp_path / "arena.db"), "--out", str(tmp_path / "r"), "--resamples", "5"]) == 0

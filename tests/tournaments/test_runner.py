"""The runner: every scheduled match once in the store, resumable after a run is killed."""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat, Turn
from arena.store import Store, StoreError
from bots.registry import make_bot
from tournaments.config import TournamentConfig, TournamentConfigError, load, parse
from tournaments.formats import ScheduledMatch, points
from tournaments.runner import Played, _recorded, drive, fixed_schedule, planned, run_tournament, run_tournament_async

ROOT = Path(__file__).resolve().parents[2]

CUP = """
name = "{name}"
format = "{format}"
games_per_pairing = {per}
concurrency = 4
{extra}
[[games]]
name = "iterated-prisoners-dilemma"
participants = ["tit-for-tat", "always-defect", "always-cooperate", "random", "win-stay-lose-shift"]
"""


def cup(tmp_path: Path, name: str = "cup", format: str = "round-robin", per: int = 2, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(CUP.format(name=name, format=format, per=per, extra=extra))
    return path


def finished_keys(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT caller_key FROM matches WHERE status = 'finished'")]


def test_a_run_records_every_match_with_its_tournament_and_round_and_a_rerun_plays_nothing(tmp_path: Path) -> None:
    config = load(cup(tmp_path))
    db = tmp_path / "arena.db"
    seen = []
    first = run_tournament(config, db, progress=seen.append)
    assert first.played == first.total == 20 and first.skipped == 0
    assert seen[-1].done == 20 and seen[-1].running == 0
    assert max(progress.running for progress in seen) == 4  # the concurrency: the bar showed 3 (found by QA)
    store = Store(db, read_only=True)
    rows = store.conn.execute("SELECT tournament, round, caller_key FROM matches").fetchall()
    store.close()
    assert {r["tournament"] for r in rows} == {"cup"} and all(r["round"] >= 1 for r in rows)
    assert sorted(r["caller_key"] for r in rows) == sorted(m.key for m in fixed_schedule(config, config.games[0]))
    again = run_tournament(config, db)
    assert again.played == 0 and again.skipped == 20
    assert len(finished_keys(db)) == 20


def test_a_rerun_whose_game_config_changed_is_refused_naming_the_change_before_it_plays(tmp_path: Path) -> None:
    """Its keys are those of the matches played before: the rerun took them as its own ("0 played,
    20 already done") and the new variant was never played. Then, checked key by key, a rerun
    played the keys voided before under the new config until it met one finished under the old:
    the tournament held both, and neither file could finish it (found by a QA helper)."""
    db = tmp_path / "arena.db"
    path = cup(tmp_path, per=1)
    run_tournament(load(path), db)
    first = fixed_schedule(load(path), load(path).games[0])[0].key
    with sqlite3.connect(db) as conn:  # the first key to come up was voided (a stopped run, a server restart)
        conn.execute("UPDATE matches SET status = 'void' WHERE caller_key = ?", (first,))
    game = 'name = "iterated-prisoners-dilemma"'
    path.write_text(path.read_text().replace(game, f"{game}\nconfig = {{ rounds = 3 }}"))
    with pytest.raises(BaseExceptionGroup) as raised:
        run_tournament(load(path), db)
    said = "was played with rounds=10; the file now says rounds=3: give the changed game a label of its own"
    assert raised.group_contains(StoreError, match=said, depth=None)
    assert len(finished_keys(db)) == 9
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM matches WHERE config LIKE '%\"rounds\": 3%'").fetchone()[0] == 0


def test_a_rerun_that_would_put_a_shown_deal_into_a_group_still_to_play_is_refused(tmp_path: Path) -> None:
    """3 games per pairing, then 4: the third game, alone in its pair (its group complete, its
    cards public), got a partner dealt the same cards with the seats swapped (found by QA)."""
    db = tmp_path / "arena.db"
    path = cup(tmp_path, per=3)
    run_tournament(load(path), db)
    with sqlite3.connect(db) as conn:  # a store from before schedules were kept
        conn.execute("DELETE FROM meta WHERE key = 'schedule:cup'")
    path.write_text(path.read_text().replace("games_per_pairing = 3", "games_per_pairing = 4"))
    with pytest.raises(BaseExceptionGroup) as raised:
        run_tournament(load(path), db)
    said = r"/g2: the match made under this key was in group '\S+' of 1, and this one is in group '\S+' of 2: .* new name"
    assert raised.group_contains(TournamentConfigError, match=said, depth=None)


def test_another_spelling_of_a_participant_is_the_same_participant_on_a_rerun(tmp_path: Path) -> None:
    """Written 'random:' on the rerun, the lock let it pass and every match of 'random' was
    played again under new keys, counted twice on the board (found by a QA helper)."""
    db = tmp_path / "arena.db"
    path = cup(tmp_path, per=1)
    first = run_tournament(load(path), db)
    path.write_text(path.read_text().replace('"random"', '" random: "'))
    respelled = load(path)
    assert "random" in respelled.participants
    again = run_tournament(respelled, db)
    assert (again.played, again.skipped) == (0, first.played)


@pytest.mark.parametrize(
    "change",
    [
        ("games_per_pairing = 2", "games_per_pairing = 1"),
        ('"random", "win-stay-lose-shift"]', '"random"]'),
        ('format = "round-robin"', 'format = "swiss"'),
    ],
    ids=["fewer games per pairing", "a participant less", "another format"],
)
def test_a_rerun_of_a_file_whose_schedule_changed_is_refused_and_plays_nothing(
    tmp_path: Path, change: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Fewer games per pairing or a participant less took the matches played before as done,
    and another format added a second schedule's matches under the same name (found by QA)."""
    from arena.cli import main

    db = tmp_path / "arena.db"
    path = cup(tmp_path)
    run_tournament(load(path), db)
    before = finished_keys(db)
    path.write_text(path.read_text().replace(*change))
    capsys.readouterr()
    assert main(["tournament", "run", str(path), "--db", str(db)]) == 2
    said = capsys.readouterr().err
    # named with the file, as every other error of it is (found by a QA helper)
    assert said.startswith(f"arena: error: {path}: tournament 'cup' was first run with another schedule") and "new name" in said
    assert finished_keys(db) == before
    path.write_text(path.read_text().replace(change[1], change[0]))  # put back: it goes on as it was
    assert run_tournament(load(path), db).skipped == len(before)


def test_seeds_come_from_the_tournaments_stored_secret_and_a_rerun_deals_the_same(tmp_path: Path) -> None:
    """A player knows the tournament's name and every key; it must not be able to compute a
    seed from them, while a rerun (a void match played again) must deal what it dealt."""
    config = load(cup(tmp_path, per=2))
    db = tmp_path / "arena.db"
    run_tournament(config, db)

    def seeds() -> dict[str, int]:
        with sqlite3.connect(db) as conn:
            return dict(conn.execute("SELECT caller_key, seed FROM matches WHERE status = 'finished'").fetchall())

    first = seeds()
    public = {m.key: m.seed for m in fixed_schedule(config, config.games[0])}
    assert first.keys() == public.keys() and not set(first.values()) & set(public.values())
    store = Store(db)
    salt = store.seed_salt("cup")
    store.close()
    schedule = fixed_schedule(config, config.games[0], salt)
    assert first == {m.key: m.seed for m in schedule}
    with sqlite3.connect(db) as conn:
        groups = {key: (group, size) for key, group, size in conn.execute("SELECT caller_key, group_id, group_size FROM matches")}
    assert groups == {m.key: (m.group_id, 2) for m in schedule}  # each pair of games sharing a deal is a group
    replayed = sorted(first)[3]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE matches SET status = 'void' WHERE caller_key = ?", (replayed,))
    assert run_tournament(config, db).played == 1 and seeds() == first


def test_a_tournament_begun_before_salts_keeps_its_seeds(tmp_path: Path) -> None:
    """Its remaining matches must deal as its first ones did (a duplicate's deals are shared)."""
    config = load(cup(tmp_path, per=2))
    db = tmp_path / "arena.db"
    public = fixed_schedule(config, config.games[0])
    first = public[0]
    game = games.get(first.game)
    bots = [LocalSeat(make_bot(spec, first.game, i)) for i, spec in enumerate(first.seats)]
    result = trio.run(functools.partial(play_match, game, bots, config=dict(first.config), seed=first.seed))
    store = Store(db)
    store.finish_match(result, {"tournament": "cup", "round": first.round, "caller_key": first.key, "source": "tournament"})
    store.close()
    run_tournament(config, db)
    with sqlite3.connect(db) as conn:
        stored = dict(conn.execute("SELECT caller_key, seed FROM matches").fetchall())
    store = Store(db)
    assert stored == {m.key: m.seed for m in public} and store.seed_salt("cup") == ""
    assert store.conn.execute("SELECT COUNT(*) FROM matches WHERE group_id IS NOT NULL").fetchone()[0] == 0
    store.close()


def test_swiss_plays_its_rounds_without_repeats_and_resumes_to_the_same_pairings(tmp_path: Path) -> None:
    config = load(cup(tmp_path, name="swiss", format="swiss", per=2, extra="rounds = 5"))
    db = tmp_path / "arena.db"
    assert run_tournament(config, db).played == planned(config) == 5 * 2 * 2
    keys = finished_keys(db)
    pairs = {key.rsplit("/", 2)[1] for key in keys}
    assert len(pairs) == 10  # five players, five rounds: every pairing exactly once
    assert run_tournament(config, db).played == 0


def six_player_swiss(name: str, rounds: int) -> TournamentConfig:
    people = [f"pig-hold-at:threshold={t}" for t in range(11, 17)]
    game = {"name": "pig", "participants": people}
    return parse({"name": name, "format": "swiss", "rounds": rounds, "games_per_pairing": 1, "games": [game]})


def test_swiss_plays_as_many_rounds_as_the_file_allows_whatever_the_results() -> None:
    config = six_player_swiss("deep", 5)
    met: list[frozenset[str]] = []

    async def later_name_wins(match: ScheduledMatch) -> Played:
        met.append(frozenset(match.seats))
        return Played("finished", (0.0, 1.0) if match.seats[1] > match.seats[0] else (1.0, 0.0), fresh=True)

    summary = trio.run(drive, config, later_name_wins)
    assert summary.played == summary.total == 15 and len(set(met)) == 15
    # every pairing once, the later name winning: each has as many points as names before it
    assert summary.standings == {"pig": {f"pig-hold-at:threshold={t}": float(t - 11) for t in range(16, 10, -1)}}


@pytest.mark.parametrize("format", ["round-robin", "duplicate"])
def test_a_participant_never_plays_two_matches_of_one_deal_at_once(format: str) -> None:
    """Matches sharing a seed deal the same cards: a bot seated in two of them at once (seats
    swapped) would see in one the cards its opponent holds in the other."""
    people = [f"pig-hold-at:threshold={t}" for t in (15, 20, 25)]
    config = parse({"name": "deals", "format": format, "concurrency": 8, "games": [{"name": "pig", "participants": people}]})
    running: list[ScheduledMatch] = []
    overlaps: list[tuple[str, str]] = []

    async def play(match: ScheduledMatch) -> Played:
        for other in running:
            if other.seed == match.seed and set(other.seats) & set(match.seats):
                overlaps.append((other.key, match.key))
        running.append(match)
        await trio.sleep(0.01)
        running.remove(match)
        return Played("finished", (1.0, -1.0), fresh=True)

    summary = trio.run(drive, config, play)
    assert summary.played == summary.total and not overlaps


def test_a_pairs_second_game_follows_its_first_so_a_stopped_run_has_whole_pairs_to_rate() -> None:
    """Every pair's first game was queued ahead of every second game: killed at 13 of 40
    matches, a run had not one pair complete, and nothing was rated or shown (found by QA)."""
    people = ["tit-for-tat", "random", "always-defect", "always-cooperate", "win-stay-lose-shift"]
    config = parse(
        {"name": "pairs", "format": "round-robin", "games": [{"name": "iterated-prisoners-dilemma", "participants": people}]}
    )
    order: list[ScheduledMatch] = []

    async def play(match: ScheduledMatch) -> Played:
        order.append(match)
        await trio.sleep(0.01)
        return Played("finished", (1.0, 0.0), fresh=True)

    trio.run(drive, config, play)
    seats_of_pairs = [frozenset(match.seats) for match in order]
    assert len(order) == 20 and len(set(seats_of_pairs[:8])) <= 4  # the first 8 played: 4 whole pairs at most


def test_a_swiss_round_with_a_void_match_is_finished_before_the_next_is_paired() -> None:
    """The void match is played again by the next run; pairing the later rounds without
    its result made that run pair them anew, beside the ones already played."""
    config = six_player_swiss("void", 3)
    stored: dict[str, tuple[float, ...]] = {}

    def runner(void_key: str | None) -> Callable[[ScheduledMatch], Awaitable[Played]]:
        async def play(match: ScheduledMatch) -> Played:
            if match.key in stored:
                return Played("finished", stored[match.key], fresh=False)
            if match.key == void_key:
                return Played("void", None, fresh=True)
            stored[match.key] = (0.0, 1.0) if match.seats[1] > match.seats[0] else (1.0, 0.0)
            return Played("finished", stored[match.key], fresh=True)

        return play

    first = trio.run(drive, config, runner("void/pig/swiss/r1/pig-hold-at:threshold=11~pig-hold-at:threshold=12/g0"))
    assert first.voided == 1
    again = trio.run(drive, config, runner(None))
    assert again.voided == 0 and len(stored) == again.total == 9


def test_duplicate_matches_share_seeds_and_groups(tmp_path: Path) -> None:
    config = parse(
        {
            "name": "dup",
            "format": "duplicate",
            "games_per_pairing": 1,
            "games": [{"name": "iterated-prisoners-dilemma", "participants": ["tit-for-tat", "random", "always-defect"]}],
        }
    )
    db = tmp_path / "arena.db"
    run_tournament(config, db)
    with sqlite3.connect(db) as conn:
        seeds = conn.execute("SELECT DISTINCT seed, group_id, group_size FROM matches").fetchall()
    assert len(seeds) == 1 and seeds[0][2] == 6


def test_a_duplicate_tournament_of_a_cooperative_game_rates_its_participants(tmp_path: Path) -> None:
    config = parse(
        {
            "name": "coop",
            "format": "duplicate",
            "games_per_pairing": 2,
            "games": [{"name": "lewis-signalling", "participants": ["lewis-convention", "lewis-learner", "random"]}],
        }
    )
    db = tmp_path / "arena.db"
    run_tournament(config, db)
    store = Store(db, read_only=True)
    mu = {row["bot"]: row["mu"] for row in store.ratings(game="lewis-signalling")}
    store.close()
    assert set(mu) == {"lewis-convention", "lewis-learner", "random"}
    assert mu["random"] < 25.0 < min(mu["lewis-convention"], mu["lewis-learner"])


def test_a_duplicate_tournament_of_a_cooperative_game_at_tables_deals_each_round_once_and_rates(tmp_path: Path) -> None:
    """Each table had a deal of its own and no group: nothing was ever rated (mu 25, sigma 8.33)."""
    participants = ["mind-timer", "mind-timer:pace=0.5", "random", "mind-timer:pace=0.8"]
    game = {"name": "ascending-cards", "config": {"players": 3}, "participants": participants}
    config = parse({"name": "coop3", "format": "duplicate", "rounds": 2, "games": [game]})
    db = tmp_path / "arena.db"
    run_tournament(config, db)
    with sqlite3.connect(db) as conn:
        sql = "SELECT round, COUNT(DISTINCT seed), COUNT(*), MIN(group_size) FROM matches GROUP BY round"
        rounds = conn.execute(sql).fetchall()
    assert rounds == [(1, 1, 2, 2), (2, 1, 2, 2)]  # a round: two tables (four bots, three seats), one deal
    store = Store(db, read_only=True)
    rated = {row["bot"]: row["sigma"] for row in store.ratings(game="ascending-cards")}
    store.close()
    assert set(rated) == set(participants) and max(rated.values()) < 25 / 3


def cup_caught_mid_way(tmp_path: Path, name: str, **pipes: Any) -> tuple[Any, Path, list[str], subprocess.Popen[str]]:
    """A cup played by ``arena tournament run`` in a child process, caught once 20 of its
    matches are in the store (or a minute has passed, or it ended): its config, store,
    command and process."""
    path = cup(tmp_path, name=name, per=30)
    db = tmp_path / "arena.db"
    command = [sys.executable, "-m", "arena.cli", "tournament", "run", str(path), "--db", str(db)]
    child = subprocess.Popen(command, cwd=ROOT, text=True, **pipes)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        with contextlib.suppress(sqlite3.OperationalError):  # the store is still being made
            if db.exists() and len(finished_keys(db)) >= 20:
                break
        time.sleep(0.02)
    return load(path), db, command, child


@pytest.mark.slow
def test_a_run_killed_mid_way_resumes_and_plays_every_key_exactly_once(tmp_path: Path) -> None:
    config, db, command, child = cup_caught_mid_way(tmp_path, "killed", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert 0 < len(finished_keys(db)) < planned(config), "the run should be killed mid-way"
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    keys = finished_keys(db)
    assert sorted(keys) == sorted(m.key for m in fixed_schedule(config, config.games[0]))
    assert "killed" in done.stdout and "tit-for-tat" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_a_run_in_one_line_with_status_130_and_the_same_command_resumes(tmp_path: Path, signum: int) -> None:
    """SIGTERM (a scheduler, `timeout`) killed the run without a word; a remote run then left
    its matches live, and its in-process bots forfeited them for its stop."""
    config, db, command, child = cup_caught_mid_way(tmp_path, "interrupted", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.send_signal(signum)
    _, err = child.communicate(timeout=30)
    kept = finished_keys(db)
    assert 0 < len(kept) < planned(config), "the run should be interrupted mid-way"
    assert child.returncode == 130, err
    assert err.splitlines()[-1] == "arena: interrupted; the finished matches are kept: run the same command again to resume"
    assert "Traceback" not in err

    done = subprocess.run([*command, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["skipped"], summary["played"]) == (len(kept), planned(config) - len(kept))
    assert sorted(finished_keys(db)) == sorted(m.key for m in fixed_schedule(config, config.games[0]))


def test_a_recorded_forfeit_is_read_back_with_its_seat_for_the_standings(tmp_path: Path) -> None:
    def crash(turn: Turn) -> str:
        raise RuntimeError("no answer")

    game = games.get("iterated-prisoners-dilemma")
    seats = [LocalSeat(crash, name="crasher", threaded=False), LocalSeat(lambda turn: "cooperate", name="nice", threaded=False)]
    result = trio.run(lambda: play_match(game, seats, config={"rounds": 1}))
    store = Store(tmp_path / "arena.db")
    store.finish_match(result, {"caller_key": "cup/ipd/1", "tournament": "cup"})
    scheduled = ScheduledMatch("cup/ipd/1", 1, "iterated-prisoners-dilemma", {"rounds": 1}, ("crasher", "nice"), 0)
    played = _recorded(store, scheduled)
    assert played is not None and played.returns is not None and played.forfeit_seat == 0
    assert points(played.returns, played.forfeit_seat) == [0.0, 1.0]


def test_two_runs_of_one_tournament_at_once_store_each_match_once(tmp_path: Path) -> None:
    """A second run started before the first ended (a command run twice) plays what the first
    has not stored yet; a match stored by the other while it was being played is not stored
    again (it would count twice in the ratings)."""
    config = load(cup(tmp_path))
    db = tmp_path / "arena.db"
    Store(db).close()

    async def twice() -> list[Any]:
        summaries: list[Any] = []

        async def one() -> None:
            summaries.append(await run_tournament_async(config, db))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one)
            nursery.start_soon(one)
        return summaries

    summaries = trio.run(twice)
    keys = finished_keys(db)
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 20
    assert sum(s.played for s in summaries) == 20 and sum(s.played + s.skipped for s in summaries) == 40


def test_a_void_match_says_why_so_that_one_a_rerun_cannot_help_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with void matches said only how many, and to run again: for a match that reaches
    max_steps, or a game that faults, running again voids it again."""
    config = parse(
        {
            "name": "faulty",
            "format": "round-robin",
            "games_per_pairing": 1,
            "games": [{"name": "nim", "participants": ["random", "nim-optimal"]}],
        }
    )
    state = type(games.get("nim").new({}, 0))

    def faulty_step(self: Any, actions: Any) -> Any:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(state, "step", faulty_step)
    summary = run_tournament(config, tmp_path / "arena.db")
    assert summary.voided == 1 and summary.void_details == ["engine fault: RuntimeError: engine bug"]


def test_a_game_that_cannot_set_up_is_loaded_and_played_void_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tournament file's check set the game up, so the run failed with the plugin's own
    words, "boom in _setup", naming no game (found by a QA helper reviewing the change)."""
    state = type(games.get("nim").new({}, 0))

    def broken_setup(self: Any) -> None:
        raise RuntimeError("boom in _setup")

    monkeypatch.setattr(state, "_setup", broken_setup)
    config = parse(
        {
            "name": "unset",
            "format": "round-robin",
            "games_per_pairing": 1,
            "games": [{"name": "nim", "participants": ["random", "nim-optimal"]}],
        }
    )
    summary = run_tournament(config, tmp_path / "arena.db")
    assert summary.voided == 1 and summary.void_details == [
        "engine fault: nim could not set up the match: RuntimeError: boom in _setup"
    ]

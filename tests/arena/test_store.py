"""The store's listings and schema versions, on a real SQLite file."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import sqlite_utils
import trio

import games
from arena.match import MatchResult, play_match
from arena.seats import LocalSeat
from arena.store import MIGRATIONS, READABLE_FROM, Store, StoreError, _json_strings, regrouped, serving_lock
from bots.registry import make_bot


def store_matches(store: Store, game: str, seeds: range) -> list[str]:
    ids = []
    for seed in seeds:
        seats = [LocalSeat(make_bot("random", game, seat), name=f"bot{seat}") for seat in range(2)]
        result = trio.run(lambda seats=seats, seed=seed: play_match(games.get(game), seats, seed=seed))
        store.finish_match(result)
        ids.append(result.match_id)
    return ids


def walk(store: Store, page: int, **filters: str) -> list[str]:
    """Every listed id, page by page, each page starting after the last id of the one before."""
    seen: list[str] = []
    while True:
        listed = [m["id"] for m in store.matches(limit=page, before=seen[-1] if seen else None, **filters)]
        seen += listed
        if len(listed) < page:
            return seen


def test_pages_walk_every_match_newest_first_once_even_with_equal_times(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    ids = store_matches(store, "tic-tac-toe", range(7)) + store_matches(store, "kuhn-poker", range(3))
    store.conn.execute("UPDATE matches SET created_at = 100.0 WHERE id IN (?, ?, ?, ?)", tuple(ids[1:5]))
    newest_first = [m["id"] for m in store.matches(limit=1000)]
    assert sorted(newest_first) == sorted(ids)
    for page in (1, 2, 3, 10):
        assert walk(store, page) == newest_first
    assert walk(store, 2, game="kuhn-poker") == [m for m in newest_first if m in ids[7:]]


def test_a_match_stored_during_the_walk_does_not_shift_the_pages(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    store_matches(store, "nim", range(5))
    first = [m["id"] for m in store.matches(limit=2)]
    store_matches(store, "nim", range(5, 6))  # newer than every listed one: an offset would repeat a row
    rest = [m["id"] for m in store.matches(limit=10, before=first[-1])]
    assert len(first + rest) == len(set(first + rest)) == 5


def sqlite_work(store: Store, listing: Callable[[], object]) -> int:
    """SQLite virtual-machine steps (in hundreds) a listing takes: a measure of work that,
    unlike time, does not vary from run to run."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    store.conn.set_progress_handler(count, 100)
    try:
        listing()
    finally:
        store.conn.set_progress_handler(None, 0)
    return steps


def test_a_page_of_one_bots_matches_costs_the_page_not_all_its_matches(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """Filtering by bot read and sorted every match of the bot for each page, so walking a
    busy bot's history took time quadratic in its matches."""
    store = Store(tmp_path / "arena.db")
    with store.atomic():
        for index in range(2000):
            players = ["busy", "busy"] if index % 100 == 0 else ["busy", f"other{index % 3}"]
            store.finish_match(match_record("nim", players, [1.0, -1.0]))
    assert sqlite_work(store, lambda: store.matches(bot="busy", limit=10)) < 5 * sqlite_work(
        store, lambda: store.matches(limit=10)
    )
    newest_first = walk(store, 1000)
    assert walk(store, 300, bot="busy") == newest_first  # a self-play match is listed once
    other1 = [m for m in newest_first if "other1" in store.match(m, turns=False)["players"]]  # type: ignore[index]
    assert len(other1) == 660 and walk(store, 7, bot="other1") == other1


def test_whether_a_deal_is_still_to_play_costs_the_same_in_a_big_store(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """The server asks this after every match it stores. Counting an ungrouped match's
    group read every finished match through the status index, so a busy server's event
    loop spent most of its time here once the store held a few thousand matches."""
    store = Store(tmp_path / "arena.db")
    first = match_record("nim", ["a", "b"], [1.0, -1.0])
    store.finish_match(first)
    small = sqlite_work(store, lambda: store.deals_to_play([first.match_id]))
    with store.atomic():
        for _ in range(3000):
            store.finish_match(match_record("nim", ["a", "b"], [1.0, -1.0]))
    assert store.deals_to_play([first.match_id]) == set()
    assert sqlite_work(store, lambda: store.deals_to_play([first.match_id])) <= small + 2


def test_reads_cost_their_answer_not_the_size_of_the_store(tmp_path: Path, match_record: Callable[..., MatchResult]) -> None:
    """Without statistics SQLite took an index on (status, seed) for every ``status = ?`` and
    read every finished match: a cooperative group's teams (after each of its matches), a page
    of finished or live matches. A bot that seldom played had every match of the store walked
    for a page of its own, and /api/bots counted every seat."""

    def filled(name: str, matches: int) -> tuple[Store, dict[str, Callable[[], object]]]:
        store = Store(tmp_path / f"{name}.db")
        for bot in ("rare", "busy", "other"):
            store.register_bot(bot)
        with store.atomic():
            store.finish_match(match_record("nim", ["rare", "other"], [1.0, -1.0]))
            store.finish_match(match_record("nim", ["rare", "rare"], [1.0, -1.0]))
            for index in range(matches):
                store.finish_match(match_record("nim", ["busy", f"other{index % 7}"], [1.0, -1.0]))
                store.finish_match(
                    match_record("coordination", ["busy", "other"], [1.0, 1.0]), {"group_id": f"g{index}", "group_size": 2}
                )
        store.open_match(
            {"id": "live", "game": "nim", "variant": "nim", "config": {}, "seed": 1, "players": ["busy", "other"],
             "clock": {}, "source": "server", "created_at": 0.0}
        )  # fmt: skip
        last = match_record("coordination", ["other", "busy"], [1.0, 1.0])
        return store, {
            "a group's last match, rated": lambda: store.finish_match(last, {"group_id": "g0", "group_size": 2}),
            "a page of finished matches": lambda: store.matches(status="finished", limit=10),
            "the live matches": lambda: store.matches(status="live"),
            "a page of a bot that seldom played": lambda: store.matches(bot="rare"),
            "a page of an unknown bot": lambda: store.matches(bot="nobody"),
            "the bots": store.bots,
        }

    small, small_reads = filled("small", 20)
    big, big_reads = filled("big", 2000)
    for name, read in small_reads.items():
        assert sqlite_work(big, big_reads[name]) <= sqlite_work(small, read) + 2, name
    assert [m["players"] for m in big.matches(bot="rare")] == [["rare", "rare"], ["rare", "other"]]
    assert [m["id"] for m in big.matches(status="live")] == ["live"]
    assert {bot["name"]: bot["matches"] for bot in big.bots()} == {"busy": 4002, "other": 2003, "rare": 2}


def test_a_bots_match_count_counts_a_self_play_match_once(tmp_path: Path, match_record: Callable[..., MatchResult]) -> None:
    """/api/bots counted a seat, not a match: a bot that played itself once had two matches."""
    store = Store(tmp_path / "arena.db")
    for name in ("solo", "other", "idle"):
        store.register_bot(name)
    store.finish_match(match_record("tic-tac-toe", ["solo", "solo"], [1.0, -1.0]))
    store.finish_match(match_record("tic-tac-toe", ["solo", "other"], [1.0, -1.0]))
    assert {bot["name"]: bot["matches"] for bot in store.bots()} == {"idle": 0, "other": 1, "solo": 2}
    assert len(store.matches(bot="solo")) == 2


def test_a_match_opened_live_gets_its_seats_results_written_in_place(
    tmp_path: Path, match_record: Callable[..., MatchResult]
) -> None:
    """The server opens a match with its seats and fills them in at the end. INSERT OR REPLACE
    deleted each seat and put it back, moving it in every index of the seats (a fifth of the
    pages a match wrote); the results must still reach the seats the leaderboard counts."""
    store = Store(tmp_path / "arena.db")
    result = match_record("tic-tac-toe", ["cross", "nought"], [1.0, -1.0])
    store.open_match(
        {"id": result.match_id, "game": "tic-tac-toe", "variant": "tic-tac-toe", "config": result.config, "seed": 0,
         "players": result.players, "clock": {}, "source": "server", "created_at": 5.0}
    )  # fmt: skip
    seats = "SELECT rowid, seat, bot, score, outcome, rank, created_at FROM seats ORDER BY seat"
    opened = [tuple(row) for row in store.conn.execute(seats)]
    store.finish_match(result)
    finished = [tuple(row) for row in store.conn.execute(seats)]
    assert [row[0] for row in finished] == [row[0] for row in opened]  # the same rows, not new ones
    assert [row[1:] for row in finished] == [(0, "cross", 1.0, "win", 1, 5.0), (1, "nought", -1.0, "loss", 2, 5.0)]


def test_paging_from_an_unknown_match_is_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    with pytest.raises(StoreError, match="no match 'nope' to list the matches before"):
        store.matches(before="nope")


def set_version(db: Path, version: int) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE schema_version SET version = ?", (version,))
    conn.close()


def older_store(db: Path, version: int) -> None:
    """A store as an arena of schema ``version`` left it: two bots, a self-play match, a match
    between them and one still live (with no seats' start times nor bots' match counts)."""
    conn = sqlite3.connect(db, isolation_level=None)
    database = sqlite_utils.Database(conn)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (?)", (version,))
    for migration in MIGRATIONS[:version]:
        migration(database)
    conn.executemany("INSERT INTO bots (name, token_hash, created_at) VALUES (?, 'h', 0)", [("solo",), ("other",)])
    for id, status, created, players in [
        ("m1", "finished", 1.0, ["solo", "solo"]),
        ("m2", "finished", 2.0, ["solo", "other"]),
        ("m3", "live", 3.0, ["other", "solo"]),
    ]:
        conn.execute(
            "INSERT INTO matches (id, game, variant, config, seed, players, status, source, created_at)"
            " VALUES (?, 'nim', 'nim', '{}', 7, ?, ?, 'server', ?)",
            (id, json.dumps(players), status, created),
        )
        conn.executemany("INSERT INTO seats (match_id, seat, bot) VALUES (?, ?, ?)", [(id, s, b) for s, b in enumerate(players)])
    conn.executemany(  # one of m1's between m2's: nothing kept turns of a match together then
        "INSERT INTO turns (match_id, seat, step, attempt, action, accepted, format_error) VALUES (?, ?, ?, 0, ?, 1, 0)",
        [("m2", 0, 0, "take 1"), ("m1", 0, 0, "take 2"), ("m2", 1, 1, "take 3")],
    )
    conn.close()


def test_a_store_an_older_server_serves_is_not_upgraded_under_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A command of a newer arena (a bot registered with --db) upgraded the store while a server
    of the older one served it, which went on writing rows of its own schema: miscounted
    matches, and a bot's pages listing some twice (found by a QA helper)."""
    db = tmp_path / "arena.db"
    older_store(db, READABLE_FROM)
    hold = "import fcntl, sys, time; f = open(sys.argv[1], 'ab'); fcntl.flock(f, fcntl.LOCK_EX); print(flush=True); time.sleep(9)"
    # an older server holds its lock as ours does: an flock on the store's file
    served = subprocess.Popen([sys.executable, "-c", hold, str(db)], stdout=subprocess.PIPE)
    try:
        assert served.stdout is not None and served.stdout.readline() == b"\n"
        with pytest.raises(
            StoreError, match=r"served by an arena server of an older release .* stop it before this arena upgrades"
        ):
            Store(db)
        assert Store(db, read_only=True).schema_version() == READABLE_FROM  # reading it is fine
    finally:
        served.kill()
        served.wait()
    with caplog.at_level(logging.WARNING, logger="arena.store"):
        Store(db).close()  # its server gone: upgraded, and said so
    assert f"from schema version {READABLE_FROM} to {len(MIGRATIONS)}: an older arena cannot open it after" in caplog.text
    caplog.clear()
    with serving_lock(db), caplog.at_level(logging.WARNING, logger="arena.store"):
        Store(db).close()  # served by this process, as the server's own writer is: and current, so quiet
    assert caplog.text == ""


def test_a_store_of_an_older_readable_schema_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    older_store(db, READABLE_FROM)
    for read_only, version in ((True, READABLE_FROM), (False, len(MIGRATIONS))):
        store = Store(db, read_only=read_only)
        assert store.schema_version() == version
        assert [m["id"] for m in store.matches()] == ["m3", "m2", "m1"]
        assert [m["id"] for m in store.matches(bot="solo")] == ["m3", "m2", "m1"]
        assert [m["id"] for m in store.matches(bot="solo", before="m2")] == ["m1"]
        assert [m["id"] for m in store.matches(bot="other", status="finished")] == ["m2"]
        assert [m["id"] for m in store.matches(status="live")] == ["m3"]
        assert {bot["name"]: bot["matches"] for bot in store.bots()} == {"other": 2, "solo": 3}
        assert store.deals_to_play(["m1", "m2"]) == {"m1", "m2"}  # m3 deals from their seed still
        assert [turn["action"] for turn in store.match("m2")["turns"]] == ["take 1", "take 3"]
        assert [turn["action"] for turn in store.match("m1")["turns"]] == ["take 2"]
        assert store.match("m3")["turns"] == []
        store.close()
    writer = Store(db)
    indexes = {row[0] for row in writer.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"matches_by_created", "matches_by_game_created", "matches_live", "seats_by_bot_created"} <= indexes
    assert "seats_by_bot" not in indexes  # a second index of a bot's seats, written and never read
    assert "rating_history_by_match" not in indexes  # a random match id: a page of its own for each rating
    assert "turns_by_match" not in indexes  # likewise for each match's turns, found by their ids now
    assert "first_turn" not in writer.match("m2", turns=False)  # where its turns lie is no fact of the match
    assert [row[2] for row in writer.conn.execute("PRAGMA index_info(rating_history_by_variant)")] == ["variant", "at"]
    assert dict(writer.conn.execute("SELECT match_id, created_at FROM seats WHERE seat = 1").fetchall()) == {
        "m1": 1.0,
        "m2": 2.0,
        "m3": 3.0,
    }
    assert writer.void_live_matches("restart") == 1 and writer.deals_to_play(["m1", "m2"]) == set()
    writer.close()


@pytest.mark.parametrize(
    ("version", "says"),
    [
        (READABLE_FROM - 1, "older than this arena reads .* open it once with a command that writes to it"),
        (len(MIGRATIONS) + 1, "newer than this arena"),
    ],
)
def test_a_read_only_open_refuses_a_schema_it_cannot_read(tmp_path: Path, version: int, says: str) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    set_version(db, version)
    with pytest.raises(StoreError, match=says):
        Store(db, read_only=True)


def test_a_read_only_store_open_while_a_writer_comes_and_goes_reads_what_it_committed(tmp_path: Path) -> None:
    """Opened with no writer about, the store was read as an immutable file: what a writer then
    committed and checkpointed into it went unseen, and pages rewritten under a read made
    the store look corrupt ("database disk image is malformed")."""
    db = tmp_path / "arena.db"
    Store(db).close()
    reader = Store(db, read_only=True)
    assert reader.bots() == []
    writer = Store(db)
    for index in range(50):
        writer.register_bot(f"bot-{index}")
    writer.close()
    assert len(reader.bots()) == 50
    reader.close()


READ_ONLY_MOUNT = """
mount --bind "$1" "$2" && mount -o remount,ro,bind "$2" || exit 77
exec "$3" -c 'import sys; from arena.store import Store; print(len(Store(sys.argv[1], read_only=True).bots()))' "$2/arena.db"
"""


def test_a_store_on_a_read_only_file_system_is_still_read(tmp_path: Path) -> None:
    """There SQLite can make no -wal or -shm file for a reader (nor can any writer): the file
    is read as immutable."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a folder read-only")
    stored, mounted = tmp_path / "stored", tmp_path / "mounted"
    stored.mkdir()
    mounted.mkdir()
    writer = Store(stored / "arena.db")
    writer.register_bot("kept")
    writer.close()
    command = ["unshare", "--mount", "sh", "-c", READ_ONLY_MOUNT, "sh", str(stored), str(mounted), sys.executable]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if done.returncode == 77 or "unshare failed" in done.stderr:
        pytest.skip(f"cannot mount a folder read-only here: {done.stderr.strip()}")
    assert (done.returncode, done.stdout.strip()) == (0, "1"), done.stderr
    assert sorted(path.name for path in stored.iterdir()) == ["arena.db"]


def rollback_journal_file(db: Path, make: Callable[[sqlite3.Connection], None]) -> bytes:
    """An SQLite file in the default (rollback journal) mode, as a backup copy or another program leaves one."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=DELETE")
    with conn:
        make(conn)
    conn.close()
    return db.read_bytes()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda conn: conn.execute("CREATE TABLE notes (text TEXT)"), "not an arena store"),
        (lambda conn: conn.execute("UPDATE schema_version SET version = ?", (len(MIGRATIONS) + 1,)), "newer than this arena"),
    ],
)
def test_a_writer_refusing_a_file_leaves_it_byte_for_byte_as_it_was(
    tmp_path: Path, make: Callable[[sqlite3.Connection], None], says: str
) -> None:
    db = tmp_path / "arena.db"
    if "newer" in says:
        Store(db).close()
    before = rollback_journal_file(db, make)
    with pytest.raises(StoreError, match=says):
        Store(db)
    assert db.read_bytes() == before  # it was switched to WAL: other programs then found their file changed


def hold_for_serving(path: Path) -> None:
    with serving_lock(path):
        pass


def read_only(path: Path) -> None:
    Store(path, read_only=True).close()


@pytest.mark.parametrize("opens", [Store, read_only, hold_for_serving])
@pytest.mark.parametrize(
    ("make", "said"),
    [
        (os.mkfifo, r"cannot use .*given as a store: it is not a regular file"),
        (os.mkdir, r"given is a folder, not a store; give the store's file, such as .*given/arena\.db"),
    ],
    ids=["fifo", "folder"],
)
def test_a_path_that_is_no_plain_file_is_refused_in_words_and_nothing_is_left_beside_it(
    tmp_path: Path, opens: Callable[[Path], object], make: Callable[[Path], None], said: str
) -> None:
    """`--db /dev/null` was opened by SQLite, which failed with "disk I/O error" and left
    /dev/null-journal behind, and a folder was "disk I/O error" or "unable to open database
    file" as the command went (found by QA); a FIFO held `arena serve` for ever, waiting for a reader."""
    given = tmp_path / "given"
    make(given)
    with pytest.raises(StoreError, match=said):
        opens(given)
    assert [path.name for path in tmp_path.iterdir()] == ["given"]


def test_a_key_reused_in_another_group_says_both_groups_in_words() -> None:
    """A group given with no size was said as "group 'g' of None"."""
    assert regrouped({"group_id": "g", "group_size": 2}, "g", 2) is None
    said = regrouped({"group_id": "g", "group_size": 2}, "g", None)
    assert said is not None and "was in group 'g' of 2, and this one is in group 'g' with no size:" in said
    said = regrouped({"group_id": None, "group_size": None}, "h", 4)
    assert said is not None and "was in no group, and this one is in group 'h' of 4:" in said


def test_a_match_opened_under_a_key_made_in_another_group_is_refused(tmp_path: Path) -> None:
    """The server looked before it reserved the match, and two requests under one key at once
    both looked first: the second was answered with the first's match, of another group (found by QA)."""
    store = Store(tmp_path / "arena.db")

    def row(match_id: str, group_size: int) -> dict[str, object]:
        return {"id": match_id, "game": "nim", "variant": "nim", "config": {}, "seed": 1, "players": ["a", "b"],
                "clock": {}, "source": "server", "created_at": 0.0, "caller_key": "k", "group_id": "g",
                "group_size": group_size}  # fmt: skip

    assert store.open_match(row("m1", 2)) is None
    assert store.open_match(row("m2", 2)) == "m1"
    with pytest.raises(StoreError, match="was in group 'g' of 2, and this one is in group 'g' of 3") as refused:
        store.open_match(row("m3", 3))
    assert refused.value.kind == "schedule" and store.count("matches") == 1


def test_the_wal_a_long_read_held_back_is_cut_down_once_checkpointed(tmp_path: Path) -> None:
    """It was never given back while the server ran: 176 MB after a busy hour (found by QA)."""
    from arena.store import WAL_KEPT_BYTES

    db = tmp_path / "arena.db"
    store = Store(db)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM matches").fetchone()  # an export's long read: no checkpoint past it
    for i in range(2_500):
        store.conn.execute("INSERT INTO meta VALUES (?, ?)", (f"filler-{i}", "x" * 10_000))
    assert (db.parent / "arena.db-wal").stat().st_size > WAL_KEPT_BYTES
    reader.rollback()
    reader.close()
    store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    store.conn.execute("INSERT INTO meta VALUES ('after', 'the checkpoint')")
    assert (db.parent / "arena.db-wal").stat().st_size <= WAL_KEPT_BYTES
    store.close()


def test_the_wal_is_checkpointed_once_it_holds_what_it_is_cut_down_to(tmp_path: Path) -> None:
    """Not at SQLite's 1,000 pages (4 MB): each checkpoint copies the pages every match
    rewrites again, a tenth of the store writer's time a match."""
    from arena.store import WAL_KEPT_BYTES

    db = tmp_path / "arena.db"
    store = Store(db)
    wal = db.parent / "arena.db-wal"
    written = 0
    while written < WAL_KEPT_BYTES // 2:  # each insert its own transaction, as the writer's batches are
        store.conn.execute("INSERT INTO meta VALUES (?, ?)", (f"filler-{written}", "x" * 10_000))
        written += 10_000
    assert wal.stat().st_size > WAL_KEPT_BYTES // 2  # SQLite's default checkpointed at 4 MB and started over
    while written < 2 * WAL_KEPT_BYTES:
        store.conn.execute("INSERT INTO meta VALUES (?, ?)", (f"filler-{written}", "x" * 10_000))
        written += 10_000
    assert wal.stat().st_size < WAL_KEPT_BYTES + 64 * 1024  # checkpointed, and started over
    store.close()


def test_a_new_store_and_its_wal_are_readable_by_their_owner_alone(tmp_path: Path) -> None:
    """With the umask's 0644 any account read the seeds of live matches, which deal their
    hidden cards, and the token hashes (found by QA). A file already there keeps its mode."""
    previous = os.umask(0o022)
    try:
        store = Store(tmp_path / "arena.db")
        store.register_bot("owner")
        modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()}
        store.close()
        shared = tmp_path / "shared.db"
        shared.touch(mode=0o640)
        Store(shared).close()
        with serving_lock(tmp_path / "served.db"):  # as arena serve opens a new store: the lock first (found by a QA helper)
            Store(tmp_path / "served.db").close()
        # a link to a store still to be made: O_EXCL refused the link, and SQLite made its target 0644 (found by a review)
        (tmp_path / "link.db").symlink_to(tmp_path / "target.db")
        Store(tmp_path / "link.db").close()
    finally:
        os.umask(previous)
    assert modes == {"arena.db": 0o600, "arena.db-wal": 0o600, "arena.db-shm": 0o600}
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "served.db").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "target.db").stat().st_mode) == 0o600


@pytest.mark.parametrize("name", ["admin", "admin.", "admin_", "a-d-m-i-n"])
def test_a_name_that_reads_as_the_admin_is_refused(tmp_path: Path, name: str) -> None:
    """'admin.' registered and looked like the admin in a lobby (found by QA); 'administrator' is a name of its own."""
    store = Store(tmp_path / "arena.db")
    with pytest.raises(StoreError, match="reserved for the server's admin session") as refused:
        store.register_bot(name)
    assert refused.value.kind == "exists"
    store.register_bot("administrator")


def test_a_game_config_is_checked_against_the_matches_of_its_own_label_voided_ones_aside(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    nim = games.get("nim").spec.default_config.to_dict()
    seats = [LocalSeat(make_bot("random", "nim", seat), name=f"bot{seat}") for seat in range(2)]
    for tournament, key, status in (("t", "t/a/rr/g0", "finished"), ("t", "t/b/rr/g0", "void"), ("t2", "t2/b/rr/g0", "finished")):
        result = trio.run(lambda: play_match(games.get("nim"), seats))
        result.status = status
        store.finish_match(result, {"tournament": tournament, "caller_key": key})
    other = {**nim, "heaps": [1, 2]}
    store.seed_salt("t", configs={"a": nim, "b": other, "ab": other})  # b: only a void match; t2's are t2's
    with pytest.raises(StoreError, match=r"^t/a/rr/g0 was played with heaps=\[3, 4, 5\]; the file now says heaps=\[1, 2\]"):
        store.seed_salt("t", configs={"a": other})
    store.close()


def test_a_schedule_is_fixed_by_the_tournaments_first_match_not_by_a_run_that_played_none(tmp_path: Path) -> None:
    """A run stopped before its first match (a participant's name taken on the server) had fixed
    its schedule, and the file that followed the advice given (remote:NAME) was refused."""
    store = Store(tmp_path / "arena.db")
    salt = store.seed_salt("cup", "first schedule")
    assert store.seed_salt("cup", "second schedule") == salt
    seats = [LocalSeat(make_bot("random", "nim", seat), name=f"bot{seat}") for seat in range(2)]
    store.finish_match(trio.run(lambda: play_match(games.get("nim"), seats)), {"tournament": "cup"})
    with pytest.raises(StoreError, match="first run with another schedule") as refused:
        store.seed_salt("cup", "first schedule")
    assert refused.value.kind == "schedule" and store.seed_salt("cup", "second schedule") == salt
    store.close()


@pytest.mark.parametrize("items", [["a1", "b2"], [], ['say "é"\n', "\u2603\x00"], ("c3",), [1, "d4"]])
def test_legal_actions_are_written_as_json_writes_them(items: Sequence[object]) -> None:
    assert _json_strings(items) == json.dumps(list(items))

"""The durable store: bots, matches, seats and turns in one SQLite file (WAL).

SQLite through sqlite-utils is the source of truth. The server writes through one writer
(``arena.store_writer``: a process fed by a trio task), so writes never block the event loop
and never race; readers open their own connections. A finished match and all its
turns are committed in one transaction before anyone is told the result, and matches
still live when a server died are voided at the next start, never half-recorded.

Schema changes go through ``MIGRATIONS``, keyed by the ``schema_version`` table.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import sqlite_utils

import games
from arena.match import TURN_FIELDS, MatchResult, TurnRecord, turn_values
from arena.ratings.trueskill import DuplicateMatch, Rating, duplicate_ranks, ranks_from_returns, rate_match
from games.api import make_config

T = TypeVar("T")

log = logging.getLogger(__name__)

LIVE, FINISHED, VOID = "live", "finished", "void"
ADMIN_KEY = "admin_token_hash"
ADMIN = "admin"
"""The name the admin session says hello with: a bot under it could never log in."""
BOT_NAME_PATTERN = "lowercase letters, digits, '-', '_' and '.', 1 to 64 characters, starting with a letter or digit"


class StoreError(Exception):
    """A request the store cannot honour; the message says why, ``kind`` what went wrong:
    "exists" (a name taken), "unknown" (no such bot), "invalid" (a bad name), "schema" (not
    a store this arena can use), "busy" (another server serves it), "schedule" (a tournament
    or a key asked under another schedule than it was first made with)."""

    def __init__(self, message: str, kind: str = "invalid") -> None:
        super().__init__(message)
        self.kind = kind


def hash_token(token: str) -> str:
    """Tokens are 32 random bytes, so one SHA-256 is enough: no dictionary to attack."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token_hash: str | None, token: str) -> bool:
    """Whether ``token`` is the one ``token_hash`` was made of (None: there is none), in
    constant time."""
    return token_hash is not None and hmac.compare_digest(token_hash, hash_token(token))


def new_token() -> str:
    """32 random bytes behind a fixed prefix: a bare url-safe token starts with '-' one time
    in 32, and command lines (`--token -x...`) would then read it as an option."""
    return "arena_" + secrets.token_urlsafe(32)


def valid_bot_name(name: str) -> bool:
    return (
        0 < len(name) <= 64
        and name[0].isalnum()
        and all(c.isdigit() or c in "-_." or (c.isalpha() and c.islower()) for c in name)
        and name.isascii()
    )


_PUNCTUATION = str.maketrans("", "", "-_.")


def check_new_bot_name(name: str) -> None:
    """Refuse a name no bot may be registered under, before a store is opened (or made) for it."""
    if not valid_bot_name(name):
        raise StoreError(f"bad bot name {name!r}: use {BOT_NAME_PATTERN}")
    if name.translate(_PUNCTUATION) == ADMIN:  # "admin." or "a-d-m-i-n" would pass for it in a lobby
        raise StoreError(
            f"'{ADMIN}' is reserved for the server's admin session, and names read as it; name the bot otherwise", "exists"
        )


def regrouped(found: Mapping[str, Any], group: str | None, size: int | None) -> str | None:
    """Why a match made before under a key cannot stand for one asked now in another duplicate
    group, or one of another size (None if it can). A tournament rerun with more games per
    pairing, or more participants, put a deal already shown (its group complete, its cards
    public) into a group still to be played: its players would know each other's cards."""
    if (found.get("group_id"), found.get("group_size")) == (group, size):
        return None
    was, now = _grouping(found.get("group_id"), found.get("group_size")), _grouping(group, size)
    return (
        f"the match made under this key was in {was}, and this one is in {now}: the tournament's schedule changed"
        " (games per pairing, participants); give it a new name to play the new schedule"
    )


def _grouping(group: str | None, size: int | None) -> str:
    if not group:
        return "no group"
    return f"group {group!r} with no size" if size is None else f"group {group!r} of {size}"


LABEL_RULE = "a name of printable characters, not blank, without '/'"


def valid_label(label: str) -> bool:
    """Whether a tournament's name or game label can be the one part of its matches' keys that
    it is (``tournament/label/...``), by ``LABEL_RULE``: label ``ipd/rr`` met label ``ipd``'s
    keys, ``""`` escaped the config check (``Store.seed_salt``), and a name with a line break
    broke the summary line and every key (found by a QA helper)."""
    return bool(label.strip()) and "/" not in label and label.isprintable()


CONFIG_CHANGE_REMEDY = "give the changed game a label of its own (or the tournament a new name) to play it"


def config_change(was: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """What differs between a game config a tournament's match was played with and the one its
    file now gives, key by key (``was played with rounds=10; the file now says rounds=3``)."""
    changed = sorted(key for key in was.keys() | now.keys() if was.get(key) != now.get(key))
    if not changed:
        return None
    before, after = (", ".join(f"{key}={config.get(key)}" for key in changed) for config in (was, now))
    return f"was played with {before}; the file now says {after}"


def variant_of(game: str, overrides: Mapping[str, Any]) -> str:
    """A game plus its non-default config: the unit ratings are kept per."""
    if not overrides:
        return game
    return game + json.dumps(dict(sorted(overrides.items())), separators=(",", ":"))


def _migration_1(db: sqlite_utils.Database) -> None:
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE bots (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL, created_at REAL NOT NULL, rotated_at REAL)")
    db.execute(
        """CREATE TABLE matches (
            id TEXT PRIMARY KEY, game TEXT NOT NULL, variant TEXT NOT NULL, config TEXT NOT NULL, seed INTEGER NOT NULL,
            players TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, detail TEXT, returns TEXT, outcomes TEXT,
            ranks TEXT, forfeit_seat INTEGER, max_retries INTEGER, clock TEXT, source TEXT NOT NULL,
            created_at REAL NOT NULL, ended_at REAL, tournament TEXT, round INTEGER, group_id TEXT,
            group_size INTEGER, caller_key TEXT, final_view TEXT)"""
    )
    db.execute(
        """CREATE TABLE seats (
            match_id TEXT NOT NULL REFERENCES matches(id), seat INTEGER NOT NULL, bot TEXT NOT NULL,
            score REAL, outcome TEXT, rank INTEGER, PRIMARY KEY (match_id, seat))"""
    )
    db.execute(
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY, match_id TEXT NOT NULL REFERENCES matches(id), seat INTEGER NOT NULL,
            step INTEGER NOT NULL, attempt INTEGER NOT NULL, observation TEXT, legal_actions TEXT, action TEXT,
            accepted INTEGER NOT NULL, rejection TEXT, raw TEXT, prompt TEXT, logprobs TEXT,
            format_error INTEGER NOT NULL, think_ms REAL, reward REAL, tokens_in INTEGER, tokens_out INTEGER, cost REAL)"""
    )
    db.execute("CREATE INDEX matches_by_game ON matches (game, status, ended_at)")
    db.execute("CREATE INDEX matches_by_variant ON matches (variant, status, ended_at)")
    db.execute("CREATE INDEX matches_by_key ON matches (caller_key)")
    db.execute("CREATE INDEX matches_by_tournament ON matches (tournament, round)")
    db.execute("CREATE INDEX matches_by_group ON matches (group_id)")
    db.execute("CREATE INDEX seats_by_bot ON seats (bot, match_id)")
    db.execute("CREATE INDEX turns_by_match ON turns (match_id, step, seat)")


def _migration_2(db: sqlite_utils.Database) -> None:
    """TrueSkill: the current rating per (bot, game variant) and every rating a match produced."""
    db.execute(
        """CREATE TABLE ratings (
            bot TEXT NOT NULL, variant TEXT NOT NULL, game TEXT NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL,
            matches INTEGER NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (bot, variant))"""
    )
    db.execute(
        """CREATE TABLE rating_history (
            id INTEGER PRIMARY KEY, bot TEXT NOT NULL, variant TEXT NOT NULL, match_id TEXT NOT NULL REFERENCES matches(id),
            mu REAL NOT NULL, sigma REAL NOT NULL, at REAL NOT NULL)"""
    )
    db.execute("CREATE INDEX ratings_by_game ON ratings (game, variant)")
    db.execute("CREATE INDEX rating_history_by_variant ON rating_history (variant, bot, at)")


def _migration_3(db: sqlite_utils.Database) -> None:
    """Who registered a bot, when a program did (a tournament): it may give a new token to
    its own bots but never to one a person registered (NULL)."""
    db.execute("ALTER TABLE bots ADD COLUMN owner TEXT")


def _migration_4(db: sqlite_utils.Database) -> None:
    """Newest-first listings (``/api/matches``, the spectator's stored matches) read pages in
    (created_at, id) order: without these indexes every page sorted the whole table."""
    db.execute("CREATE INDEX matches_by_created ON matches (created_at, id)")
    db.execute("CREATE INDEX matches_by_game_created ON matches (game, created_at, id)")


def _migration_5(db: sqlite_utils.Database) -> None:
    """Matches by status and seed: whether a live match still deals from an ended one's seed
    (``deals_to_play``, asked for every page of matches listed), and the live ones voided at
    every start, without reading the whole table."""
    db.execute("CREATE INDEX matches_by_status ON matches (status, seed)")


def _migration_6(db: sqlite_utils.Database) -> None:
    """Reads whose cost follows their answer, not the store (measured at 30,000 matches):

    - live matches by seed, a partial index, in place of (status, seed): without statistics
      SQLite took that index for every ``status = ?`` and read every finished match (a
      group's matches after each cooperative match, a page of finished matches, the export);
    - a bot's matches newest first: each seat carries its match's start, so a page of a bot
      that seldom played reads its own seats instead of walking every match in the store;
    - each bot's match count, kept as its matches are stored: ``/api/bots`` counted every seat.
    """
    db.execute("DROP INDEX matches_by_status")
    db.execute(f"CREATE INDEX matches_live ON matches (seed) WHERE status = '{LIVE}'")
    db.execute("ALTER TABLE seats ADD COLUMN created_at REAL")
    db.execute("UPDATE seats SET created_at = (SELECT created_at FROM matches WHERE matches.id = seats.match_id)")
    db.execute("CREATE INDEX seats_by_bot_created ON seats (bot, created_at, match_id)")
    db.execute("ALTER TABLE bots ADD COLUMN matches INTEGER NOT NULL DEFAULT 0")
    db.execute(f"UPDATE bots SET matches = ({_BOT_MATCH_COUNT.format(bot='bots.name')})")


def _migration_7(db: sqlite_utils.Database) -> None:
    """Ratings by match: a duplicate group's competitive matches are rated when the group
    completes, and one an older arena rated at its end must not be rated again then."""
    db.execute("CREATE INDEX rating_history_by_match ON rating_history (match_id)")


def _migration_8(db: sqlite_utils.Database) -> None:
    """Seats by (bot, match id) go: since 6 every read of a bot's seats takes (bot, created_at,
    match id), which holds the same, and each seat written still went into both, at a page of
    its own (a random match id): a tenth of the pages a match writes."""
    db.execute("DROP INDEX seats_by_bot")


def _migration_9(db: sqlite_utils.Database) -> None:
    """Matches waiting to be rated: a competitive match, or a completed group, whose seed a
    live match also deals from (an admin's explicit seed, twice) is rated once none does.
    ``seed`` is the one whose release rates it."""
    db.execute(
        "CREATE TABLE rating_waits (seed INTEGER NOT NULL, match_id TEXT NOT NULL REFERENCES matches(id),"
        " PRIMARY KEY (seed, match_id)) WITHOUT ROWID"
    )


def _migration_10(db: sqlite_utils.Database) -> None:
    """The rating history, written in time order, is indexed in time order: by (variant,
    time), which the report's chart reads, in place of (variant, bot, time) and (match id).
    Those put each new row on a page of its own, among one bot's rows or at a random match id:
    replaying ``bench.server``'s writes (10,000 tic-tac-toe matches), a match wrote 10.7
    pages to the log in place of 13.7, and the store writer spent 12% less time on it (the
    fastest of three replays each).

    The index by match served one question only: whether a match of a duplicate group had
    been rated at its end, as arenas did before schema 7, before its group completed. Those
    matches, in groups still incomplete, are listed once here (``rated_at_end``)."""
    db.execute("CREATE TABLE rated_at_end (match_id TEXT PRIMARY KEY REFERENCES matches(id)) WITHOUT ROWID")
    db.execute(
        "INSERT INTO rated_at_end SELECT DISTINCT h.match_id FROM rating_history h JOIN matches m ON m.id = h.match_id"
        " WHERE m.group_id != '' AND m.group_size > (SELECT COUNT(*) FROM matches g WHERE g.group_id = m.group_id"
        f" AND g.status = '{FINISHED}')"
    )
    db.execute("DROP INDEX rating_history_by_match")
    db.execute("DROP INDEX rating_history_by_variant")
    db.execute("CREATE INDEX rating_history_by_variant ON rating_history (variant, at)")


def _migration_11(db: sqlite_utils.Database) -> None:
    """A match's turns are found by the run of turn ids they were written in, kept on its row
    (``first_turn``, ``last_turn``; ``Store.turns_of``), and no longer by an index of the
    match id: a random id, which put every match's turns on a page of their own. Replaying
    ``bench.server``'s writes (10,000 tic-tac-toe matches), a match wrote 8.3 pages to the log
    in place of 10.7, and the store writer spent 5% less time on it (the fastest of three
    replays each). Turns written before this schema may lie between another match's: the
    run is read with the match id as well."""
    db.execute("ALTER TABLE matches ADD COLUMN first_turn INTEGER")
    db.execute("ALTER TABLE matches ADD COLUMN last_turn INTEGER")
    db.execute("UPDATE matches SET (first_turn, last_turn) = (SELECT MIN(id), MAX(id) FROM turns WHERE match_id = matches.id)")
    db.execute("DROP INDEX turns_by_match")


_BOT_MATCH_COUNT = "SELECT COUNT(DISTINCT match_id) FROM seats WHERE seats.bot = {bot}"
"""A bot's matches (a self-play match once), read from every seat: kept on the bot since 6."""
BOT_SEATS_FROM = 6
"""The first schema whose seats carry their match's start and whose bots their match count."""
TURN_RUNS_FROM = 11
"""The first schema whose matches carry the ids of their first and last turn."""


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (
    _migration_1,
    _migration_2,
    _migration_3,
    _migration_4,
    _migration_5,
    _migration_6,
    _migration_7,
    _migration_8,
    _migration_9,
    _migration_10,
    _migration_11,
)
"""MIGRATIONS[i] brings a store from schema version i to i + 1."""
READABLE_FROM = 3
"""The oldest schema a read-only open accepts: the migrations since add indexes and columns
that reads of an older store do without (``BOT_SEATS_FROM``, ``TURN_RUNS_FROM``), so a store
written by an older arena can still be read (ratings, a read-only server) unchanged."""


def deal_in_play(match: str) -> str:
    """An SQL condition on the ``match`` alias of ``matches``: its cards are still to be dealt
    to someone (see ``Store.deals_to_play``), so how it ended is not told yet."""
    return (
        f"(COALESCE({match}.group_size > (SELECT COUNT(*) FROM matches g INDEXED BY matches_by_group"
        f" WHERE g.group_id = {match}.group_id AND g.status = '{FINISHED}'), 0)"
        f" OR EXISTS (SELECT 1 FROM matches o WHERE o.status = '{LIVE}' AND o.seed = {match}.seed AND o.id != {match}.id))"
    )


WAL_KEPT_BYTES = 16 * 1024 * 1024


def _create_private(path: Path) -> None:
    """Make a new store file readable by its owner alone (SQLite gives its -wal and -shm the
    same mode): with the umask's 0644, any account on the machine read the seeds of live
    matches, which deal their hidden cards, and the token hashes. An existing file is left as it is."""
    # made where a link points: O_EXCL refuses a link even to nothing, and SQLite then made its target under the umask
    with contextlib.suppress(OSError):  # there already, or no such folder: SQLite says which, as before
        os.close(os.open(os.path.realpath(path), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    check_store_path(path)


def check_store_path(path: Path) -> None:
    """Refuse, in words, a store path that names no plain file. SQLite said "disk I/O error" or
    "unable to open database file" for a folder, depending on the command; it opened a device
    (``/dev/null``) and left its journal beside it, and a FIFO held the server for ever."""
    try:
        mode = path.stat().st_mode
    except OSError:  # not there: a writer makes it, a reader says so
        return
    if stat.S_ISDIR(mode):
        raise StoreError(f"{path} is a folder, not a store; give the store's file, such as {path / 'arena.db'}", "schema")
    if not stat.S_ISREG(mode):
        raise StoreError(f"cannot use {path} as a store: it is not a regular file", "schema")


def _connect(path: Path, read_only: bool) -> sqlite3.Connection:
    if read_only:
        conn = _connect_read_only(path.resolve().as_uri())  # as_uri escapes '#', '%', '?'
    else:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")  # survives a crash of the process; FULL only adds power-loss safety
        conn.execute("PRAGMA temp_store=MEMORY")  # the writer's savepoints keep their statement journals off the disk
        # the -wal grows while a long read (an export) holds its checkpoint back, and was never
        # given back while the server ran (176 MB after a busy hour): cut to this after a checkpoint
        conn.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")
        # and checkpointed only once it holds that much, not SQLite's 1,000 pages: a checkpoint
        # copies each page once however often it was rewritten since, and the pages every match
        # rewrites (its bots' ratings and index pages, the tables' last pages) were copied up to
        # four times as often: a tenth of the store writer's time a match (bench.server's matches)
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_KEPT_BYTES // page_size}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.row_factory = sqlite3.Row
    return conn


def _connect_read_only(uri: str) -> sqlite3.Connection:
    """A reader that takes part in SQLite's locking, as a writer's other readers do: it makes
    the store's -wal and -shm files if none are there (empty; they change nothing stored).
    Only where they cannot be made (a read-only folder or file system, where no writer can
    make them either) is the file read as immutable, without locks: read so beside a writer
    that came and went (``arena play --db``), whose checkpoint rewrote pages under the read,
    the store looked corrupt ("database disk image is malformed")."""
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # the files are opened at the first read
    except sqlite3.OperationalError as error:
        conn.close()
        if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_CANTOPEN:
            raise
        conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
    return conn


@contextlib.contextmanager
def serving_lock(path: Path) -> Iterator[None]:
    """Hold the store for one server at a time. A second server on the same file would take
    the first one's live matches for a crashed server's and void them as it starts (and
    again as it stops). The lock is an flock on the store file itself: SQLite locks with
    fcntl, which flock does not touch, and the system drops it when the process ends,
    even by kill -9, so a crash never leaves the store held."""
    _create_private(path)  # the lock comes first: opened by it, a new store was made with the umask's 0644
    try:
        handle = open(path, "ab")  # noqa: SIM115 (held open while serving; closed below)
    except OSError as error:
        raise StoreError(f"cannot use {path} as a store: {error.strerror}", "schema") from None
    with handle:
        if not try_flock(handle, fcntl.LOCK_EX):
            raise StoreError(
                f"another arena server is serving {path}; stop it first, or serve this store with --read-only", "busy"
            )
        with served_here(path):
            yield


_SERVED_HERE: set[Path] = set()
"""The stores this process serves (``serving_lock``): its own lock is no other server's."""


@contextlib.contextmanager
def served_here(path: Path) -> Iterator[None]:
    """Count the store at ``path`` as served by this process: its server holds the serving
    lock, here or, for the writer process, in the server that started it."""
    held = path.resolve()
    _SERVED_HERE.add(held)
    try:
        yield
    finally:
        _SERVED_HERE.discard(held)


def serves_here(path: Path) -> bool:
    return path.resolve() in _SERVED_HERE


def is_served(path: Path) -> bool:
    """Whether a server holds the store now (see ``serving_lock``)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError:
        return False
    with handle:
        return not try_flock(handle, fcntl.LOCK_SH)  # closing the file lets go of a shared lock at once


def try_flock(handle: IO[bytes], kind: int) -> bool:
    """Take an flock of ``kind`` without waiting: False when another process holds it."""
    try:
        fcntl.flock(handle, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class Store:
    """One connection to the store. Not thread-safe: the server gives it to one thread."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise StoreError(f"no store at {self.path}", "unknown")
        self.read_only = read_only
        if read_only:
            check_store_path(self.path)
        else:
            _create_private(self.path)
        try:
            self.conn = _connect(self.path, read_only)
        except sqlite3.DatabaseError as error:  # a folder, or no such folder
            raise self._unusable(error) from None
        self.db = sqlite_utils.Database(self.conn)
        try:
            self._check_schema()
        except BaseException:
            self.conn.close()
            raise

    def _check_schema(self) -> None:
        """Bring the file to this arena's schema, or (read-only) insist that it has it;
        never touch an SQLite file that some other program made."""
        try:
            version = self.version = self.schema_version()
            if version == 0 and self.db.table_names():
                raise StoreError(f"{self.path} is an SQLite database but not an arena store; name another file", "schema")
            if version > len(MIGRATIONS):
                raise StoreError(f"{self.path} has schema version {version}, newer than this arena ({len(MIGRATIONS)})", "schema")
            if not self.read_only:
                if 0 < version < len(MIGRATIONS) and not serves_here(self.path) and is_served(self.path):
                    # its server, of an older arena, would go on writing rows of its own schema
                    # into the new one: miscounted matches, a bot's pages listing some twice
                    raise StoreError(
                        f"{self.path} is served by an arena server of an older release (schema version {version});"
                        f" stop it before this arena upgrades the store to version {len(MIGRATIONS)}",
                        "busy",
                    )
                # WAL only once the file is known to be ours: the journal mode is written into
                # the file, so setting it first changed every file that was then refused
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.migrate()
                self.version = len(MIGRATIONS)
            elif version == 0:
                raise StoreError(f"{self.path} is not an arena store: it holds no tables", "schema")
            elif version < READABLE_FROM:
                raise StoreError(
                    f"{self.path} has schema version {version}, older than this arena reads ({READABLE_FROM}):"
                    " open it once with a command that writes to it (arena serve without --read-only) to upgrade it",
                    "schema",
                )
        except sqlite3.DatabaseError as error:  # not an SQLite file at all
            raise self._unusable(error) from None

    def _unusable(self, error: sqlite3.DatabaseError) -> StoreError:
        return StoreError(f"cannot use {self.path} as a store: {error}", "schema")

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """A transaction, or a savepoint inside one: undone whole if the block raises.

        Not sqlite-utils' ``atomic``: that names each savepoint afresh, so every one is a new
        statement to compile, and they push the writer's own statements out of the cache.
        SQLite resolves a repeated savepoint name to the innermost one, so one name serves
        every depth."""
        if not self.conn.in_transaction:
            # IMMEDIATE takes the write lock first (waiting up to busy_timeout): a deferred
            # transaction that read and then wrote while another process had committed would
            # fail at once with "database is locked" (a stale WAL snapshot cannot upgrade)
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.conn.rollback()
                raise
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.rollback()
                raise
            return
        self.conn.execute("SAVEPOINT store")
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:  # an error may have ended the whole transaction already
                self.conn.execute("ROLLBACK TO store")
                self.conn.execute("RELEASE store")
            raise
        self.conn.execute("RELEASE store")

    # ---- schema --------------------------------------------------------------------------

    def schema_version(self) -> int:
        if "schema_version" not in self.db.table_names():
            return 0
        row = self.conn.execute("SELECT version FROM schema_version").fetchone()
        return int(row["version"]) if row else 0

    def migrate(self) -> None:
        with self.atomic():
            if "schema_version" not in self.db.table_names():
                self.conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                self.conn.execute("INSERT INTO schema_version VALUES (0)")
            version = self.schema_version()
            if version > len(MIGRATIONS):
                raise StoreError(f"{self.path} has schema version {version}, newer than this arena ({len(MIGRATIONS)})", "schema")
            if 0 < version < len(MIGRATIONS):  # a big store takes a while, saying nothing: it seemed hung
                log.warning(
                    "upgrading the store %s from schema version %d to %d: an older arena cannot open it after;"
                    " stopped midway, it is left as it was",
                    self.path, version, len(MIGRATIONS),
                )  # fmt: skip
            for step in MIGRATIONS[version:]:
                step(self.db)
            self.conn.execute("UPDATE schema_version SET version = ?", (len(MIGRATIONS),))

    # ---- bots and tokens -----------------------------------------------------------------

    def register_bot(self, name: str, owner: str | None = None) -> str:
        """Create a bot and return its token; only the token's hash is kept. ``owner`` names
        the program registering it, so that it can later tell its own bots from others'."""
        check_new_bot_name(name)
        token = new_token()
        with self.atomic():
            if self.conn.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone():
                raise StoreError(f"a bot named {name!r} exists already (rotate its token instead)", "exists")
            self.conn.execute(  # matches: those it played in-process (arena play --db) before it was registered
                "INSERT INTO bots (name, token_hash, created_at, owner, matches) VALUES (?, ?, ?, ?, "
                f"({_BOT_MATCH_COUNT.format(bot='?')}))",
                (name, hash_token(token), time.time(), owner, name),
            )
        return token

    def rotate_token(self, name: str, owner: str | None = None) -> str:
        """A new token for ``name``; the old one stops working at once. With ``owner``, only
        for a bot that owner registered: a program never locks a bot's owner out."""
        token = new_token()
        with self.atomic():
            changed = self.conn.execute(
                "UPDATE bots SET token_hash = ?, rotated_at = ? WHERE name = ? AND (? IS NULL OR owner IS ?)",
                (hash_token(token), time.time(), name, owner, owner),
            ).rowcount
        if not changed:
            if owner is not None and self.bot_exists(name):
                raise StoreError(f"the bot {name!r} was not registered by {owner}", "exists")
            raise StoreError(f"no bot named {name!r}", "unknown")
        return token

    def authenticate(self, name: str, token: str) -> bool:
        row = self.conn.execute("SELECT token_hash FROM bots WHERE name = ?", (name,)).fetchone()
        return token_matches(None if row is None else row["token_hash"], token)

    def bot_exists(self, name: str) -> bool:
        return self.conn.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is not None

    def ensure_admin_token(self, token: str | None) -> str | None:
        """Use ``token`` as the admin token if given; otherwise make one at first start.
        Returns a newly made token (to be shown once), or None."""
        if token is not None:
            self._set_meta(ADMIN_KEY, hash_token(token))
            return None
        if self._meta(ADMIN_KEY) is not None:
            return None
        made = new_token()
        self._set_meta(ADMIN_KEY, hash_token(made))
        return made

    def is_admin_token(self, token: str) -> bool:
        stored = self._meta(ADMIN_KEY)
        return token_matches(stored, token)

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def _set_meta(self, key: str, value: str) -> None:
        with self.atomic():
            self.conn.execute(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value)
            )

    def seed_salt(
        self, tournament: str, schedule: str | None = None, configs: Mapping[str, Mapping[str, Any]] | None = None
    ) -> str:
        """The tournament's secret, which its seeds are made with (``tournaments.formats.seed_of``):
        made at its first run and kept, so a rerun deals the same cards. A tournament that has
        matches from before salts keeps none, so that its remaining deals match the first ones.
        Two runs starting at once get the same salt: the first one written wins.

        ``schedule`` (``tournaments.config.schedule_id``) is kept beside it at the first run that
        gives one; a run with another is refused (StoreError, kind "schedule") once the tournament
        has a match. Before, the new one replaces it: a run stopped before its first match (a
        participant's name taken on the server, whose remedy changes the file) fixed nothing.

        ``configs`` (each game's label and its config as the game reads it) are checked
        against the tournament's matches in the store, voided ones aside (kind "schedule"):
        checked only as each key came up, a rerun of a file with a changed config played the
        keys voided before under the new config until it reached one finished under the old,
        and the tournament was left with both, which neither file could then finish."""
        with self.atomic():
            begun = self.conn.execute("SELECT 1 FROM matches WHERE tournament = ? LIMIT 1", (tournament,)).fetchone()
            salt = self._keep_first(f"seed_salt:{tournament}", "" if begun is not None else secrets.token_hex(16))
            self._check_configs(tournament, configs or {})
            if schedule is None or self._keep_first(f"schedule:{tournament}", schedule) == schedule:
                return salt
            if begun is None:
                self._set_meta(f"schedule:{tournament}", schedule)
            else:
                raise StoreError(
                    f"tournament {tournament!r} was first run with another schedule (its format, games,"
                    " participants, games per pairing or rounds changed): give it a new name to play this"
                    " one, or put the file back as it was to finish the first",
                    "schedule",
                )
        return salt

    def _check_configs(self, tournament: str, configs: Mapping[str, Mapping[str, Any]]) -> None:
        """Refuse a game (by label, which holds no "/") whose matches under the tournament's keys,
        ``tournament/label/...``, were played with another config than ``configs`` gives it."""
        for label, wanted in configs.items():
            prefix = f"{tournament}/{label}/"
            played = self.conn.execute(  # "0" follows "/": the keys that begin with the prefix, one row a config
                "SELECT config, min(caller_key) FROM matches WHERE caller_key >= ? AND caller_key < ? AND status != ?"
                " GROUP BY config",
                (prefix, prefix[:-1] + "0", VOID),
            )
            for config, key in played:
                change = config_change(json.loads(config), wanted)
                if change is not None:
                    raise StoreError(f"{key} {change}: {CONFIG_CHANGE_REMEDY}", "schedule")

    def _keep_first(self, key: str, value: str) -> str:
        """The meta value of ``key``: ``value`` if none was kept before, else the one that was."""
        self.conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO NOTHING", (key, value))
        kept = self._meta(key)
        assert kept is not None
        return kept

    # ---- matches -------------------------------------------------------------------------

    def open_match(self, row: Mapping[str, Any]) -> str | None:
        """Record a match that starts now, as live (if the server dies, it will be voided).

        When the row has a caller key that a live or finished match already holds, nothing
        is written and that match's id is returned: creating a match is idempotent on the key.
        """
        with self.atomic():
            key = row.get("caller_key")
            # "" is a key as any other
            existing = (
                None if key is None else self.match_for_key(key, row["variant"], row.get("group_id"), row.get("group_size"))
            )
            if existing is not None:
                return str(existing["id"])
            self._insert_match({**row, "status": LIVE})
            self.conn.executemany(
                "INSERT INTO seats (match_id, seat, bot, created_at) VALUES (?, ?, ?, ?)",
                [(row["id"], seat, bot, row["created_at"]) for seat, bot in enumerate(row["players"])],
            )
            self._count_match(row["players"])
        return None

    def _count_match(self, players: Sequence[str]) -> None:
        """One more match for each registered bot among ``players`` (``bots().matches``)."""
        self.conn.executemany("UPDATE bots SET matches = matches + 1 WHERE name = ?", [(bot,) for bot in set(players)])

    def _insert_match(self, row: Mapping[str, Any]) -> None:
        columns = dict(row)
        columns["config"], columns["clock"] = json.dumps(columns["config"]), json.dumps(columns["clock"])
        columns["players"] = _json_strings(columns["players"])
        self.conn.execute(_insert_sql("matches", tuple(columns)), tuple(columns.values()))

    def match_for_key(self, key: str, variant: str, group: str | None, size: int | None) -> dict[str, Any] | None:
        """The live or finished match made under ``key``, to stand for one of ``variant`` asked
        now in ``group`` of ``size``; StoreError (kind "schedule") when it was made of another
        game or config, or in another group (``regrouped``): a caller told ``existing`` for a
        game it never asked for took that match's result for its own.
        Asked again as the match is opened: two requests under one key at once both passed
        the server's first look, and the second was given the first's match of another group."""
        found = self.find_by_key(key)
        conflict = None
        if found is not None and found["variant"] != variant:
            conflict = f"the match made under this key is {found['variant']}, and this one asks for {variant}"
        elif found is not None:
            conflict = regrouped(found, group, size)
        if conflict is not None:
            raise StoreError(f"key {key!r}: {conflict}", "schedule")
        return found

    def has_matches_of(self, game: str) -> bool:
        return self.conn.execute("SELECT 1 FROM matches WHERE game = ? LIMIT 1", (game,)).fetchone() is not None

    def find_by_key(self, key: str) -> dict[str, Any] | None:
        """The live or finished match made under a caller key; voided ones do not count."""
        row = self.conn.execute(
            "SELECT id, status, variant, group_id, group_size FROM matches WHERE caller_key = ? AND status != ?"
            " ORDER BY created_at LIMIT 1",
            (key, VOID),
        ).fetchone()
        return None if row is None else dict(row)

    def deals_to_play(self, match_ids: Iterable[str]) -> set[str]:
        """The matches among ``match_ids`` whose cards are still to be dealt to someone: their
        group (matches dealt from one seed) has fewer finished matches than its size, or a
        match live in the store deals from their seed (what a read-only server, which has no
        live matches of its own, knows of the serving one's)."""
        rows = self.conn.execute(
            f"SELECT m.id FROM matches m WHERE m.id IN (SELECT value FROM json_each(?)) AND {deal_in_play('m')}",
            (json.dumps(list(match_ids)),),
        )
        return {row[0] for row in rows}

    def finish_match(
        self, result: MatchResult, meta: Mapping[str, Any] | None = None, *, teams: str | None = None
    ) -> dict[tuple[str, str], Rating]:
        """Commit a match's result, seats, every turn and the ratings it moves in one
        transaction; returns the new ratings by (bot, variant).

        ``meta`` (tournament, round, group, caller key, source) is used when the match was
        not opened before, as for matches played in-process by ``arena play --db``. ``teams``
        is the game's ``spec.teams``, found in the game registry when not given: the server
        gives it, as the writer process does not know the games registered by hand in the
        server's."""
        with self.atomic():
            opened = self._rated_row(result.match_id)
            if opened is None:
                overrides = make_config(games.get(result.game).Config, result.config).overrides()
                self._insert_match(
                    {
                        "id": result.match_id,
                        "game": result.game,
                        "variant": variant_of(result.game, overrides),
                        "config": result.config,
                        "seed": result.seed,
                        "players": result.players,
                        "status": LIVE,
                        "max_retries": result.max_retries,
                        "clock": result.clock.times(),
                        "created_at": result.started_at,
                        "source": "local",
                        **(meta or {}),
                    }
                )
                self._count_match(result.players)
                opened = self._rated_row(result.match_id)
                assert opened is not None  # written just above
            created_at = opened["created_at"]
            first_turn, last_turn = self._insert_turns(result.match_id, result.turns)
            self.conn.execute(
                """UPDATE matches SET status = ?, reason = ?, detail = ?, returns = ?, outcomes = ?, ranks = ?,
                   forfeit_seat = ?, ended_at = ?, final_view = ?, first_turn = ?, last_turn = ? WHERE id = ?""",
                (
                    FINISHED if result.status == "finished" else VOID,
                    result.reason,
                    result.detail,
                    json.dumps(result.returns),
                    _json_strings(result.outcomes),
                    json.dumps(result.ranks),
                    result.forfeit_seat,
                    result.ended_at,
                    json.dumps(result.final_view),
                    first_turn,
                    last_turn,
                    result.match_id,
                ),
            )
            self.conn.executemany(
                # an upsert, not INSERT OR REPLACE: the row opened with the match keeps its place in the
                # seats' indexes instead of being deleted from and put back into each (a fifth of the pages
                # a match writes)
                "INSERT INTO seats (match_id, seat, bot, score, outcome, rank, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (match_id, seat) DO UPDATE SET score = excluded.score, outcome = excluded.outcome,"
                " rank = excluded.rank",
                [
                    (result.match_id, seat, bot, result.returns[seat], result.outcomes[seat], result.ranks[seat], created_at)
                    for seat, bot in enumerate(result.players)
                ],
            )
            if result.status == "finished":
                return self._rate(result, opened, teams or games.get(result.game).spec.teams)
            return self._release(result.seed)  # voided by the engine: it rates nobody, and no longer deals

    def _rated_row(self, match_id: str) -> sqlite3.Row | None:
        """What finishing a match reads of its row: when it began, and what rating it takes."""
        return self.conn.execute(
            "SELECT created_at, variant, seed, group_id, group_size FROM matches WHERE id = ?", (match_id,)
        ).fetchone()

    def _insert_turns(self, match_id: str, turns: Sequence[TurnRecord]) -> tuple[int | None, int | None]:
        """Write a match's turns; the ids of the first and last (None without turns), which
        its row keeps: one insert, by the one writer, gives them one run of ids, each one past
        the table's largest."""
        if not turns:
            return None, None
        self.conn.executemany(  # plain tuples: this runs once per match in the writer
            f"INSERT INTO turns (match_id, {', '.join(TURN_FIELDS)}) VALUES (?{', ?' * len(TURN_FIELDS)})",
            [(match_id, *_turn_row(turn)) for turn in turns],
        )
        (last,) = self.conn.execute("SELECT last_insert_rowid()").fetchone()
        return last - len(turns) + 1, last

    def turns_of(self, match: str = "m", turn: str = "t") -> str:
        """An SQL condition: the row of ``turns`` aliased ``turn`` is one of the match aliased
        ``match``'s. By the run of ids its row keeps, which SQLite reads as a range of the
        table's own key; by match id in a store older than ``TURN_RUNS_FROM``, indexed by it."""
        if self.version >= TURN_RUNS_FROM:
            return f"{turn}.id BETWEEN {match}.first_turn AND {match}.last_turn AND {turn}.match_id = {match}.id"
        return f"{turn}.match_id = {match}.id"

    # ---- ratings -------------------------------------------------------------------------

    def _rate(self, result: MatchResult, row: sqlite3.Row, game_teams: str) -> dict[tuple[str, str], Rating]:
        """Update TrueSkill in the match's own transaction; ``row`` is the match's, as ``_rated_row`` reads it.

        Competitive and mixed games rate each match by outcome or rank of return (a forfeit
        ranks last). Cooperative games have no opponent inside the match: they are rated
        when a duplicate group (matches sharing seeds, made with a group id and size)
        completes, teams ranked by score. A competitive match of a duplicate group waits for
        its group too, and then every match of it is rated in the order they began: rated
        at its end, its table's result showed on the leaderboard while the other table still
        played the same cards. For the same reason a competitive match, or a completed group,
        whose seed a live match still deals from waits for that one's end (``_rate_dealt``). A
        bot on two sides of one comparison (self-play) is not rated: TrueSkill has no meaning
        for a bot against itself.
        """
        variant, seed = row["variant"], row["seed"]
        if game_teams == "all":
            teams, ranks = self._duplicate_teams(row["group_id"], row["group_size"])
            return self._apply_ratings(teams, ranks, variant, result.game, result.match_id) | self._release(seed)
        if not row["group_id"] or not row["group_size"]:
            ranks = ranks_from_returns(result.returns, result.forfeit_seat)
            return self._rate_dealt(
                seed,
                [result.match_id],
                lambda: self._apply_ratings([(bot,) for bot in result.players], ranks, variant, result.game, result.match_id),
            )
        due = [
            match
            for match in self._completed_group(row["group_id"], row["group_size"])
            # rated at its end by an arena from before groups waited (schema 7)
            if not self.conn.execute("SELECT 1 FROM rated_at_end WHERE match_id = ?", (match["id"],)).fetchone()
        ]

        def rate_group() -> dict[tuple[str, str], Rating]:
            updated: dict[tuple[str, str], Rating] = {}
            for match in due:
                updated |= self._rate_stored(match, variant, result.game)
            return updated

        return self._rate_dealt(seed, [match["id"] for match in due], rate_group)

    def _rate_dealt(
        self, seed: int, match_ids: Sequence[str], rate_now: Callable[[], dict[tuple[str, str], Rating]]
    ) -> dict[tuple[str, str], Rating]:
        """Rate ``match_ids`` (competitive matches whose results just became final) with
        ``rate_now`` when nothing waits on ``seed``; else with what waits, in the order they
        began, once no live match deals from it (``rating_waits``). Rated at once, a table's win
        moved the winner's rating while another table still played the same cards (an admin's
        explicit seed, twice), and the leaderboard, which leaves such a match out of its counts,
        showed it in the ratings."""
        if not self._dealt_live(seed) and not self._waits_on(seed):
            return rate_now()
        self.conn.executemany("INSERT INTO rating_waits (seed, match_id) VALUES (?, ?)", [(seed, id) for id in match_ids])
        return self._release(seed)

    def _release(self, seed: int) -> dict[tuple[str, str], Rating]:
        """Once no live match deals from ``seed``, rate the matches that waited on it, in the order they began."""
        if self._dealt_live(seed) or not self._waits_on(seed):
            return {}
        waiting = self.conn.execute(
            "SELECT m.id, m.game, m.variant, m.players, m.returns, m.forfeit_seat FROM rating_waits w"
            " JOIN matches m ON m.id = w.match_id WHERE w.seed = ? ORDER BY m.created_at, m.id",
            (seed,),
        ).fetchall()
        self.conn.execute("DELETE FROM rating_waits WHERE seed = ?", (seed,))
        updated: dict[tuple[str, str], Rating] = {}
        for match in waiting:
            updated |= self._rate_stored(match, match["variant"], match["game"])
        return updated

    def _dealt_live(self, seed: int) -> bool:
        return (
            self.conn.execute(f"SELECT 1 FROM matches WHERE status = '{LIVE}' AND seed = ? LIMIT 1", (seed,)).fetchone()
            is not None
        )

    def _waits_on(self, seed: int) -> bool:
        return self.conn.execute("SELECT 1 FROM rating_waits WHERE seed = ? LIMIT 1", (seed,)).fetchone() is not None

    def _rate_stored(self, match: sqlite3.Row, variant: str, game: str) -> dict[tuple[str, str], Rating]:
        """Rate a finished match as it was stored: by rank of return, a forfeit last."""
        players, returns = json.loads(match["players"]), json.loads(match["returns"])
        ranks = ranks_from_returns(returns, match["forfeit_seat"])
        return self._apply_ratings([(bot,) for bot in players], ranks, variant, game, match["id"])

    def _apply_ratings(
        self, teams: Sequence[tuple[str, ...]], ranks: Sequence[int], variant: str, game: str, match_id: str
    ) -> dict[tuple[str, str], Rating]:
        """Rate one comparison of ``teams`` (lower rank is better) and record it against ``match_id``."""
        bots = [bot for team in teams for bot in team]
        if len(teams) < 2 or len(set(bots)) < len(bots):
            return {}
        current = {bot: self.rating(bot, variant) for bot in bots}
        rated = rate_match([[current[bot] for bot in team] for team in teams], ranks)
        now = time.time()
        updated: dict[tuple[str, str], Rating] = {}
        for team, new in zip(teams, rated, strict=True):
            for bot, rating in zip(team, new, strict=True):
                updated[(bot, variant)] = rating
                self.conn.execute(
                    """INSERT INTO ratings VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT(bot, variant) DO UPDATE SET
                       mu = excluded.mu, sigma = excluded.sigma, matches = matches + 1, updated_at = excluded.updated_at""",
                    (bot, variant, game, rating.mu, rating.sigma, now),
                )
                self.conn.execute(
                    "INSERT INTO rating_history (bot, variant, match_id, mu, sigma, at) VALUES (?, ?, ?, ?, ?, ?)",
                    (bot, variant, match_id, rating.mu, rating.sigma, now),
                )
        return updated

    def _completed_group(self, group: str, size: int) -> list[sqlite3.Row]:
        """The finished matches of a duplicate group that just completed, in the order they
        began; none before it completes, nor after (a late extra match rates nobody twice)."""
        played = self.conn.execute(
            "SELECT id, players, seed, returns, forfeit_seat FROM matches WHERE group_id = ? AND status = ?"
            " ORDER BY created_at, id",
            (group, FINISHED),
        ).fetchall()
        return played if len(played) == size else []

    def _duplicate_teams(self, group: str | None, size: int | None) -> tuple[list[tuple[str, ...]], list[int]]:
        """The teams of a just-completed duplicate group and their ranks; nothing before it completes."""
        if not group or not size:
            return [], []
        played = self._completed_group(group, size)
        if not played:
            return [], []
        group_matches = [DuplicateMatch(tuple(json.loads(m["players"])), m["seed"], json.loads(m["returns"])[0]) for m in played]
        ranks = duplicate_ranks(group_matches, size)
        if ranks is None:
            return [], []
        return list(ranks), list(ranks.values())

    def rating(self, bot: str, variant: str) -> Rating:
        row = self.conn.execute("SELECT mu, sigma FROM ratings WHERE bot = ? AND variant = ?", (bot, variant)).fetchone()
        return Rating() if row is None else Rating(row["mu"], row["sigma"])

    def ratings(self, *, game: str | None = None, variant: str | None = None) -> list[dict[str, Any]]:
        """Current ratings, best conservative skill first."""
        clause, args = where({"game = ?": game, "variant = ?": variant})
        return [dict(row) for row in self.conn.execute(f"SELECT * FROM ratings{clause} ORDER BY mu - 3 * sigma DESC", args)]

    def void_match(self, match_id: str, reason: str, turns: Sequence[TurnRecord] = ()) -> dict[tuple[str, str], Rating] | None:
        """Void a live match stopped before its end (an abort, a shutdown), with the turns it
        had played: each answer is kept, as a finished match's are, for audit. None when it was
        not live; else the ratings of what waited on its seed, rated now (``_release``)."""
        with self.atomic():
            changed = self.conn.execute(
                "UPDATE matches SET status = ?, reason = 'void', detail = ?, ended_at = ? WHERE id = ? AND status = ?",
                (VOID, reason, time.time(), match_id, LIVE),
            ).rowcount
            if not changed:
                return None
            first_turn, last_turn = self._insert_turns(match_id, turns)
            (seed,) = self.conn.execute(
                "UPDATE matches SET first_turn = ?, last_turn = ? WHERE id = ? RETURNING seed", (first_turn, last_turn, match_id)
            ).fetchone()
            return self._release(seed)

    def void_live_matches(self, reason: str) -> int:
        """Void every match still marked live: at startup after a crash, and at shutdown."""
        with self.atomic():
            seeds = [row[0] for row in self.conn.execute(f"SELECT DISTINCT seed FROM matches WHERE status = '{LIVE}'")]
            voided = self.conn.execute(
                f"UPDATE matches SET status = ?, reason = 'void', detail = ?, ended_at = ? WHERE status = '{LIVE}'",
                (VOID, reason, time.time()),
            ).rowcount
            for seed in seeds:
                self._release(seed)
            return voided

    # ---- reading -------------------------------------------------------------------------

    def match(self, match_id: str, *, turns: bool = True) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            return None
        record = _decode_match(row)
        if turns:
            sql = f"SELECT t.* FROM matches m JOIN turns t ON {self.turns_of()} WHERE m.id = ? ORDER BY t.id"
            record["turns"] = [_decode_turn(t) for t in self.conn.execute(sql, (match_id,))]
        return record

    def matches(
        self,
        *,
        game: str | None = None,
        bot: str | None = None,
        status: str | None = None,
        limit: int = 50,
        before: str | None = None,
    ) -> list[dict]:
        """Newest first, at most ``limit`` (clamped to 1..1000). ``before`` is the id of a match
        listed earlier: the page then starts after it, so passing the last id of each page
        walks the whole store, also while new matches arrive (a keyset, not an offset)."""
        after = None
        if before is not None:
            after = self.conn.execute("SELECT created_at, id FROM matches WHERE id = ?", (before,)).fetchone()
            if after is None:
                raise StoreError(f"no match {before!r} to list the matches before", "unknown")
        keyset = None if after is None else tuple(after)
        if bot is not None and self.version >= BOT_SEATS_FROM:
            # the bot's own seats, newest first, each match from its lowest seat of the bot's
            source, order = "seats s JOIN matches m ON m.id = s.match_id", "s.created_at DESC, s.match_id DESC"
            by_bot = {
                "s.bot = ?": bot,
                "NOT EXISTS (SELECT 1 FROM seats o WHERE o.match_id = s.match_id AND o.seat < s.seat AND o.bot = s.bot)": (),
                "(s.created_at, s.match_id) < (?, ?)": keyset,
            }
        else:
            source, order = "matches m", "m.created_at DESC, m.id DESC"
            by_bot = {
                # on an older store: EXISTS walks the newest-first index and stops when the page
                # is full, where id IN (the bot's matches) read and sorted all of them every page
                "EXISTS (SELECT 1 FROM seats WHERE seats.match_id = m.id AND seats.bot = ?)": bot,
                "(m.created_at, m.id) < (?, ?)": keyset,
            }
            if status == LIVE and self.version >= BOT_SEATS_FROM:
                source = "matches m INDEXED BY matches_live"  # a few live matches, not a walk of the store
        clause, args = where(
            {
                "m.game = ?": game,
                # the literal lets the partial index of live matches serve
                f"m.status = '{LIVE}'": () if status == LIVE else None,
                "m.status = ?": None if status == LIVE else status,
                **by_bot,
            }
        )
        sql = f"SELECT m.* FROM {source}{clause} ORDER BY {order} LIMIT ?"
        return [_decode_match(row) for row in self.conn.execute(sql, (*args, max(1, min(limit, 1000))))]

    def bots(self) -> list[dict[str, Any]]:
        if self.version >= BOT_SEATS_FROM:
            sql = "SELECT name, created_at, matches FROM bots ORDER BY name"
        else:  # an older store, read as it is
            sql = f"SELECT name, created_at, ({_BOT_MATCH_COUNT.format(bot='bots.name')}) AS matches FROM bots ORDER BY name"
        return [dict(row) for row in self.conn.execute(sql)]

    def count(self, table: str, **where: Any) -> int:
        clause = " AND ".join(f"{key} = ?" for key in where)
        sql = f"SELECT COUNT(*) FROM {table}" + (f" WHERE {clause}" if clause else "")
        return int(self.conn.execute(sql, tuple(where.values())).fetchone()[0])


@functools.lru_cache(maxsize=64)
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """The INSERT of a row with these columns (names come from this module, never from a client)."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def where(conditions: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """A WHERE clause of the conditions whose value is given (None leaves one out), and its
    arguments; a tuple value fills a condition with several placeholders."""
    kept = {condition: value for condition, value in conditions.items() if value is not None}
    args = [arg for value in kept.values() for arg in (value if isinstance(value, tuple) else (value,))]
    return (" WHERE " + " AND ".join(kept) if kept else "", args)


_LEGAL, _LOGPROBS = TURN_FIELDS.index("legal_actions"), TURN_FIELDS.index("logprobs")


def _turn_row(turn: TurnRecord) -> tuple[Any, ...]:
    values = list(turn_values(turn))
    if values[_LEGAL] is not None:
        values[_LEGAL] = _json_strings(values[_LEGAL])
    if values[_LOGPROBS] is not None:
        values[_LOGPROBS] = json.dumps(list(values[_LOGPROBS]))  # an array of doubles
    return tuple(values)


def _json_strings(items: Sequence[Any]) -> str:
    """``json.dumps(list(items))``, in a third of its time for strings, which every turn's
    legal actions are, and a match's players and outcomes: it runs in the store writer."""
    try:
        return "[" + ", ".join(map(json.encoder.encode_basestring_ascii, items)) + "]"
    except TypeError:  # not all strings (a game's bug): as json writes them
        return json.dumps(list(items))


def _decode_match(row: sqlite3.Row) -> dict[str, Any]:
    record = dict(row)
    for key in ("first_turn", "last_turn"):  # where its turns lie in the store, not a fact of the match
        record.pop(key, None)
    for key in ("config", "players", "returns", "outcomes", "ranks", "clock", "final_view"):
        if record.get(key) is not None:
            record[key] = json.loads(record[key])
    return record


def _decode_turn(row: sqlite3.Row) -> dict[str, Any]:
    record = dict(row)
    for key in ("legal_actions", "logprobs"):
        if record.get(key) is not None:
            record[key] = json.loads(record[key])
    record["accepted"] = bool(record["accepted"])
    record["format_error"] = bool(record["format_error"])
    return record


def is_damage(error: BaseException | None) -> bool:
    """Whether an SQLite error found the store file itself damaged (malformed pages), which
    no retry mends: some reads and writes still succeed around the damaged pages, and a
    server that said "ok" went on recording matches into it (found by a QA helper)."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return isinstance(error, sqlite3.DatabaseError) and code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def file_id(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` (device and inode), None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def side_files(path: str | Path) -> tuple[str, str, str]:
    """The files SQLite keeps beside the store at ``path`` (named after its real path)."""
    return f"{path}-wal", f"{path}-shm", f"{path}-journal"


def copy_store(store: Store, target: Path) -> None:
    """Copy ``store`` whole into ``target`` with SQLite's online backup: a consistent copy even
    while a server writes it, where ``cp`` of the file alone misses the commits still in its
    -wal (a copy taken a moment after 150 matches held 135). The copy is written beside the
    target, readable by its owner alone as every store is, and renamed over it once complete;
    a store it replaces must not be served (``is_served``)."""
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # OSError: the target's folder cannot be written
    try:
        copy = sqlite3.connect(temp)
        try:
            store.conn.backup(copy)
        finally:
            copy.close()
        for leftover in side_files(target):
            # the replaced store's own (a crashed server's -wal): SQLite would apply them to the copy
            Path(leftover).unlink(missing_ok=True)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def read(path: str | Path, query: Callable[[Store], T]) -> T:
    """Run a read on a connection of its own (for worker threads serving the HTTP API)."""
    store = Store(path, read_only=True)
    try:
        return query(store)
    finally:
        store.close()

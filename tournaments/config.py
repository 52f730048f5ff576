"""A tournament's TOML file, read and checked into a frozen config (docs/TOURNAMENTS.md is the
user's reference: every key, each format, the output).

    name = "quickstart"
    format = "round-robin"      # round-robin, swiss, gauntlet, duplicate (tables: automatic)
    games_per_pairing = 2       # duplicate: the number of deals, each played in both seat orders
    deals = "shared"            # "fresh": every game of a pair its own deal (bots that remember)
    participants = ["random"]   # bot specs, or remote:NAME (below); a game may list its own
    rounds = 3                  # swiss: rounds; tables: rounds (default: one per participant)
    challenger = "perfect"      # gauntlet: the challenger, the others are its field
    concurrency = 4             # matches played at once
    clock = { move_ms = 2000, grace_ms = 500 }
    failure = { max_retries = 2 }
    held_out_games = ["kuhn-poker"]     # game labels reported apart (below)
    held_out_opponents = ["random"]     # participants reported apart (below)

    [[games]]
    name = "tic-tac-toe"
    config = { }
    participants = ["perfect", "random", "remote:alice"]
    label = "tic-tac-toe"       # names this entry (default: the game); two configs of one game need two

A participant is a bot spec from the registry, played in this process (in-process runs;
with ``--url`` it is registered on the server as a tournament's bot and connected to it
from this process; a name already taken by a bot no tournament registered stops the run),
or ``remote:NAME``: the bot NAME registered on the server and connected by someone else. A
remote participant can only play through a server (``arena tournament run --url``). Two
spellings of one spec (``random``, ``random:``) are one participant: list it once. It plays,
and is keyed and shown, under its plain spelling (``random``), whichever the file gives.

Held-out evaluation (Melting Pot's idea: how well does an agent do with games and
co-players it was never trained with?). ``held_out_games`` lists labels of ``[[games]]``
entries kept out of training: their leaderboards are printed in a section of their own.
``held_out_opponents`` lists participants kept out of training: every other participant's
mean return against them is reported beside its mean return against the rest.

Games of more than two seats are played at rotating tables whatever the format; a table
needs a participant for every seat (one bot in two seats is self-play, not rated). In the
duplicate format the tables of a round of a cooperative game share one deal, as a group:
cooperative games are rated by comparing the teams that played one deal. Every
error names the file, the key and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import games
from arena.match import MAX_RETRIES, Clock, clock_problem
from arena.store import BOT_NAME_PATTERN, LABEL_RULE, valid_bot_name, valid_label, variant_of
from arena.toml_file import read_toml
from bots.reference.human import HumanBot
from bots.registry import BotSpecError, make_bot, parse_spec
from games.api import GameError
from games.render import count
from tournaments.formats import FORMATS

TOP_KEYS = (
    "name",
    "format",
    "games_per_pairing",
    "deals",
    "participants",
    "rounds",
    "challenger",
    "concurrency",
    "clock",
    "failure",
    "games",
    "held_out_games",
    "held_out_opponents",
)
GAME_KEYS = ("name", "config", "participants", "label")


REMOTE = "remote:"
DEALS = ("shared", "fresh")
SCHEDULE_COUNT_MOST = 10_000  # games per pairing, rounds: the schedule is built whole before the first match
SCHEDULE_MATCHES_MOST = 200_000
"""The most matches a file may schedule, all games together: each count is capped, but not
their product (30 participants with 10,000 games a pairing made 4.35 million, 3.6 GB before
the first match)."""


class TournamentConfigError(ValueError):
    """A tournament file that cannot be run: the message names the file and the key."""


def remote_name(participant: str) -> str | None:
    """The server name of a ``remote:NAME`` participant; None for a bot played in-process."""
    return participant.removeprefix(REMOTE) if participant.startswith(REMOTE) else None


def same_bot(participant: str) -> str:
    """One key for every spelling of a participant: ``random``, ``random:`` and ``random: ``
    build the one bot ``random``, which would play itself and be counted twice."""
    if remote_name(participant) is not None:
        return participant
    try:
        return str(parse_spec(participant))
    except BotSpecError:
        return participant  # reported with the participant's position once the spec is built


@dataclass(frozen=True)
class GameEntry:
    name: str
    label: str
    config: Mapping[str, Any]
    participants: tuple[str, ...]
    players: int
    variant: str


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    path: str
    format: str
    games: tuple[GameEntry, ...]
    games_per_pairing: int = 2
    deals: str = "shared"  # "fresh": each game of a pair dealt apart (DEALS)
    rounds: int | None = None
    challenger: str | None = None
    concurrency: int = 4
    clock: Clock = field(default_factory=Clock)
    max_retries: int = 2
    held_out_games: tuple[str, ...] = ()  # game labels
    held_out_opponents: tuple[str, ...] = ()  # participants

    @property
    def participants(self) -> tuple[str, ...]:
        """Every participant of every game, each once, in the order of the file."""
        return tuple(dict.fromkeys(p for entry in self.games for p in entry.participants))

    @property
    def remote(self) -> tuple[str, ...]:
        """The ``remote:NAME`` participants: bots someone else connects to the server."""
        return tuple(p for p in self.participants if remote_name(p) is not None)


def schedule_id(config: TournamentConfig) -> str:
    """A digest of what makes the tournament's schedule: its format, pairings, rounds, and each
    game's label, table size and participants. Kept with the tournament's name at its first
    run: a rerun of a file that changed any of them mixed the matches of two schedules under
    one name, or took matches of the old one as done. A game's config is left to
    ``runner.check_same_config``, which names the keys that changed."""
    shape = {
        "format": config.format,
        "games_per_pairing": config.games_per_pairing,
        "rounds": config.rounds,
        # only when fresh: every schedule made before the key existed keeps its digest
        **({"deals": config.deals} if config.deals != "shared" else {}),
        "challenger": config.challenger,
        "games": [[entry.label, entry.name, entry.players, list(entry.participants)] for entry in config.games],
    }
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]


def load(path: str | Path) -> TournamentConfig:
    """Read and check ``path``; TournamentConfigError names what is wrong and where."""
    return parse(read_toml(path, TournamentConfigError), str(path))


class _Reader:
    """Typed reads from a TOML table, each failure naming the file and the key."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, what: str) -> TournamentConfigError:
        return TournamentConfigError(f"{self.where}: {key}: {what}")

    def typed(self, table: Mapping[str, Any], key: str, kind: type, name: str, default: Any = None) -> Any:
        if key not in table:
            if default is _REQUIRED:
                raise self.fail(name, "missing")
            return default
        value = table[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            expected = {"str": "string", "int": "integer", "dict": "table", "list": "list"}.get(kind.__name__, kind.__name__)
            raise self.fail(name, f"must be {_article(expected)}, got {type(value).__name__} {value!r}")
        return value

    def positive(self, table: Mapping[str, Any], key: str, default: int | None, most: int | None = None) -> int | None:
        """An int of at least 1 and, where ``most`` is given, at most that: a count that sizes
        the schedule (built whole before the first match) must not make it endless."""
        value = self.typed(table, key, int, key, default)
        if value is not None and value < 1:
            raise self.fail(key, f"must be at least 1, got {value}")
        if value is not None and most is not None and value > most:
            raise self.fail(key, f"must be at most {most:,}, got {value:,}")
        return value

    def specs(self, value: Any, name: str, what: str = "bot specs", same: Callable[[str], str] = lambda v: v) -> tuple[str, ...]:
        """A list of distinct strings; ``same`` maps two spellings of one thing to one key."""
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(name, f"must be a list of {what} (strings), got {value!r}")
        seen: dict[str, str] = {}
        for v in value:
            first = seen.get(same(v))
            if first is not None:
                also = "" if first == v else f" (also as {first!r})"
                raise self.fail(name, f"{v!r} is listed twice{also}")
            seen[same(v)] = v
        return tuple(same(v) for v in value)  # one spelling each from here on: keys, seeds and names hang on it


def parse(data: Mapping[str, Any], where: str = "<config>") -> TournamentConfig:
    """Check a parsed TOML document; ``where`` (the file) starts every error message."""
    read = _Reader(where)
    fail, typed, specs = read.fail, read.typed, read.specs

    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise fail(unknown[0], f"unknown key; the keys are {', '.join(TOP_KEYS)}")
    name = typed(data, "name", str, "name", _REQUIRED)
    if not valid_label(name):
        raise fail("name", f"must be {LABEL_RULE}, got {name!r}")
    fmt = typed(data, "format", str, "format", _REQUIRED)
    if fmt not in FORMATS:
        raise fail("format", f"unknown format {fmt!r}; the formats are {', '.join(FORMATS)}")
    per_pairing = read.positive(data, "games_per_pairing", 2, most=SCHEDULE_COUNT_MOST)
    deals = typed(data, "deals", str, "deals", "shared")
    if deals not in DEALS:
        raise fail("deals", f"must be one of {', '.join(DEALS)}, got {deals!r}")
    rounds = read.positive(data, "rounds", None, most=SCHEDULE_COUNT_MOST)
    concurrency = read.positive(data, "concurrency", 4)
    challenger = typed(data, "challenger", str, "challenger")
    challenger = None if challenger is None else same_bot(challenger)
    default_participants = specs(data["participants"], "participants", same=same_bot) if "participants" in data else None
    clock_table = typed(data, "clock", dict, "clock", {})
    for key in clock_table:
        if key not in ("move_ms", "grace_ms", "bank_ms"):
            raise fail(f"clock.{key}", "unknown key; the keys are move_ms, grace_ms, bank_ms")
    clock_values = {k: typed(clock_table, k, int, f"clock.{k}") for k in clock_table}
    for key, value in clock_values.items():
        problem = clock_problem(key, value)
        if problem is not None:
            raise fail(f"clock.{key}", problem)
    clock = Clock(**clock_values)
    failure = typed(data, "failure", dict, "failure", {})
    for key in failure:
        if key != "max_retries":
            raise fail(f"failure.{key}", "unknown key; the key is max_retries")
    max_retries = typed(failure, "max_retries", int, "failure.max_retries", 2)
    if not 0 <= max_retries <= MAX_RETRIES:
        raise fail("failure.max_retries", f"must be from 0 to {MAX_RETRIES}, got {max_retries}")

    tables = typed(data, "games", list, "games", _REQUIRED)
    if not tables:
        raise fail("games", "lists no game")
    entries: list[GameEntry] = []
    for i, table in enumerate(tables):
        at = f"games[{i}]"
        if not isinstance(table, dict):
            raise fail(at, f"must be a table, got {type(table).__name__}")
        for key in table:
            if key not in GAME_KEYS:
                raise fail(f"{at}.{key}", f"unknown key; the keys are {', '.join(GAME_KEYS)}")
        entries.append(_game(read, table, at, default_participants))
    labels = [e.label for e in entries]
    for label in labels:
        if labels.count(label) > 1:
            raise fail("games", f"{label!r} is listed twice; give each config of one game its own label")
    for entry, at in zip(entries, (f"games[{i}]" for i in range(len(entries))), strict=True):
        _check_format(read, entry, at, fmt, challenger, rounds)
    scheduled = sum(_matches_at_most(entry, fmt, per_pairing or 2, rounds) for entry in entries)
    if scheduled > SCHEDULE_MATCHES_MOST:
        raise fail(
            "games",
            f"schedule {scheduled:,} matches or so, more than the {SCHEDULE_MATCHES_MOST:,} a file may: fewer participants,"
            " games per pairing or rounds, or several files",
        )
    # a key the format never reads would leave the schedule other than the file says
    if deals == "fresh" and fmt == "duplicate":
        raise fail(
            "deals", "a duplicate plays every pairing on the same deals; fresh ones are for round-robin, swiss and gauntlet"
        )
    if deals == "fresh" and all(entry.players > 2 or fmt == "tables" for entry in entries):
        raise fail("deals", "no game here is played in pairs: at tables every table has a deal of its own already")
    if challenger is not None and fmt != "gauntlet":
        raise fail("challenger", f"only a gauntlet has a challenger; this tournament is a {fmt}")
    if rounds is not None and fmt not in ("swiss", "tables") and all(entry.players <= 2 for entry in entries):
        raise fail("rounds", f"a {fmt} of two-seat games has no rounds to set (swiss and games at tables have)")
    held_out_games = _held_out(read, data, "held_out_games", labels, "game label")
    for entry in entries:
        for other in entries:
            # leaderboards are kept per variant: holding out one of two labels moved their shared board
            if entry.variant == other.variant and entry.label in held_out_games and other.label not in held_out_games:
                raise fail(
                    "held_out_games",
                    f"{entry.label!r} plays the same game and config as {other.label!r}, which is not held out: they"
                    " share one leaderboard, so hold out both or neither",
                )
    everyone = list(dict.fromkeys(p for entry in entries for p in entry.participants))
    held_out_opponents = _held_out(read, data, "held_out_opponents", everyone, "participant", same_bot)
    if held_out_opponents and set(held_out_opponents) == set(everyone):
        raise fail("held_out_opponents", "holds out every participant; leave some to be evaluated against them")
    return TournamentConfig(
        name=name,
        path=where,
        format=fmt,
        games=tuple(entries),
        games_per_pairing=per_pairing or 2,
        deals=deals,
        rounds=rounds,
        challenger=challenger,
        concurrency=concurrency or 4,
        clock=clock,
        max_retries=max_retries,
        held_out_games=held_out_games,
        held_out_opponents=held_out_opponents,
    )


_REQUIRED = object()


def _held_out(
    read: _Reader, data: Mapping[str, Any], key: str, known: list[str], what: str, same: Callable[[str], str] = str
) -> tuple[str, ...]:
    """A held-out list: each name must be one the tournament has (a typo would hold out nothing)."""
    names = read.specs(data.get(key, []), key, f"{what}s", same)
    for i, name in enumerate(names):
        if name not in known:
            raise read.fail(f"{key}[{i}]", f"{name!r} is not a {what} of this tournament; they are {', '.join(known)}")
    return names


def _article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _game(read: _Reader, table: Mapping[str, Any], at: str, default_participants: tuple[str, ...] | None) -> GameEntry:
    fail, typed = read.fail, read.typed

    name = typed(table, "name", str, f"{at}.name", _REQUIRED)
    try:
        game = games.get(name)
    except GameError as error:
        raise fail(f"{at}.name", str(error)) from None
    config = typed(table, "config", dict, f"{at}.config", {})
    try:
        checked = game.config_of(config)  # not new(): a game that cannot set up is a void match, played
        players, variant = checked.players, variant_of(game.spec.name, checked.overrides())
    except (GameError, ValueError, TypeError) as error:
        raise fail(f"{at}.config", str(error)) from None
    if "participants" in table:
        participants = read.specs(table["participants"], f"{at}.participants", same=same_bot)
    elif default_participants is not None:
        participants = default_participants
    else:
        raise fail(f"{at}.participants", "missing (and no top-level participants)")
    for j, spec in enumerate(participants):
        remote = remote_name(spec)
        if remote is not None:
            if not valid_bot_name(remote):
                raise fail(f"{at}.participants[{j}]", f"bad remote bot name {remote!r}: use {BOT_NAME_PATTERN}")
            continue
        try:
            bot = make_bot(spec, game.spec.name)
        except (GameError, ValueError, TypeError) as error:
            raise fail(f"{at}.participants[{j}]", str(error)) from None
        if bot.name == HumanBot.name:  # with no one at a terminal, every match is a rated forfeit
            raise fail(f"{at}.participants[{j}]", "'human' plays at a terminal (arena play), not in a tournament")
    label = typed(table, "label", str, f"{at}.label", game.spec.name)
    if not valid_label(label):
        raise fail(f"{at}.label", f"must be {LABEL_RULE}, got {label!r}")
    return GameEntry(game.spec.name, label, config, participants, players, variant)


def _matches_at_most(entry: GameEntry, fmt: str, per_pairing: int, rounds: int | None) -> int:
    """About how many matches the format schedules for one game, at most (Swiss: every round full)."""
    n = len(entry.participants)
    if entry.players > 2 or fmt == "tables":
        return (rounds or n) * -(-n // entry.players)
    pairings = {"gauntlet": n - 1, "swiss": (rounds or n) * (n // 2)}.get(fmt, n * (n - 1) // 2)
    return pairings * per_pairing * (2 if fmt == "duplicate" else 1)


def _check_format(read: _Reader, entry: GameEntry, at: str, fmt: str, challenger: str | None, rounds: int | None) -> None:
    fail = read.fail
    if fmt == "duplicate" and games.get(entry.name).spec.teams == "all" and len(entry.participants) <= entry.players:
        # a deal's tables are compared; with one team for every deal there is nothing to compare, and nothing was rated
        raise fail(
            f"{at}.participants",
            f"{entry.label} is cooperative: a duplicate rates the teams that played one deal against each other, and"
            f" {len(entry.participants)} participants for {entry.players} seats make one team: list at least"
            f" {entry.players + 1}",
        )
    if entry.players > 2 or fmt == "tables":
        if len(entry.participants) < entry.players:
            raise fail(
                f"{at}.participants",
                f"a table of {entry.label} has {entry.players} seats: list at least {entry.players} participants, "
                f"got {len(entry.participants)} (one bot in two seats is self-play, which is not rated)",
            )
        if entry.players == 2 and games.get(entry.name).spec.teams != "all":
            # rotating by one seat a round, pairs of seats only ever meet their neighbours, in one order
            raise fail(
                "format",
                f"{entry.label} is a two-seat game: at rotating tables each participant meets only its neighbours,"
                " always in the same seats; play it round-robin or swiss (tables are for games of more seats, and"
                " cooperative ones)",
            )
        return
    if len(entry.participants) < 2:
        raise fail(f"{at}.participants", f"a {fmt} needs at least 2 participants, got {len(entry.participants)}")
    if fmt == "gauntlet":
        if challenger is None:
            raise fail("challenger", "missing (a gauntlet needs one)")
        if challenger not in entry.participants:
            raise fail("challenger", f"{challenger!r} is not among the participants of {entry.label}")
    if fmt == "swiss":
        n = len(entry.participants)
        most = n if n % 2 else n - 1
        if (rounds or 0) > most:
            raise fail("rounds", f"{n} participants of {entry.label} can play at most {count(most, 'Swiss round')}, not {rounds}")

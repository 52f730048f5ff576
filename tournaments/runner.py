"""Play a tournament in-process, into a store, resumably; the scheduler it shares with
server runs (``tournaments.remote``); the held-out report of either.

``drive`` walks the schedule: ``concurrency`` matches at once, Swiss games paired round
by round from the returns of the rounds before, progress and counts as matches end. How
one match is played is the caller's: here, ``play_match`` (the one match loop) with local
seats, committed with its tournament, round, group and key by the store's one writer
thread, in one transaction with its turns and ratings. Before playing a key the runner
asks the store whether a finished match holds it: a run killed at any point and started
again plays only what is missing and never a finished match twice (a match cut off
mid-game was never committed, so it is simply played again), and a resumed Swiss run
pairs exactly as the first one did (a Swiss round with a void match is the last one a run
plays: the next round is paired once that match is played again and its result known).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

import games
from arena.match import MatchResult, play_match
from arena.seats import LocalSeat
from arena.store import CONFIG_CHANGE_REMEDY, Store, config_change, regrouped
from arena.store_writer import Call, StoreWriter
from bots.registry import make_bot, seat_seed
from games.api import make_config
from tournaments.config import GameEntry, TournamentConfig, TournamentConfigError, remote_name, schedule_id
from tournaments.formats import (
    ScheduledMatch,
    Slot,
    duplicate,
    gauntlet,
    points,
    round_robin,
    swiss_pairings,
    swiss_round,
    tables,
)


@dataclass(frozen=True)
class Progress:
    """What a progress bar shows: matches done (played now or before), running, in all."""

    done: int
    running: int
    total: int
    elapsed: float
    played: int  # played by this run (the ETA is taken from these)

    @property
    def eta(self) -> float | None:
        if self.played == 0:
            return None
        return self.elapsed / self.played * (self.total - self.done)


@dataclass
class Summary:
    tournament: str
    total: int = 0
    played: int = 0  # finished by this run
    skipped: int = 0  # made before this run
    voided: int = 0  # ended void (a fault of the engine or the server, an abort); played again next run
    void_details: list[str] = field(default_factory=list)  # why each void match was void
    elapsed: float = 0.0
    variants: dict[str, str] = field(default_factory=dict)  # game label -> variant
    finished: list[Finished] = field(default_factory=list)  # every finished match of the schedule, earlier runs' too
    standings: dict[str, dict[str, float]] = field(default_factory=dict)  # swiss game label -> participant -> points, best first


def slot_of(config: TournamentConfig, entry: GameEntry, salt: str = "") -> Slot:
    return Slot(config.name, entry.name, entry.config, entry.label, salt, fresh=config.deals == "fresh")


def is_swiss(config: TournamentConfig, entry: GameEntry) -> bool:
    return config.format == "swiss" and entry.players == 2


def swiss_rounds(config: TournamentConfig, entry: GameEntry) -> int:
    n = len(entry.participants)
    return config.rounds or min(n if n % 2 else n - 1, max(1, math.ceil(math.log2(n))))


def fixed_schedule(config: TournamentConfig, entry: GameEntry, salt: str = "") -> list[ScheduledMatch]:
    """The whole schedule of a game in every format but Swiss (paired round by round)."""
    slot, people, per = slot_of(config, entry, salt), entry.participants, config.games_per_pairing
    if entry.players > 2 or config.format == "tables":
        cooperative = games.get(entry.name).spec.teams == "all"
        one_deal = cooperative and config.format == "duplicate"  # rated by comparing the tables of a deal
        return tables(slot, people, entry.players, config.rounds or len(people), one_deal=one_deal)
    if config.format == "round-robin":
        return round_robin(slot, people, per)
    if config.format == "gauntlet":
        challenger = config.challenger or people[0]
        return gauntlet(slot, challenger, [p for p in people if p != challenger], per)
    if config.format == "duplicate":
        return duplicate(slot, people, per)
    raise ValueError(f"{config.format} is played round by round")


def remembered_deals(config: TournamentConfig) -> list[tuple[str, str]]:
    """The games (label, what to do instead) in which a ``remote:`` participant plays one deal
    twice: remembering the first match, it knows in the second what chance dealt (its own cards
    of a pair's first game are its opponent's in the second, Pig's dice come in the same order).
    Bots made in this process are made afresh for every match and remember nothing."""
    found = []
    for entry in config.games:
        remote = {p for p in entry.participants if remote_name(p) is not None}
        if not remote or not games.get(entry.name).spec.chance:
            continue
        if is_swiss(config, entry):  # paired round by round: its pairs are made as every other format's
            replays = config.deals == "shared" and config.games_per_pairing > 1
        else:
            dealt = [(bot, match.seed) for match in fixed_schedule(config, entry) for bot in remote & set(match.seats)]
            replays = len(set(dealt)) < len(dealt)
        if not replays:
            continue
        if config.format != "duplicate":
            found.append((entry.label, 'deals = "fresh" deals each game of a pair apart'))
        elif entry.players == 2:
            found.append((entry.label, 'a duplicate replays every deal: a round-robin with deals = "fresh" does not'))
        else:
            found.append((entry.label, f"list a multiple of {entry.players} participants, so that none fills a second table"))
    return found


def planned(config: TournamentConfig) -> int:
    """How many matches the tournament has, Swiss rounds included."""
    total = 0
    for entry in config.games:
        if is_swiss(config, entry):
            total += swiss_rounds(config, entry) * (len(entry.participants) // 2) * config.games_per_pairing
        else:
            total += len(fixed_schedule(config, entry))
    return total


@dataclass(frozen=True)
class Played:
    """How one scheduled match ended, as the schedule needs it (standings, counts, report)."""

    status: str  # "finished" or "void" (played again by the next run)
    returns: tuple[float, ...] | None  # None unless finished
    fresh: bool  # made by this run; False when its key was taken before (then it is not counted as played)
    forfeit_seat: int | None = None  # the seat that lost by forfeit, if one did
    detail: str = ""  # why, for a void match: one a rerun cannot help (it reached max_steps) shows


@dataclass(frozen=True)
class Finished:
    """A finished match of the schedule: what the held-out report is made from."""

    label: str  # the game label
    seats: tuple[str, ...]  # participants in seat order, as the config names them
    returns: tuple[float, ...]


PlayOne = Callable[[ScheduledMatch], Awaitable[Played]]


async def drive(
    config: TournamentConfig, play: PlayOne, progress: Callable[[Progress], None] | None = None, salt: str = ""
) -> Summary:
    """Play the whole schedule through ``play``, ``concurrency`` matches at once, Swiss games
    round by round; the one scheduler of in-process and server runs. ``salt`` is the
    tournament's secret, which its seeds are made with (``Store.seed_salt``).

    ``play`` plays a scheduled match, or finds the one already made under its key, and
    says how it ended. Swiss pairs each round from the returns of the rounds before, so a
    resumed run (whose ``play`` finds those matches) pairs exactly as the first one did."""
    summary = Summary(config.name, total=planned(config), variants={e.label: e.variant for e in config.games})
    limiter = trio.CapacityLimiter(config.concurrency)
    # Matches sharing a seed deal the same cards, seats swapped: a bot seated in two at once
    # would see in one the cards its opponent holds in the other, so each waits its turn.
    dealt: dict[tuple[int, str], trio.Lock] = {}
    started = time.monotonic()
    running = 0

    def report() -> None:
        summary.elapsed = time.monotonic() - started
        if progress is not None:
            done = summary.played + summary.skipped + summary.voided
            progress(Progress(done, running, summary.total, summary.elapsed, summary.played + summary.voided))

    async def play_deal(label: str, matches: list[ScheduledMatch], ended: dict[str, Played]) -> None:
        """The matches of one deal at one table (a pair's games with seats swapped), one after the
        other in one place of the limiter: queued behind every other pair's first game, the second
        games waited for all of those, and a run stopped half-way had no pair complete to rate."""
        nonlocal running
        async with contextlib.AsyncExitStack() as stack:
            for name in sorted({name for match in matches for name in match.seats}):  # one order everywhere: no deadlock
                await stack.enter_async_context(dealt.setdefault((matches[0].seed, name), trio.Lock()))
            await stack.enter_async_context(limiter)
            for match in matches:
                running += 1
                report()  # else a bar drawn as each match ends showed one less running than the limit
                try:
                    played = await play(match)
                finally:
                    running -= 1
                ended[match.key] = played
                count(label, match, played)

    def count(label: str, match: ScheduledMatch, played: Played) -> None:
        if played.status == "void":
            summary.voided += 1
            summary.void_details.append(played.detail)
        elif played.fresh:
            summary.played += 1
        else:  # finished before this run, or (through a server) being played since an earlier one
            summary.skipped += 1
        if played.returns is not None:
            summary.finished.append(Finished(label, match.seats, played.returns))
        report()

    async def play_all(label: str, matches: list[ScheduledMatch]) -> dict[str, Played]:
        ended: dict[str, Played] = {}
        deals: dict[tuple[int, frozenset[str]], list[ScheduledMatch]] = {}
        for match in matches:
            deals.setdefault((match.seed, frozenset(match.seats)), []).append(match)
        async with trio.open_nursery() as nursery:
            for deal in deals.values():
                nursery.start_soon(play_deal, label, deal, ended)
        return ended

    async def play_swiss(entry: GameEntry) -> None:
        slot = slot_of(config, entry, salt)
        standings = dict.fromkeys(entry.participants, 0.0)
        played: set[frozenset[str]] = set()
        byes: set[str] = set()
        rounds = swiss_rounds(config, entry)
        for r in range(1, rounds + 1):
            pairs, bye = swiss_pairings(standings, played, byes, rounds_left=rounds - r + 1)
            matches = swiss_round(slot, r, pairs, config.games_per_pairing)
            ended = await play_all(entry.label, matches)
            for match in matches:
                returns = ended[match.key].returns
                if returns is not None:
                    for name, score in zip(match.seats, points(returns, ended[match.key].forfeit_seat), strict=True):
                        standings[name] += score
            played.update(frozenset(pair) for pair in pairs)
            if bye is not None:
                byes.add(bye)
                standings[bye] += config.games_per_pairing
            # what swiss plays for, said at the end: the boards rate strength, not the points won
            summary.standings[entry.label] = dict(sorted(standings.items(), key=lambda item: (-item[1], item[0])))
            if any(ended[match.key].status == "void" for match in matches):
                return  # the next run plays the void match first, then pairs the next round from every result

    report()
    async with trio.open_nursery() as nursery:
        for entry in config.games:
            if is_swiss(config, entry):
                nursery.start_soon(play_swiss, entry)
            else:
                nursery.start_soon(play_all, entry.label, fixed_schedule(config, entry, salt))
    report()
    return summary


def _save(store: Store, match: ScheduledMatch, result: MatchResult, meta: dict[str, Any]) -> Played | None:
    """Store the result, unless another run of this tournament (the command started twice)
    stored this key while it was being played: a match counts once."""
    earlier = _recorded(store, match)
    if earlier is None:
        store.finish_match(result, meta)
    return earlier


def _recorded(store: Store, match: ScheduledMatch) -> Played | None:
    """The match a run before this one made under the match's key (voided ones do not count)."""
    found = store.find_by_key(match.key)
    if found is None:
        return None
    record = store.match(found["id"], turns=False)
    assert record is not None
    check_same_config(match, record["config"])
    conflict = regrouped(found, match.group_id, match.group_size)
    if conflict is not None:
        raise TournamentConfigError(f"{match.key}: {conflict}")
    if found["status"] != "finished":
        return Played(found["status"], None, fresh=False)
    return Played(found["status"], tuple(record["returns"]), fresh=False, forfeit_seat=record["forfeit_seat"])


def game_configs(config: TournamentConfig) -> dict[str, dict[str, Any]]:
    """Each game's label and its config as the game reads it: what the store checks the
    tournament's matches against before a run plays any (``Store.seed_salt``)."""
    return {entry.label: make_config(games.get(entry.name).Config, entry.config).to_dict() for entry in config.games}


def check_same_config(match: ScheduledMatch, recorded: Mapping[str, Any]) -> None:
    """A key names the match of one game config: a file that changed the config under the same
    tournament name and label took the matches played before as its own, and never played the
    new variant."""
    change = config_change(recorded, make_config(games.get(match.game).Config, match.config).to_dict())
    if change is not None:
        raise TournamentConfigError(f"{match.key} {change}: {CONFIG_CHANGE_REMEDY}")


async def run_tournament_async(
    config: TournamentConfig,
    db_path: str | Path,
    progress: Callable[[Progress], None] | None = None,
    names: Mapping[str, str] | None = None,
) -> Summary:
    if config.remote:
        raise TournamentConfigError(
            f"{config.path}: remote participants ({', '.join(config.remote)}) play only through a server: "
            "run the tournament with --url"
        )
    writer = StoreWriter(db_path)

    async def play(match: ScheduledMatch) -> Played:
        recorded = await writer.call(Call(_recorded, match))
        if recorded is not None:
            return recorded
        bots = [make_bot(spec, match.game, seat_seed(match.seed, i)) for i, spec in enumerate(match.seats)]
        seats = [LocalSeat(bot, name=(names or {}).get(spec, bot.label)) for bot, spec in zip(bots, match.seats, strict=True)]
        result = await play_match(
            games.get(match.game),
            seats,
            config=dict(match.config),
            seed=match.seed,
            clock=config.clock,
            max_retries=config.max_retries,
        )
        meta = {
            "tournament": config.name,
            "round": match.round,
            "caller_key": match.key,
            "group_id": match.group_id,
            "group_size": match.group_size,
            "source": "tournament",
        }
        earlier = await writer.call(Call(_save, match, result, meta))
        if earlier is not None:
            return earlier
        finished = result.status == "finished"
        returns = tuple(result.returns) if finished else None
        return Played(result.status, returns, fresh=True, forfeit_seat=result.forfeit_seat, detail=result.detail)

    async with trio.open_nursery() as outer:
        await outer.start(writer.run)
        try:
            salt = await writer.call(Call(Store.seed_salt, config.name, schedule_id(config), game_configs(config)))
            return await drive(config, play, progress, salt)
        finally:
            await writer.aclose()


def run_tournament(
    config: TournamentConfig,
    db_path: str | Path,
    progress: Callable[[Progress], None] | None = None,
    names: Mapping[str, str] | None = None,
) -> Summary:
    """Play every scheduled match of ``config`` that the store at ``db_path`` has not finished.

    A participant plays under its spec, or under ``names[spec]`` where given (the nightly's
    ``ipd.2025-01-31`` for ``llm:model=/long/path``)."""
    return trio.run(run_tournament_async, config, db_path, progress, names)


def leaderboards(config: TournamentConfig, db_path: str | Path, resamples: int = 100) -> dict[str, list[dict[str, Any]]]:
    """The leaderboard of each game variant of the tournament, by variant (all matches of it in the store)."""
    from arena.ratings.leaderboard import variant_leaderboard

    store = Store(db_path, read_only=True)
    try:
        return {v: variant_leaderboard(store, v, resamples=resamples) for v in dict.fromkeys(e.variant for e in config.games)}
    finally:
        store.close()


def split_held_out(config: TournamentConfig, boards: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The leaderboards of the games trained on, and apart those of the held-out games (by variant)."""
    held = {entry.variant for entry in config.games if entry.label in config.held_out_games}
    return {v: b for v, b in boards.items() if v not in held}, {v: b for v, b in boards.items() if v in held}


def held_out_opponents(config: TournamentConfig, finished: Sequence[Finished]) -> list[dict[str, Any]]:
    """Each other participant's mean return against the held-out opponents beside its mean
    return against the rest, per game: how far what it learned carries over to co-players
    it never trained with. A participant that met no held-out opponent in a game is left out."""
    held = set(config.held_out_opponents)
    if not held:
        return []
    tally: dict[tuple[str, str], list[float]] = {}  # (label, participant) -> [held-out n, sum, others n, sum]
    for match in finished:
        for seat, who in enumerate(match.seats):
            if who in held:
                continue
            against_held = any(other in held for i, other in enumerate(match.seats) if i != seat)
            cell = tally.setdefault((match.label, who), [0, 0.0, 0, 0.0])
            base = 0 if against_held else 2
            cell[base] += 1
            cell[base + 1] += match.returns[seat]
    order = {entry.label: i for i, entry in enumerate(config.games)}
    people = {p: i for i, p in enumerate(config.participants)}
    return [
        {
            "game": label,
            "participant": who,
            "held_out_matches": int(n_held),
            "held_out_mean_return": held_sum / n_held,
            "other_matches": int(n_other),
            "other_mean_return": other_sum / n_other if n_other else None,
        }
        for (label, who), (n_held, held_sum, n_other, other_sum) in sorted(
            tally.items(), key=lambda item: (order[item[0][0]], people[item[0][1]])
        )
        if n_held
    ]

"""Play a tournament in-process, into a store, resumably.

Every scheduled match goes through ``play_match`` (the one match loop) with local seats
and is committed with its tournament, round, group and key by the store's one writer
thread, in one transaction with its turns and ratings. Before playing a key the runner
asks the store whether a finished match holds it: a run killed at any point and started
again plays only what is missing and never a finished match twice (a match cut off
mid-game was never committed, so it is simply played again).

Swiss games are paired round by round from the standings of the rounds already played,
which are read back from the store, so a resumed run pairs exactly as the first one did.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat
from arena.store import Store, StoreWriter
from bots.registry import make_bot, seat_seed
from tournaments.config import GameEntry, TournamentConfig
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
    skipped: int = 0  # already finished before this run
    voided: int = 0  # voided by this run (a fault of the engine); played again next run
    elapsed: float = 0.0
    variants: dict[str, str] = field(default_factory=dict)  # game label -> variant


def slot_of(config: TournamentConfig, entry: GameEntry) -> Slot:
    return Slot(config.name, entry.name, entry.config, entry.label)


def is_swiss(config: TournamentConfig, entry: GameEntry) -> bool:
    return config.format == "swiss" and entry.players == 2


def swiss_rounds(config: TournamentConfig, entry: GameEntry) -> int:
    n = len(entry.participants)
    return config.rounds or min(n if n % 2 else n - 1, max(1, math.ceil(math.log2(n))))


def fixed_schedule(config: TournamentConfig, entry: GameEntry) -> list[ScheduledMatch]:
    """The whole schedule of a game in every format but Swiss (paired round by round)."""
    slot, people, per = slot_of(config, entry), entry.participants, config.games_per_pairing
    if entry.players > 2 or config.format == "tables":
        return tables(slot, people, entry.players, config.rounds or len(people))
    if config.format == "round-robin":
        return round_robin(slot, people, per)
    if config.format == "gauntlet":
        challenger = config.challenger or people[0]
        return gauntlet(slot, challenger, [p for p in people if p != challenger], per)
    if config.format == "duplicate":
        return duplicate(slot, people, per)
    raise ValueError(f"{config.format} is played round by round")


def planned(config: TournamentConfig) -> int:
    """How many matches the tournament has, Swiss rounds included."""
    total = 0
    for entry in config.games:
        if is_swiss(config, entry):
            total += swiss_rounds(config, entry) * (len(entry.participants) // 2) * config.games_per_pairing
        else:
            total += len(fixed_schedule(config, entry))
    return total


def _returns_by_key(store: Store, keys: list[str]) -> dict[str, list[float]]:
    out = {}
    for key in keys:
        found = store.find_by_key(key)
        if found is not None and found["status"] == "finished":
            out[key] = store.match(found["id"], turns=False)["returns"]
    return out


async def run_tournament_async(
    config: TournamentConfig, db_path: str | Path, progress: Callable[[Progress], None] | None = None
) -> Summary:
    summary = Summary(config.name, total=planned(config), variants={e.label: e.variant for e in config.games})
    limiter = trio.CapacityLimiter(config.concurrency)
    started = time.monotonic()
    running = 0
    writer = StoreWriter(db_path)

    def report() -> None:
        summary.elapsed = time.monotonic() - started
        if progress is not None:
            done = summary.played + summary.skipped + summary.voided
            progress(Progress(done, running, summary.total, summary.elapsed, summary.played + summary.voided))

    async def play_one(match: ScheduledMatch) -> None:
        nonlocal running
        async with limiter:
            if await writer.call(lambda store: store.find_by_key(match.key)) is not None:
                summary.skipped += 1
                report()
                return
            running += 1
            report()
            bots = [make_bot(spec, match.game, seat_seed(match.seed, i)) for i, spec in enumerate(match.seats)]
            seats = [LocalSeat(bot, name=bot.label) for bot in bots]
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
            await writer.call(lambda store: store.finish_match(result, meta))
            running -= 1
            if result.status == "finished":
                summary.played += 1
            else:
                summary.voided += 1
            report()

    async def play_all(matches: list[ScheduledMatch]) -> None:
        async with trio.open_nursery() as nursery:
            for match in matches:
                nursery.start_soon(play_one, match)

    async def play_swiss(entry: GameEntry) -> None:
        slot = slot_of(config, entry)
        standings = dict.fromkeys(entry.participants, 0.0)
        played: set[frozenset[str]] = set()
        byes: set[str] = set()
        for r in range(1, swiss_rounds(config, entry) + 1):
            pairs, bye = swiss_pairings(standings, played, byes)
            matches = swiss_round(slot, r, pairs, config.games_per_pairing)
            await play_all(matches)
            returns = await writer.call(lambda store, ms=matches: _returns_by_key(store, [m.key for m in ms]))
            for match in matches:
                if match.key in returns:
                    for name, score in zip(match.seats, points(returns[match.key]), strict=True):
                        standings[name] += score
            played.update(frozenset(pair) for pair in pairs)
            if bye is not None:
                byes.add(bye)
                standings[bye] += config.games_per_pairing

    async with trio.open_nursery() as outer:
        await outer.start(writer.run)
        try:
            async with trio.open_nursery() as nursery:
                for entry in config.games:
                    if is_swiss(config, entry):
                        nursery.start_soon(play_swiss, entry)
                    else:
                        nursery.start_soon(play_all, fixed_schedule(config, entry))
        finally:
            await writer.aclose()
    report()
    return summary


def run_tournament(config: TournamentConfig, db_path: str | Path, progress: Callable[[Progress], None] | None = None) -> Summary:
    """Play every scheduled match of ``config`` that the store at ``db_path`` has not finished."""
    return trio.run(run_tournament_async, config, db_path, progress)


def leaderboards(config: TournamentConfig, db_path: str | Path, resamples: int = 100) -> dict[str, list[dict[str, Any]]]:
    """The leaderboard of each game variant of the tournament, by variant (all matches of it in the store)."""
    from arena.ratings.leaderboard import variant_leaderboard

    store = Store(db_path, read_only=True)
    try:
        return {v: variant_leaderboard(store, v, resamples=resamples) for v in dict.fromkeys(e.variant for e in config.games)}
    finally:
        store.close()

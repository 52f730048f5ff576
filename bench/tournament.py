"""Tournament throughput: a 16-bot round robin, in-process and through the live server,
beside bare ``play_match`` on the same schedule.

Sixteen scripted bots of iterated rock-paper-scissors (``random``, ``rps-cycle`` and
``rps-frequency`` with fourteen windows: the registry has six scripted prisoner's-dilemma
strategies, too few for sixteen) play a round robin, ``--games-per-pairing`` games a
pairing (240 matches at 2), ``--concurrency`` at once, three ways one after the other:

- ``bare``: ``play_match`` over the schedule's matches with local seats, nothing recorded:
  the floor every runner stands on;
- ``in-process``: ``run_tournament`` into a fresh SQLite store (keys looked up, every match,
  turn and rating committed by the store's writer process);
- ``server``: ``run_remote`` through an arena server in its own process on loopback (the
  launcher of ``bench.server``: ``ArenaServer`` as ``arena serve`` builds it, with the
  per-connection rate limit raised, as ``arena serve`` caps an admin at 50 messages a
  second), every participant registered and connected from this process through the SDK.

Reported: matches/s of each (ratio against bare ``play_match``), and the runner's overhead,
runner time over bare ``play_match`` time for the same schedule (lower is better).

    python -m bench.tournament [--games-per-pairing 2] [--concurrency 16]

Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat
from bench import positive_int, quiet_interrupt
from bench.server import HOST, Procs, module_argv, wait_for_port
from bots.registry import make_bot, seat_seed
from tournaments.config import TournamentConfig, parse
from tournaments.remote import run_remote
from tournaments.runner import fixed_schedule, run_tournament

GAME = "iterated-rock-paper-scissors"
BOTS = ["random", "rps-cycle", *(f"rps-frequency:window={w}" for w in range(14))]


def log(text: str) -> None:
    print(f"[bench.tournament] {text}", file=sys.stderr, flush=True)


def round_robin(games_per_pairing: int, concurrency: int) -> TournamentConfig:
    return parse(
        {
            "name": "bench",
            "format": "round-robin",
            "games_per_pairing": games_per_pairing,
            "concurrency": concurrency,
            "games": [{"name": GAME, "participants": BOTS}],
        }
    )


def bare(config: TournamentConfig) -> float:
    """Seconds for play_match over the schedule, as the runner plays it, with nothing recorded."""
    schedule = fixed_schedule(config, config.games[0])
    game = games.get(GAME)

    async def run() -> None:
        limiter = trio.CapacityLimiter(config.concurrency)

        async def one(seats: tuple[str, ...], seed: int) -> None:
            async with limiter:
                bots = [make_bot(spec, GAME, seat_seed(seed, i)) for i, spec in enumerate(seats)]
                await play_match(game, [LocalSeat(bot, name=bot.label) for bot in bots], seed=seed, clock=config.clock)

        async with trio.open_nursery() as nursery:
            for match in schedule:
                nursery.start_soon(one, match.seats, match.seed)

    start = time.perf_counter()
    trio.run(run)
    return time.perf_counter() - start


def in_process(config: TournamentConfig, tmp: Path) -> float:
    start = time.perf_counter()
    summary = run_tournament(config, tmp / "in-process.db")
    elapsed = time.perf_counter() - start
    if summary.played != summary.total:
        raise RuntimeError(f"the in-process run played {summary.played} of {summary.total} matches")
    return elapsed


def through_server(config: TournamentConfig, tmp: Path) -> float:
    """Seconds for run_remote through a server process, from the first registration to the last result."""
    admin_file = tmp / "admin-token"
    admin_file.write_text(secrets.token_urlsafe(24))
    admin_file.chmod(0o600)  # arena serve refuses an admin token other accounts may read
    out_file = tmp / "server.out"
    procs = Procs()
    try:
        argv = module_argv("--role", "arena-server", "--db", str(tmp / "server.db"), "--admin-token-file", str(admin_file))
        with out_file.open("wb") as out:
            server = procs.start([*argv, "--max-matches", str(config.concurrency)], stdin=subprocess.DEVNULL, stdout=out)
        url = f"ws://{HOST}:{wait_for_port(out_file, server)}"
        start = time.perf_counter()
        summary = run_remote(config, url, admin_file.read_text())
        elapsed = time.perf_counter() - start
    finally:
        procs.stop_all()
    if summary.played != summary.total:
        raise RuntimeError(f"the server run played {summary.played} of {summary.total} matches")
    return elapsed


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.tournament", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games-per-pairing", type=positive_int, default=2, help="games per pairing (default 2: 240 matches)")
    parser.add_argument("--concurrency", type=positive_int, default=16, help="matches at once (default 16)")
    args = parser.parse_args(argv)
    config = round_robin(args.games_per_pairing, args.concurrency)
    total = len(fixed_schedule(config, config.games[0]))
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as name:
        tmp = Path(name)
        log(f"{total} matches: bare play_match ...")
        bare_s = bare(config)
        log(f"bare {bare_s:.2f}s; in-process runner ...")
        runner_s = in_process(config, tmp)
        log(f"in-process {runner_s:.2f}s; through the server ...")
        server_s = through_server(config, tmp)
        log(f"server {server_s:.2f}s")
    rate = {"bare": total / bare_s, "in-process": total / runner_s, "server": total / server_s}
    results: list[dict[str, Any]] = [
        {"name": "round-robin-16/bare-play_match", "value": round(rate["bare"], 1), "unit": "matches/s"}
    ]
    for kind in ("in-process", "server"):
        results.append(
            {
                "name": f"round-robin-16/{kind}",
                "value": round(rate[kind], 1),
                "unit": "matches/s",
                "peer": "bare play_match",
                "peer_value": round(rate["bare"], 1),
                "ratio": round(rate[kind] / rate["bare"], 3),
            }
        )
    results.append(
        {
            "name": "round-robin-16/runner-overhead",
            "value": round(runner_s / bare_s, 3),
            "unit": "runner time / bare play_match time, same schedule (lower is better)",
        }
    )
    return {
        "bench": "tournament",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "matches": total,
        "concurrency": args.concurrency,
        "results": results,
    }


def _term_as_interrupt(signum: int, frame: Any) -> None:
    """SIGTERM takes Ctrl-C's path, which trio delivers safely inside a run, so that the
    temporary stores are removed and the server process stopped either way."""
    signal.raise_signal(signal.SIGINT)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _term_as_interrupt)
    with quiet_interrupt("bench.tournament", cleaned=True):
        result = main()
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")

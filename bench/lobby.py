"""Pairing speed: how long one lobby pass takes, by the number of waiting seeks.

Each pass runs on the server's event loop, so its time is time every connected bot waits.
Three shapes of lobby, at each size:

- ``apart``: every seek names its own config of the same game, so no two can play together
  (a lobby of custom variants, or of seeks waiting for opponents who have not come yet);
- ``together``: every seek is for the default game (a burst of seeks, as when every bot
  comes back after a restart); each pass seats them all, two by two;
- ``rated``: as ``together``, with a TrueSkill mu per bot (the server always has one), so
  that each seek is seated with its nearest opponent by rating.

    python -m bench.lobby [--sizes 200,1000,2000] [--repeat 3]

Prints one JSON object on stdout: the best of ``--repeat`` passes for each shape and size.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Callable
from typing import Any

from arena.lobby import Lobby
from bench import positive_int, positive_ints, quiet_interrupt


def apart(size: int) -> Lobby:
    lobby = Lobby(players=lambda game, config: 2, capacity=lambda bot: 1)
    for index in range(size):
        lobby.seek(f"bot-{index}", ["iterated-pd"], {"rounds": index + 1})
    return lobby


def together(size: int, rating: Callable[[str, str], float | None] = lambda bot, game: None) -> Lobby:
    lobby = Lobby(players=lambda game, config: 2, capacity=lambda bot: 1, rating=rating)
    for index in range(size):
        lobby.seek(f"bot-{index}", ["tic-tac-toe"], {})
    return lobby


def rated(size: int) -> Lobby:
    mus = random.Random(0)
    skill = {f"bot-{index}": round(mus.gauss(25, 8), 1) for index in range(size)}  # rounded: some ties
    return together(size, rating=lambda bot, game: skill[bot])


def best_pass(make: Callable[[int], Lobby], size: int, repeat: int) -> tuple[float, int]:
    """Milliseconds of the fastest pass over a fresh lobby, and the tables it formed."""
    times, tables = [], 0
    for _ in range(repeat):
        lobby = make(size)
        start = time.perf_counter()
        tables = len(lobby.pair())
        times.append((time.perf_counter() - start) * 1000)
    return min(times), tables


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.lobby", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=positive_ints, default=[200, 1000, 2000], help="waiting seeks per lobby, comma-separated")
    parser.add_argument("--repeat", type=positive_int, default=3, help="passes per measurement; the fastest counts")
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []
    for shape, make in (("apart", apart), ("together", together), ("rated", rated)):
        for size in args.sizes:
            ms, tables = best_pass(make, size, args.repeat)
            results.append({"name": f"pass_{shape}", "seeks": size, "value": round(ms, 2), "unit": "ms", "tables": tables})
    print(json.dumps({"bench": "lobby", "python": platform.python_version(), "results": results}))


if __name__ == "__main__":
    with quiet_interrupt("bench.lobby"):
        main()

"""Engine speed: random-vs-random games per second, ours beside OpenSpiel's.

For every registered game, two figures: the public game API loop (new state, legal
actions, random choice, step, until the end) and whole matches through ``play_match``
(turn requests, clocks, records). For tic-tac-toe, Kuhn poker and Connect Four the same
public-API loop runs on OpenSpiel (``pip install open_spiel``, optional) in the same
process, one after the other, and the ratio ours/OpenSpiel is reported.

    python -m bench.engine [--seconds 2] [--games tic-tac-toe,kuhn-poker]

Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import trio

import games
from arena.match import play_match
from arena.seats import LocalSeat
from bench import game_names, positive_float, quiet_interrupt
from bots.reference.random_bot import RandomBot

OPEN_SPIEL_NAMES = {"tic-tac-toe": "tic_tac_toe", "kuhn-poker": "kuhn_poker", "connect-four": "connect_four"}


def rate(play_one: Callable[[int], object], seconds: float) -> float:
    """Games per second of ``play_one(i)`` over about ``seconds`` (after a short warm-up)."""
    for i in range(50):
        play_one(i)
    count, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            play_one(count)
            count += 1
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def ours_raw(name: str) -> Callable[[int], object]:
    game = games.get(name)
    new = game.new
    rng = random.Random(0)
    choice = rng.choice
    free = game.random_free_action

    def play_one(seed: int) -> object:
        state = new(None, seed)
        while not state.is_over:
            actions = {}
            for seat in state.to_move():
                legal = state.legal_actions(seat)
                actions[seat] = choice(legal) if legal is not None else free(state.observe(seat), rng)
            state.step(actions)
        return state.returns()

    return play_one


def match_rate(name: str, seconds: float) -> float:
    """Whole matches per second through play_match, one trio run for all of them."""
    game = games.get(name)
    players = game.spec.default_config.players

    async def run() -> float:
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            seats = [LocalSeat(RandomBot(name, count * 10 + i), threaded=False) for i in range(players)]
            await play_match(game, seats, seed=count)
            count += 1
        return count / (time.perf_counter() - start)

    return trio.run(run)


def open_spiel_raw(name: str) -> Callable[[int], object] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(OPEN_SPIEL_NAMES[name])
    rng = random.Random(0)
    choice = rng.choice

    def play_one(seed: int) -> object:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():  # uniform in these games: a plain choice is exact, and cheapest
                state.apply_action(choice(state.chance_outcomes())[0])
            else:
                state.apply_action(choice(state.legal_actions()))
        return state.returns()

    return play_one


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_float, default=2.0, help="time per measurement (default 2)")
    parser.add_argument("--games", type=game_names, default=[], help="comma-separated game names (default: all)")
    args = parser.parse_args(argv)
    names = args.games or games.names()
    results: list[dict[str, Any]] = []
    for name in names:
        print(f"{name} ...", file=sys.stderr)
        raw = {"name": f"{name}/raw", "value": round(rate(ours_raw(name), args.seconds), 1), "unit": "games/s"}
        peer = open_spiel_raw(name) if name in OPEN_SPIEL_NAMES else None
        if peer is not None:
            peer_value = rate(peer, args.seconds)
            raw |= {"peer": "open_spiel", "peer_value": round(peer_value, 1), "ratio": round(raw["value"] / peer_value, 3)}
        elif name in OPEN_SPIEL_NAMES:  # said, as bench.ratings says a skipped peer: a missing key read as no peer meant
            raw |= {"peer": "open_spiel", "peer_value": None, "ratio": None, "note": "open_spiel is not installed"}
        results.append(raw)
        matches = match_rate(name, args.seconds)
        results.append({"name": f"{name}/play_match", "value": round(matches, 1), "unit": "games/s"})
    return {"bench": "engine", "python": platform.python_version(), "cpus": os.cpu_count(), "results": results}


if __name__ == "__main__":
    with quiet_interrupt("bench.engine"):
        result = main()
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")

"""The ``arena`` command: the composition root.

Each command is one function that imports what it needs inside its body, so that
``arena serve`` never pays for torch, transformers or textual. Expected failures (an
unknown game, a bad config, a wrong seat count) end in one line on stderr and exit
status 2; a failure while running ends with status 1; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

USAGE_ERROR = 2
FAILURE = 1


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit status 2."""


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _parse_pairs(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--config takes key=value, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


# ---- arena games ---------------------------------------------------------------------


def cmd_games(args: argparse.Namespace) -> int:
    import games

    specs = [game.spec for game in games.all()]
    if args.json:
        _print_json([spec.to_dict() for spec in specs])
        return 0
    rows = []
    for spec in specs:
        players = str(spec.min_players) if spec.min_players == spec.max_players else f"{spec.min_players}-{spec.max_players}"
        rows.append(
            (
                spec.name,
                spec.category,
                players,
                "yes" if spec.simultaneous else "no",
                "yes" if spec.hidden_information else "no",
                spec.description,
            )
        )
    print(_table(rows, ("game", "category", "players", "simultaneous", "hidden info", "description")))
    return 0


# ---- arena bots ----------------------------------------------------------------------


def cmd_bots(args: argparse.Namespace) -> int:
    import games
    from bots.registry import all_bots, option_types

    if args.game:
        games.get(args.game)
    found = all_bots(args.game)
    if args.json:
        _print_json(
            [
                {
                    "name": bot.name,
                    "description": bot.description,
                    "games": None if bot.games is None else list(bot.games),
                    "options": {
                        key: {"type": getattr(t, "__name__", str(t)), "default": d} for key, (t, d) in option_types(bot).items()
                    },
                }
                for bot in found
            ]
        )
        return 0
    rows = []
    for bot in found:
        options = ", ".join(f"{key}={default}" for key, (_t, default) in option_types(bot).items())
        rows.append((bot.name, "any" if bot.games is None else ", ".join(bot.games), options or "-", bot.description))
    print(_table(rows, ("bot", "games", "options (defaults)", "description")))
    return 0


# ---- arena play ----------------------------------------------------------------------


def _seat_for(spec: str, game: str, seed: int, seat: int) -> Any:
    from arena.seats import LocalSeat
    from bots.registry import make_bot, seat_seed

    bot = make_bot(spec, game, seat_seed(seed, seat))
    return LocalSeat(bot, name=bot.label)


def _printer(names: Sequence[str]) -> Callable[[Any], None]:
    def show(event: Any) -> None:
        if event.kind == "rejected":
            data = event.data
            print(f"  seat {data['seat']} ({names[data['seat']]}): {data['action']!r} rejected: {data['reason']}")
        elif event.kind == "step":
            moves = ", ".join(f"seat {seat} ({names[seat]}): {action}" for seat, action in event.data["actions"].items())
            print(f"step {event.step}  {moves}")
            print("\n".join("    " + line for line in event.data["view"]["text"].splitlines()))

    return show


def _outcome_words(result: Any) -> list[str]:
    """Outcomes for people: ranked games say the rank."""
    return [f"rank {rank}" if word == "ranked" else word for word, rank in zip(result.outcomes, result.ranks, strict=True)]


def _print_result(result: Any) -> None:
    print(f"\n{result.game}: {result.status}, {result.reason}" + (f" ({result.detail})" if result.detail else ""))
    words = _outcome_words(result)
    rows = [
        (seat, name, f"{ret:g}", words[seat]) for seat, (name, ret) in enumerate(zip(result.players, result.returns, strict=True))
    ]
    print(_table(rows, ("seat", "player", "return", "outcome")))


def cmd_play(args: argparse.Namespace) -> int:
    import trio

    import games
    from arena.match import Clock, play_match

    game = games.get(args.game)
    config = game.new(_parse_pairs(args.config), args.seed).config
    if len(args.seat) != config.players:
        raise UsageError(
            f"{game.spec.name} with {config.players} players needs {config.players} --seat options, got {len(args.seat)}"
        )
    seats = [_seat_for(spec, game.spec.name, args.seed, i) for i, spec in enumerate(args.seat)]
    human = any(spec.split(":")[0] == "human" for spec in args.seat)
    move_ms = args.move_ms or (3_600_000 if human else 10_000)
    on_event = None if args.json else _printer([seat.name for seat in seats])
    if not args.json:
        print(f"{game.spec.title}: " + " vs ".join(seat.name for seat in seats) + f" (seed {args.seed})")
    result = trio.run(
        lambda: play_match(
            game, seats, config=config, seed=args.seed, clock=Clock(move_ms=move_ms), max_retries=args.retries, on_event=on_event
        )
    )
    if args.json:
        _print_json(result.to_dict())
    else:
        _print_result(result)
    return 0


# ---- arena demo ----------------------------------------------------------------------


def demo_lineup(game_name: str, players: int) -> list[str]:
    """Seat 0 gets the game's own expert bot, the others play ``random``; in
    cooperative games every seat is the expert, since they play as one team."""
    import games
    from bots.registry import all_bots

    experts = sorted((not bot.showcase, bot.name) for bot in all_bots(game_name) if bot.games is not None)
    if not experts:
        return ["random"] * players
    expert = experts[0][1]
    if games.get(game_name).spec.category == "cooperative":
        return [expert] * players
    return [expert] + ["random"] * (players - 1)


def cmd_demo(args: argparse.Namespace) -> int:
    import trio

    import games
    from arena.match import play_match

    async def run_all() -> list[Any]:
        results = []
        for game in games.all():
            players = game.spec.default_config.players
            seats = [_seat_for(spec, game.spec.name, args.seed, i) for i, spec in enumerate(demo_lineup(game.spec.name, players))]
            results.append(await play_match(game, seats, seed=args.seed))
        return results

    results = trio.run(run_all)
    if args.json:
        _print_json([r.summary() | {"players": r.players} for r in results])
        return 0
    rows = [
        (
            r.game,
            " vs ".join(r.players),
            " / ".join(f"{x:g}" for x in r.returns),
            " / ".join(_outcome_words(r)),
            r.reason,
            len(r.actions),
        )
        for r in results
    ]
    print(_table(rows, ("game", "players", "returns", "outcomes", "reason", "steps")))
    return 0


# ---- the parser ----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="A self-play game arena for LLM agents: games, bots, matches, a live server.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    games_cmd = commands.add_parser("games", help="list the games", description="List every registered game.")
    games_cmd.add_argument("--json", action="store_true", help="print the full specs as JSON")
    games_cmd.set_defaults(run=cmd_games)

    bots_cmd = commands.add_parser("bots", help="list the reference bots", description="List the bots a --seat spec can name.")
    bots_cmd.add_argument("--game", help="only the bots that can play this game")
    bots_cmd.add_argument("--json", action="store_true", help="print as JSON")
    bots_cmd.set_defaults(run=cmd_bots)

    play = commands.add_parser(
        "play",
        help="play one match in this process",
        description="Play one match between bots (or you: --seat human) and show every turn.",
        epilog="example: arena play tic-tac-toe --seat perfect --seat human",
    )
    play.add_argument("game", help="a game name (see: arena games)")
    play.add_argument(
        "--seat",
        action="append",
        default=[],
        metavar="SPEC",
        help="a bot spec per seat, in seat order: name or name:key=value,...",
    )
    play.add_argument("--seed", type=int, default=0, help="the match seed: same seed, same deals (default 0)")
    play.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="a game config value; repeat for more")
    play.add_argument("--move-ms", type=int, default=None, help="time per move in ms (default 10000, one hour with a human seat)")
    play.add_argument("--retries", type=int, default=2, help="illegal answers retried before a forfeit (default 2)")
    play.add_argument("--json", action="store_true", help="print only the match record as JSON")
    play.set_defaults(run=cmd_play)

    demo = commands.add_parser(
        "demo", help="one match of every game among built-in bots", description="Play one match of each game."
    )
    demo.add_argument("--seed", type=int, default=0, help="the seed of every match (default 0)")
    demo.add_argument("--json", action="store_true", help="print the results as JSON")
    demo.set_defaults(run=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from games.api import GameError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, GameError) as error:
        print(f"arena: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return FAILURE
    except (OSError, RuntimeError, ValueError) as error:
        print(f"arena: error: {error}", file=sys.stderr)
        return FAILURE


if __name__ == "__main__":
    sys.exit(main())

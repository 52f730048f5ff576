"""The ``arena`` command: the composition root.

Each command is one function that imports what it needs inside its body, so that
``arena serve`` never pays for torch, transformers or textual. Expected failures (an
unknown game, a bad config, a wrong seat count) end in one line on stderr and exit
status 2; a failure while running ends with status 1; Ctrl-C with status 130 (the shell's
128 + SIGINT) and one line saying how to pick up again; output piped into a reader that
stops early (``| head``) with status 141, silently, as any filter; never a traceback.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import logging
import math
import os
import secrets
import sqlite3
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

USAGE_ERROR = 2
FAILURE = 1
INTERRUPTED = 130
BROKEN_PIPE = 141  # the shell's 128 + SIGPIPE, as for any filter whose reader went away
RERUN = "run the same command again"


EXTRA_OF_MODULE = {"torch": "train", "transformers": "train", "tokenizers": "train", "safetensors": "train"}
"""Modules of an optional extra that a command imports only when it gets there (an ``llm`` seat,
a training run): ``pip install -e .`` brings none of them."""


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit status 2."""


def _print_json(data: Any) -> None:
    """Strict JSON, as the server's: a sum past the largest float (costs of 1e308 each) printed
    ``Infinity``, which JSON parsers refuse (found by a QA helper)."""
    from arena.protocol import dumps

    print(dumps(data, indent=2, default=str))


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ip_address(text: str) -> str:
    from arena.server import canonical_ip

    address = canonical_ip(text)
    if address is None:
        raise argparse.ArgumentTypeError(f"expected an IP address, got {text!r}")
    return address


def int_from(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type for an integer in a range, so that a negative count or an impossible
    port is a usage error naming the option, not a surprise later (a port past 65535 used
    to wrap around to another one)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def _positive_number(maximum: float) -> Callable[[str], float]:
    """An argparse type for a finite number above 0 and at most ``maximum`` (a rate)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not 0 < value <= maximum:  # NaN fails too
            raise argparse.ArgumentTypeError(f"must be above 0 and at most {maximum:.0f}, got {text}")
        return value

    return parse


PORT = int_from(0, 65_535)
COUNT = int_from(0)
POSITIVE = int_from(1)
RESAMPLES = int_from(2, 100_000)  # two draws at least for a percentile bootstrap; 100,000 take minutes


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

    shown = args.doc or args.game
    if shown:
        from bots.catalog import catalog_doc, game_doc

        print(catalog_doc() if shown == "all" else game_doc(shown), end="")
        return 0
    every = games.all()
    if args.json:
        _print_json([game.spec.to_dict() for game in every])
        return 0
    rows = []
    for game in every:
        spec = game.spec
        players = str(spec.min_players)
        if spec.min_players != spec.max_players:  # a range says nothing of what `arena play` seats unless told
            players = f"{spec.min_players}-{spec.max_players} ({game.Config().players})"
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
    print(_table(rows, ("game", "category", "players (default)", "simultaneous", "hidden info", "description")))
    return 0


# ---- arena bots ----------------------------------------------------------------------


def cmd_bots(args: argparse.Namespace) -> int:
    import games
    from bots.registry import all_bots, option_types

    if args.game is not None:  # "" too: it listed the bots of every game
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


def _each(*handlers: Callable[[Any], None] | None) -> Callable[[Any], None] | None:
    """One event handler calling each of those given, in order; None if none is."""
    given = [handler for handler in handlers if handler is not None]
    if not given:
        return None

    def handle(event: Any) -> None:
        for handler in given:
            handler(event)

    return handle


class Terminal:
    """The people at one terminal, asked in seat order when one step asks several of them (a
    simultaneous game): trio starts the seats' turns in no fixed order, so answers typed or
    piped in seat order went to whichever seat happened to ask first."""

    def __init__(self, people: AbstractSet[int]) -> None:
        import trio

        self.people = people
        self.state: Any = None  # the match's game, from its start event: who moves at this step
        self.answered: set[tuple[int, int]] = set()  # (step, seat)
        self.changed = trio.Event()

    def watch(self, event: Any) -> None:
        if event.kind == "start":
            self.state = event.state

    def seat(self, seat: Any) -> Any:
        """``seat``, asked once the people before it at the same step have answered."""
        import trio

        from arena.seats import LocalSeat

        async def act(turn: Any) -> Any:
            if turn.attempt == 0:
                while any((turn.step, other) not in self.answered for other in self._ahead_of(turn.seat)):
                    await self.changed.wait()
            try:
                return await seat.act(turn)
            finally:
                self.answered.add((turn.step, turn.seat))
                self.changed.set()
                self.changed = trio.Event()

        return LocalSeat(act, name=seat.name)

    def _ahead_of(self, seat: int) -> list[int]:
        movers = () if self.state is None else self.state.to_move()
        return [other for other in movers if other in self.people and other < seat]


def _printer(names: Sequence[str], unexplained: AbstractSet[int] = frozenset()) -> Callable[[Any], None]:
    """Every step as the public sees it, and every rejected move; the reasons of the seats in
    ``unexplained`` are left out: a reason is the game's answer to the mover, who may know
    what a person at this terminal must not (a partner's rejected hint told them which
    colour their own hidden cards were not)."""

    from arena.protocol import visible  # what the seats wrote is shown, never obeyed by the terminal

    def show(event: Any) -> None:
        if event.kind == "rejected":
            seat = event.data["seat"]
            reason = "" if seat in unexplained else f": {event.data['reason']}"
            action = event.data["action"]  # None: a model's reply without one ("None rejected")
            said = "no action" if action is None else repr(action)
            print(visible(f"  seat {seat} ({names[seat]}): {said} rejected{reason}", one_line=True))
        elif event.kind == "step":
            moves = ", ".join(f"seat {seat} ({names[seat]}): {action}" for seat, action in event.data["actions"].items())
            # numbered as the store, the export and the protocol number it (the event counts steps played)
            print(visible(f"step {event.step - 1}  {moves}", one_line=True))
            print(visible("\n".join("    " + line for line in event.state.public_view()["text"].splitlines())))

    return show


def _outcome_words(result: Any) -> list[str]:
    """Outcomes for people: ranked games say the rank."""
    return [f"rank {rank}" if word == "ranked" else word for word, rank in zip(result.outcomes, result.ranks, strict=True)]


def _print_result(result: Any) -> None:
    from arena.protocol import visible

    detail = f" ({visible(result.detail, one_line=True)})" if result.detail else ""
    print(f"\n{result.game}: {result.status}, {result.reason}{detail}")
    words = _outcome_words(result)
    rows = [
        (seat, name, f"{ret:g}", words[seat]) for seat, (name, ret) in enumerate(zip(result.players, result.returns, strict=True))
    ]
    print(_table(rows, ("seat", "player", "return", "outcome")))


def cmd_play(args: argparse.Namespace) -> int:
    import functools

    import trio

    import games
    from arena.match import Clock, check_max_retries, play_match
    from arena.protocol import visible
    from arena.store import Store
    from games.api import check_seed

    game = games.get(args.game)
    config = game.config_of(_parse_pairs(args.config))  # a game that cannot set up is a void match, played below
    people = {seat for seat, spec in enumerate(args.seat) if spec.split(":")[0] == "human"}
    # a person remembers the last deal (the bot's card, shown at the end): seed 0 every time dealt it again
    seed = args.seed if args.seed is not None else secrets.randbits(62) if people else 0
    check_seed(seed)
    if len(args.seat) != config.players:
        wanted = len(args.seat)
        other = game.spec.min_players <= wanted <= game.spec.max_players and wanted != config.players
        hint = f" (for {wanted} players: --config players={wanted})" if other else ""
        raise UsageError(
            f"{game.spec.name} with {config.players} players needs {config.players} --seat options, got {wanted}{hint}"
        )
    terminal = Terminal(people) if len(people) > 1 else None
    seats = [_seat_for(spec, game.spec.name, seed, i) for i, spec in enumerate(args.seat)]
    if terminal is not None:
        seats = [terminal.seat(seat) if i in people else seat for i, seat in enumerate(seats)]
    try:
        clock = Clock(move_ms=(3_600_000 if people else 10_000) if args.move_ms is None else args.move_ms)
        retries = (HUMAN_RETRIES if people else 2) if args.retries is None else args.retries  # typos are not moves
        check_max_retries(retries)
    except ValueError as error:
        raise UsageError(str(error)) from None
    store = Store(args.db) if args.db else None  # opened first: a bad --db must not cost a played match
    unexplained = set(range(len(seats))) - people if people else set()  # bots among themselves: every reason
    show = None if args.json else _printer([seat.name for seat in seats], unexplained)
    on_event = _each(None if terminal is None else terminal.watch, show)
    if not args.json:
        print(f"{game.spec.title}: " + " vs ".join(seat.name for seat in seats) + f" (seed {seed})")
    unrecorded = None
    try:
        rules = {"config": config, "seed": seed, "clock": clock, "max_retries": retries, "on_event": on_event}
        result = trio.run(functools.partial(play_match, game, seats, **rules))
        if store is not None:
            try:
                store.finish_match(result)
            except sqlite3.Error as error:  # locked or full since it was opened: the match is still shown
                unrecorded = f"the match was not recorded in {args.db}: {error}"
    finally:
        if store is not None:
            store.close()
    if args.json:
        _print_json(result.to_dict())
    else:
        _print_result(result)
    if unrecorded is not None:
        print(f"arena: error: {unrecorded}", file=sys.stderr)
        return FAILURE
    if result.engine_fault:  # the game's own bug: a script running matches must hear of it
        detail = visible(result.detail, one_line=True)
        print(f"arena: error: {game.spec.name} failed, so the match is void: {detail}", file=sys.stderr)
        return FAILURE
    return 0


# ---- arena serve ---------------------------------------------------------------------


def url_host(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets (``ws://[::1]:8765``; ``ws://::1:8765``
    names no server)."""
    return f"[{host}]" if ":" in host else host


def cmd_serve(args: argparse.Namespace) -> int:
    import signal

    import trio

    from arena.match import Clock
    from arena.server import (
        OPEN_FILES_SPARE,
        ArenaServer,
        Limits,
        bound_port,
        open_listeners,
        raise_open_files_limit,
        tune_gc_for_serving,
    )
    from arena.store import StoreError

    admin_token = None
    if args.admin_token_file:
        try:
            with open(args.admin_token_file, encoding="utf-8") as handle:
                admin_token = handle.read().strip()
                stat = os.fstat(handle.fileno())  # the file read, not whatever the path names by now
        except OSError as error:
            raise UsageError(f"cannot read the admin token from {args.admin_token_file}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"cannot read the admin token from {args.admin_token_file}: it is not UTF-8 text") from None
        if not admin_token:
            raise UsageError(f"{args.admin_token_file} is empty")
        _check_admin_token_file(args.admin_token_file, stat, admin_token)
    if args.read_only and not os.path.exists(args.db):
        raise UsageError(f"--read-only needs an existing store; {args.db} does not exist")
    try:
        server = ArenaServer(
            args.db,
            clock=Clock(move_ms=args.move_ms),
            max_retries=args.retries,
            limits=Limits(
                grace_ms=args.grace_ms,
                max_matches=args.max_matches,
                max_connections=args.max_connections,
                max_per_address=args.max_per_address,
                max_spectators=args.max_spectators,
                login_attempts=args.login_attempts,
                login_window_s=args.login_window,
                rate=args.rate,
                burst=args.burst,
            ),
            read_only=args.read_only,
            admin_token=admin_token,
            trusted_proxies=args.trusted_proxy,
        )
    except ValueError as error:  # the clock, the limits and the retries check themselves
        raise UsageError(str(error)) from None

    async def still_stopping(signals: AsyncIterator[int]) -> None:
        async for signum in signals:
            name = signal.Signals(signum).name
            print(f"arena: {name} again: still shutting down (clients get a few heartbeats at most)", file=sys.stderr, flush=True)

    async def main() -> None:
        try:
            listeners = await open_listeners(args.host, args.port)
        except OSError as error:  # the port taken, an address not of this machine, a name that does not resolve
            raise UsageError(f"cannot listen on {url_host(args.host)}:{args.port}: {error.strerror or error}") from None
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, *_hangup()) as signals:
            async with trio.open_nursery() as nursery:
                await nursery.start(server.run, listeners)
                if server.new_admin_token:
                    print(f"admin token (shown once, stored hashed): {server.new_admin_token}", flush=True)
                mode = " (read-only)" if args.read_only else ""
                print(f"arena serving on ws://{url_host(args.host)}:{bound_port(listeners)}{mode}, store {args.db}", flush=True)
                async for signum in signals:
                    print(f"arena: {signal.Signals(signum).name}, shutting down", file=sys.stderr, flush=True)
                    break
                async with trio.open_nursery() as stopping:
                    # Another signal now would be queued and raised once the receiver closes,
                    # making a clean stop exit as killed: said and let be, the shutdown being bounded.
                    stopping.start_soon(still_stopping, signals)
                    await server.shutdown()
                    stopping.cancel_scope.cancel()
                stopped.append(True)

    # Dated lines on stderr for a process that runs for weeks: the arena's own at INFO (one a
    # match), the libraries' warnings and errors only (websockets logs every HTTP request at INFO).
    _log_visibly("%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("arena").setLevel(logging.INFO)
    tune_gc_for_serving()
    open_files = raise_open_files_limit()
    if open_files < args.max_connections + OPEN_FILES_SPARE:
        logging.getLogger("arena").warning(
            "the open-files limit (%d) is below --max-connections (%d) plus %d for the store and the listeners: "
            "past about %d connections new ones fail (EMFILE) instead of being refused; raise `ulimit -n` or lower "
            "--max-connections",
            open_files,
            args.max_connections,
            OPEN_FILES_SPARE,
            max(0, open_files - OPEN_FILES_SPARE),
        )
    stopped: list[bool] = []  # the shutdown is done: a signal after it, as the process exits, changes nothing
    try:  # outside the receiver above (its last moments), SIGTERM is Ctrl-C (main)
        trio.run(main)
    except* StoreError as refused:  # not a store, or another server serves it: nothing was served
        raise UsageError(str(_first_leaf(refused))) from None
    except* KeyboardInterrupt:
        if not stopped:
            raise
    return 0


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    """The first exception inside nested groups, as trio's nurseries wrap one failure."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


# ---- arena bot -----------------------------------------------------------------------


def cmd_bot_token(args: argparse.Namespace) -> int:
    """register / rotate, on the store directly or through a running server."""
    if bool(args.db) == bool(args.url):
        raise UsageError("give either --db (on the server's machine) or --url with --admin-token")
    if args.db:
        from arena.store import Store, StoreError, check_new_bot_name, is_served

        new_store = not os.path.exists(args.db)
        if args.action == "rotate" and new_store:  # no bot to rotate in a store this would make: a typo in --db
            raise UsageError(f"no store at {args.db}")
        if args.action == "register":
            check_new_bot_name(args.name)  # a refused name leaves no new store behind
        store = Store(args.db)
        try:
            token = store.register_bot(args.name) if args.action == "register" else store.rotate_token(args.name)
        except StoreError as error:
            raise UsageError(str(error)) from None
        finally:
            store.close()
        if new_store:  # a typo in --db would otherwise go unseen until the server does not know the bot
            print(f"arena: note: made a new store at {args.db}", file=sys.stderr)
        if args.action == "rotate" and is_served(store.path):
            print(
                f"arena: note: a server is serving {args.db}: the old token logs in no more, but a bot connected with it "
                "stays until it reconnects; rotate with --url and --admin-token to cut it off now",
                file=sys.stderr,
            )
    else:
        admin_token = _admin_token(args)
        if not admin_token:
            raise UsageError(f"--url needs --admin-token, or the {ADMIN_TOKEN_ENV} environment variable")
        _check_server_url(args.url)
        answer = _admin_request(args.url, admin_token, args.action, name=args.name)
        token = answer["token"]
        facts = ["was connected (its connection is closed)"] if answer.get("connected") else []
        playing = answer.get("playing") or 0
        if playing:  # a bot away within the reconnection window holds them too
            facts.append(f"holds {playing} match{'es' * (playing != 1)} in play")
        if facts:
            advice = ": log it in with the new token, or they are forfeited as their clocks run out" if playing else ""
            print(f"arena: note: {args.name} {' and '.join(facts)}{advice}", file=sys.stderr)
    print(f"{'registered' if args.action == 'register' else 'new token for'} {args.name}; keep this token, it is shown once:")
    print(token)
    return 0


def _admin_request(url: str, admin_token: str, kind: str, **fields: Any) -> dict[str, Any]:
    """Send one admin message to a running server and return its answer."""
    import trio
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
    from websockets.trio.client import connect

    from arena import protocol as p
    from bots.client import connect_failure

    async def ask() -> dict[str, Any]:
        async with connect(p.endpoint(url, p.BOT_PATH), proxy=None) as ws:
            try:
                await ws.send(p.encode(p.message("hello", bot="admin", token=admin_token), False))
                await ws.send(p.encode(p.message(kind, **fields), False))
                async for frame in ws:
                    reply = p.decode(frame)
                    if reply["t"] == "error":
                        raise UsageError(f"{reply['code']}: {reply['message']}")
                    if reply["t"] not in ("welcome", "pong"):
                        return reply
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == p.CLOSE_AUTH_FAILED:
                    raise UsageError(f"{url} refused the admin token") from None
        raise UsageError("the server closed the connection (is the admin token right?)")

    try:
        return trio.run(ask)
    except (OSError, InvalidHandshake, trio.BrokenResourceError) as error:  # a failure while running, as for bot run
        raise RuntimeError(f"cannot reach {url}: {connect_failure(error)}") from None
    except InvalidURI as error:
        raise UsageError(f"bad server URL {url!r}: {error} (a server's URL is ws://host:port)") from None


def _log_visibly(line: str) -> None:
    """Log to stderr in ``line``'s format, through ``_VisibleFormatter``."""
    handler = logging.StreamHandler()
    handler.setFormatter(_VisibleFormatter(line))
    logging.basicConfig(handlers=[handler])


class _VisibleFormatter(logging.Formatter):
    """A log line with control characters made visible (``arena.protocol.visible``): a void's
    reason or a client's text must not act on the terminal an operator tails the log in."""

    def format(self, record: logging.LogRecord) -> str:
        from arena.protocol import visible

        return visible(super().format(record))


def _hangup() -> list[int]:
    """SIGHUP, for a command inside a trio run to take as a stop where the process takes it: a
    script's background job ignores SIGINT, and SIGHUP then killed the server at once, its live
    matches left to the next start; none under nohup, which ignores it."""
    import signal

    hangup = getattr(signal, "SIGHUP", None)
    return [] if hangup is None or signal.getsignal(hangup) is signal.SIG_IGN else [hangup]


@contextlib.contextmanager
def _stop_signals_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (a scheduler, `timeout`, `kill`) and SIGHUP (its terminal or ssh session closed)
    stop the command as Ctrl-C does: SIGINT's own handler (trio's inside a run) raises the
    interrupt where it is safe, and the command says it was interrupted, its temporary files
    removed, instead of dying without a word. One ignored (SIGHUP under nohup) stays ignored.

    Where SIGINT is ignored (a script's background job) it must still stop the command: outside
    a trio run it raises the interrupt itself; inside one, which took no interrupt handler, it
    kills the process as the default action does (``arena bot run`` listens for it there)."""
    import signal
    import threading

    # signal handlers are the main thread's to set: a command run from another thread (a test, an
    # embedding program) leaves them to that program
    stops = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    main_thread = threading.current_thread() is threading.main_thread()
    forwarded = [signum for signum in stops if main_thread and signal.getsignal(signum) is not signal.SIG_IGN]
    ctrl_c_ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN

    def stop(signum: int, frame: object) -> None:
        if not ctrl_c_ignored:
            signal.raise_signal(signal.SIGINT)
            return
        trio = sys.modules.get("trio")
        if trio is None or not trio.lowlevel.in_trio_run():
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    previous = {signum: signal.signal(signum, stop) for signum in forwarded}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def cmd_bot_run(args: argparse.Namespace) -> int:
    import trio

    import games
    from arena.protocol import visible
    from arena.seats import SeatForfeit, Turn, in_worker_thread, policy_callable
    from bots.client import BotStopped, end_said, run_bot
    from bots.registry import BotSpecError, get, make_bot, parse_spec, secret_seed

    spec = parse_spec(args.spec)
    config = _parse_pairs(args.config)
    _check_server_url(args.url)
    if args.token is None:
        args.token = os.environ.get(TOKEN_ENV)
        if not args.token:
            raise UsageError(f"give the bot's token with --token or the {TOKEN_ENV} environment variable (unseen by `ps`)")
    for flag, value in (("--name", args.name), ("--token", args.token)):
        if value is not None and not _is_text(value):
            raise UsageError(f"{flag} must be text (UTF-8): it goes into the hello")
    if args.challenge is not None:
        from arena.store import BOT_NAME_PATTERN, valid_bot_name

        if len(args.game) != 1 or args.self_play:
            raise UsageError("--challenge plays one --game against another bot: give --game once, without --self-play")
        if not valid_bot_name(args.challenge):  # no registered bot is called so: it would be waited for in vain
            raise UsageError(f"--challenge {args.challenge!r} is no bot's name: names are {BOT_NAME_PATTERN}")
        if args.challenge == (args.name or spec.name):
            raise UsageError("--challenge names this bot itself; to play itself, seek with --self-play")
    if (config or args.self_play) and not args.game:
        raise UsageError("--config and --self-play are about the seeks: give --game too")
    cap = 0.0  # a spending cap (the openai bot's max_cost), the same for every game
    # unknown games, bots, options and configs fail here, before connecting; seeking nothing, the
    # bot is checked in one game it plays
    for name in args.game or [*(get(spec.name).games or games.names())][:1]:
        game = games.get(name)
        game.config_of(config)
        cap = float(getattr(make_bot(spec, game.spec.name), "max_cost", 0.0))

    class PerSeat:
        """A fresh bot per seat of each match (its seed and state belong to that seat: playing
        itself, one object for both seats would see both hands) with one spending account: a
        cap such as the openai bot's max_cost holds for the run, not per match."""

        def __init__(self) -> None:
            self.players: dict[tuple[str, int], Any] = {}  # (match, seat) -> bot
            self.closed_spent = 0.0
            self.closed_unmetered = False

        @property
        def spent(self) -> float:
            return self.closed_spent + sum(float(getattr(bot, "spent", 0.0)) for bot in self.players.values())

        @property
        def unmetered(self) -> bool:
            """Whether a bot had a reply without usage: what is spent is unknown, so the cap
            stops the run, or every new match would pay a reply before giving up."""
            return self.closed_unmetered or any(getattr(bot, "unmetered", False) for bot in self.players.values())

        @property
        def exhausted(self) -> bool:
            return cap > 0 and (self.unmetered or self.spent >= cap)

        def why(self) -> str:
            if self.unmetered:
                return f"the endpoint gave a reply without token usage, so spending cannot be held to the ${cap:g} cap"
            return f"spent ${self.spent:.6f} of the ${cap:g} cap"

        def finish(self, match: str) -> None:
            for key in [key for key in self.players if key[0] == match]:
                bot = self.players.pop(key)
                self.closed_spent += float(getattr(bot, "spent", 0.0))
                self.closed_unmetered |= bool(getattr(bot, "unmetered", False))

        async def act(self, turn: Turn) -> Any:
            if self.exhausted:
                raise SeatForfeit("spending_cap", self.why())
            bot = self.players.get((turn.match_id, turn.seat))
            if bot is None:
                try:
                    bot = self.players[(turn.match_id, turn.seat)] = make_bot(spec, turn.game, secret_seed())
                except BotSpecError as error:  # a match made for it of a game it does not play: said, no traceback
                    raise SeatForfeit("cannot_play", str(error)) from None
            act, is_async = policy_callable(bot)
            return await act(turn) if is_async else await in_worker_thread(act, turn)

    policy = PerSeat()

    welcomes = 0

    def report(msg: dict[str, Any]) -> None:
        nonlocal welcomes
        if msg["t"] == "welcome":
            welcomes += 1
            if welcomes == 1:  # once: until another bot seeks the game, nothing else is said
                seeking = f"seeking {', '.join(args.game)}" if args.game else "waiting for matches made for it"
                if args.challenge is not None:
                    seeking = f"challenging {args.challenge} to {args.game[0]}"
                print(f"arena: {msg.get('bot', args.name)} connected to {args.url}; {seeking}", file=sys.stderr, flush=True)
        elif msg["t"] == "match_end":
            policy.finish(msg["match"])
            if not args.json:
                returns = "" if msg.get("returns") is None else f", returns {msg['returns']}"
                line = f"match {msg['match']}: {end_said(msg)}, {_how_it_went(msg)}{returns}"
                print(visible(line, one_line=True), flush=True)  # with a detail an opponent wrote

    stop = trio.Event()
    # websockets logs a stalled connection's keepalive timeout with its traceback, ahead of the
    # SDK's own line saying the bot reconnects and why: stderr keeps one line per event
    logging.getLogger("websockets.client").setLevel(logging.CRITICAL)
    # the SDK's warnings quote the server (why it closed, what it refused): shown, never obeyed
    _log_visibly("arena: %(message)s")  # as every line the command prints itself

    async def main() -> Any:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_on_first_signal, stop)
            try:
                return await run_bot(
                    policy,
                    args.url,
                    args.name or spec.name,
                    args.token,
                    games=args.game,
                    config=config,
                    matches=args.matches,
                    at_once=args.at_once if args.at_once is not None or cap <= 0 else 1,
                    self_play=args.self_play,
                    challenge=args.challenge,
                    delay_ms=args.delay,
                    on_message=report,
                    stop=stop,
                )
            except BotStopped as stopped:  # returned: raised here, the nursery would wrap it in a group
                return stopped
            finally:
                nursery.cancel_scope.cancel()

    run = trio.run(main)
    if isinstance(run, BotStopped):
        print(visible(f"arena: error: {run}", one_line=True), file=sys.stderr)
        return FAILURE
    if args.json:
        _print_json(run.results)
    matches = run.played_said()
    if policy.exhausted:
        print(f"arena: stopped after {matches}: {policy.why()}", file=sys.stderr)
    elif stop.is_set():
        print(f"arena: stopped as asked, after {matches}", file=sys.stderr)
    return 0


def _how_it_went(end: Mapping[str, Any]) -> str:
    """A ``match_end`` from its seat's side: win, loss, draw, forfeit or a rank (void: the seat alone)."""
    seat, outcomes, ranks = end["seat"], end.get("outcomes"), end.get("ranks")
    if not outcomes:
        return f"seat {seat}"
    word = outcomes[seat]
    if word == "ranked" and ranks:
        word = f"rank {ranks[seat]} of {len(ranks)}"
    return f"{word} as seat {seat}"


async def _stop_on_first_signal(stop: Any) -> None:
    """The first Ctrl-C or SIGTERM winds a bot down (``run_bot``'s ``stop``): it plays out its
    matches in play, which walking away would leave to the reconnection window and then lose
    as forfeits; the next one stops it at once. Only the main thread may take signals: run
    from another thread (a test, an embedding program), it is left to that program. A bot
    started in the background by a script ignores SIGINT, and SIGTERM is its way to stop."""
    import signal
    import threading

    import trio

    if threading.current_thread() is not threading.main_thread():
        return
    # SIGTERM and SIGHUP come as SIGINT (``_stop_signals_as_ctrl_c``), unless SIGINT is ignored
    taken = (signal.SIGTERM, *_hangup()) if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else (signal.SIGINT,)
    with trio.open_signal_receiver(*taken) as signals:
        async for _ in signals:
            break
        after_echo = "\n" if sys.stderr.isatty() else ""
        print(f"{after_echo}{STOPPING}", file=sys.stderr, flush=True)
        stop.set()
        # `timeout` signals the command and then its whole process group: the command gets the
        # signal twice at once, one request, and must not take the second for "stop at once"
        with trio.move_on_after(SIGNAL_ECHO_S):
            async for _ in signals:
                pass


STOPPING = "arena: stopping: no new match; any in play is played out (a second Ctrl-C or signal stops at once and forfeits them)"
SIGNAL_ECHO_S = 0.5
"""A second signal this soon after the first is the same request (see ``_stop_on_first_signal``)."""


# ---- arena ratings and report --------------------------------------------------------


def _refuse_store_files(out: str, db: str) -> None:
    """An export's --out must not be the store or one of SQLite's files beside it: the store
    was replaced, and its -wal, written while a server ran, broke it for every new reader."""
    from arena.store import side_files

    store = os.path.realpath(db)  # SQLite names its files after the store's real path, not a link to it
    for own in (store, *side_files(store)):
        same = os.path.exists(out) and os.path.exists(own) and os.path.samefile(out, own)
        if same or os.path.realpath(out) == own:
            whose = "the store itself" if own == store else f"the store's own file {own}"
            raise UsageError(f"--out {out} is {whose}; name another file for the export")


def _open_store(path: str) -> Any:
    from arena.store import Store, StoreError

    try:
        return Store(path, read_only=True)
    except StoreError as error:
        raise UsageError(str(error)) from None


RANKS_NOTE = (
    "rank: 1 + the bots whose 95% interval (mu ± 1.96 sigma) lies wholly above, so bots that cannot be told apart"
    " share one; mu '-': not rated yet (a cooperative game outside duplicate groups, a group not played out);"
    " docs/RATINGS.md explains every column"
)


Boards = Mapping[str, Sequence[dict[str, Any]]]  # variant -> leaderboard rows


def _print_boards(boards: Boards, held_out: Boards | None = None) -> None:
    """Each variant's leaderboard, the held-out games apart, and once what a rank means: two
    bots at rank 1, or a higher mu below a lower one, looked wrong without it."""
    from arena.ratings.leaderboard import NOTHING_RATED

    held_out = held_out or {}
    for title, shown in (("", boards), ("held-out game: ", held_out)):
        for variant, rows in shown.items():
            print(f"\n{title}{variant}")
            print(_leaderboard_table(rows) if rows else NOTHING_RATED)
    if any(boards.values()) or any(held_out.values()):
        print(f"\n{RANKS_NOTE}")


def _leaderboard_table(rows: Sequence[dict[str, Any]]) -> str:
    """One game variant's leaderboard, as `arena ratings --game` and tournaments print it."""
    from arena.ratings.leaderboard import TABLE_HEADER, table_cells

    return _table([table_cells(r) for r in rows], TABLE_HEADER)


def cmd_ratings(args: argparse.Namespace) -> int:
    store = _open_store(args.db)
    try:
        return _show_ratings(args, store)
    finally:
        store.close()


def _show_ratings(args: argparse.Namespace, store: Any) -> int:
    import games
    from arena.ratings.leaderboard import NOTHING_RATED, game_leaderboards, overall

    if args.game:
        if args.game not in games.names() and not store.has_matches_of(args.game):
            games.get(args.game)  # unknown: said with a did-you-mean (an uninstalled game keeps its board)
        boards = game_leaderboards(store, args.game, resamples=args.resamples)
        if args.json:
            _print_json(boards)
            return 0
        if not boards:
            print(f"no finished matches of {args.game} in {args.db}")
        _print_boards(boards)
        return 0
    whole = overall(store)
    if args.json:
        _print_json({"bots": [], "games": []} if whole is None else {"bots": whole.rows(), "games": whole.game_rows()})
        return 0
    if whole is None:
        print(f"{args.db}: {NOTHING_RATED}")
        return 0
    print(
        _table(
            [(r["bot"], f"{r['skill']:.3f}", f"{r['mass']:.3f}", r["games"]) for r in whole.rows()],
            ("bot", "skill", "mass", "games"),
        )
    )
    print()
    rows = [
        (g["variant"], "-" if g["difficulty"] is None else f"{g['difficulty']:.3f}", f"{g['mass']:.3f}")
        for g in whole.game_rows()
    ]
    print(_table(rows, ("game", "difficulty", "mass")))
    return 0


def _need_matplotlib(what: str, extra: str) -> None:
    """Plots import matplotlib only when they draw: without it, a command stopped half-way with a traceback."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise UsageError(f"{what} needs matplotlib: pip install 'selfplay-arena[{extra}]' ({error})") from None


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    _need_matplotlib("the report", "report")
    from arena.ratings.report import TITLE, write_report

    if not args.out:
        raise UsageError("give --out a folder name (an empty one would fill the current folder)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out} is a file; the report is a folder (README.md and plots): name a folder")
    page = out / "README.md"
    if page.is_file() and not page.read_text(encoding="utf-8", errors="replace").startswith(TITLE):
        # a project's own page, replaced without a word (found by a QA helper)
        raise UsageError(f"{page} is not a ratings report, and the report would replace it: name another --out folder")
    store = _open_store(args.db)
    try:
        page = write_report(store, out, resamples=args.resamples)
    except OSError as error:  # a folder that cannot be made or written (/dev/null/x): a usage error, not status 1
        raise UsageError(f"cannot write the report into {args.out}: {error.strerror or error}") from None
    finally:
        store.close()
    print(f"report written to {page}")
    return 0


# ---- arena demo ----------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    """The quickstart tournament (tournaments/quickstart.toml) into a fresh temporary store."""
    if args.watch:
        return _demo_watch(args)
    if args.delay is not None:
        raise UsageError("--delay paces the bots of --watch; add --watch")

    import tempfile
    from pathlib import Path

    import tournaments
    from tournaments.config import load

    config = load(Path(tournaments.__file__).parent / "quickstart.toml")
    with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
        return _run_and_show(config, Path(tmp) / "demo.db", as_json=args.json)


# ---- arena example -------------------------------------------------------------------


EXAMPLES = {
    "quickstart": ("tournaments", "quickstart.toml", "a tournament of built-in bots on three games (arena tournament run)"),
    "nightly": ("tournaments", "nightly.toml", "the nightly pipeline: train, play, rate, promote (arena nightly)"),
    "train-ipd": ("trainer", "train-ipd.toml", "a training run on the iterated prisoner's dilemma (arena train run)"),
}
"""The files the commands' help starts from, shipped inside the packages: installed from a
wheel, there is no repository to find tournaments/quickstart.toml in (found by a QA helper)."""


def cmd_example(args: argparse.Namespace) -> int:
    if args.name is None:
        width = max(map(len, EXAMPLES))
        for name, (_, _, about) in EXAMPLES.items():
            print(f"{name:<{width}}  {about}")
        return 0
    from importlib.resources import files

    package, file, _ = EXAMPLES[args.name]
    print(files(package).joinpath(file).read_text(encoding="utf-8"), end="")
    return 0


HUMAN_RETRIES = 10
"""Retries of a match with a human seat: a person who mistypes three times is no reason to lose."""
DEMO_DELAY_MS = 400  # slow enough to follow a game in `arena demo --watch`
# games and bots of `arena demo --watch`: one pair of bots per game, each pair playing on
DEMO_WATCH = (
    ("tic-tac-toe", ("perfect", "random")),
    ("connect-four", ("alphabeta:depth=4", "random")),
    ("kuhn-poker", ("equilibrium", "random")),
    ("item-negotiation", ("negotiation-heuristic", "random")),
    ("iterated-prisoners-dilemma", ("tit-for-tat", "win-stay-lose-shift")),
)


def _demo_watch(args: argparse.Namespace) -> int:
    """A local server on a temporary store, bots playing over the wire, and the spectator
    on it; quitting the app (q, Ctrl-C) stops every process it started."""
    import tempfile
    from pathlib import Path

    delay = DEMO_DELAY_MS if args.delay is None else args.delay
    watch_app = _watch_app()
    from arena.store import Store
    from bots.registry import parse_spec
    from tui.launch import Children, ServerProcess, arena_command

    with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
        db = Path(tmp) / "demo.db"
        store = Store(db)
        bots = []
        for game, specs in DEMO_WATCH:
            prefix = "".join(word[0] for word in game.split("-"))
            for spec in specs:
                name = f"{prefix}-{parse_spec(spec).name}"
                bots.append((spec, name, store.register_bot(name), game))
        store.close()
        server = ServerProcess(db, extra=["--max-matches", "1"])
        children = Children()
        try:
            url = server.start()
            for spec, name, token, game in bots:
                command = arena_command("bot", "run", spec, "--url", url, "--name", name)
                command += ["--token", token, "--game", game, "--delay", str(delay)]
                children.spawn(command, log=Path(tmp) / f"{name}.log")
            watch_app(url, title="arena demo").run()
        finally:
            server.stop()  # first: it voids the matches, so the bots, told to stop, have none to play out
            children.stop()
    return 0


# ---- arena tournament ----------------------------------------------------------------


def _progress_line(progress: Any) -> str:
    width = 24
    filled = width * progress.done // max(progress.total, 1)
    eta = "?" if progress.eta is None else f"{progress.eta:.0f}s"
    bar = "#" * filled + "." * (width - filled)
    return f"[{bar}] {progress.done}/{progress.total} done, {progress.running} running, ETA {eta}"


def _progress_bar() -> Callable[[Any], None]:
    """Progress on stderr: redrawn in place on a terminal, a line per tenth otherwise."""
    tty = sys.stderr.isatty()
    shown = {"done": -1}

    def show(progress: Any) -> None:
        if tty:
            sys.stderr.write("\r" + _progress_line(progress) + ("\n" if progress.done == progress.total else ""))
        elif progress.done != shown["done"] and (
            progress.done == progress.total or progress.done % max(1, progress.total // 10) == 0
        ):
            shown["done"] = progress.done
            sys.stderr.write(_progress_line(progress) + "\n")
        sys.stderr.flush()

    return show


def _run_and_show(
    config: Any, db: Any, *, as_json: bool, url: str | None = None, admin_token: str = "", resumable: bool = False
) -> int:
    """Run a tournament (in this process into ``db``, or through the server at ``url``) with a
    progress bar on stderr, then print its leaderboards, and the held-out games and opponents apart.
    ``resumable``: the same command plays what is left (not the demo's throwaway store)."""
    from tournaments.runner import held_out_opponents, leaderboards, run_tournament, split_held_out

    if url is None:
        summary = run_tournament(config, db, progress=_progress_bar())
        boards = leaderboards(config, db)
    else:
        from tournaments.remote import RemoteUsageError, remote_leaderboards, run_remote

        try:
            summary = run_remote(config, url, admin_token, progress=_progress_bar())
        except RemoteUsageError as error:
            raise UsageError(str(error)) from None
        try:
            boards = remote_leaderboards(config, url)
        except Exception:  # the server gone since, say: what was played, and what is void, is said first
            if summary.voided:
                _say_void(summary.voided, summary.void_details, f": {RERUN} to play them")
            raise
    boards, held_out_boards = split_held_out(config, boards)
    opponents = held_out_opponents(config, summary.finished)
    if as_json:
        _print_json(
            {
                "tournament": config.name,
                "played": summary.played,
                "skipped": summary.skipped,
                "voided": summary.voided,
                "void_details": summary.void_details,
                "leaderboards": boards,
                "held_out": {"games": held_out_boards, "opponents": opponents},
                "standings": summary.standings,
            }
        )
    else:
        _show_tournament(config, summary, boards, held_out_boards, opponents)
    if summary.voided:  # a void match is to be played again: the run is not done
        _say_void(summary.voided, summary.void_details, f": {RERUN} to play them" if resumable else "")
        return FAILURE
    return 0


def _say_void(count: int, details: Sequence[str], again: str) -> None:
    """How many matches ended void and why, so that one a rerun cannot help (a match that
    reached max_steps, a game's fault) shows; ``again`` says how to play them."""
    counts = collections.Counter(detail or "no reason given" for detail in details)
    why = "; ".join(f"{detail} (x{times})" if times > 1 else detail for detail, times in counts.items())
    from arena.protocol import visible

    print(visible(f"arena: {count} void" + (f" ({why})" if why else "") + again, one_line=True), file=sys.stderr)


def _show_tournament(
    config: Any, summary: Any, boards: dict[str, Any], held_out_boards: dict[str, Any], opponents: list[dict[str, Any]]
) -> None:
    """The text form of ``_run_and_show``: the counts, then each leaderboard as a table."""
    print(
        f"{config.name}: {summary.played} played, {summary.skipped} already done, {summary.voided} void, {summary.elapsed:.1f}s"
    )
    _print_boards(boards, held_out_boards)
    for label, points in summary.standings.items():
        print(f"\n{label}: swiss standings (points: 1 a win, 0.5 a draw, a bye counts as won games)")
        print(_table([(name, f"{score:g}") for name, score in points.items()], ("participant", "points")))
    if opponents:
        print(f"\nheld-out opponents ({', '.join(config.held_out_opponents)}): mean return against them and against the rest")
        header = ("game", "participant", "vs held-out", "mean return", "vs the rest", "mean return")
        cells = [
            (
                r["game"],
                r["participant"],
                r["held_out_matches"],
                f"{r['held_out_mean_return']:.3g}",
                r["other_matches"],
                "-" if r["other_mean_return"] is None else f"{r['other_mean_return']:.3g}",
            )
            for r in opponents
        ]
        print(_table(cells, header))


def cmd_tournament_run(args: argparse.Namespace) -> int:
    from tournaments.config import TournamentConfigError, load
    from tournaments.runner import remembered_deals

    if args.url and args.db:
        raise UsageError("give either --db (play in this process) or --url with --admin-token (play through a server)")
    admin_token = _admin_token(args)
    if bool(args.url) != bool(admin_token):
        raise UsageError(f"--url and --admin-token (or the {ADMIN_TOKEN_ENV} environment variable) go together")
    if args.url:
        _check_server_url(args.url)
    from arena.store import StoreError

    try:
        config = load(args.file)
        for label, instead in remembered_deals(config):
            print(
                f"arena: warning: {label}: a remote bot plays a deal it has played before, and one that remembers it"
                f" knows the second time what chance dealt (its opponent's cards); {instead} (docs/TOURNAMENTS.md)",
                file=sys.stderr,
            )
        try:
            return _run_and_show(
                config, args.db or "arena.db", as_json=args.json, url=args.url, admin_token=admin_token, resumable=True
            )
        except* StoreError as refused:  # not a store, locked, read-only: raised inside the runner's nursery
            error = _first_leaf(refused)
            # the file's schedule is not the one the store played: said of the file, as its other errors are
            raise UsageError(f"{args.file}: {error}" if getattr(error, "kind", "") == "schedule" else str(error)) from None
        except* TournamentConfigError as changed:  # a game's config changed since its matches were played
            raise UsageError(str(_first_leaf(changed))) from None
    except TournamentConfigError as error:
        raise UsageError(str(error)) from None


# ---- arena nightly -------------------------------------------------------------------


def _print_night(record: dict[str, Any]) -> None:
    tour = record["tournament"]
    counts = f"{tour['played']} played, {tour['skipped']} already done, {tour['voided']} void"
    print(f"night of {record['night']}: {tour['name']}: {counts}")
    _print_boards(tour["leaderboards"], tour["held_out"]["games"])
    print()
    for name, entry in record["policies"].items():
        decision = entry["decision"]
        verdict = f"promoted {decision['new']}" if decision["promote"] else f"kept {decision['old']}"
        print(f"{name}: trained {entry['new']['bot']} ({entry['new']['checkpoint']}); {verdict}: {decision['reason']}")
    print(f"record: {record['record']}; report: {record['page']}")


def cmd_nightly(args: argparse.Namespace) -> int:
    import importlib.util

    for module, extra in (("torch", "train"), ("matplotlib", "report")):
        if importlib.util.find_spec(module) is None:
            raise UsageError(f"the nightly pipeline needs {module}: pip install 'selfplay-arena[{extra}]'")
    from tournaments.nightly import NightlyError, load, night_process, parse_at, run_night, serve_nightly
    from tui.launch import arena_command

    try:
        at = parse_at(args.at) if args.at is not None else None  # "" (an unset variable) ran one night and stopped
        config = load(args.file)
    except NightlyError as error:
        raise UsageError(str(error)) from None
    if at is not None:
        command = arena_command("nightly", args.file) + (["--db", args.db] if args.db else [])
        command += ["--json"] if args.json else []
        running = False

        def one_night() -> int:
            nonlocal running
            running = True  # until the night's process returns: an interrupt meanwhile stopped the night
            status = night_process(command)  # a fresh process a night: what a night loads ends with it
            running = False
            return status

        try:
            serve_nightly(one_night, at, log=lambda line: print(f"arena nightly: {line}", file=sys.stderr, flush=True))
        except KeyboardInterrupt:
            if running:  # a night was under way: what it finished is kept, as the resume hint says
                raise
            print("arena: interrupted while waiting for the next night", file=sys.stderr)
            return INTERRUPTED
        return 0
    from arena.store import StoreError
    from tournaments.config import TournamentConfigError

    # The night's tournament was begun from the file as it then was (an interrupted night): it
    # failed with a traceback, and its advice to rename the tournament, which the pipeline names
    # (found by a QA helper).
    begun = "; tonight's tournament was begun from the file as it was: put it back to finish the night"
    try:
        try:
            record = run_night(
                config,
                db=args.db,
                log=lambda line: print(line, file=sys.stderr, flush=True),
                progress=None if args.json else _progress_bar(),
            )
        except* StoreError as refused:
            error = _first_leaf(refused)
            if getattr(error, "kind", "") != "schedule":
                raise UsageError(str(error)) from None
            raise UsageError(
                f"{args.file}: tonight's tournament was begun with another schedule (its games, participants and their"
                " bot options, games per pairing or rounds changed since): put the file back as it was to finish the night"
            ) from None
        except* TournamentConfigError as changed:
            raise UsageError(f"{_first_leaf(changed)}{begun}") from None
    except NightlyError as error:
        raise UsageError(str(error)) from None
    if args.json:
        _print_json(record)
    else:
        _print_night(record)
    tour = record["tournament"]
    if tour["voided"]:  # the night is not finished
        _say_void(tour["voided"], tour.get("void_details", []), f": {RERUN} on the same date to play them")
        return FAILURE
    return 0


# ---- arena train ---------------------------------------------------------------------


def cmd_train_init_model(args: argparse.Namespace) -> int:
    from trainer.checkpoints import is_model_folder
    from trainer.tiny_model import SIZES, init_model

    if args.size not in SIZES:
        raise UsageError(f"unknown model size {args.size!r}; the sizes are {', '.join(SIZES)}")
    if not args.dir:
        raise UsageError("give the folder to build the model in (an empty name would fill the current folder)")
    if is_model_folder(args.dir) and not args.force:
        raise UsageError(f"{args.dir} already holds a model; pass --force to replace it")
    if os.path.exists(args.dir) and not os.path.isdir(args.dir):  # found before the tokenizer's training, not after
        raise UsageError(f"{args.dir} is a file, not a folder to write a model into")
    if os.path.isdir(args.dir) and os.listdir(args.dir) and not is_model_folder(args.dir) and not args.force:
        raise UsageError(
            f"{args.dir} holds other files, not a model: name an empty or new folder, or pass --force to write beside them"
        )
    out = init_model(args.dir, size=args.size, seed=args.seed)
    print(f"built a {args.size} model and its tokenizer in {out}")
    return 0


def _train_progress(progress: Any) -> None:
    row = progress.metrics
    eta = progress.elapsed / progress.update * (progress.updates - progress.update)
    width = 24
    bar = "#" * (width * progress.update // progress.updates)
    print(
        f"[{bar:.<{width}}] update {progress.update}/{progress.updates}: return vs sampled opponents {row['return_mean']:.3f}, "
        f"entropy {'n/a' if row['entropy'] is None else format(row['entropy'], '.3f')}, "
        f"{row['turns_per_s']:.0f} turns/s, ETA {eta:.0f}s",
        file=sys.stderr,
        flush=True,
    )


def cmd_train_run(args: argparse.Namespace) -> int:
    from trainer.config import TrainConfigError, load

    try:
        overrides = {key: value for key, value in (("updates", args.updates), ("out_dir", args.out)) if value is not None}
        config = load(args.config, overrides)  # --out stands for a missing out_dir too
    except (TrainConfigError, ValueError) as error:
        raise UsageError(str(error)) from None
    from games.render import count
    from trainer.run import Interrupted, train

    def announce(matches: int) -> None:  # minutes on a CPU, silent without this line; said once the run has started
        first = f"update 0, {count(matches, 'match', 'matches')}"
        print(f"playing the gauntlet first ({first}), then {count(config.updates, 'update')}", file=sys.stderr)

    try:  # a scheduler's SIGTERM keeps the weights as Ctrl-C does (main)
        result = train(
            config,
            overwrite=args.overwrite,
            progress=None if args.json else _train_progress,
            before_gauntlet=None if args.json else announce,
        )
    except TrainConfigError as error:  # out_dir, or [store] turns none of which can be trained on: keys of the file
        raise UsageError(f"{args.config}: {error}") from None
    except Interrupted as stop:
        args.resume = (
            f"kept {stop.kept} after {stop.update} of {stop.updates} updates (no final checkpoint)"
            if stop.kept is not None
            else "no update had finished; nothing was kept"
        )
        raise
    last = [row for row in result.metrics if row["kind"] == "update"][-1]
    if args.json:
        _print_json({"run_dir": str(result.run_dir), "final": str(result.final), "last_update": last})
    else:
        print(f"trained {config.updates} updates; metrics in {result.run_dir}/metrics.jsonl; final checkpoint {result.final}")
        idle = sum(bool(row.get("skipped")) for row in result.metrics if row["kind"] == "update")
        if idle:  # every match forfeited, say, or every outcome matched its baseline: nothing was learned then
            changed = "the final weights are the initial ones" if idle == config.updates else "the weights did not change then"
            said = f"{count(idle, 'update')} of {config.updates} trained on nothing"
            print(f"arena: {said}: no turn had an advantage to learn from ({changed})", file=sys.stderr)
        print(f"play it: arena play {config.games[0].name} --seat llm:model={result.final} --seat random")
    return 0


def cmd_train_plot(args: argparse.Namespace) -> int:
    _need_matplotlib("arena train plot", "train")
    from trainer.plot import plot_run

    try:
        written = plot_run(args.run_dir)
    except (FileNotFoundError, ValueError) as error:
        raise UsageError(str(error)) from None
    for path in written:
        print(path)
    return 0


# ---- arena export --------------------------------------------------------------------


def cmd_export_trajectories(args: argparse.Namespace) -> int:
    from games.render import count
    from trainer.export import ExportError, held_back, trajectory_rows, write_jsonl, write_lines

    to_stdout = args.out == "-"
    if to_stdout and args.json:
        raise UsageError("--json prints its summary on stdout, where --out - writes the lines: give one of them")
    if not args.out:
        raise UsageError("--out needs a file name, or - for stdout")
    if not to_stdout:
        _refuse_store_files(args.out, args.db)
    if args.since_hours is not None and not (math.isfinite(args.since_hours) and args.since_hours > 0):
        raise UsageError(f"--since-hours must be a positive number of hours, got {args.since_hours}")
    since = None if args.since_hours is None else time.time() - args.since_hours * 3600
    store = _open_store(args.db)
    try:
        found = trajectory_rows(
            store, game=args.game, bot=args.bot, limit=args.limit, since=since, exclude_opponents=args.exclude_opponent
        )
        rows, matches = write_lines(found, sys.stdout) if to_stdout else write_jsonl(found, args.out)
        held = held_back(store, game=args.game, bot=args.bot, since=since, exclude_opponents=args.exclude_opponent)
    except ExportError as error:
        raise UsageError(str(error)) from None
    finally:
        store.close()
    if args.json:
        _print_json({"out": args.out, "rows": rows, "matches": matches, "held_back": held})
    else:  # beside the lines on stdout, on stderr
        wrote = f"wrote {count(rows, 'turn')} of {count(matches, 'match', 'matches')} to {'stdout' if to_stdout else args.out}"
        if held:
            waiting = count(held, "finished match", "finished matches")
            wrote += f"; {waiting} held back: their deal is still to be played elsewhere"
        print(wrote, file=sys.stderr if to_stdout else sys.stdout)
    return 0


def cmd_export_store(args: argparse.Namespace) -> int:
    from pathlib import Path

    from arena.store import copy_store, is_served, side_files
    from games.render import count

    if not args.out:
        raise UsageError("--out needs a file name")
    _refuse_store_files(args.out, args.db)
    target = Path(args.out).resolve()
    if target.is_dir():
        raise UsageError(f"--out {args.out} is a folder; name a file in it, such as {target / 'arena-backup.db'}")
    if not target.parent.is_dir():
        raise UsageError(f"--out {args.out}: no folder {target.parent}")
    if target.exists() and not target.is_file():  # the copy replaces it: /dev/null became a file, a FIFO hung the check below
        raise UsageError(f"--out {args.out} is not a regular file; name a file to write the copy to")
    if target.exists() and is_served(target):
        raise UsageError(f"--out {args.out} is a store a server is serving; stop the server before replacing its store")
    if os.path.realpath(args.db) in side_files(target):  # removed with the store replaced
        raise UsageError(f"--db {args.db} is named as a file of --out {args.out}'s own; copy it to another name")
    store = _open_store(args.db)
    try:
        matches = store.count("matches")
        copy_store(store, target)
    except OSError as error:
        raise UsageError(f"cannot write {args.out}: {error.strerror or error}") from None
    finally:
        store.close()
    size = target.stat().st_size
    if args.json:
        _print_json({"out": args.out, "matches": matches, "bytes": size})
    else:
        print(f"copied {args.db} ({count(matches, 'match', 'matches')}, {size / 1e6:.1f} MB) to {args.out}")
    return 0


# ---- arena watch ---------------------------------------------------------------------


def _watch_app() -> Any:
    """The spectator app, once it can run: it draws on a terminal, and into a pipe or a file
    it wrote escape sequences until killed."""
    # Textual draws on the process's standard error: with it redirected, the screen went into the file
    drawn_on = sys.__stderr__
    if not (sys.stdin.isatty() and drawn_on is not None and drawn_on.isatty()):
        raise UsageError("the spectator draws on a terminal: run it in one (for data, read /watch or /api, PROTOCOL.md)")
    try:
        from tui.app import WatchApp
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("textual", "rich"):  # rich comes with textual
            raise
        raise UsageError("the spectator needs textual: pip install 'selfplay-arena[tui]'") from None
    return WatchApp


def _is_text(value: str) -> bool:
    """Whether a command-line argument is text: bytes that are not UTF-8 come in as surrogates."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check_server_url(url: str) -> None:
    """A URL no connection can be made to is a usage error, said before the app takes the screen."""
    from arena import protocol as p

    try:
        p.http_base(url)
    except ValueError as error:
        raise UsageError(str(error)) from None


def cmd_watch(args: argparse.Namespace) -> int:
    if args.db is None:
        url = args.url or "ws://127.0.0.1:8765"
        _check_server_url(url)
        _watch_app()(url, match=args.match).run()
        return 0
    from tui.launch import ServerProcess

    _open_store(args.db).close()  # a missing file or one that is no store: one line, before a server starts
    watch_app = _watch_app()
    server = ServerProcess(args.db, read_only=True)
    url = server.start()  # a LaunchError (a RuntimeError) ends in one line and status 1
    try:
        watch_app(url, match=args.match, title=f"arena watch · {args.db}").run()
    finally:
        server.stop()
    return 0


# ---- the parser ----------------------------------------------------------------------


class _Version(argparse.Action):
    """The installed package's version, and the wire protocol's (what bots must speak); looked
    up only when asked, not by every command."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from arena.protocol import PROTOCOL_VERSION

        try:
            installed = version("selfplay-arena")
        except PackageNotFoundError:  # run from a checkout that was never installed
            installed = "(not installed)"
        print(f"arena {installed}, protocol {PROTOCOL_VERSION}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from arena.match import MAX_CLOCK_MS, MAX_RETRIES
    from games.api import MAX_SEED

    parser = argparse.ArgumentParser(
        prog="arena",
        description="A self-play game arena for LLM agents: games, bots, matches, a live server.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version of arena and of its protocol")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    games_cmd = commands.add_parser(
        "games",
        help="list the games",
        description="List every registered game, or print the catalog (rules, config keys, actions, bots) as markdown.",
        epilog="regenerate the catalog page: arena games --doc all > docs/GAMES.md",
    )
    games_shown = games_cmd.add_mutually_exclusive_group()
    games_shown.add_argument("--json", action="store_true", help="print the full specs as JSON")
    games_shown.add_argument(
        "--doc", metavar="NAME", help="print the markdown catalog entry of game NAME, or the whole catalog page with 'all'"
    )
    games_shown.add_argument("game", nargs="?", metavar="GAME", help="print this game's catalog entry, as --doc GAME does")
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
    play.add_argument(
        "--seed", type=int, default=None, help="the match seed: same seed, same deals (default 0; a fresh one when a human plays)"
    )
    play.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="a game config value; repeat for more")
    play.add_argument("--move-ms", type=int, default=None, help="time per move in ms (default 10000, one hour with a human seat)")
    play.add_argument(
        "--retries",
        type=int,
        default=None,
        help=f"illegal answers retried before a forfeit (default 2, {HUMAN_RETRIES} with a human seat)",
    )
    play.add_argument("--json", action="store_true", help="print only the match record as JSON")
    play.add_argument("--db", help="also record the match in this SQLite store (as the server does)")
    play.set_defaults(run=cmd_play)

    serve = commands.add_parser(
        "serve",
        help="run the live arena server",
        description="Serve bots on /bot, spectators on /watch and JSON on /health, /metrics and /api/. Stop with Ctrl-C.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=PORT, default=8765, help="port (default 8765; 0 picks a free one and prints it)")
    serve.add_argument(
        "--db", default="arena.db", help="the SQLite store (default arena.db); one server per store, any number --read-only"
    )
    serve.add_argument(
        "--read-only",
        action="store_true",
        help="serve replays and /api from an existing store, no bots; it writes nothing stored"
        " (SQLite makes the -wal and -shm it reads through beside the store if they are not there)",
    )
    serve.add_argument(
        "--admin-token-file",
        help="read the admin token from this file instead of making one; it replaces the store's for good, also for"
        " later starts without the file (with --read-only: in place of the store's, for this run only)",
    )
    serve.add_argument(
        "--move-ms", type=int_from(1, MAX_CLOCK_MS), default=10_000, help="time per move in ms for lobby matches (default 10000)"
    )
    serve.add_argument(
        "--grace-ms",
        type=int_from(0, MAX_CLOCK_MS),
        default=30_000,
        help="the reconnection window: how long a disconnected bot may resume (default 30000);"
        " not the per-move network grace, which is a match clock's grace_ms (1000)",
    )
    serve.add_argument(
        "--retries", type=int_from(0, MAX_RETRIES), default=2, help="illegal answers retried before a forfeit (default 2)"
    )
    serve.add_argument(
        "--max-matches", type=int_from(1, MAX_CLOCK_MS), default=8, help="matches one bot may play at once (default 8)"
    )
    serve.add_argument(
        "--rate",
        type=_positive_number(MAX_CLOCK_MS),
        default=50.0,
        help="messages a second one connection may send, sustained (default 50); the SDK paces a bot under it, so"
        " fast scripted bots in many matches at once (a remote tournament) play faster with a higher one",
    )
    serve.add_argument(
        "--burst", type=int_from(1, MAX_CLOCK_MS), default=100, help="messages one connection may send at once (default 100)"
    )
    serve.add_argument(
        "--max-connections",
        type=int_from(1, MAX_CLOCK_MS),
        default=10_000,
        help="open websockets, bots and spectators, at once (default 10000)",
    )
    serve.add_argument(
        "--max-per-address",
        type=int_from(1, MAX_CLOCK_MS),
        default=1_000,
        help="open websockets from one client address (default 1000); behind a reverse proxy every client has"
        " the proxy's address: name the proxy with --trusted-proxy, or raise this",
    )
    serve.add_argument(
        "--max-spectators",
        type=int_from(1, MAX_CLOCK_MS),
        default=5_000,
        help="open /watch websockets at once (default 5000): spectators need no token, and must leave the bots room",
    )
    serve.add_argument(
        "--login-attempts",
        type=int_from(1, 1_000_000),
        default=10,
        help="failed tries to log in as one bot from one address before that bot is locked from there for the"
        " rest of --login-window (default 10); behind a reverse proxy, name it with --trusted-proxy, or every"
        " client has the proxy's address and anyone could lock a bot out",
    )
    serve.add_argument(
        "--login-window",
        type=int_from(1, MAX_CLOCK_MS // 1000),
        default=60,
        metavar="SECONDS",
        help="how long the failed tries to log in are counted from the first (default 60)",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        type=_ip_address,
        metavar="ADDRESS",
        help="the IP address of a reverse proxy that appends the client's address to X-Forwarded-For: the limits"
        " per address count that client (repeatable)",
    )
    serve.set_defaults(run=cmd_serve)

    ratings = commands.add_parser(
        "ratings",
        help="the leaderboard: TrueSkill, Nash averaging, records",
        description="Per bot: TrueSkill mu, sigma, mu-3sigma, record, forfeits, format errors, Nash rating with its "
        "bootstrap interval and equilibrium mass. Without --game: the agents-versus-games table and each game's difficulty.",
    )
    ratings.add_argument("--game", help="one game's leaderboard (one table per variant)")
    ratings.add_argument("--db", default="arena.db", help="the store (default arena.db)")
    ratings.add_argument(
        "--resamples", type=RESAMPLES, default=200, help="bootstrap resamples for the Nash intervals (default 200)"
    )
    ratings.add_argument("--json", action="store_true", help="print as JSON")
    ratings.set_defaults(run=cmd_ratings)

    report = commands.add_parser(
        "report",
        help="write the ratings report (markdown and PNG plots)",
        description=(
            "Write the ratings report into --out: README.md with every variant's leaderboard, and per variant the"
            " pairwise win-rate heatmap, the equilibrium mixture and TrueSkill over time, as PNG (needs matplotlib)."
        ),
    )
    report.add_argument("--db", default="arena.db", help="the store (default arena.db)")
    report.add_argument("--out", required=True, help="the folder to write README.md and the plots into")
    report.add_argument("--resamples", type=RESAMPLES, default=200, help="bootstrap resamples (default 200)")
    report.set_defaults(run=cmd_report)

    bot = commands.add_parser("bot", help="register bots, rotate tokens, run a bot", description="Manage and run bots.")
    bot_commands = bot.add_subparsers(dest="bot_command", metavar="ACTION", required=True)
    for action, text in (("register", "create a bot and print its token"), ("rotate", "give a bot a new token")):
        sub = bot_commands.add_parser(
            action, help=text, description=f"{text[0].upper()}{text[1:]}; the token is printed once, alone on the last line."
        )
        sub.add_argument("name", help="the bot's name")
        sub.add_argument("--db", help="the server's store, when on the server's machine")
        sub.add_argument("--url", help="a running server's base URL (ws://host:port), with --admin-token")
        sub.add_argument("--admin-token", help=f"the server's admin token (with --url; or set {ADMIN_TOKEN_ENV})")
        sub.set_defaults(run=cmd_bot_token, action=action)
    run_bot = bot_commands.add_parser(
        "run",
        help="play a bot spec over the wire",
        description="Connect a bot from the registry to a server and play matches.",
        epilog="example: arena bot run alphabeta:depth=4 --url ws://127.0.0.1:8765 --name c4bot --token T --game connect-four",
    )
    run_bot.add_argument("spec", help="a bot spec: name or name:key=value,...")
    run_bot.add_argument("--url", default="ws://127.0.0.1:8765", help="the server's base URL (default ws://127.0.0.1:8765)")
    run_bot.add_argument("--name", help="the registered bot name (default: the spec's bot name)")
    run_bot.add_argument("--token", help=f"the bot's token (or set {TOKEN_ENV}: a command line is seen by every account)")
    run_bot.add_argument(
        "--game",
        action="append",
        default=[],
        help="a game to seek; repeat for several. Without it the bot seeks nothing and plays the matches an admin"
        " makes for it (a tournament's remote:NAME participant, create_match)",
    )
    run_bot.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="game config for the seeks")
    run_bot.add_argument(
        "--matches", type=POSITIVE, default=None, help="stop after this many matches (void ones too; default: play on)"
    )
    run_bot.add_argument(
        "--at-once",
        type=POSITIVE,
        default=None,
        metavar="N",
        help="play at most N matches at once (default: as many as the server allows; 1 with a spending cap,"
        " which is then passed by one reply at most)",
    )
    run_bot.add_argument(
        "--delay", type=COUNT, default=0, metavar="MS", help="wait this long before each move (at most half its time)"
    )
    run_bot.add_argument("--self-play", action="store_true", help="allow matches against itself")
    run_bot.add_argument(
        "--challenge",
        metavar="BOT",
        help="instead of seeking: challenge this bot to each match, in the one --game, taking one of its seeks"
        " (refused while it is away or not seeking: tried again every few seconds)",
    )
    run_bot.add_argument(
        "--json",
        action="store_true",
        help="print the match results as JSON at the end (without --matches, the last 1000 at least)",
    )
    run_bot.set_defaults(run=cmd_bot_run)

    tournament = commands.add_parser(
        "tournament", help="run tournaments from TOML files", description="Tournaments: formats, schedules, leaderboards."
    )
    tournament_commands = tournament.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    tournament_run = tournament_commands.add_parser(
        "run",
        help="play a tournament file into a store, or through a live server",
        description="Play every scheduled match of a tournament, with a progress bar on stderr, then print each game's "
        "leaderboard (held-out games and opponents apart). With --db (the default), in this process into the store; "
        "with --url and --admin-token, through a running server: the server makes every match and keeps the results, "
        "the in-process participants are registered on it as tournament bots (a later run, or another tournament, "
        "gives them fresh tokens) and connected from this process, and remote:NAME participants must already be "
        "connected. A participant whose name is taken on the server by a bot no tournament registered stops the run "
        "before it plays (status 2): a tournament never takes over someone's bot; list it as remote:NAME instead. "
        "Resumable: run it again after a stop (Ctrl-C exits 130) and only the missing matches are played.",
        epilog="examples: arena example quickstart > cup.toml && arena tournament run cup.toml --db arena.db · "
        "arena tournament run cup.toml --url ws://127.0.0.1:8765 --admin-token T",
    )
    tournament_run.add_argument("file", help="the tournament's TOML file (`arena example quickstart` prints one)")
    tournament_run.add_argument("--db", help="the store to play into, in this process (default arena.db)")
    tournament_run.add_argument("--url", help="instead: a running server's base URL (ws://host:port), with --admin-token")
    tournament_run.add_argument("--admin-token", help=f"the server's admin token (with --url; or set {ADMIN_TOKEN_ENV})")
    tournament_run.add_argument("--json", action="store_true", help="print the summary and leaderboards as JSON")
    tournament_run.set_defaults(run=cmd_tournament_run, resume=f"the finished matches are kept: {RERUN} to resume")

    nightly = commands.add_parser(
        "nightly",
        help="the nightly training tournament: train, play, rate, report, promote",
        description="Run one night of a nightly file: train each policy from its current checkpoint for its budget "
        "(on fresh self-play and its stored turns), enter the new checkpoints as bots, play the tournament into the "
        "store, write the ratings report with what changed since the last night, and promote a new checkpoint to "
        "current only if the gate's test (SPRT or bootstrap) says it beats the current one. Each night is recorded "
        "in nightly/DATE/night.json next to the store; a night cut short resumes when run again the same day. "
        "docs/NIGHTLY.md explains the file and every step.",
        epilog="examples: arena example nightly > nightly.toml && arena nightly nightly.toml --db arena.db · cron: "
        "30 2 * * * cd /srv/arena && arena nightly nightly.toml --db arena.db >> nightly.log 2>&1",
    )
    nightly.add_argument("file", help="the nightly TOML file (`arena example nightly` prints one)")
    nightly.add_argument("--db", help="the store (default: the file's db, else arena.db)")
    nightly.add_argument(
        "--at", metavar="HH:MM", help="run every day at this local time, for ever (each night in a fresh process)"
    )
    nightly.add_argument("--json", action="store_true", help="print the night record as JSON")
    nightly.set_defaults(run=cmd_nightly, resume=f"what the night finished is kept: {RERUN} on the same date to resume")

    demo = commands.add_parser(
        "demo",
        help="the quickstart tournament among built-in bots",
        description="Run tournaments/quickstart.toml into a fresh temporary store and print the leaderboards.",
    )
    demo.add_argument("--json", action="store_true", help="print the leaderboards as JSON")
    demo.add_argument(
        "--watch",
        action="store_true",
        help="instead: start a local server with bots playing several games on and on, and watch them in the terminal",
    )
    demo.add_argument(
        "--delay", type=COUNT, metavar="MS", help=f"with --watch: each bot's wait before a move (default {DEMO_DELAY_MS})"
    )
    demo.set_defaults(run=cmd_demo)

    example = commands.add_parser(
        "example",
        help="print an example file to start from",
        description="List the example files, or print one to standard output, to copy and edit: the tournament, "
        "nightly and training files the other commands take.",
        epilog="example: arena example quickstart > cup.toml && arena tournament run cup.toml --db arena.db",
    )
    example.add_argument("name", nargs="?", choices=list(EXAMPLES), metavar="NAME", help=f"one of: {', '.join(EXAMPLES)}")
    example.set_defaults(run=cmd_example)

    train = commands.add_parser(
        "train",
        help="train language-model policies by self-play",
        description="Build a small model, train policies by self-play and against opponents, plot the curves.",
    )
    train_commands = train.add_subparsers(dest="train_command", metavar="ACTION", required=True)
    init_model = train_commands.add_parser(
        "init-model",
        help="build a small model and tokenizer offline",
        description="Build a small Qwen2-style model (random weights) and a tokenizer trained on the games' texts, "
        "saved with save_pretrained: a starting point that needs no download.",
        epilog="example: arena train init-model models/tiny --size tiny",
    )
    init_model.add_argument("dir", help="the folder to write")
    init_model.add_argument("--size", default="tiny", help="tiny (2 layers, 64 wide; the default) or small (4 layers, 256 wide)")
    init_model.add_argument(
        "--seed", type=int_from(0, MAX_SEED), default=0, help="the seed of the weights and the tokenizer's corpus (default 0)"
    )
    init_model.add_argument("--force", action="store_true", help="replace a model already in DIR")
    init_model.set_defaults(run=cmd_train_init_model)
    train_run = train_commands.add_parser(
        "run",
        help="run a training configuration",
        description="Train the configured model: rollouts through the match loop, advantages, PPO updates, "
        "checkpoints, a gauntlet against fixed bots. docs/TRAINING.md explains every key. out_dir must be new or "
        "empty (--overwrite clears an earlier run); only a finished run saves checkpoints/final, and Ctrl-C keeps "
        "checkpoints/interrupted-N, N the last finished update (interrupted-in-N when it stopped update N's PPO step "
        "partway).",
        epilog="example: arena example train-ipd > ipd.toml && arena train run ipd.toml --updates 2",
    )
    train_run.add_argument("config", help="the TOML file")
    train_run.add_argument("--updates", type=int_from(1), help="override the number of updates")
    train_run.add_argument("--out", help="override out_dir (it must be absent or empty, unless --overwrite)")
    train_run.add_argument(
        "--overwrite", action="store_true", help="clear an earlier run in out_dir first, instead of refusing to mix with it"
    )
    train_run.add_argument("--json", action="store_true", help="print a JSON summary instead of progress")
    train_run.set_defaults(run=cmd_train_run)
    train_plot = train_commands.add_parser(
        "plot", help="write a run's training curves as PNG", description="Plot return, win rates, KL, entropy, grad norm."
    )
    train_plot.add_argument("run_dir", help="a run's out_dir")
    train_plot.set_defaults(run=cmd_train_plot)

    export = commands.add_parser(
        "export", help="export recorded data for other tools", description="Export data from a store in open formats."
    )
    export_commands = export.add_subparsers(dest="export_command", metavar="WHAT", required=True)
    trajectories = export_commands.add_parser(
        "trajectories",
        help="every accepted turn of finished matches as JSON lines",
        description="Write one JSON line per accepted turn of the store's finished matches (void ones left out): "
        "prompt, observation, legal actions, action, log-probs, per-step reward, final return, opponents, match and "
        "seed. The schema is in docs/TRAJECTORIES.md, with the features that datasets.load_dataset('json', "
        "data_files=FILE, features=...) needs; the file feeds TRL or verl.",
        epilog="example: arena export trajectories --db arena.db --game kuhn-poker --bot ckpt-7 --out kuhn.jsonl",
    )
    trajectories.add_argument("--db", default="arena.db", help="the store (default arena.db)")
    trajectories.add_argument("--game", help="only this game's matches")
    trajectories.add_argument("--bot", help="only the turns this bot took")
    trajectories.add_argument(
        "--limit",
        type=int_from(1),
        metavar="N",
        help="only the N most recent matches the filters keep (whole, written oldest first)",
    )
    trajectories.add_argument(
        "--since-hours", type=float, metavar="H", help="only the matches begun in the last H hours (the day's play)"
    )
    trajectories.add_argument(
        "--exclude-opponent",
        action="append",
        default=[],
        metavar="BOT",
        help="leave out the turns taken against this bot (held out of training); may be repeated",
    )
    trajectories.add_argument(
        "--out", required=True, metavar="FILE.jsonl", help="the file to write (replaced whole); - for stdout"
    )
    trajectories.add_argument("--json", action="store_true", help="print the counts as JSON")
    trajectories.set_defaults(run=cmd_export_trajectories)
    store_copy = export_commands.add_parser(
        "store",
        help="a consistent copy of the whole store: a backup, even while a server writes it",
        description="Copy the store whole into --out with SQLite's online backup: consistent even while a server "
        "writes it, where copying the file alone misses the commits still in its -wal. The copy is a store: every "
        "command reads it (--db). To restore, stop the server (and any arena play --db or tournament writing the "
        "store, whose matches meanwhile would be lost) and serve the copy, or copy it back with this "
        "command (--db backup.db --out arena.db), which also removes the old store's -wal and -shm: copied back with "
        "cp, a copy takes the pages a crashed server left in them for its own, and breaks. Never copy a file over a "
        "store a server is serving: the server goes on writing into it and breaks it.",
        epilog="example: arena export store --db arena.db --out backups/arena-$(date +%F).db",
    )
    store_copy.add_argument("--db", default="arena.db", help="the store (default arena.db)")
    store_copy.add_argument("--out", required=True, metavar="FILE.db", help="the copy to write (replaced whole)")
    store_copy.add_argument("--json", action="store_true", help="print what was copied as JSON")
    store_copy.set_defaults(run=cmd_export_store)

    watch = commands.add_parser(
        "watch",
        help="watch live matches, replays and leaderboards in the terminal",
        description="The terminal spectator: live matches and recent results, a match's board, chat and clocks, "
        "replays step by step, leaderboards. Press ? in the app for the keys.",
        epilog="examples: arena watch --url ws://127.0.0.1:8765 · arena watch --db arena.db --match ID (a replay from a store)",
    )
    source = watch.add_mutually_exclusive_group()
    source.add_argument("--url", help="a running server's base URL (default ws://127.0.0.1:8765)")
    source.add_argument("--db", help="a store to browse: serves it read-only behind the scenes while the app runs")
    watch.add_argument("--match", metavar="ID", help="open this match's replay at once (its live view if it is still playing)")
    watch.set_defaults(run=cmd_watch)
    return parser


MIN_ADMIN_TOKEN_CHARS = 16
MIN_ADMIN_TOKEN_SYMBOLS = 8  # "aaaaaaaaaaaaaaaa" is as long as a token must be, and guessed as fast as "a"


def _check_admin_token_file(path: str, stat: os.stat_result, token: str) -> None:
    """Refuse an admin token others may read or change (whoever writes it is admin at the next
    start), and one short enough to guess: the store keeps an unsalted hash of it, which any
    account could read, and a chosen "ADMIN" fell to a dictionary at once."""
    if stat.st_mode & 0o077:
        mode = stat.st_mode & 0o777
        raise UsageError(f"{path} can be read or changed by other accounts (its mode is {mode:03o}): chmod 600 it")
    if hasattr(os, "geteuid") and stat.st_uid != os.geteuid():
        raise UsageError(f"{path} belongs to another account (uid {stat.st_uid}), which may change it: use a file of your own")
    choose = (
        " random one (python -c 'import secrets; print(secrets.token_urlsafe(32))'), or leave the file out and let the"
        " server make one"
    )
    if len(token) < MIN_ADMIN_TOKEN_CHARS:
        raise UsageError(
            f"the admin token in {path} has {len(token)} characters, fewer than {MIN_ADMIN_TOKEN_CHARS}: choose a long{choose}"
        )
    symbols = len(set(token))
    if symbols < MIN_ADMIN_TOKEN_SYMBOLS:
        from games.render import count

        raise UsageError(
            f"the admin token in {path} is made of {count(symbols, 'different character')}, fewer than"
            f" {MIN_ADMIN_TOKEN_SYMBOLS}: choose a{choose}"
        )


TOKEN_ENV = "ARENA_TOKEN"
ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"
"""Where a token may come from instead of the command line, which any account sees in `ps`
and the shell keeps in its history."""


def _admin_token(args: argparse.Namespace) -> str | None:
    """--admin-token, else ``ARENA_ADMIN_TOKEN``: read only with --url, the one place it is used."""
    return args.admin_token or (os.environ.get(ADMIN_TOKEN_ENV) if args.url else None)


POLICY_EXIT_WAIT_S = 10.0


def _let_policies_return() -> None:
    """Wait a while for policy calls the clock abandoned (``arena.seats.POLICY_THREADS``)."""
    seats = sys.modules.get("arena.seats")  # no command that seats a policy: nothing to wait for
    if seats is not None:
        seats.POLICY_THREADS.wait(POLICY_EXIT_WAIT_S)


def _let_interrupted_coroutines_go() -> None:
    """Ctrl-C lands between any two bytecodes of a task, trio's ``start_soon`` included: a
    coroutine made but not yet run is dropped with the interrupt, and Python warned of it as the
    process exited, two lines after the interrupted line that should be the last (found in CI).
    The filter stays for the rest of the process, which is ending: the warning comes at its exit."""
    warnings.filterwarnings("ignore", message=r"coroutine '.*' was never awaited", category=RuntimeWarning)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from arena.store import StoreError  # scipy and numpy come with it: most of a second
        from games.api import GameError

        args = build_parser().parse_args(argv)  # argparse's translations load lazily: Ctrl-C may land there
    except KeyboardInterrupt:  # Ctrl-C as it starts: one line, as later, not a traceback
        print("arena: interrupted", file=sys.stderr)
        return INTERRUPTED
    try:
        with _stop_signals_as_ctrl_c():  # every command: a run, a tournament, a bot stopped by a scheduler
            try:
                return args.run(args)
            finally:
                _let_policies_return()
    except (UsageError, GameError, StoreError) as error:  # a store that cannot be used is a bad --db
        print(f"arena: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except (KeyboardInterrupt, BaseExceptionGroup) as error:
        # trio hands Ctrl-C to whichever task was running, so it may come wrapped by its nurseries
        if isinstance(error, BaseExceptionGroup) and error.subgroup(KeyboardInterrupt) is None:
            raise
        _let_interrupted_coroutines_go()
        resume = getattr(args, "resume", None)
        after_echo = "\n" if sys.stderr.isatty() else ""  # the terminal's ^C (or a progress bar) ends no line
        print(f"{after_echo}arena: interrupted" + (f"; {resume}" if resume else ""), file=sys.stderr)
        return INTERRUPTED
    except ModuleNotFoundError as error:
        extra = EXTRA_OF_MODULE.get((error.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"arena: error: this needs {error.name}, not installed: pip install 'selfplay-arena[{extra}]'", file=sys.stderr)
        return USAGE_ERROR
    except sqlite3.DatabaseError as error:  # a store damaged on disk (overwritten while served, say): said, not a traceback
        where = getattr(args, "db", None)
        print(f"arena: error: {f'the store {where}' if where else 'a store'} cannot be read: {error}", file=sys.stderr)
        return FAILURE
    except BrokenPipeError:  # `arena ratings | head`: nothing is wrong, the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the flush at exit fails no more
        return BROKEN_PIPE
    except (OSError, RuntimeError, ValueError) as error:
        print(f"arena: error: {error}", file=sys.stderr)
        return FAILURE


if __name__ == "__main__":
    sys.exit(main())

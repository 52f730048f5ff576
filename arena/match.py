"""play_match(): the one match loop of the project.

Live play on the server, tournaments and the trainer all run matches through here, so
the failure rules are the same everywhere and are recorded with every result:

- illegal move (or a reply with no action): the seat is asked again with the reason,
  up to ``max_retries`` times, then forfeits;
- timeout: the server owns a monotonic clock; a seat that has not answered when its
  deadline plus the grace has passed forfeits;
- a seat that gives up (``SeatForfeit``: resignation, disconnection) or whose policy
  crashes forfeits with that reason; one that gives up while others are asked
  (``Forfeits``: a bot's resignation off its turn) forfeits there and then;
- a fault of the engine itself (a game raising anything but IllegalAction) voids the match.

A forfeiting seat, and its team, get the game's minimum return; in a two-seat zero-sum
game the other seat gets the opposite, so a forfeit scores as a loss and never as a win
for the failing side.
"""

from __future__ import annotations

import inspect
import math
import operator
import time
import uuid
from array import array
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import trio

from arena.protocol import check_encodable
from arena.seats import AnySeat, GameFault, Move, SeatForfeit, Turn
from games.api import Game, GameConfig, GameError, IllegalAction

COMPLETE = "complete"
TIMEOUT = "timeout"
ILLEGAL = "illegal"
CRASH = "crash"
VOID = "void"
MAX_STEPS = 10_000
"""Steps a match may take before it is void. Games bound their length, but not every config of
every game (Pig when nobody holds, a plugin's game): a match between two bots that never end
it would never return, and a server keeps each of its turns until the end."""


MAX_SHOWN_CHARS = 100_000_000
"""Characters of observation a match may show its seats in all before it is void. Each turn's
observation is kept with the turn until the end: a game that retells its whole history every
round (a plugin's, which also never ended) grew one server by 25 MB a second to gigabytes before
MAX_STEPS voided it. The built-in games bound what they retell (``games.api.HISTORY_SHOWN``,
``GameConfig.bound_history``); the most a config of theirs shows is about 27 million (public
goods, eight players, 20 rounds of 1,000-character talk), 53 million when every message is
quote marks (each shown escaped, as two), and 20 million voided it. A character that prints as
nothing counts against a message's limit as its escape (``games.bargaining.shown_length``)."""


NO_ACTION = "no action found in the reply: answer with an action"
"""Why a move without an action (a language model's reply that held none) is rejected. It gives
no advice on how to mark an action in a reply: that is each bot's own convention (ours ask a
model for [brackets]), and a bot that sent "[bet]" as its action, as this once advised, was
refused again (found by a QA helper)."""


MAX_CLOCK_MS = 30 * 24 * 3600 * 1000
"""The longest time per move, grace or bank: far past any model's answer, and within what every
message carries (a clock of 10^20 ms made the server's welcome and match_start unencodable)."""


@dataclass(frozen=True)
class Clock:
    """Per-move time budget in ms, a grace the seat is not told about (network jitter),
    and an optional bank: time spent beyond ``move_ms`` comes out of the seat's bank."""

    move_ms: int = 10_000
    grace_ms: int = 1_000
    bank_ms: int = 0

    def __post_init__(self) -> None:
        for name in ("move_ms", "grace_ms", "bank_ms"):
            problem = clock_problem(name, getattr(self, name))
            if problem is not None:
                raise ValueError(f"clock {name} {problem}")

    def times(self) -> dict[str, int]:
        """The three times by name, as a match records and announces them: ``asdict`` took
        microseconds a call, and a server starting hundreds of matches a second made two each."""
        return {"move_ms": self.move_ms, "grace_ms": self.grace_ms, "bank_ms": self.bank_ms}


def clock_problem(name: str, value: int) -> str | None:
    """What is wrong with a clock's time ``name`` (move_ms, grace_ms, bank_ms), if anything:
    said with its name and value ("got Clock(move_ms=0, ...)" named neither)."""
    least = 1 if name == "move_ms" else 0
    if least <= value <= MAX_CLOCK_MS:
        return None
    return f"must be from {least} to {MAX_CLOCK_MS:,} ms (30 days), got {value}"


@dataclass
class TurnRecord:
    """One answer of one seat: kept for audit, ratings and training."""

    seat: int
    step: int
    attempt: int
    observation: str
    legal_actions: list[str] | None
    action: str | None
    accepted: bool
    rejection: str | None = None
    think_ms: float = 0.0
    reward: float = 0.0
    raw: str | None = None
    prompt: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    logprobs: Sequence[float] | None = None  # an array of doubles: a match holds its turns to the end
    format_error: bool = False


ENGINE_FAULT = "engine fault"
"""How the detail of a match voided by the game's own bug begins (``MatchResult.engine_fault``)."""


@dataclass
class MatchResult:
    """The record of a finished (or voided) match."""

    match_id: str
    game: str
    config: dict[str, Any]
    seed: int
    players: list[str]
    status: str  # "finished" or "void"
    reason: str
    detail: str
    returns: list[float]
    outcomes: list[str]
    ranks: list[int]
    forfeit_seat: int | None
    actions: list[dict[int, str]]
    turns: list[TurnRecord]
    max_retries: int
    clock: Clock
    started_at: float
    ended_at: float
    final_view: dict[str, Any] = field(default_factory=dict)

    @property
    def engine_fault(self) -> bool:
        """Void by the game's own bug, not by its players or the clock."""
        return self.status == "void" and self.detail.startswith(ENGINE_FAULT)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (seats become string keys in the action log)."""
        out = asdict(self)
        out["actions"] = [{str(seat): action for seat, action in step.items()} for step in self.actions]
        for turn in out["turns"]:
            if turn["logprobs"] is not None:
                turn["logprobs"] = list(turn["logprobs"])
        return out

    def summary(self) -> dict[str, Any]:
        """What a seat or spectator is told at the end, without the turn log."""
        keys = ("match_id", "game", "status", "reason", "detail", "returns", "outcomes", "ranks", "forfeit_seat")
        return {key: getattr(self, key) for key in keys}

    def __reduce__(self) -> tuple[Callable[..., MatchResult], tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
        """Pickled with each turn as a row of its values: every finished match crosses to the
        store writer's process, where pickle's own way, each turn rebuilt from a dict of its
        fields, took twice as long to read (40 µs a tic-tac-toe match, against 19)."""
        return _unpickled_result, (_result_values(self), [turn_values(turn) for turn in self.turns])


TURN_FIELDS = tuple(f.name for f in fields(TurnRecord))
turn_values = operator.attrgetter(*TURN_FIELDS)
"""A turn's values in the order of ``TURN_FIELDS``, which ``TurnRecord(*values)`` takes back."""
_RESULT_FIELDS = tuple(f.name for f in fields(MatchResult) if f.name != "turns")
_result_values = operator.attrgetter(*_RESULT_FIELDS)


def _unpickled_result(values: tuple[Any, ...], turns: list[tuple[Any, ...]]) -> MatchResult:
    return MatchResult(**dict(zip(_RESULT_FIELDS, values, strict=True)), turns=[TurnRecord(*turn) for turn in turns])


@dataclass(frozen=True)
class MatchEvent:
    """What an observer of a match (the store, spectators, a progress bar) is told.

    Kinds: ``start``; ``rejected`` (an illegal answer);
    ``step`` (the state advanced: actions, accepted attempts, rewards, every seat's bank
    left); ``end`` (the result).
    ``state`` is the match's live state, to read (never change) during the call: views are
    built only by the observers that want them (``event.state.public_view()``).
    """

    kind: str
    match_id: str
    step: int
    data: Mapping[str, Any]
    state: Game | None  # None only at the end of a match whose game could not set up


EventHandler = Callable[[MatchEvent], Awaitable[None] | None]


RANK_DECIMALS = 9
"""Returns equal to this many decimals tie: float noise (one payoff summed as 6.6 in one seat and
6.6000000000000005 in another) must not decide a rank, here or in the ratings."""


def competition_ranks(values: Sequence[float], last: Collection[int] = ()) -> list[int]:
    """1 + the number of strictly larger values; values equal to ``RANK_DECIMALS`` decimals share a rank.

    The entries at the indexes in ``last`` (forfeits) rank together below all others, whatever
    their values: a forfeit's minimum return could otherwise tie with an honest loser's, or
    with everyone's where nobody had scored yet."""
    keyed = [round(float(value), RANK_DECIMALS) for value in values]
    honest = [value for index, value in enumerate(keyed) if index not in last]
    below = 1 + len(honest)
    return [below if index in last else 1 + sum(other > mine for other in honest) for index, mine in enumerate(keyed)]


RETURN_DIGITS = 15
"""Significant digits a match's returns keep (``settled``)."""


def settled(value: float) -> float:
    """A return without the noise of floating-point sums, as it is shown, stored and exported.
    Payoffs added up in another order differ in their last bit: two seats of public goods that
    scored the same got 67.6 and 67.60000000000001 (found by a QA helper; their ranks tied
    already, by ``RANK_DECIMALS``). Fifteen digits, all a double holds for certain: at twelve,
    returns near 10^12 a tenth apart (payoffs near 10^9 over 1,000 rounds) tied (found by
    another). Integers stay as they are."""
    return value if isinstance(value, int) else float(f"{value:.{RETURN_DIGITS}g}")


def outcomes_of(game: type[Game], returns: Sequence[float], forfeit_seat: int | None) -> tuple[list[str], list[int]]:
    """Per-seat outcome words and ranks. Two-seat zero-sum games say win/loss/draw;
    others are ranked by return (1 is best, ties share a rank) and say ``ranked``. The
    forfeiting seat's team ranks last."""
    failed = () if forfeit_seat is None else game.spec.team_of(forfeit_seat, len(returns))
    ranks = competition_ranks(returns, failed)
    if game.spec.zero_sum and len(returns) == 2:
        words = [
            "win" if mine < theirs else "loss" if mine > theirs else "draw"
            for mine, theirs in zip(ranks, reversed(ranks), strict=True)
        ]
    else:
        words = ["ranked"] * len(returns)
    if forfeit_seat is not None:
        words[forfeit_seat] = "forfeit"
    return words, ranks


def forfeit_returns(state: Game, seat: int) -> list[float]:
    """The forfeiting seat's team gets the minimum return; in a two-seat zero-sum game
    the other seat gets its opposite; otherwise the others keep what they have.

    The minimum is that of a whole match, which a seat may not have reached yet (public
    goods pays at least the pot's share every round, and 0 before the first): the forfeit
    then gets the least any other seat has, so that giving up never scores above staying."""
    low, _high = state.config.return_bounds()
    returns = list(state.returns())
    if state.spec.zero_sum and state.num_players == 2:
        returns[seat], returns[1 - seat] = low, -low
        return returns
    team = state.spec.team_of(seat, state.num_players)
    least = min([low, *(value for other, value in enumerate(returns) if other not in team)])
    for member in team:
        returns[member] = least
    return returns


MAX_RETRIES = 100
"""Illegal answers a seat may give per turn: more only stalls a match (and past SQLite's
integers, 2**63, could not be recorded)."""


def check_max_retries(max_retries: int) -> None:
    if not 0 <= max_retries <= MAX_RETRIES:
        raise ValueError(f"max_retries must be from 0 to {MAX_RETRIES}, got {max_retries}")


class _Forfeit(Exception):
    def __init__(self, seat: int, reason: str, detail: str) -> None:
        super().__init__(f"seat {seat}: {reason}: {detail}")
        self.seat = seat
        self.reason = reason
        self.detail = detail


class Forfeits:
    """Seats that give up while they are not asked (a bot resigning off its turn), for the
    caller of ``play_match`` to report from another task: the match is stopped wherever it
    waits (another seat's turn, a seat's start) and the first of them forfeits, as a seat
    that gave up on its own turn does. Reported once the last step is taken, it changes nothing."""

    def __init__(self) -> None:
        self.first: _Forfeit | None = None
        self.scope = trio.CancelScope()  # around the seats' starts and the steps: once per match, not per step

    def give_up(self, seat: int, gave_up: SeatForfeit) -> None:
        if self.first is None:
            self.first = _Forfeit(seat, gave_up.reason, gave_up.detail)
            self.scope.cancel()


REASON_CHARS = 500
"""A rejection reason is cut to this many characters: a game quotes the action it refuses, and
a reason quoting a huge one whole went back to the seat, into its next prompt, and into the store."""


def shortened(reason: str) -> str:
    if len(reason) <= REASON_CHARS:
        return reason
    return f"{reason[:REASON_CHARS]}… (cut; {len(reason)} characters in all)"


class _Void(Exception):
    """The match ends void, no one seat's fault: it reached ``max_steps`` without ending, or
    every seat that failed a simultaneous step failed at once (both out of time at one
    deadline, say), where scoring one as the winner would pick it by scheduling order."""


class _Match:
    """The state of one running match; play_match owns it."""

    def __init__(
        self,
        state: Game,
        seats: Sequence[AnySeat],
        match_id: str,
        clock: Clock,
        max_retries: int,
        on_event: EventHandler | None,
        turns: list[TurnRecord],
    ) -> None:
        self.state = state
        self.seats = seats
        self.match_id = match_id
        self.clock = clock
        self.max_retries = max_retries
        self.on_event = on_event
        self.turns = turns
        self.shown = 0  # characters of observation asked with so far (MAX_SHOWN_CHARS)
        self.last_turn: list[TurnRecord | None] = [None] * len(seats)
        self.unclaimed = [0.0] * len(seats)
        self.bank_ms = [clock.bank_ms] * len(seats)
        self.players = tuple(seat.name for seat in seats)
        self.config = state.config.to_dict()

    async def emit(self, kind: str, **data: Any) -> None:
        pending = _tell(self.on_event, MatchEvent(kind, self.match_id, self.state.step_count, data, self.state))
        if pending is not None:  # only then a coroutine step: emit runs at every step of every match
            await pending

    def turn(self, seat: int) -> Turn:
        """What a seat is asked at this step. Made before the step's clock starts: the game's
        own computing (its observation, its legal actions) is no seat's time."""
        state = self.state
        turn = Turn.of(
            state,
            seat,
            match_id=self.match_id,
            players=self.players,
            config=self.config,
            deadline_ms=self.clock.move_ms + self.bank_ms[seat],
            clocks=tuple(self.bank_ms),
        )
        self.shown += len(turn.observation.text)
        if self.shown > MAX_SHOWN_CHARS:
            raise GameError(
                f"{state.spec.name}: the observations of this match passed {MAX_SHOWN_CHARS:,} characters in all;"
                " a game must bound what it retells (games.api.HISTORY_SHOWN)"
            )
        if turn.legal_actions is not None and not all(type(action) is str for action in turn.legal_actions):
            # The policy would answer with it and forfeit for the game's bug.
            raise GameError(f"{state.spec.name}: legal_actions({seat}) must list strings, got {turn.legal_actions!r:.200}")
        return turn

    async def ask(self, turn: Turn, started: float) -> str:
        """Ask one seat its ``turn``, from ``started`` (the step's start), until it gives a
        legal action, or raise _Forfeit.

        The accepted answer becomes the seat's last turn at once, taking any reward that
        waited for it, so that ``credit`` after the step finds it.
        """
        state = self.state
        seat, step, budget_ms = turn.seat, turn.step, turn.deadline_ms
        deadline = started + (budget_ms + self.clock.grace_ms) / 1000
        legal_list = None if turn.legal_actions is None else list(turn.legal_actions)
        reason: str | None = None
        for attempt in range(self.max_retries + 1):
            asked = trio.current_time()
            if attempt:
                remaining_ms = max(0, int(budget_ms - (asked - started) * 1000))
                turn = replace(turn, attempt=attempt, deadline_ms=remaining_ms, retry_reason=reason)
            move = await self._answer(seat, turn, deadline, budget_ms)
            think_ms = (trio.current_time() - asked) * 1000
            record = TurnRecord(
                seat=seat,
                step=step,
                attempt=attempt,
                observation=turn.observation.text,
                legal_actions=legal_list,
                action=move.action,
                accepted=False,
                think_ms=think_ms,
                raw=move.raw,
                prompt=move.prompt,
                tokens_in=move.tokens_in,
                tokens_out=move.tokens_out,
                cost=move.cost,
                logprobs=None if move.logprobs is None else array("d", move.logprobs),  # 8 bytes each, not 32
                format_error=move.format_error or move.action is None,
            )
            self.turns.append(record)
            try:
                if move.action is None:
                    raise IllegalAction(NO_ACTION)
                canonical = state.validate(seat, move.action)
            except IllegalAction as illegal:
                reason = shortened(illegal.reason)
                record.rejection = reason
                await self.emit("rejected", seat=seat, attempt=attempt, action=move.action, reason=reason)
                continue
            record.accepted, record.action = True, canonical  # "B2" is recorded as the b2 it played
            record.reward, self.unclaimed[seat] = self.unclaimed[seat], 0.0
            self.last_turn[seat] = record
            spent_ms = (trio.current_time() - started) * 1000
            # rounded to the nearest ms: int() rounded the bank left down, charging up to 1 ms more than was used
            self.bank_ms[seat] = max(0, round(self.bank_ms[seat] - max(0.0, spent_ms - self.clock.move_ms)))
            return canonical
        answers = "1 illegal answer" if self.max_retries == 0 else f"{self.max_retries + 1} illegal answers"
        raise _Forfeit(seat, ILLEGAL, f"{answers}; last: {reason}")

    async def _answer(self, seat: int, turn: Turn, deadline: float, budget_ms: int) -> Move:
        player = self.seats[seat]
        act_by = getattr(player, "act_by", None)
        try:
            if act_by is not None:  # the seat keeps the clock itself: no cancel scope to open and retire per answer
                move = await act_by(turn, deadline)
                if move is not None:
                    return move
            else:
                with trio.move_on_at(deadline):
                    return await player.act(turn)
        except SeatForfeit as gave_up:
            raise _Forfeit(seat, gave_up.reason, gave_up.detail) from gave_up
        except (trio.Cancelled, _Forfeit, GameFault):
            raise
        except Exception as error:  # a bug in the seat's policy is the seat's loss
            raise _Forfeit(seat, CRASH, f"{type(error).__name__}: {error}") from error
        answer = "legal answer" if turn.attempt else "answer"  # after illegal ones, "no answer" was untrue
        raise _Forfeit(seat, TIMEOUT, f"no {answer} within {budget_ms} ms")  # the step's, not what a retry had left

    async def ask_all(self, movers: Sequence[int]) -> dict[int, str]:
        """Ask every seat to move at once (simultaneous games) or the one seat.

        Seats with the same time left share one deadline, from one start. The first seat to
        fail ends the step for all, but only after one checkpoint, in which the others that
        failed at the same moment (out of time at that deadline) are heard too: then nobody
        is scored the winner, which would otherwise be whichever the scheduler ran first."""
        turns = [self.turn(seat) for seat in movers]
        started = trio.current_time()
        if len(turns) == 1:
            return {movers[0]: await self.ask(turns[0], started)}
        chosen: dict[int, str] = {}
        failed: list[_Forfeit] = []

        async def one(turn: Turn, step: trio.Nursery) -> None:
            seat = turn.seat
            try:
                chosen[seat] = await self.ask(turn, started)
            except _Forfeit as forfeit:
                failed.append(forfeit)
                await trio.lowlevel.cancel_shielded_checkpoint()
                step.cancel_scope.cancel()

        try:
            async with trio.open_nursery() as nursery:
                for turn in turns:
                    nursery.start_soon(one, turn, nursery)
        except BaseExceptionGroup as group:  # the engine's fault, as in a one-seat step: said as itself
            if group.split(Exception)[1] is None:  # every seat met it (a game's bug meets them all): the first says it
                raise group.exceptions[0] from group
            raise
        if len(failed) == 1:
            raise failed[0]
        if failed:
            failed.sort(key=lambda forfeit: forfeit.seat)
            said = "; ".join(f"seat {forfeit.seat} {forfeit.reason}: {forfeit.detail}" for forfeit in failed)
            raise _Void(f"seats {', '.join(str(forfeit.seat) for forfeit in failed)} failed at once: {said}")
        return {seat: chosen[seat] for seat in movers}

    def credit(self, rewards: Sequence[float]) -> None:
        """A reward belongs to the seat's last turn at or before the step that paid it.

        One paid before the seat's first turn (a cooperative game's shared score moved by
        another seat) waits in ``unclaimed`` for that turn, so that a seat's turns add up to
        its return. A seat that never gets a turn keeps it in its return alone.
        """
        for seat, reward in enumerate(rewards):
            record = self.last_turn[seat]
            if record is None:
                self.unclaimed[seat] += reward
            else:
                record.reward += reward


async def play_match(
    game: type[Game],
    seats: Sequence[AnySeat],
    *,
    config: GameConfig | Mapping[str, Any] | None = None,
    seed: int = 0,
    clock: Clock | None = None,
    max_retries: int = 2,
    match_id: str | None = None,
    on_event: EventHandler | None = None,
    max_steps: int = MAX_STEPS,
    turns: list[TurnRecord] | None = None,
    forfeits: Forfeits | None = None,
) -> MatchResult:
    """Play one match of ``game`` between ``seats`` (one per player, in seat order).

    ConfigError and a wrong seat count are raised before anything starts; everything
    that goes wrong afterwards ends in a result with its reason, never an exception.
    ``turns``, when given, receives each turn record as it is taken (the result holds the
    same list): a caller that cancels the match keeps the turns played until then.
    ``forfeits`` takes the seats that give up while they are not asked.
    """
    check_max_retries(max_retries)
    clock = clock or Clock()
    players = game.config_of(config).players
    if len(seats) != players:
        raise ValueError(f"{game.spec.name} with this config needs {players} seats, got {len(seats)}")
    try:
        state = game.new(config, seed)
    except GameError:
        raise
    except Exception as error:  # the game's own setup (a plugin's ``_setup``): its bug, voided as any later one
        return await _unplayable(game, seats, config, seed, clock, max_retries, match_id, on_event, error)
    match = _Match(state, seats, match_id or uuid.uuid4().hex, clock, max_retries, on_event, [] if turns is None else turns)
    started_at = time.time()
    info = {
        "match_id": match.match_id,
        "game": game.spec.name,
        "players": list(match.players),
        "config": match.config,
        "seed": seed,
        "rules": game.spec.rules,
        "clock": clock.times(),
        "max_retries": max_retries,
    }
    await match.emit("start", **info)

    status, reason, detail, forfeit_seat = "finished", COMPLETE, "", None
    stop = trio.CancelScope() if forfeits is None else forfeits.scope
    try:
        with stop:
            for index, seat in enumerate(seats):
                try:
                    await seat.start({**info, "seat": index})
                except SeatForfeit as gave_up:
                    raise _Forfeit(index, gave_up.reason, gave_up.detail) from gave_up
            while not state.is_over:
                await trio.lowlevel.checkpoint_if_cancelled()  # given up between steps: no seat is asked again
                if state.step_count >= max_steps:
                    raise _Void(f"the match reached {max_steps} steps without ending")
                movers = state.to_move()
                actions = await match.ask_all(movers)
                rewards = state.step(actions)
                if rewards is not None:
                    match.credit(rewards)
                if on_event is not None:
                    paid = None if rewards is None else list(rewards)
                    attempts = {seat: record.attempt for seat in actions if (record := match.last_turn[seat]) is not None}
                    await match.emit("step", actions=actions, attempts=attempts, rewards=paid, clocks=list(match.bank_ms))
        if stop.cancelled_caught and not state.is_over:  # given up after the last step, it came too late
            assert forfeits is not None and forfeits.first is not None  # give_up alone cancels it
            raise forfeits.first
        returns = list(state.returns())
    except _Forfeit as forfeit:
        reason, detail, forfeit_seat = forfeit.reason, forfeit.detail, forfeit.seat
        returns = forfeit_returns(state, forfeit.seat)
    except _Void as void:
        status, reason, detail = "void", VOID, str(void)
        returns = [0.0] * state.num_players
    except Exception as error:  # the engine's own fault, never a seat's: void, unrated
        status, reason, detail = "void", VOID, engine_fault(error)
        returns = [0.0] * state.num_players

    returns = [settled(value) for value in returns]
    fault = None
    if status == "finished":
        try:
            fault = _faulty_returns(state, returns, complete=reason == COMPLETE)
        except Exception as error:  # return_bounds() raising for this config: the registry tried the default one
            fault = engine_fault(error)
    try:
        final_view = state.full_view()
        check_encodable(final_view)  # stored as JSON, told in either encoding
    except Exception as error:  # a game's bug again: the record would keep no final position
        final_view = {}
        if status == "finished":  # a void match keeps its first cause, often what broke the view too
            fault = fault or engine_fault(error)
    if fault is not None:
        status, reason, detail, forfeit_seat = "void", VOID, fault, None
        returns = [0.0] * state.num_players
    words, ranks = outcomes_of(game, returns, forfeit_seat)
    if status == "void":
        words = ["void"] * state.num_players
    result = MatchResult(
        match_id=match.match_id,
        game=game.spec.name,
        config=match.config,
        seed=seed,
        players=list(match.players),
        status=status,
        reason=reason,
        detail=detail,
        returns=returns,
        outcomes=words,
        ranks=ranks,
        forfeit_seat=forfeit_seat,
        actions=[dict(step) for step in state.history],
        turns=match.turns,
        max_retries=max_retries,
        clock=clock,
        started_at=started_at,
        ended_at=time.time(),
        final_view=final_view,
    )
    await match.emit("end", result=result)
    for seat in seats:
        await seat.end(result.summary())
    return result


def _tell(on_event: EventHandler | None, event: MatchEvent) -> Awaitable[Any] | None:
    """Hand ``event`` to the observer, if there is one; what the caller must await, if it answered with an awaitable."""
    if on_event is None:
        return None
    pending = on_event(event)
    return pending if pending is not None and inspect.isawaitable(pending) else None


def engine_fault(error: BaseException) -> str:
    """The detail of a match voided by an exception of the game's own code."""
    return f"{ENGINE_FAULT}: {type(error).__name__}: {error}"


RETURN_SLACK = 1e-9
"""How far past its bounds a return may lie (float noise of a sum of rewards) before the game
is taken to have broken its own ``return_bounds``."""


def _faulty_returns(state: Game, returns: Sequence[float], *, complete: bool) -> str | None:
    """Why a finished match's returns cannot be recorded, if they cannot: a payoff that
    overflowed (no rating, ranking or JSON takes it), or, in a match played to its end, one
    outside the bounds the game declares, which the ratings and the trainer scale by (a
    forfeit leaves the others a running total, which the bounds of a whole match need not hold)."""
    if not all(math.isfinite(value) for value in returns):
        return f"{ENGINE_FAULT}: returns that are not finite numbers: {returns}"
    if not complete:
        return None
    low, high = state.config.return_bounds()
    slack = RETURN_SLACK * max(1.0, high - low)
    if any(value < low - slack or value > high + slack for value in returns):
        return f"{ENGINE_FAULT}: returns {returns} outside the game's bounds [{low:g}, {high:g}] (its Config.return_bounds)"
    return None


async def _unplayable(
    game: type[Game],
    seats: Sequence[AnySeat],
    config: GameConfig | Mapping[str, Any] | None,
    seed: int,
    clock: Clock,
    max_retries: int,
    match_id: str | None,
    on_event: EventHandler | None,
    error: Exception,
) -> MatchResult:
    """The void result of a match whose game raised as it set up: nothing was played, and the
    observer and the seats are told its end as of any void match (a tournament goes on, the
    server records it as the engine fault it is, not its own)."""
    players = len(seats)
    now = time.time()
    result = MatchResult(
        match_id=match_id or uuid.uuid4().hex,
        game=game.spec.name,
        config=game.config_of(config).to_dict(),
        seed=seed,
        players=[seat.name for seat in seats],
        status="void",
        reason=VOID,
        detail=f"{ENGINE_FAULT}: {game.spec.name} could not set up the match: {type(error).__name__}: {error}",
        returns=[0.0] * players,
        outcomes=["void"] * players,
        ranks=[1] * players,
        forfeit_seat=None,
        actions=[],
        turns=[],
        max_retries=max_retries,
        clock=clock,
        started_at=now,
        ended_at=now,
    )
    pending = _tell(on_event, MatchEvent("end", result.match_id, 0, {"result": result}, None))
    if pending is not None:
        await pending
    for seat in seats:
        await seat.end(result.summary())
    return result

"""Who sits at a table: the Seat protocol, the turn a seat is asked, the move it gives.

The match loop talks to every participant through ``Seat``, whether it is a policy in
this process (``LocalSeat``), a bot connected over the wire, or a language model behind
a batcher. A policy is any callable taking a ``Turn`` and returning an action string or
a ``Move`` carrying the extras (raw reply, prompt, tokens, cost, log-probs).
"""

from __future__ import annotations

import inspect
import numbers
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import trio

from arena.protocol import check_encodable
from games.api import Game, Observation

if TYPE_CHECKING:
    from arena.sessions import Alarms, BotSession


@dataclass(frozen=True)
class Turn:
    """Everything a seat needs to choose one action."""

    match_id: str
    game: str
    seat: int
    step: int
    attempt: int
    observation: Observation
    legal_actions: tuple[str, ...] | None
    action_format: str | None
    deadline_ms: int | None
    retry_reason: str | None = None
    clocks: tuple[int, ...] = ()  # every seat's time bank left (ms), in seat order, as the step began
    rules: str = ""
    players: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, state: Game, seat: int, **fields: Any) -> Turn:
        """The turn ``seat`` faces in ``state``; ``fields`` set the match-level rest."""
        legal = state.legal_actions(seat)
        return cls(
            match_id=fields.pop("match_id", ""),
            game=state.spec.name,
            seat=seat,
            step=state.step_count,
            attempt=fields.pop("attempt", 0),
            observation=state.observe(seat),
            legal_actions=None if legal is None else tuple(legal),
            action_format=state.action_format(seat) if legal is None else None,
            deadline_ms=fields.pop("deadline_ms", None),
            rules=state.spec.rules,
            config=fields.pop("config") if "config" in fields else state.config.to_dict(),
            **fields,
        )


@dataclass(frozen=True)
class Move:
    """A seat's answer. ``action`` is None with ``format_error`` when a language model's
    reply held no action; the other fields are kept with the turn for audit and training."""

    action: str | None
    raw: str | None = None
    prompt: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    logprobs: Sequence[float] | None = None
    format_error: bool = False

    def extras(self) -> dict[str, Any]:
        """The fields besides the action that were set, for records and the wire."""
        out: dict[str, Any] = {}
        for key in ("raw", "prompt", "tokens_in", "tokens_out", "cost"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.logprobs is not None:
            out["logprobs"] = list(self.logprobs)
        if self.format_error:
            out["format_error"] = True
        return out


def as_move(answer: str | Move | None) -> Move:
    """Normalise a policy's answer: a bare string is a move with nothing else. A lone surrogate
    in its texts (a model endpoint's reply may hold one) becomes U+FFFD: no store or wire can
    carry it, and the match it was played in could not be recorded. numpy's numbers in its
    counts, cost and log-probs become Python's (``_plain_numbers``)."""
    if isinstance(answer, Move):
        # a field of another type is the wire check's to refuse, naming it
        texts = {key: storable(value) for key in ("action", "raw", "prompt") if isinstance(value := getattr(answer, key), str)}
        changed = {key: value for key, value in texts.items() if value is not getattr(answer, key)} | _plain_numbers(answer)
        return replace(answer, **changed) if changed else answer
    if isinstance(answer, str):
        return Move(action=storable(answer))
    if answer is None:
        return Move(action=None, format_error=True)
    raise TypeError(f"a policy must return an action string or a Move, not {type(answer).__name__}")


def _foreign(value: object) -> bool:
    """A number of another library's type (numpy's int64 or float32), which neither the wire
    nor the store takes: a model's token counts and log-probs often come as such."""
    return isinstance(value, numbers.Real) and not isinstance(value, (int, float))


def _plain_numbers(move: Move) -> dict[str, Any]:
    """The move's counts, cost and log-probs that hold foreign numbers, as Python's own. A bot
    whose model gave an int64 count or a float32 array of log-probs, fields kept only for
    audit, resigned every match it played (found by a QA helper)."""
    changed: dict[str, Any] = {}
    for key in ("tokens_in", "tokens_out", "cost"):
        value = getattr(move, key)
        if _foreign(value):
            changed[key] = int(value) if isinstance(value, numbers.Integral) and key != "cost" else float(value)
    logprobs = move.logprobs
    if isinstance(logprobs, Iterable) and not isinstance(logprobs, (str, bytes)):
        values = list(logprobs)  # once: an iterator read twice would be empty
        if any(map(_foreign, values)) or not isinstance(logprobs, (list, tuple)):
            changed["logprobs"] = [float(value) if _foreign(value) else value for value in values]
    return changed


def storable(text: str) -> str:
    """``text``, or a copy with each lone surrogate replaced by U+FFFD (pairs are joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class SeatForfeit(Exception):
    """Raised by a seat that gives up the match: resignation, disconnection, a crash."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class GameFault(Exception):
    """Raised by a seat when the game, not the seat's player, broke the turn (an observation
    the wire cannot carry): the match loop voids the match instead of forfeiting the seat."""


class SeatLife(Protocol):
    """What every seat has, whichever way it is asked to act: its name, the match's start and end."""

    name: str

    async def start(self, info: Mapping[str, Any]) -> None:
        """The match begins: game, seat, players, rules, config, clock."""

    async def end(self, result: Mapping[str, Any]) -> None:
        """The match is over; ``result`` is the match record's summary."""


@runtime_checkable
class Seat(SeatLife, Protocol):
    """One participant of one match, as the match loop sees it."""

    async def act(self, turn: Turn) -> Move:
        """Choose an action; cancellation means the clock ran out."""


class SeatKeepingTime(SeatLife, Protocol):
    """A seat that keeps the match's clock itself (``RemoteSeat``, woken by the server's alarms):
    play_match asks it with the answer's deadline instead of a cancel scope around ``act``."""

    async def act_by(self, turn: Turn, deadline: float) -> Move | None:
        """Choose an action; None once ``deadline`` (trio time) passed without one."""


AnySeat = Seat | SeatKeepingTime


Policy = Callable[[Turn], "str | Move | Awaitable[str | Move | None] | None"]


def policy_callable(policy: Policy | Any) -> tuple[Callable[[Turn], Any], bool]:
    """The callable behind a policy (a function, or an object with ``act``), and whether it is async."""
    act = getattr(policy, "act", policy)
    if not callable(act):
        raise TypeError(f"a policy must be callable or have an act() method, got {type(policy).__name__}")
    return act, inspect.iscoroutinefunction(act) or inspect.iscoroutinefunction(act.__call__)


class _PolicyThreads:
    """Synchronous policy calls running in worker threads, those the clock abandoned included.

    A command waits for them before it exits (``wait``): a thread left inside a native library
    as the interpreter shut down aborted the process (a model's forward pass in torch, when a
    tournament's last match was void on time: "terminate called", exit status 134)."""

    def __init__(self) -> None:
        self._idle = threading.Condition()
        self._running = 0

    def call(self, act: Callable[[Turn], Any], turn: Turn) -> Any:
        with self._idle:
            self._running += 1
        try:
            answer = act(turn)
            # trio refuses an awaitable as a thread's result (``lambda turn: async_policy(turn)``,
            # a plain decorator around one): handed back wrapped, it is awaited in the run
            return _Awaiting(answer) if inspect.isawaitable(answer) else answer
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def wait(self, timeout: float) -> bool:
        """Whether every call had returned within ``timeout`` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._running == 0, timeout)


@dataclass(frozen=True)
class _Awaiting:
    """What a policy that looked synchronous returned: an awaitable, its answer to come."""

    answer: Awaitable[Any]


POLICY_THREADS = _PolicyThreads()


async def in_worker_thread(act: Callable[[Turn], Any], turn: Turn) -> Any:
    """Run a synchronous policy in a thread the clock can abandon, counted in ``POLICY_THREADS``."""
    answer = await trio.to_thread.run_sync(POLICY_THREADS.call, act, turn, abandon_on_cancel=True)
    return await answer.answer if isinstance(answer, _Awaiting) else answer


class LocalSeat:
    """A policy running in this process.

    A synchronous policy runs in a worker thread the clock can abandon, so a policy stuck
    in a long computation still loses on time instead of freezing the match. Policies that
    are known to answer in microseconds may set ``threaded=False`` to skip the thread hop.
    """

    def __init__(self, policy: Policy | Any, name: str | None = None, *, threaded: bool = True) -> None:
        self._act, self._is_async = policy_callable(policy)
        self._threaded = threaded
        self.name = name or getattr(policy, "label", None) or getattr(self._act, "__name__", "policy")

    async def start(self, info: Mapping[str, Any]) -> None:
        return None

    async def act(self, turn: Turn) -> Move:
        if self._is_async:
            answer = await self._act(turn)
        elif self._threaded:
            answer = await in_worker_thread(self._act, turn)
        else:
            answer = self._act(turn)
            if inspect.isawaitable(answer):  # a plain function handing on to an async one
                answer = await answer
        return as_move(answer)

    async def end(self, result: Mapping[str, Any]) -> None:
        return None


class RemoteSeat:
    """A bot connected to the server, seated in one match.

    The match loop sets each answer's deadline, and this seat keeps it (``act_by``), adding
    the disconnection rule: while the bot is away its clock keeps running, and once the
    session's reconnection window has passed without a resume the seat forfeits for
    disconnection.
    """

    def __init__(
        self,
        session: BotSession,
        alarms: Alarms,
        match_id: str,
        seat: int,
        away: Callable[[], list[tuple[str, int]]] = list,
    ) -> None:
        self.session = session
        self.alarms = alarms
        self.match_id = match_id
        self.seat = seat
        self.name = session.bot
        self.away = away  # the other players disconnected now, with the ms each has left

    async def start(self, info: Mapping[str, Any]) -> None:
        self.session.send("match_start", **match_start_fields(info, self.seat))
        for bot, ms in self.away():  # gone before the match was announced: said once it is
            self.session.send("opponent_gone", match=self.match_id, bot=bot, ms=ms)

    async def act_by(self, turn: Turn, deadline: float) -> Move | None:
        """The bot's answer, None once ``deadline`` (trio time) passed without one: this seat keeps
        the match's clock itself, woken by the server's ``alarms``, instead of play_match's
        cancel scope around ``act``."""
        session = self.session
        observation = {"text": turn.observation.text, "data": turn.observation.data}
        try:
            check_encodable(observation)
        except (TypeError, ValueError, OverflowError) as error:
            # Found here, before the turn is queued, or the send would raise inside this seat
            # and the seat would forfeit (a rated loss) for the game's bug.
            raise GameFault(f"{turn.game}: the observation of seat {self.seat} cannot be sent: {error}") from error
        slot = session.ask(
            self.match_id,
            self.seat,
            turn.step,
            turn.attempt,
            deadline,
            reason=turn.retry_reason,
            observation=observation,
            legal=None if turn.legal_actions is None else list(turn.legal_actions),
            format=turn.action_format,
            deadline_ms=turn.deadline_ms,
            clocks=list(turn.clocks),
        )
        self.alarms.set(slot)
        try:
            while True:
                resigned = session.resigned.get(self.match_id)
                if resigned is not None and resigned[0] == self.seat:  # before a move that came with it, or after it
                    raise resignation(self.name, resigned[1])
                if slot.move is not None:  # taken in time, though the deadline may have passed since
                    return slot.move
                now = trio.current_time()
                if now >= deadline:
                    return None
                if session.connected:
                    await slot.changed()
                    continue
                left = session.grace_left()
                if left <= 0:
                    raise SeatForfeit("disconnect", f"{self.name} stayed away past the {session.grace_s:g} s reconnection window")
                with trio.move_on_at(min(deadline, now + left)):  # out of time first: the clock's forfeit, not the window's
                    await slot.changed()
        finally:
            self.alarms.clear(slot)
            session.close_slot(slot)

    async def end(self, result: Mapping[str, Any]) -> None:
        self.session.send("match_end", **{"match": self.match_id, "seat": self.seat, **match_end_fields(result)})


def resignation(bot: str, cause: str) -> SeatForfeit:
    """How a bot's ``resign`` forfeits its seat; ``cause`` is the bot's own account."""
    return SeatForfeit("resign", f"{bot} resigned: {cause}" if cause else f"{bot} resigned")


def match_start_fields(info: Mapping[str, Any], seat: int) -> dict[str, Any]:
    """What a bot is told when its match starts: never the seed, which would reveal the deals."""
    keys = ("game", "players", "rules", "config", "max_retries")
    told = {key: info["clock"][key] for key in ("move_ms", "bank_ms")}  # the grace stays the server's
    return {"match": info["match_id"], "seat": seat, "clock": told, **{key: info[key] for key in keys}}


def match_end_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a seat's ``match_end`` tells of a result (a match's summary, or its stored record)."""
    keys = ("status", "reason", "detail", "returns", "outcomes", "ranks", "forfeit_seat")
    return {key: result.get(key) for key in keys}

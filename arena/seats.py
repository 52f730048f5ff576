"""Who sits at a table: the Seat protocol, the turn a seat is asked, the move it gives.

The match loop talks to every participant through ``Seat``, whether it is a policy in
this process (``LocalSeat``), a bot connected over the wire, or a language model behind
a batcher. A policy is any callable taking a ``Turn`` and returning an action string or
a ``Move`` carrying the extras (raw reply, prompt, tokens, cost, log-probs).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import trio

from games.api import Game, Observation


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
            config=state.config.to_dict(),
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
    """Normalise a policy's answer: a bare string is a move with nothing else."""
    if isinstance(answer, Move):
        return answer
    if isinstance(answer, str):
        return Move(action=answer)
    if answer is None:
        return Move(action=None, format_error=True)
    raise TypeError(f"a policy must return an action string or a Move, not {type(answer).__name__}")


class SeatForfeit(Exception):
    """Raised by a seat that gives up the match: resignation, disconnection, a crash."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@runtime_checkable
class Seat(Protocol):
    """One participant of one match, as the match loop sees it."""

    name: str

    async def start(self, info: Mapping[str, Any]) -> None:
        """The match begins: game, seat, players, rules, config, clock."""

    async def act(self, turn: Turn) -> Move:
        """Choose an action; cancellation means the clock ran out."""

    async def end(self, result: Mapping[str, Any]) -> None:
        """The match is over; ``result`` is the match record's summary."""


Policy = Callable[[Turn], "str | Move | Awaitable[str | Move]"]


class LocalSeat:
    """A policy running in this process.

    A synchronous policy runs in a worker thread the clock can abandon, so a policy stuck
    in a long computation still loses on time instead of freezing the match. Policies that
    are known to answer in microseconds may set ``threaded=False`` to skip the thread hop.
    """

    def __init__(self, policy: Policy | Any, name: str | None = None, *, threaded: bool = True) -> None:
        act = getattr(policy, "act", policy)
        if not callable(act):
            raise TypeError(f"a policy must be callable or have an act() method, got {type(policy).__name__}")
        self._act = act
        self._is_async = inspect.iscoroutinefunction(act)
        self._threaded = threaded
        self.name = name or getattr(policy, "label", None) or getattr(act, "__name__", "policy")

    async def start(self, info: Mapping[str, Any]) -> None:
        return None

    async def act(self, turn: Turn) -> Move:
        if self._is_async:
            answer = await self._act(turn)
        elif self._threaded:
            answer = await trio.to_thread.run_sync(self._act, turn, abandon_on_cancel=True)
        else:
            answer = self._act(turn)
        return as_move(answer)

    async def end(self, result: Mapping[str, Any]) -> None:
        return None

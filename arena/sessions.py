"""A connected bot as the server keeps it: its session outlives any one websocket.

Every message the server sends a bot gets the next sequence number and is kept in a
bounded outbox, so a bot that reconnects with ``resume`` (its session id and the last
``seq`` it saw) gets exactly what it missed. While the bot is away its clock keeps
running; after the reconnection window its seats forfeit for disconnection.
"""

from __future__ import annotations

import collections
import heapq
import logging
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.lobby import Seek
from arena.protocol import CLOSE_INTERNAL, CLOSE_POLICY, message
from arena.seats import Move

log = logging.getLogger(__name__)


@dataclass(eq=False)  # one per socket: the server keeps the open ones in a set
class Connection:
    """One websocket of a session: where its messages go, and in which encoding.

    ``close`` asks for the socket to be closed with a code once what was queued before
    (above all the error that says why) has been written; ``closing`` then holds the code,
    and ``gone`` is called: the connection no longer acts, though its socket may take a
    heartbeat to close.
    ``send`` is the server's way out (``arena.direct_write``): it holds a message for the end of the
    event loop's pass or queues it, raising as ``outgoing.send_nowait`` does; without it every message is queued.
    """

    outgoing: trio.MemorySendChannel[Any]
    binary: bool = True
    close: Callable[[int, str], None] = lambda code, reason: None
    closing: tuple[int, str] | None = None
    send: Callable[[dict[str, Any] | bytes | str, bool], None] | None = None
    gone: Callable[[], None] = lambda: None  # told once, when it no longer acts (its close is asked for)

    def put(self, message: dict[str, Any] | bytes | str) -> None:
        """Send ``message``; a client too slow to read what is queued for it is closed (1008)."""
        try:
            if self.send is None or self.closing is not None:
                self.outgoing.send_nowait(message)  # once closing, the channel is closed: nothing more goes out
            else:
                self.send(message, self.binary)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.close(CLOSE_POLICY, "not reading its messages")  # its handler then detaches it, as any disconnect
        except (TypeError, ValueError, OverflowError) as error:  # a message its encoding cannot carry: a bug of ours
            kind = message.get("t") if isinstance(message, dict) else None  # a frame made ahead never fails here
            log.error("a %r message could not be encoded: %s", kind, error)
            self.close(CLOSE_INTERNAL, "a message could not be encoded")  # this connection, not the whole server


@dataclass
class MoveSlot:
    """A turn a seat has been asked and not yet answered.

    Each slot has its own wake-up, so that a move arriving for one of a bot's matches
    wakes only the seat waiting for it, not every match the bot plays."""

    match_id: str
    seat: int
    step: int
    attempt: int
    turn_fields: dict[str, Any]
    asked_at: float = 0.0
    deadline: float = math.inf
    """When the match stops waiting (trio time): a move read from then on is stale, though the
    waiting seat, woken by its alarm, may not have closed the slot yet."""
    move: Move | None = None
    _waiting: trio.lowlevel.Task | None = None

    async def changed(self) -> None:
        """Wait for the next change: its move arrived, or the bot left, came back or resigned.

        One task waits on a slot, the seat it belongs to, so the slot parks that task itself
        instead of keeping a ``trio.Event``, which cost a new event and its parking lot at every
        move."""
        self._waiting = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._waiting = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def wake(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            trio.lowlevel.reschedule(waiting)

    def fresh_fields(self) -> dict[str, Any]:
        """The turn as it stands now: the deadline is what is left, not what was first given."""
        budget = self.turn_fields.get("deadline_ms")
        if budget is None:
            return self.turn_fields
        spent = int((trio.current_time() - self.asked_at) * 1000)
        return {**self.turn_fields, "deadline_ms": max(0, budget - spent)}


ALARM_STEP_S = 0.001
"""How finely ``Alarms`` keeps deadlines: a seat is woken at most this late, never early."""


class Alarms:
    """Wakes the seats whose move slots reach their deadlines, from one task for the whole server.

    The match's clock for an answer was a cancel scope around it: opening one and retiring its
    deadline cost the event loop about a tenth of its time per move (``bench.server``). Here a
    slot waits in the bucket of its deadline (rounded up to ``ALARM_STEP_S``) until it is
    answered or its bucket comes due, and one task sleeps until the earliest bucket still
    holding a slot. The alarm only wakes the seat, which looks at the clock itself
    (``RemoteSeat.act_by``): a move taken in time counts though the alarm rang before its seat
    ran, and a move read at or past the deadline is stale (``BotSession.offer_move``).
    """

    def __init__(self) -> None:
        self._buckets: dict[int, dict[int, MoveSlot]] = {}  # bucket -> the slots waiting in it, by id
        self._due: list[int] = []  # the buckets, a heap; one emptied since stays until it comes up
        self._sleeping: trio.CancelScope | None = None

    def set(self, slot: MoveSlot) -> None:
        """Wake ``slot`` once its deadline passed, unless ``clear`` comes first."""
        if slot.deadline == math.inf:
            return
        bucket = _bucket(slot.deadline)
        waiting = self._buckets.get(bucket)
        if waiting is None:
            waiting = self._buckets[bucket] = {}
            heapq.heappush(self._due, bucket)
            if self._sleeping is not None and self._due[0] == bucket:  # earlier than the task sleeps till
                self._sleeping.deadline = bucket * ALARM_STEP_S
        waiting[id(slot)] = slot

    def clear(self, slot: MoveSlot) -> None:
        """``slot`` waits no more: answered, or its seat gave up. Its turn is let go of now, not
        at its deadline, a move's time away (seconds of turns, at thousands a second)."""
        if slot.deadline == math.inf:
            return
        bucket = _bucket(slot.deadline)
        waiting = self._buckets.get(bucket)
        if waiting is not None:
            waiting.pop(id(slot), None)
            if not waiting:
                del self._buckets[bucket]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            while self._due and self._due[0] not in self._buckets:  # emptied: nobody to wake
                heapq.heappop(self._due)
            with trio.CancelScope(deadline=self._due[0] * ALARM_STEP_S if self._due else math.inf) as self._sleeping:
                await trio.sleep_forever()
            self._sleeping = None
            now = trio.current_time()
            while self._due and self._due[0] * ALARM_STEP_S <= now:
                for slot in self._buckets.pop(heapq.heappop(self._due), {}).values():
                    slot.wake()


def _bucket(deadline: float) -> int:
    """The alarm bucket of ``deadline``: the first that does not come due before it (the
    product, rounded, may fall short of the deadline by a hair, and a seat woken early
    would wait again with its alarm spent)."""
    bucket = math.ceil(deadline / ALARM_STEP_S)
    return bucket if bucket * ALARM_STEP_S >= deadline else bucket + 1


@dataclass
class BotSession:
    bot: str
    grace_s: float
    outbox_size: int = 64  # enough for a dropped connection; past it a resume falls back to a resync
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    seq: int = 0
    connection: Connection | None = None
    disconnected_at: float | None = None
    matches: dict[str, list[int]] = field(default_factory=dict)  # match id -> this bot's seats
    slots: dict[tuple[str, int], MoveSlot] = field(default_factory=dict)
    outbox: collections.deque[dict[str, Any]] = field(default_factory=collections.deque)
    resigned: dict[str, tuple[int, str]] = field(default_factory=dict)  # match id -> the seat that forfeits, the bot's cause
    acks: bool = True  # whether this bot is told of what succeeded (move_ack, seeking); its hello says
    standing: dict[str, list[Seek]] = field(default_factory=dict)  # match id -> the standing seeks it was formed from
    max_matches: int | None = None  # its own limit on matches at once, below the server's; its hello says

    # ---- connection state ----------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.connection is not None

    def attach(self, connection: Connection) -> None:
        self.connection = connection
        self.disconnected_at = None
        self._wake()

    def detach(self, connection: Connection) -> bool:
        """Forget ``connection`` if it is still this session's; True if the bot is now away."""
        if self.connection is not connection:
            return False
        self.connection = None
        self.disconnected_at = trio.current_time()
        self._wake()
        return True

    def grace_left_ms(self) -> int:
        """What ``opponent_gone`` says: never below 0, for a bot already past its window."""
        return max(0, int(self.grace_left() * 1000))

    def grace_left(self) -> float:
        if self.disconnected_at is None:
            return self.grace_s
        return self.disconnected_at + self.grace_s - trio.current_time()

    def _wake(self) -> None:
        """The connection changed or the bot resigned: every open slot must look again."""
        for slot in self.slots.values():
            slot.wake()

    # ---- sending -------------------------------------------------------------------------

    def greet(self, **fields: Any) -> None:
        """The ``welcome``: outside the numbered stream, carrying as ``seq`` the last number the
        client holds, so that what is replayed after it continues from there."""
        self._deliver(message("welcome", **fields))

    def send(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Number, keep and (when connected) queue a message; a bot too slow to read is dropped."""
        self.seq += 1
        out = message(kind, seq=self.seq, **fields)
        self.outbox.append(out)
        while len(self.outbox) > self.outbox_size:
            self.outbox.popleft()
        self._deliver(out)
        return out

    def _deliver(self, out: dict[str, Any]) -> None:
        if self.connection is not None:
            self.connection.put(out)

    def can_replay_after(self, last_seq: int) -> bool:
        """Whether the outbox still holds everything after ``last_seq``."""
        oldest = self.outbox[0]["seq"] if self.outbox else self.seq + 1
        return 0 <= last_seq <= self.seq and oldest <= last_seq + 1

    def replay(self, after: int) -> int:
        """Resend the kept messages numbered after ``after``; a turn still open goes out with
        the time now left to it. Returns how many."""
        missed = [out for out in self.outbox if out["seq"] > after]
        for out in missed:
            slot = self.slots.get((out.get("match"), out.get("seat"))) if out["t"] == "turn" else None
            if slot is not None and slot.move is None and slot.step == out["step"] and slot.attempt == out["attempt"]:
                out = {**out, **slot.fresh_fields()}
            self._deliver(out)
        return len(missed)

    # ---- moves ---------------------------------------------------------------------------

    def ask(self, match_id: str, seat: int, step: int, attempt: int, deadline: float, **turn_fields: Any) -> MoveSlot:
        """Open a slot for the seat's answer, taken until ``deadline``, and send the bot its ``turn``."""
        fields = {"match": match_id, "seat": seat, "step": step, "attempt": attempt, **turn_fields}
        slot = MoveSlot(match_id, seat, step, attempt, fields, asked_at=trio.current_time(), deadline=deadline)
        self.slots[(match_id, seat)] = slot
        self.send("turn", **fields)
        return slot

    def close_slot(self, slot: MoveSlot) -> None:
        if self.slots.get((slot.match_id, slot.seat)) is slot:
            del self.slots[(slot.match_id, slot.seat)]

    def offer_move(self, match_id: str, seat: int, step: int, attempt: int, move: Move) -> str | None:
        """Hand a move to the seat waiting for it; None if taken, else why it was not."""
        slot = self.slots.get((match_id, seat))
        # past the deadline the waiting seat gives up once it runs, slot still open: a move taken then was lost unanswered
        if (
            slot is None
            or (slot.step, slot.attempt) != (step, attempt)
            or slot.move is not None
            or trio.current_time() >= slot.deadline
        ):
            return "stale"
        slot.move = move
        slot.wake()
        return None

    def standing_in_play(self) -> int:
        """The bot's standing seeks now seated in a match: each counts as waiting (``max_seeks``)."""
        return sum(map(len, self.standing.values()))

    def stop_standing(self, games: Sequence[str] | None = None) -> int:
        """Keep the standing seeks in play that name any of ``games`` (None: all) from coming back; how many."""
        stopped = 0
        for match_id, seeks in self.standing.items():
            kept = [seek for seek in seeks if not seek.names_any(games)]
            stopped += len(seeks) - len(kept)
            self.standing[match_id] = kept
        return stopped

    def resend_open_turns(self) -> None:
        """For a bot that lost its session: every turn still waiting for it, sent again."""
        for slot in list(self.slots.values()):
            if slot.move is None:
                self.send("turn", **slot.fresh_fields())

    def resign(self, match_id: str, detail: str = "") -> None:
        """The bot gives up ``match_id``: its first seat with a turn open forfeits, else its first
        seat. Chosen here, once: a bot asked at two seats of one simultaneous step (playing
        itself) forfeited at both, and two seats failing at once voided the match (found by a
        QA helper). A second resign rewrites neither the seat nor the first one's account."""
        seats = self.matches.get(match_id, [0])
        asked = [seat for seat in seats if (match_id, seat) in self.slots]
        self.resigned.setdefault(match_id, (min(asked or seats), detail))
        self._wake()

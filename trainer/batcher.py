"""Gather turn requests from many concurrent matches into one forward pass.

Each seat played by a model awaits ``Batcher.decide(request)``. The batcher's own task
(``run``, started in the caller's nursery) waits, once a request is pending, until no task
of the program can make progress without an answer (``trio.testing.wait_all_tasks_blocked``),
or ``max_batch`` requests are pending, or the first has waited ``max_wait_s``. It then sorts
the batch by the requests' keys (seed, match, step, seat, attempt), so the batch's order
never depends on trio's scheduling, and answers it with one call of ``decide_batch`` in a
worker thread while the event loop goes on (clocks, the network, other seats).

"Nothing can progress" is what makes rollouts both fast and deterministic: scripted
opponents answer at once, so every match ends up blocked on the model and one batch holds
one request per waiting seat of every match.

``ThreadBatcher`` does the same for callers in worker threads, where no trio task can
serve: the ``llm`` bot, whose synchronous ``act`` runs in a thread per match (LocalSeat in
tournaments, the SDK in ``arena bot run``). The first caller to find no batch being served
serves: it waits ``window_s`` for the others to join, answers everything pending, and goes
on until nothing is left; the others wait for their answers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import trio
import trio.testing


class Keyed(Protocol):
    key: tuple[int, ...]


def next_batch(pending: list[Any], key: Callable[[Any], tuple[int, ...]], max_batch: int) -> list[Any]:
    """Take the first ``max_batch`` pending items in key order out of ``pending``: a batch's
    order comes from its requests' keys, never from when they arrived."""
    batch = sorted(pending, key=key)[:max_batch]
    for item in batch:
        pending.remove(item)
    return batch


R = TypeVar("R", bound=Keyed)
D = TypeVar("D")


@dataclass
class _Pending(Generic[R, D]):
    request: R
    done: trio.Event = field(default_factory=trio.Event)
    answer: D | None = None
    error: BaseException | None = None


class Batcher(Generic[R, D]):
    """Batches requests for ``decide_batch`` (a blocking function: requests in, answers out)."""

    def __init__(
        self, decide_batch: Callable[[Sequence[R]], Sequence[D]], *, max_batch: int = 64, max_wait_s: float = 0.05
    ) -> None:
        if max_batch < 1 or max_wait_s < 0:
            raise ValueError(f"a batcher needs max_batch >= 1 and max_wait_s >= 0, got {max_batch}, {max_wait_s}")
        self._decide_batch = decide_batch
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.batches = 0
        self.requests = 0
        self._pending: list[_Pending[R, D]] = []
        self._changed = trio.Event()

    async def decide(self, request: R) -> D:
        pending: _Pending[R, D] = _Pending(request)
        self._pending.append(pending)
        self._wake()
        try:
            await pending.done.wait()
        except BaseException:
            if pending in self._pending:  # cancelled (the clock ran out) before its batch ran
                self._pending.remove(pending)
            raise
        if pending.error is not None:
            raise pending.error
        return pending.answer  # type: ignore[return-value]

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _until_full(self, scope: trio.CancelScope) -> None:
        while len(self._pending) < self.max_batch:
            await self._changed.wait()
        scope.cancel()

    async def _until_idle(self, scope: trio.CancelScope) -> None:
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()

    async def run(self) -> None:
        """Serve batches until cancelled."""
        while True:
            while not self._pending:
                await self._changed.wait()
            with trio.move_on_after(self.max_wait_s):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._until_full, nursery.cancel_scope)
                    nursery.start_soon(self._until_idle, nursery.cancel_scope)
            batch = next_batch(self._pending, lambda p: p.request.key, self.max_batch)
            await self._answer(batch)

    async def _answer(self, batch: list[_Pending[R, D]]) -> None:
        requests = [item.request for item in batch]
        self.batches += 1
        self.requests += len(batch)
        try:
            answers: Sequence[Any] = await trio.to_thread.run_sync(self._decide_batch, requests)
        except Exception as error:  # every waiter learns of the failure; the batcher goes on
            for item in batch:
                item.error = error
                item.done.set()
            return
        for item, answer in zip(batch, answers, strict=True):
            item.answer = answer
            item.done.set()


class ThreadBatcher(Generic[R, D]):
    """Batches requests made from several threads for ``decide_batch`` (see the module docstring)."""

    def __init__(
        self, decide_batch: Callable[[Sequence[R]], Sequence[D]], *, max_batch: int = 64, window_s: float = 0.005
    ) -> None:
        if max_batch < 1 or window_s < 0:
            raise ValueError(f"a batcher needs max_batch >= 1 and window_s >= 0, got {max_batch}, {window_s}")
        self._decide_batch = decide_batch
        self.max_batch = max_batch
        self.window_s = window_s
        self.batches = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._pending: list[tuple[R, Future[D]]] = []
        self._serving = False

    def decide(self, request: R) -> D:
        answer: Future[D] = Future()
        with self._lock:
            self._pending.append((request, answer))
            serve = not self._serving
            self._serving = True
        if serve:
            time.sleep(self.window_s)
            self._serve()
        return answer.result()

    def _serve(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._serving = False
                    return
                batch = next_batch(self._pending, lambda item: item[0].key, self.max_batch)
            self.batches += 1
            self.requests += len(batch)
            try:
                answers = self._decide_batch([request for request, _ in batch])
            except Exception as error:  # every waiter of this batch learns of it; the next batch is served
                for _, answer in batch:
                    answer.set_exception(error)
                continue
            for (_, answer), result in zip(batch, answers, strict=True):
                answer.set_result(result)

"""The store's one writer: a process of its own owning the write connection, fed by a trio task.

Jobs wait in a list for the writer task; the jobs waiting when it has room (``DEPTH``
batches out at once) go to the writer process as one batch, where each runs in a savepoint
of its own (a job that fails undoes only its own writes) and one commit ends the batch; the
batch's callers are woken once its answer is back. A job's commit always comes before its
caller goes on, and there is one writer, so writes never race.

Why a process and not a thread: Python runs one thread of a process at a time, and SQLite's
work in a writer thread (binding rows, encoding them, between the statements) took that turn
from the event loop relaying moves, so the whole server never used more than one core. On
``bench.server`` (200 bots, 2 cores) such a thread was never idle, and two thirds of that
time it waited for a core or for that turn, while matches waited for their commits behind
it. The writer's CPU now comes from another core.

Why no thread between the loop and the process: the event loop pickles each batch itself
and waits for the outcomes on the process's socket as on any client's. A thread that did
both, handing the interpreter back and forth and waking the loop through trio's token,
relayed 5% fewer moves a second on ``bench.server`` (geometric mean of 12 alternated pairs of
runs, 10 of them in favour of the task) for 1% more of the server's CPU.

A job crosses to the process pickled: a Store method with its arguments (``Call``), or a
function named at a module's top level; a lambda cannot, and fails with a message saying so.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import socket
import sqlite3
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

import trio

from arena.store import Store, StoreError, file_id, is_damage, served_here, serves_here

T = TypeVar("T")
U = TypeVar("U")

log = logging.getLogger(__name__)

WRITER_NAME = "store writer"
"""The writer process's name (its thread's, in the server's process), before the store's
file name: where ``top`` and /proc show them (the bench reads the writer's CPU there)."""
WRITER_NICE = 10
"""How far below the event loop the writer runs (its process, or its thread in the server's).
On a machine whose cores are all busy the event loop relaying moves goes first, and the
writer takes the time left, committing larger batches; a finished match waits for its
commit longer under load, never for ever. On ``bench.server`` the process at the loop's own
priority relayed 16% fewer moves a second; at 19, as many as at 10."""

DEPTH = 2
"""Batches the writer has at once: the one it writes, and the next, sent to it meanwhile.
With one, the writer went idle after each batch until the event loop, busy relaying moves,
read the answer and sent it the jobs queued since, while the matches behind those jobs
waited for their start or their end to be recorded: on ``bench.server`` (200 bots, 2 cores)
each waited 50 to 65 ms, twice in a match of some 250, and a fifth of the machine's time went
unused. With two, in 8 alternated pairs of runs, every one relayed more moves a second (7%
by the geometric mean, from 3% to 15%) and the unused time fell to a ninth; the batches,
smaller, cost 2% more CPU a move. It replaces a short wait for more jobs before each batch
of a busy writer, which made fewer, larger commits but kept the matches waiting longer."""

Outcome = tuple[Any, BaseException | None]  # a job's value, or its error
HEADER_BYTES = 8  # the length before each message between the server and its writer process
TRACED = "in the store writer process:\n"  # the note that carries a bug's traceback back


class Call(Generic[T]):
    """A job: ``method(store, *args, **kwargs)``, where ``method`` is a Store method
    (``Call(Store.open_match, row)``) or a function named at a module's top level."""

    __slots__ = ("args", "kwargs", "method")

    def __init__(self, method: Callable[..., T], /, *args: Any, **kwargs: Any) -> None:
        self.method = method
        self.args = args
        self.kwargs = kwargs

    def __call__(self, store: Store) -> T:
        return self.method(store, *self.args, **self.kwargs)


@dataclass(frozen=True)
class Both(Generic[T, U]):
    """Two jobs as one (one savepoint, one round trip to the writer): their values as a pair."""

    first: Callable[[Store], T]
    second: Callable[[Store], U]

    def __call__(self, store: Store) -> tuple[T, U]:
        return self.first(store), self.second(store)


@dataclass
class _Job:
    work: Callable[[Store], Any]
    done: trio.Event
    value: Any = None
    error: BaseException | None = None


class StoreWriter:
    """The one writer. Start it with ``await nursery.start(writer.run)``; ``await
    writer.call(work)`` runs ``work(store)`` in the writer process and returns its value once
    committed; ``aclose()`` (or cancelling ``run``) lets it finish the queued jobs and stop.

    The process is started by multiprocessing, which imports the server's main script in it
    first: a script must start the server under ``if __name__ == "__main__":``.

    With ``process=False`` the jobs run in a thread of the server's process (``WriterHere``),
    sharing the server's core: for a system that cannot start the process, and for tests
    that change the Store's methods in the server's own process."""

    def __init__(self, path: str | Path, *, process: bool = True) -> None:
        self.path = Path(path)
        self._where: type[WriterProcess | WriterHere] = WriterProcess if process else WriterHere
        self._queued: list[_Job] = []
        self._came = trio.Event()  # set when a job is queued, or the writer is closed
        self._closed = False
        self._served: tuple[int, int] | None = None  # the file the writer opened (device, inode)
        self._writer: WriterProcess | WriterHere | None = None
        self._starting = trio.Lock()  # one batch starts a writer again; the others wait for it
        self.failing: str | None = None  # why its last batch could not be written (a full disk), till one is
        self.damaged: str | None = None  # the error that found the file damaged, for good (``is_damage``)

    @property
    def pid(self) -> int | None:
        """The writer process's, while it runs."""
        return None if self._writer is None else self._writer.pid

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._writer = await trio.to_thread.run_sync(self._start)
        try:
            self._served = self._writer.served
            task_status.started()
            try:
                await self._write_batches()
            finally:
                self._stop()
                with trio.CancelScope(shield=True):
                    await self._write_batches()  # what was queued before the stop
        finally:
            if self._writer is not None:
                with trio.CancelScope(shield=True):
                    await self._writer.aclose()

    def _start(self) -> WriterProcess | WriterHere:
        """The writer, started in a worker thread: starting a process and opening the store block."""
        try:
            return self._where(self.path)
        except OSError as error:  # no process can be started here (a sandbox): the server still serves
            if self._where is WriterHere:
                raise
            log.warning("the store writer process could not be started (%s): it writes in the server's process", error)
            self._where = WriterHere
            return WriterHere(self.path)

    async def _write_batches(self) -> None:
        """Send the queued jobs batch by batch, until the writer is closed with none queued.
        Up to ``DEPTH`` batches are out at once; the jobs that come meanwhile wait for one of
        them to be answered, and go together."""
        slots = trio.Semaphore(DEPTH)
        async with trio.open_nursery() as batches:
            while True:
                while not self._queued:
                    if self._closed:
                        return
                    self._came = trio.Event()
                    await self._came.wait()
                await slots.acquire()
                jobs, self._queued = self._queued, []
                batches.start_soon(self._see_through, jobs, slots)

    async def _see_through(self, jobs: list[_Job], slots: trio.Semaphore) -> None:
        """Write a batch taken from the queue, then wake its callers: shielded, as they wait for it."""
        with trio.CancelScope(shield=True):
            try:
                if self.writes_to_its_file():
                    await self._write(jobs)
                    failures = (job.error for job in jobs if isinstance(job.error, sqlite3.OperationalError))
                    self.failing = next((str(error) for error in failures), None)
                    self.damaged = self.damaged or next((str(job.error) for job in jobs if is_damage(job.error)), None)
                else:
                    _fail(jobs, self.orphaned())
            finally:
                slots.release()
        _wake(jobs)

    async def _write(self, jobs: list[_Job]) -> None:
        """Run the batch in the writer process; one that has ended (killed) is started again.
        A process can end unseen (its end not yet reported here): a batch it never took is sent
        to the next one rather than failed, as a batch it died writing is."""
        for _ in range(2):
            try:
                writer = await self._running_writer()
            except Exception as error:
                _fail(jobs, error)
                return
            try:
                await writer.run(jobs)
                return
            except WriterEnded as ended:
                await self._drop_writer(writer, f"{ended}, before it took a batch")
        _fail(jobs, sqlite3.OperationalError("the store writer process ended twice before taking this job"))

    async def _running_writer(self) -> WriterProcess | WriterHere:
        """The writer to send a batch to: one seen to have ended is let go, and another started."""
        async with self._starting:
            if self._writer is not None and not self._writer.alive():
                await self._drop_writer(self._writer, self._writer.ended())
            if self._writer is None:
                self._writer = await trio.to_thread.run_sync(self._where, self.path)
            return self._writer

    async def _drop_writer(self, writer: WriterProcess | WriterHere, how: str) -> None:
        """Let go of a writer process that ended (``how``), unless another batch did; the next
        batch starts another."""
        if writer is not self._writer:
            return
        log.warning("the store writer process ended (%s); starting it again", how)
        self._writer = None
        await writer.aclose()

    def writes_to_its_file(self) -> bool:
        """Whether the file at the store's path is still the one the writer opened."""
        return self._served is not None and file_id(self.path) == self._served

    def orphaned(self) -> sqlite3.OperationalError:
        """Why nothing more is written once the store's file was deleted or replaced: the open
        connection would go on committing to the old file, which no reader and no restart
        sees, while every match it took in was announced as recorded and rated."""
        return sqlite3.OperationalError(
            f"the store file {self.path} was deleted or replaced while the server ran: nothing more is"
            f" written to it; stop the server, then move the file back, or restore a backup with `arena export"
            f" store --db BACKUP --out {self.path.name}` (not cp: the -wal and -shm left at the path are the old"
            " file's, and a copy put beside them takes them for its own)"
        )

    async def call(self, work: Callable[[Store], T]) -> T:
        if self._closed:
            raise trio.ClosedResourceError("the store writer is closed")
        job = _Job(work, trio.Event())
        self._queued.append(job)
        self._came.set()
        await job.done.wait()
        if job.error is not None:
            raise job.error
        return job.value

    async def aclose(self) -> None:
        self._stop()

    def _stop(self) -> None:
        self._closed = True
        self._came.set()


class WriterEnded(Exception):
    """The writer process had ended before it took a batch: nothing of the batch was written."""


class WriterProcess:
    """The process that owns the store's write connection, and the socket to it. Starting it
    (blocking: in a worker thread) opens the store there, raising what opening raised;
    ``aclose`` lets it close the store and waits for it to end.

    Batches may be sent while others are out: the process takes them in turn and answers in
    the order they came, so each batch reads its answer after the one sent before it has."""

    def __init__(self, path: Path) -> None:
        context = _context()
        here, there = socket.socketpair()
        process = context.Process(target=_serve, args=(str(path), there, serves_here(path)), name=WRITER_NAME, daemon=True)
        try:
            process.start()
        except BaseException:
            here.close()
            raise
        finally:
            there.close()
        self._process = process
        self.pid = process.pid
        try:
            with here.makefile("rb") as answer:  # the only message before the first batch
                kind, value = pickle.loads(_read_message(answer))
        except (EOFError, OSError):
            kind, value = "ended", None
        if kind != "ready":
            here.close()
            process.join()
        if kind == "failed":
            raise value
        if kind == "ended":
            raise sqlite3.OperationalError(
                f"the store writer process ended as it started ({self.ended()}; its error is above). If that error"
                " is the server's own script starting again: start the server under `if __name__ =="
                ' "__main__":`, as the process imports the script first, as multiprocessing\'s processes do'
            )
        self.served: tuple[int, int] | None = value
        self._stream = trio.SocketStream(trio.socket.from_stdlib_socket(here))
        self._sending = trio.Lock()  # one batch's bytes after another's, never between them
        self._answered = trio.Event()  # the last batch sent has its answer (or never will)
        self._answered.set()
        self._died = False  # a batch found it ended: those sent after that one were never taken

    def alive(self) -> bool:
        return self._process.is_alive()

    def ended(self) -> str:
        code = self._process.exitcode
        if code is None:
            return "still running"
        return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"

    async def run(self, jobs: list[_Job]) -> None:
        """Send the jobs' work, take back their outcomes; a job whose work does not pickle
        fails alone, and a process that ends on the way fails the batch. WriterEnded: it had
        ended before it took the batch."""
        sent: list[_Job] = []
        payloads: list[bytes] = []
        for job in jobs:
            try:
                payloads.append(pickle.dumps(job.work, pickle.HIGHEST_PROTOCOL))
            except Exception as error:
                job.error = TypeError(
                    f"a store job crosses to the writer process pickled, and {job.work!r} does not pickle ({error}):"
                    " make it a Call of a Store method, or of a function at a module's top level"
                )
            else:
                sent.append(job)
        if not sent:
            return
        message = _framed(pickle.dumps(payloads, pickle.HIGHEST_PROTOCOL))
        async with self._sending:
            try:
                await self._stream.send_all(message)
            except (trio.BrokenResourceError, trio.ClosedResourceError):  # it ended before it had the whole batch
                await trio.to_thread.run_sync(self._process.join, 1)
                raise WriterEnded(self.ended()) from None
            before, self._answered = self._answered, trio.Event()
            answered = self._answered
        try:
            await before.wait()
            if self._died:  # it ended writing an earlier batch, so never took this one
                raise WriterEnded(self.ended())
            try:
                outcomes: list[Outcome] = pickle.loads(await _receive_message(self._stream))
            except (EOFError, trio.BrokenResourceError, trio.ClosedResourceError):
                self._died = True
                await trio.to_thread.run_sync(self._process.join, 1)
                _fail(
                    sent,
                    sqlite3.OperationalError(
                        f"the store writer process ended while writing this job ({self.ended()}); it is started again"
                    ),
                )
                return
        finally:
            answered.set()
        _take(sent, outcomes)

    async def aclose(self) -> None:
        await self._answered.wait()  # the batches out read their answers first, or find it ended
        await self._stream.aclose()  # the process reads the end of its input, closes the store and ends
        await trio.to_thread.run_sync(self._process.join)


class WriterHere:
    """The store in a thread of the server's own, which runs below the event loop's priority:
    on a machine whose cores are all busy the loop relaying moves goes first. Starting it
    (blocking: in a worker thread) opens the store there, raising what opening raised."""

    pid = None

    def __init__(self, path: Path) -> None:
        self._batches: queue.SimpleQueue[tuple[list[Callable[[Store], Any]], Callable[[list[Outcome]], None]] | None]
        self._batches = queue.SimpleQueue()
        opened: queue.SimpleQueue[tuple[int, int] | BaseException] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, args=(path, opened), name=WRITER_NAME, daemon=True)
        self._thread.start()
        answer = opened.get()
        if isinstance(answer, BaseException):
            self._thread.join()
            raise answer
        self.served: tuple[int, int] | None = answer

    def _serve(self, path: Path, opened: queue.SimpleQueue[tuple[int, int] | BaseException]) -> None:
        _name_this_thread(f"{WRITER_NAME} {path.name}")
        if sys.platform.startswith("linux"):  # where a thread has a priority of its own (elsewhere: the process's)
            thread = threading.get_native_id()
            with contextlib.suppress(OSError):  # a system that refuses: the writer still writes
                os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + WRITER_NICE)
        try:
            store = Store(path)
        except BaseException as error:
            opened.put(error)
            return
        try:
            opened.put(file_id(path))
            while (batch := self._batches.get()) is not None:
                works, written = batch
                written(_run_batch(store, works))
        finally:
            store.close()

    def alive(self) -> bool:
        return True

    def ended(self) -> str:
        return "still running"

    async def run(self, jobs: list[_Job]) -> None:
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        outcomes: list[Outcome] = []

        def written(batch: list[Outcome]) -> None:
            outcomes.extend(batch)
            token.run_sync_soon(done.set)

        self._batches.put(([job.work for job in jobs], written))
        await done.wait()
        _take(jobs, outcomes)

    async def aclose(self) -> None:
        self._batches.put(None)
        await trio.to_thread.run_sync(self._thread.join)


@functools.cache
def _context() -> multiprocessing.context.BaseContext:
    """Forkserver where there is one: each writer is forked from a process that has imported
    the store already (a fresh interpreter takes about a second to), and not from the server,
    whose other threads may hold locks the child would wait for."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def _serve(path: str, conn: socket.socket, served: bool) -> None:
    """The writer process: open the store, then run each batch that comes, until the input ends
    (the server closed it, or died). Ctrl-C, which a terminal sends to the server's whole
    process group, is left to the server, which stops the writer once it has written its last."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _name_this_thread(f"{WRITER_NAME} {Path(path).name}")
    with contextlib.suppress(OSError):  # a system that refuses: the writer still writes
        os.nice(WRITER_NICE)
    with served_here(Path(path)) if served else contextlib.nullcontext(), conn, conn.makefile("rb") as batches:
        try:
            store = Store(path)
        except BaseException as error:
            conn.sendall(_framed(_dumps(("failed", error))))
            return
        try:
            conn.sendall(_framed(_dumps(("ready", file_id(Path(path))))))
            while True:
                try:
                    payload = _read_message(batches)
                except EOFError:
                    return
                works = [_loads(work) for work in pickle.loads(payload)]
                outcomes = _run_batch(store, works)
                conn.sendall(_framed(_dumps([(value, error if error is None else _traced(error)) for value, error in outcomes])))
        finally:
            store.close()


def _framed(message: bytes) -> bytes:
    """A message as it crosses the socket between the server and the writer: its length first."""
    return len(message).to_bytes(HEADER_BYTES, "big") + message


def _read_message(stream: BinaryIO) -> bytes:
    """The next framed message from a socket's buffered file; EOFError once the other end
    closed it. Buffered, a read returns less than it asks only at the end."""
    header = stream.read(HEADER_BYTES)
    size = int.from_bytes(header, "big")
    message = stream.read(size) if len(header) == HEADER_BYTES else b""
    if len(header) < HEADER_BYTES or len(message) < size:
        raise EOFError("the other end closed the socket")
    return message


async def _receive_message(stream: trio.SocketStream) -> bytes:
    """The next framed message, as the event loop waits for it; EOFError once the other end closed."""
    return await _receive_exactly(stream, int.from_bytes(await _receive_exactly(stream, HEADER_BYTES), "big"))


async def _receive_exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise EOFError("the other end closed the socket")
        data += chunk
    return bytes(data)


def _loads(payload: bytes) -> Callable[[Store], Any] | BaseException:
    try:
        work: Callable[[Store], Any] = pickle.loads(payload)
    except Exception as error:  # a function the writer process cannot import
        return error
    return work


def _run_batch(store: Store, works: list[Callable[[Store], Any] | BaseException]) -> list[Outcome]:
    """Run the jobs in one transaction, each in a savepoint; a failed commit fails them all."""
    outcomes: list[Outcome] = []
    try:
        with store.atomic():
            for work in works:
                if isinstance(work, BaseException):
                    outcomes.append((None, work))
                    continue
                try:
                    with store.atomic():
                        outcomes.append((work(store), None))
                except Exception as error:
                    outcomes.append((None, error))
    except Exception as error:  # the commit, or the transaction's start
        errors = [failed for _, failed in outcomes] + [None] * (len(works) - len(outcomes))
        outcomes = [(None, failed or error) for failed in errors]
    return outcomes


def _traced(error: BaseException) -> BaseException:
    """A bug's error with where it happened, which its trip back to the server would lose; a
    refused request (a name taken) and SQLite's own errors go back as they are."""
    told = any(note.startswith(TRACED) for note in getattr(error, "__notes__", ()))  # one error may fail several jobs
    if not (told or isinstance(error, StoreError | sqlite3.Error)):
        error.add_note(TRACED + "".join(traceback.format_exception(error)).rstrip())
    return error


def _dumps(message: Any) -> bytes:
    """Pickled for the trip back; an outcome that does not pickle becomes an error saying so."""
    try:
        return pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    except Exception:
        if not isinstance(message, list):
            raise
    portable: list[Outcome] = []
    for value, error in message:
        try:
            pickle.dumps((value, error), pickle.HIGHEST_PROTOCOL)
        except Exception as failure:
            portable.append((None, TypeError(f"a store job's outcome does not pickle to go back to the server: {failure}")))
        else:
            portable.append((value, error))
    return pickle.dumps(portable, pickle.HIGHEST_PROTOCOL)


def _take(jobs: list[_Job], outcomes: list[Outcome]) -> None:
    for job, (value, error) in zip(jobs, outcomes, strict=True):
        job.value, job.error = value, error


def _fail(jobs: list[_Job], error: BaseException) -> None:
    _take(jobs, [(None, error)] * len(jobs))


def _wake(jobs: list[_Job]) -> None:
    for job in jobs:
        job.done.set()


def _name_this_thread(name: str) -> None:
    """Shown where ``top`` and /proc show threads (Linux); a process's first thread names it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # /proc not mounted
            Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text(name[:15])

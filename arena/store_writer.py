"""The store's one writer: a process of its own owning the write connection, fed by one thread.

Jobs come from trio through a queue to the writer thread; the jobs waiting when it wakes
(on a busy server, after a short wait for more: ``LINGER_S``) go to the writer process as
one batch, where each runs in a savepoint of its own (a job that fails undoes only its own
writes) and one commit ends the batch; the thread then wakes their callers. A job's commit
always comes before its caller goes on, and there is one writer, so writes never race.

Why a process and not the thread alone: Python runs one thread of a process at a time, and
SQLite's work in the writer thread (binding rows, encoding them, between the statements)
took that turn from the event loop relaying moves, so the whole server never used more than
one core. On ``bench.server`` (200 bots, 2 cores) the writer thread was never idle, and two
thirds of that time it waited for a core or for that turn, while matches waited for their
commits behind it. The thread now only pickles the batch, and the writer's CPU comes from
another core.

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
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Generic, TypeVar

import outcome
import trio

from arena.store import Store, StoreError, file_id, is_damage, served_here, serves_here

T = TypeVar("T")
U = TypeVar("U")

log = logging.getLogger(__name__)

WRITER_NAME = "store writer"
"""The writer thread's name, and its process's, before the store's file name: where ``top``
and /proc show them (the bench reads the writer's CPU there)."""
WRITER_NICE = 10
"""How far below the event loop the writer runs (its process, or its thread in the server's).
On a machine whose cores are all busy the event loop relaying moves goes first, and the
writer takes the time left, committing larger batches; a finished match waits for its
commit longer under load, never for ever. On ``bench.server`` the process at the loop's own
priority relayed 16% fewer moves a second; at 19, as many as at 10."""

LINGER_S = 0.01
"""How long a busy writer waits, once the first job of a batch has come, for others to share
its commit; an idle one takes each job at once (``LINGER_FROM``), as PostgreSQL's group commit
(commit_delay, commit_siblings) waits only when other transactions are under way. On
``bench.server``, whose batches held about fifteen jobs without it, larger batches made
fewer commits (each writes every page it changed): in four alternated runs the server spent
7%, 10%, 7% and 1% less CPU a move and relayed 3%, 6%, 6% and -1% more moves a second, with
no longer round trips. Each match may wait this much more for its start and its end to be
recorded; 25 ms relayed fewer moves (the matches waited, the cores idled)."""
LINGER_FROM = 8
"""Jobs in the last batch from which the writer takes the server for busy, and lingers."""

Outcome = tuple[Any, BaseException | None]  # a job's value, or its error
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

    With ``process=False`` the jobs run in the writer thread itself (``WriterHere``), sharing
    the server's core: for a system that cannot start the process, and for tests that change
    the Store's methods in the server's own process."""

    def __init__(self, path: str | Path, *, process: bool = True) -> None:
        self.path = Path(path)
        self._where: type[WriterProcess | WriterHere] = WriterProcess if process else WriterHere
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: stop after what is queued
        self._closed = False
        self._served: tuple[int, int] | None = None  # the file the writer opened (device, inode)
        self._writer: WriterProcess | WriterHere | None = None
        self.failing: str | None = None  # why its last batch could not be written (a full disk), till one is
        self.damaged: str | None = None  # the error that found the file damaged, for good (``is_damage``)

    @property
    def pid(self) -> int | None:
        """The writer process's, while it runs."""
        return None if self._writer is None else self._writer.pid

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        token = trio.lowlevel.current_trio_token()
        ready, ended = trio.Event(), trio.Event()  # ready: the store is open, or the thread ended trying
        results: list[outcome.Outcome[None]] = []

        def deliver(result: outcome.Outcome[None]) -> None:
            results.append(result)
            token.run_sync_soon(lambda: (ready.set(), ended.set()))

        name = f"{WRITER_NAME} {self.path.name}"

        def work() -> None:
            _name_this_thread(name)
            self._thread(token, lambda: token.run_sync_soon(ready.set))

        threading.Thread(target=lambda: deliver(outcome.capture(work)), name=name, daemon=True).start()
        try:
            await ready.wait()
            if not results:
                task_status.started()
                await ended.wait()
        finally:
            self._stop()
            with trio.CancelScope(shield=True):
                await ended.wait()
        results[0].unwrap()  # the thread's own failure (starting the process, opening the store), if any

    def _thread(self, token: trio.lowlevel.TrioToken, opened: Callable[[], None]) -> None:
        try:
            self._writer = self._where(self.path)
        except OSError as error:  # no process can be started here (a sandbox): the server still serves
            if self._where is WriterHere:
                raise
            log.warning("the store writer process could not be started (%s): it writes in the server's process", error)
            self._where = WriterHere
            self._writer = WriterHere(self.path)
        try:
            self._served = self._writer.served
            opened()
            last = 0  # jobs in the last batch
            while True:
                batch = [self._jobs.get()]
                if last >= LINGER_FROM and batch[0] is not None:
                    time.sleep(LINGER_S)
                with contextlib.suppress(queue.Empty):
                    while True:
                        batch.append(self._jobs.get_nowait())
                jobs = [job for job in batch if job is not None]
                if jobs:
                    if self.writes_to_its_file():
                        self._write(jobs)
                        failures = (job.error for job in jobs if isinstance(job.error, sqlite3.OperationalError))
                        self.failing = next((str(error) for error in failures), None)
                        self.damaged = self.damaged or next((str(job.error) for job in jobs if is_damage(job.error)), None)
                    else:
                        _fail(jobs, self.orphaned())
                    token.run_sync_soon(_wake, jobs)
                last = len(jobs)
                if len(jobs) < len(batch):
                    return
        finally:
            if self._writer is not None:
                self._writer.close()

    def _write(self, jobs: list[_Job]) -> None:
        """Run the batch in the writer process; one that has ended (killed) is started again.
        A process can end unseen (its end not yet reported here): a batch it never took is sent
        to the next one rather than failed, as a batch it died writing is."""
        for _ in range(2):
            if self._writer is not None and not self._writer.alive():
                self._drop_writer(self._writer.ended())
            if self._writer is None:
                try:
                    self._writer = self._where(self.path)
                except Exception as error:
                    _fail(jobs, error)
                    return
            try:
                self._writer.run(jobs)
                return
            except WriterEnded as ended:
                self._drop_writer(f"{ended}, before it took a batch")
        _fail(jobs, sqlite3.OperationalError("the store writer process ended twice before taking this job"))

    def _drop_writer(self, how: str) -> None:
        """Let go of a writer process that ended (``how``); the next batch starts another."""
        assert self._writer is not None
        log.warning("the store writer process ended (%s); starting it again", how)
        self._writer.close()
        self._writer = None

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
        self._jobs.put(job)
        await job.done.wait()
        if job.error is not None:
            raise job.error
        return job.value

    async def aclose(self) -> None:
        self._stop()

    @trio.lowlevel.enable_ki_protection  # Ctrl-C between marking it closed and queueing the stop would hang the run
    def _stop(self) -> None:
        if not self._closed:
            self._closed = True
            self._jobs.put(None)


class WriterEnded(Exception):
    """The writer process had ended before it took a batch: nothing of the batch was written."""


class WriterProcess:
    """The process that owns the store's write connection, and the pipe to it. Starting it
    opens the store there (raising what opening raised); ``close`` lets it close the store
    and waits for it to end."""

    def __init__(self, path: Path) -> None:
        context = _context()
        self._conn, there = context.Pipe()
        process = context.Process(target=_serve, args=(str(path), there, serves_here(path)), name=WRITER_NAME, daemon=True)
        process.start()
        there.close()
        self._process = process
        self.pid = process.pid
        try:
            kind, value = pickle.loads(self._conn.recv_bytes())
        except (EOFError, OSError):
            self.close()
            raise sqlite3.OperationalError(
                f"the store writer process ended as it started ({self.ended()}; its error is above). If that error"
                " is the server's own script starting again: start the server under `if __name__ =="
                ' "__main__":`, as the process imports the script first, as multiprocessing\'s processes do'
            ) from None
        if kind == "failed":
            self.close()
            raise value
        self.served: tuple[int, int] | None = value

    def alive(self) -> bool:
        return self._process.is_alive()

    def ended(self) -> str:
        code = self._process.exitcode
        if code is None:
            return "still running"
        return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"

    def run(self, jobs: list[_Job]) -> None:
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
        try:
            self._conn.send_bytes(pickle.dumps(payloads, pickle.HIGHEST_PROTOCOL))
        except BrokenPipeError:  # no reader: it ended before it had the whole batch, so wrote none of it
            self._process.join(1)
            raise WriterEnded(self.ended()) from None
        try:
            outcomes: list[Outcome] = pickle.loads(self._conn.recv_bytes())
        except (EOFError, OSError):
            self._process.join(1)
            _fail(
                sent,
                sqlite3.OperationalError(
                    f"the store writer process ended while writing this job ({self.ended()}); it is started again"
                ),
            )
            return
        _take(sent, outcomes)

    def close(self) -> None:
        self._conn.close()  # the process reads the end of its input, closes the store and ends
        self._process.join()


class WriterHere:
    """The store in the writer thread itself, which runs below the event loop's priority:
    on a machine whose cores are all busy the loop relaying moves goes first."""

    pid = None

    def __init__(self, path: Path) -> None:
        if sys.platform.startswith("linux"):  # where a thread has a priority of its own (elsewhere: the process's)
            thread = threading.get_native_id()
            with contextlib.suppress(OSError):  # a system that refuses: the writer still writes
                os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + WRITER_NICE)
        self._store = Store(path)
        self.served = file_id(path)

    def alive(self) -> bool:
        return True

    def ended(self) -> str:
        return "still running"

    def run(self, jobs: list[_Job]) -> None:
        _take(jobs, _run_batch(self._store, [job.work for job in jobs]))

    def close(self) -> None:
        self._store.close()


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


def _serve(path: str, conn: Connection, served: bool) -> None:
    """The writer process: open the store, then run each batch that comes, until the input ends
    (the server closed it, or died). Ctrl-C, which a terminal sends to the server's whole
    process group, is left to the server, which stops the writer once it has written its last."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _name_this_thread(f"{WRITER_NAME} {Path(path).name}")
    with contextlib.suppress(OSError):  # a system that refuses: the writer still writes
        os.nice(WRITER_NICE)
    with served_here(Path(path)) if served else contextlib.nullcontext():
        try:
            store = Store(path)
        except BaseException as error:
            conn.send_bytes(_dumps(("failed", error)))
            return
        try:
            conn.send_bytes(_dumps(("ready", file_id(Path(path)))))
            while True:
                try:
                    payload = conn.recv_bytes()
                except EOFError:
                    return
                works = [_loads(work) for work in pickle.loads(payload)]
                outcomes = _run_batch(store, works)
                conn.send_bytes(_dumps([(value, error if error is None else _traced(error)) for value, error in outcomes]))
        finally:
            store.close()


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

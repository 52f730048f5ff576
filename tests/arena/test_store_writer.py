"""The store's one writer: jobs batched into one commit, each job all or nothing, every job
committed before its caller goes on, and a clean stop that finishes what was queued."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.store import WRITER_NICE, Store, StoreError, StoreWriter, copy_store


def committed_bots(db: Path) -> set[str]:
    """What another connection sees: only committed rows."""
    conn = sqlite3.connect(db)
    try:
        return {name for (name,) in conn.execute("SELECT name FROM bots")}
    finally:
        conn.close()


def register_then_fail(store: Store) -> None:
    store.register_bot("half-done")
    raise RuntimeError("the job broke after writing")


@pytest.mark.trio
async def test_concurrent_jobs_are_each_committed_before_their_caller_resumes(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    seen: dict[str, bool] = {}

    async def register(name: str) -> None:
        await writer.call(lambda store: store.register_bot(name))
        seen[name] = name in committed_bots(db)

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as callers:
            for i in range(40):
                callers.start_soon(register, f"bot-{i}")
        await writer.aclose()
    assert seen == {f"bot-{i}": True for i in range(40)}


@pytest.mark.trio
async def test_a_failing_job_in_a_batch_undoes_only_its_own_writes(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    entered, gate = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def hold(store: Store) -> None:
        entered.set()
        gate.wait(10)

    async def run(label: str, work: Callable[[Store], object]) -> None:
        try:
            outcomes[label] = await writer.call(work)
        except Exception as error:
            outcomes[label] = error

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as callers:
            callers.start_soon(run, "hold", hold)
            await trio.to_thread.run_sync(entered.wait, 10)
            callers.start_soon(run, "twin-a", lambda store: store.register_bot("twin"))
            callers.start_soon(run, "broken", register_then_fail)
            callers.start_soon(run, "twin-b", lambda store: store.register_bot("twin"))
            callers.start_soon(run, "other", lambda store: store.register_bot("other"))
            await trio.testing.wait_all_tasks_blocked()  # all four queued behind the held job: one batch
            gate.set()
        await writer.aclose()
    assert isinstance(outcomes["broken"], RuntimeError)
    twins = [outcomes["twin-a"], outcomes["twin-b"]]
    assert sum(isinstance(o, str) for o in twins) == 1
    assert sum(isinstance(o, StoreError) and o.kind == "exists" for o in twins) == 1
    assert isinstance(outcomes["other"], str)
    assert committed_bots(db) == {"twin", "other"}


@pytest.mark.trio
async def test_cancelling_the_writer_finishes_the_queued_jobs_then_refuses_more(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for i in range(5):
            nursery.start_soon(writer.call, lambda store, i=i: store.register_bot(f"queued-{i}"))
        await trio.lowlevel.checkpoint()  # the calls are queued, none has been answered yet
        nursery.cancel_scope.cancel()
    assert committed_bots(db) == {f"queued-{i}" for i in range(5)}
    with pytest.raises(trio.ClosedResourceError, match="closed"):
        await writer.call(lambda store: store.bots())


@pytest.mark.trio
async def test_a_store_that_cannot_be_opened_fails_the_start(tmp_path: Path) -> None:
    writer = StoreWriter(tmp_path / "missing-folder" / "arena.db")
    with pytest.RaisesGroup(pytest.RaisesExc(StoreError, match="as a store: unable to open")):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)


def own_priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread has a priority of its own on Linux")
@pytest.mark.trio
async def test_the_writer_runs_below_the_event_loop_and_lowers_no_other_thread(tmp_path: Path) -> None:
    loop = own_priority()
    writer = StoreWriter(tmp_path / "arena.db")
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        assert await writer.call(lambda store: own_priority()) == min(19, loop + WRITER_NICE)
        await writer.aclose()
    assert own_priority() == loop
    assert await trio.to_thread.run_sync(own_priority) == loop  # trio's cached threads, which serve the server's reads


def test_a_savepoint_undoes_its_own_writes_and_the_transaction_around_it_goes_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    try:
        with store.atomic():
            store.register_bot("kept")
            with pytest.raises(RuntimeError), store.atomic():
                store.register_bot("undone")
                raise RuntimeError("inner block fails")
            store.register_bot("after")
        assert committed_bots(tmp_path / "arena.db") == {"kept", "after"}
        with pytest.raises(RuntimeError), store.atomic():
            store.register_bot("never")
            raise RuntimeError("outer block fails")
        assert committed_bots(tmp_path / "arena.db") == {"kept", "after"}
        assert not store.conn.in_transaction
    finally:
        store.close()


STOP_INTERRUPTED = """
import queue, signal, sys, trio
from arena.store import StoreWriter

class Interrupting:
    '''The writer's queue, with Ctrl-C arriving just as the stop is queued.'''
    def __init__(self):
        self.jobs = queue.SimpleQueue()
    def get(self):
        return self.jobs.get()
    def get_nowait(self):
        return self.jobs.get_nowait()
    def put(self, job):
        if job is None:
            signal.raise_signal(signal.SIGINT)
        self.jobs.put(job)

async def main():
    writer = StoreWriter(sys.argv[1])
    writer._jobs = Interrupting()
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(lambda store: store.register_bot("kept"))
        await writer.aclose()

try:
    trio.run(main)
except* KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_while_the_writer_is_told_to_stop_still_stops_it(tmp_path: Path) -> None:
    """Ctrl-C landing inside the stop (marked closed, its stop not queued yet) left the thread
    waiting for a job and the run waiting for the thread: a tournament hung on Ctrl-C."""
    import subprocess
    import sys

    db = tmp_path / "arena.db"
    done = subprocess.run([sys.executable, "-c", STOP_INTERRUPTED, str(db)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 130, done.stderr
    assert committed_bots(db) == {"kept"}


@pytest.mark.trio
@pytest.mark.parametrize("how", ["moved-back", "deleted-then-restored"])
async def test_a_store_put_back_after_its_file_left_the_path_under_the_writer_is_intact(tmp_path: Path, how: str) -> None:
    """What the server's message says to do once its file was moved away or deleted: move it
    back, or restore a backup with ``copy_store`` (``arena export store``). The -wal left at
    the path belongs to the old file: it completes a file moved back (removing it lost every
    table of one: found by a QA helper), and a backup copied there with cp took its pages for
    its own, where ``copy_store`` removes it (found by another)."""
    db = tmp_path / "arena.db"
    backup = tmp_path / "backup.db"
    writer = StoreWriter(db)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(lambda store: store.register_bot("kept"))
        reader = Store(db, read_only=True)  # as `arena export store` copies a served store
        try:
            copy_store(reader, backup)
        finally:
            reader.close()
        for i in range(200):  # pages in the log that the backup does not have
            await writer.call(lambda store, i=i: store.register_bot(f"later-{i}"))
        aside = tmp_path / "aside.db"
        db.rename(aside)
        if how == "deleted-then-restored":
            aside.unlink()
        assert not writer.writes_to_its_file()
        await writer.aclose()
    if how == "moved-back":
        aside.rename(db)
        expected = {"kept", *(f"later-{i}" for i in range(200))}
    else:
        source = Store(backup, read_only=True)
        try:
            copy_store(source, db)
        finally:
            source.close()
        expected = {"kept"}
    store = Store(db)
    try:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert {bot["name"] for bot in store.bots()} == expected
    finally:
        store.close()

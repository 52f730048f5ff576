"""The store's one writer: jobs batched into one commit, each job all or nothing, every job
committed before its caller goes on, and a clean stop that finishes what was queued; in its
own process (as the server runs it) and in the server's (``process=False``)."""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from arena import store_writer
from arena.store import Store, StoreError, copy_store
from arena.store_writer import WRITER_NICE, Call, StoreWriter, WriterProcess

BOTH = pytest.mark.parametrize("process", [True, False], ids=["process", "thread"])


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


def hold(store: Store, entered: Path, gate: Path) -> None:
    """Keep the writer busy until ``gate`` exists, having said so by making ``entered``: the
    jobs queued meanwhile make one batch. Files, as the writer may be another process."""
    entered.touch()
    while not gate.exists():
        time.sleep(0.005)


async def record(outcomes: dict[str, object], label: str, writer: StoreWriter, work: Callable[[Store], object]) -> None:
    """The job's value, or the error it raised, under ``label``."""
    try:
        outcomes[label] = await writer.call(work)
    except Exception as error:
        outcomes[label] = error


async def wait_for(path: Path) -> None:
    with trio.fail_after(10):
        while not path.exists():
            await trio.sleep(0.005)


@BOTH
@pytest.mark.trio
async def test_concurrent_jobs_are_each_committed_before_their_caller_resumes(tmp_path: Path, process: bool) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db, process=process)
    seen: dict[str, bool] = {}

    async def register(name: str) -> None:
        await writer.call(Call(Store.register_bot, name))
        seen[name] = name in committed_bots(db)

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as callers:
            for i in range(40):
                callers.start_soon(register, f"bot-{i}")
        await writer.aclose()
    assert seen == {f"bot-{i}": True for i in range(40)}


@BOTH
@pytest.mark.trio
async def test_a_failing_job_in_a_batch_undoes_only_its_own_writes(tmp_path: Path, process: bool) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db, process=process)
    entered, gate = tmp_path / "entered", tmp_path / "gate"
    outcomes: dict[str, object] = {}

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as callers:
            callers.start_soon(record, outcomes, "hold", writer, Call(hold, entered, gate))
            await wait_for(entered)
            callers.start_soon(record, outcomes, "twin-a", writer, Call(Store.register_bot, "twin"))
            callers.start_soon(record, outcomes, "broken", writer, register_then_fail)
            callers.start_soon(record, outcomes, "twin-b", writer, Call(Store.register_bot, "twin"))
            callers.start_soon(record, outcomes, "other", writer, Call(Store.register_bot, "other"))
            await trio.testing.wait_all_tasks_blocked()  # all four queued behind the held job: one batch
            gate.touch()
        await writer.aclose()
    assert isinstance(outcomes["broken"], RuntimeError) and str(outcomes["broken"]) == "the job broke after writing"
    twins = [outcomes["twin-a"], outcomes["twin-b"]]
    assert sum(isinstance(o, str) for o in twins) == 1
    assert sum(isinstance(o, StoreError) and o.kind == "exists" for o in twins) == 1
    assert isinstance(outcomes["other"], str)
    assert committed_bots(db) == {"twin", "other"}


@BOTH
@pytest.mark.trio
async def test_a_batch_is_sent_while_the_one_before_is_written_and_the_jobs_that_come_meanwhile_go_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, process: bool
) -> None:
    """The writer goes from one batch to the next without waiting for the event loop to read
    its answer, and never has more than ``DEPTH`` batches out."""
    assert store_writer.DEPTH == 2
    batches: list[int] = []
    write = StoreWriter._write

    async def counted(self: StoreWriter, jobs: list[store_writer._Job]) -> None:
        batches.append(len(jobs))
        await write(self, jobs)

    monkeypatch.setattr(StoreWriter, "_write", counted)
    writer = StoreWriter(tmp_path / "arena.db", process=process)
    entered, gates = [tmp_path / f"entered-{i}" for i in (1, 2)], [tmp_path / f"gate-{i}" for i in (1, 2)]
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        try:
            async with trio.open_nursery() as callers:
                for i in (0, 1):
                    callers.start_soon(writer.call, Call(hold, entered[i], gates[i]))
                    await trio.testing.wait_all_tasks_blocked()
                await wait_for(entered[0])
                assert batches == [1, 1]  # the second sent while the first is written
                for _ in range(3):
                    callers.start_soon(writer.call, Call(Store.bots))
                await trio.testing.wait_all_tasks_blocked()
                assert batches == [1, 1]  # no room: two batches are out
                gates[0].touch()
                await wait_for(entered[1])
                with trio.fail_after(10):
                    while len(batches) < 3:
                        await trio.sleep(0.005)
                assert batches == [1, 1, 3]  # sent while the second is written
                gates[1].touch()
        finally:
            for gate in gates:  # the held jobs end, whatever failed
                gate.touch()
        await writer.aclose()


@BOTH
@pytest.mark.trio
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
async def test_cancelling_the_writer_finishes_the_queued_jobs_then_refuses_more(
    tmp_path: Path, process: bool, busy: bool
) -> None:
    """Cancelled while idle, or while the jobs wait for room behind batches that are out:
    the queued jobs are written all the same."""
    db = tmp_path / "arena.db"
    writer = StoreWriter(db, process=process)
    entered, gate = tmp_path / "entered", tmp_path / "gate"
    expected = {f"queued-{i}" for i in range(5)}
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            if busy:  # a batch held, and another out behind it
                nursery.start_soon(writer.call, Call(hold, entered, gate))
                await wait_for(entered)
                nursery.start_soon(writer.call, Call(Store.register_bot, "behind"))
                await trio.testing.wait_all_tasks_blocked()  # sent: the five below wait for room
                expected.add("behind")
            for i in range(5):
                nursery.start_soon(writer.call, Call(Store.register_bot, f"queued-{i}"))
            await trio.testing.wait_all_tasks_blocked()  # the calls are queued, none has been answered yet
            nursery.cancel_scope.cancel()
            gate.touch()
    assert committed_bots(db) == expected
    with pytest.raises(trio.ClosedResourceError, match="closed"):
        await writer.call(Call(Store.bots))


@BOTH
@pytest.mark.trio
async def test_a_store_that_cannot_be_opened_fails_the_start(tmp_path: Path, process: bool) -> None:
    writer = StoreWriter(tmp_path / "missing-folder" / "arena.db", process=process)
    with pytest.RaisesGroup(pytest.RaisesExc(StoreError, match="as a store: unable to open")):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)


def own_priority(store: Store | None = None) -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@BOTH
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread has a priority of its own on Linux")
@pytest.mark.trio
async def test_the_writer_runs_below_the_event_loop_and_lowers_no_other_thread(tmp_path: Path, process: bool) -> None:
    loop = own_priority()
    writer = StoreWriter(tmp_path / "arena.db", process=process)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        assert await writer.call(own_priority) == min(19, loop + WRITER_NICE)
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


INTERRUPTED = """
import sys, time, trio
from pathlib import Path
from arena.store import Store
from arena.store_writer import Call, StoreWriter

def held(store, entered, gate):
    store.register_bot("held")
    Path(entered).touch()
    while not Path(gate).exists():
        time.sleep(0.005)

async def main(db, entered, gate):
    writer = StoreWriter(db)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(Call(Store.register_bot, "kept"))
        nursery.start_soon(writer.call, Call(held, entered, gate))
        while not Path(entered).exists():
            await trio.sleep(0.005)
        nursery.start_soon(writer.call, Call(Store.register_bot, "queued"))
        await trio.sleep_forever()

if __name__ == "__main__":
    try:
        trio.run(main, *sys.argv[1:])
    except* KeyboardInterrupt:
        sys.exit(130)
"""


def test_ctrl_c_while_a_batch_is_written_stops_the_writer_once_it_and_the_jobs_queued_are_committed(tmp_path: Path) -> None:
    """A tournament or a server stopped by Ctrl-C: the batch in the writer's hands is seen
    through, the jobs queued behind it are written, and the run ends."""
    import subprocess

    script, db, entered, gate = (tmp_path / name for name in ("interrupted.py", "arena.db", "entered", "gate"))
    script.write_text(INTERRUPTED)
    proc = subprocess.Popen([sys.executable, str(script), str(db), str(entered), str(gate)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not entered.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert entered.exists(), proc.stderr.read() if proc.poll() is not None else "the held job never started"
        time.sleep(0.2)  # the queued job waits behind the held one
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        assert proc.poll() is None  # waiting for the batch it sent
        gate.touch()
        assert proc.wait(timeout=30) == 130, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    assert committed_bots(db) == {"kept", "held", "queued"}


@BOTH
@pytest.mark.trio
@pytest.mark.parametrize("how", ["moved-back", "deleted-then-restored"])
async def test_a_store_put_back_after_its_file_left_the_path_under_the_writer_is_intact(
    tmp_path: Path, how: str, process: bool
) -> None:
    """What the server's message says to do once its file was moved away or deleted: move it
    back, or restore a backup with ``copy_store`` (``arena export store``). The -wal left at
    the path belongs to the old file: it completes a file moved back (removing it lost every
    table of one: found by a QA helper), and a backup copied there with cp took its pages for
    its own, where ``copy_store`` removes it (found by another)."""
    db = tmp_path / "arena.db"
    backup = tmp_path / "backup.db"
    writer = StoreWriter(db, process=process)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(Call(Store.register_bot, "kept"))
        reader = Store(db, read_only=True)  # as `arena export store` copies a served store
        try:
            copy_store(reader, backup)
        finally:
            reader.close()
        for i in range(200):  # pages in the log that the backup does not have
            await writer.call(Call(Store.register_bot, f"later-{i}"))
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


def die(store: Store) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def cursor(store: Store) -> sqlite3.Cursor:
    return store.conn.execute("SELECT 1")


def broken(store: Store) -> None:
    raise KeyError("a bug in a job")


@pytest.mark.trio
async def test_a_job_that_cannot_reach_the_writer_process_fails_alone_and_says_why(tmp_path: Path) -> None:
    """A lambda does not pickle; a value that does not pickle cannot come back; a bug's error
    comes back with where it happened, which the trip would lose."""
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    outcomes: dict[str, object] = {}

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as callers:
            for label, work in (
                ("lambda", lambda store: store.register_bot("never")),
                ("cursor", cursor),
                ("bug", broken),
                ("kept", Call(Store.register_bot, "kept")),
            ):
                callers.start_soon(record, outcomes, label, writer, work)
        await writer.aclose()
    assert isinstance(outcomes["lambda"], TypeError) and "make it a Call of a Store method" in str(outcomes["lambda"])
    assert isinstance(outcomes["cursor"], TypeError) and "does not pickle to go back" in str(outcomes["cursor"])
    assert isinstance(outcomes["bug"], KeyError)
    assert any("in the store writer process" in note and "a bug in a job" in note for note in outcomes["bug"].__notes__)
    assert isinstance(outcomes["kept"], str)
    assert committed_bots(db) == {"kept"}


@pytest.mark.trio
async def test_a_writer_process_killed_fails_only_the_batch_it_was_writing_and_is_started_again(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        first = writer.pid
        with pytest.raises(sqlite3.OperationalError, match=r"ended while writing this job \(killed by SIGKILL\)"):
            await writer.call(die)
        await writer.call(Call(Store.register_bot, "after-a-death-mid-batch"))
        second = writer.pid
        assert second not in (None, first)
        os.kill(second, signal.SIGKILL)  # between batches: found ended before the next is sent
        with trio.fail_after(5):
            while os.path.exists(f"/proc/{second}") and "zombie" not in Path(f"/proc/{second}/status").read_text():
                await trio.sleep(0.01)
        await writer.call(Call(Store.register_bot, "after-a-death-between"))
        assert writer.pid not in (None, first, second)
        await writer.aclose()
    assert committed_bots(db) == {"after-a-death-mid-batch", "after-a-death-between"}


def die_at(store: Store, entered: Path, gate: Path) -> None:
    hold(store, entered, gate)
    die(store)


@pytest.mark.trio
async def test_a_batch_out_behind_the_one_the_writer_process_died_writing_goes_to_the_next_process(tmp_path: Path) -> None:
    """The process takes batches in turn: one sent to it after the batch it died writing was never taken."""
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    entered, gate = tmp_path / "entered", tmp_path / "gate"
    outcomes: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        first = writer.pid
        async with trio.open_nursery() as callers:
            callers.start_soon(record, outcomes, "died", writer, Call(die_at, entered, gate))
            await wait_for(entered)
            callers.start_soon(record, outcomes, "behind", writer, Call(Store.register_bot, "behind"))
            await trio.testing.wait_all_tasks_blocked()  # sent, and out behind the first
            gate.touch()
        assert writer.pid not in (None, first)
        await writer.aclose()
    assert isinstance(outcomes["died"], sqlite3.OperationalError)
    assert "ended while writing this job (killed by SIGKILL)" in str(outcomes["died"])
    assert isinstance(outcomes["behind"], str)
    assert committed_bots(db) == {"behind"}


@pytest.mark.trio
async def test_a_batch_sent_to_a_writer_process_that_ended_unseen_goes_to_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its end is known only once the forkserver reports it: a batch sent before then failed
    with what a process that died writing it fails (found as a flaky test in CI)."""
    monkeypatch.setattr(WriterProcess, "alive", lambda self: True)  # never seen to end
    db = tmp_path / "arena.db"
    writer = StoreWriter(db)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        first = writer.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with trio.fail_after(5):  # its files closed: no reader left on its pipe
            while os.path.exists(f"/proc/{first}") and "zombie" not in Path(f"/proc/{first}/status").read_text():
                await trio.sleep(0.01)
        await writer.call(Call(Store.register_bot, "after-an-unseen-death"))
        assert writer.pid not in (None, first)
        await writer.aclose()
    assert committed_bots(db) == {"after-an-unseen-death"}


@pytest.mark.trio
async def test_ctrl_c_at_the_terminal_leaves_the_writer_process_to_the_server(tmp_path: Path) -> None:
    """A terminal sends Ctrl-C to the server's whole process group: the writer must stay to
    write what the server's shutdown still writes (the voided matches)."""
    writer = StoreWriter(tmp_path / "arena.db")
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        pid = writer.pid
        assert pid is not None
        os.kill(pid, signal.SIGINT)
        await trio.sleep(0.2)
        await writer.call(Call(Store.register_bot, "after-ctrl-c"))
        assert writer.pid == pid
        await writer.aclose()
    assert committed_bots(tmp_path / "arena.db") == {"after-ctrl-c"}


UNGUARDED = """
import sys, trio
from arena.store import Store
from arena.store_writer import Call, StoreWriter

async def main():
    writer = StoreWriter(sys.argv[1])
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(Call(Store.register_bot, "never"))

trio.run(main)
"""


def test_a_script_that_serves_a_store_without_a_main_guard_is_told_what_to_do(tmp_path: Path) -> None:
    """The writer process imports the script first, as multiprocessing does: an unguarded one
    starts again in it, and the server failed with the process's "exit status 1" alone."""
    import subprocess

    script = tmp_path / "serve.py"
    script.write_text(UNGUARDED)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "arena.db")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert 'start the server under `if __name__ == "__main__":`' in done.stderr


@pytest.mark.trio
async def test_where_no_process_can_be_started_the_writer_writes_in_the_servers_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refused() -> object:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(store_writer, "_context", refused)
    writer = StoreWriter(tmp_path / "arena.db")
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.call(Call(Store.register_bot, "kept"))
        assert writer.pid is None
        await writer.aclose()
    assert committed_bots(tmp_path / "arena.db") == {"kept"}
    assert "could not be started ([Errno 1] Operation not permitted)" in caplog.text

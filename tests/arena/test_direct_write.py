"""Frames written without the connection's pump, as each pass of the event loop ends
(arena.direct_write): whatever the kernel takes of each write, every client still gets every
message whole and in order."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from arena import direct_write
from arena.server import Limits
from arena.store import Store
from tests.arena.test_bad_input import play_out, start_direct_match
from tests.conftest import ArenaFactory


def takes_at_most(size: int, calls: list[int]) -> Callable[[int, bytes], int]:
    """A kernel whose socket buffer takes only the first ``size`` bytes of each write."""

    def write(fd: int, data: bytes) -> int:
        calls.append(len(data))
        return os.write(fd, data[:size])

    return write


def takes_nothing(calls: list[int]) -> Callable[[int, bytes], int]:
    """A kernel whose socket buffer is full at every direct write."""

    def write(fd: int, data: bytes) -> int:
        calls.append(len(data))
        raise BlockingIOError

    return write


def fails(calls: list[int]) -> Callable[[int, bytes], int]:
    """A kernel that refuses every direct write with an error that is not a full buffer."""

    def write(fd: int, data: bytes) -> int:
        calls.append(len(data))
        raise OSError(errno.ENOMEM, "out of memory")

    return write


KERNELS = {"takes 7 bytes a write": lambda calls: takes_at_most(7, calls), "full buffer": takes_nothing, "failing write": fails}


@pytest.mark.trio
@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize("kernel", KERNELS)
async def test_a_burst_written_in_pieces_arrives_whole_and_in_order(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch, kernel: str, binary: bool
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(direct_write, "os", SimpleNamespace(write=KERNELS[kernel](calls)))
    arena = await arena_factory(limits=Limits(rate=1_000, burst=1_000))
    async with arena.bot("bursty", binary=binary) as bursty:
        for _ in range(200):
            await bursty.send("ping")
        pongs = [await bursty.expect("pong") for _ in range(200)]
    seqs = [pong["seq"] for pong in pongs]
    assert seqs == list(range(seqs[0], seqs[0] + 200))
    assert calls, "no frame took the direct path"
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_match_plays_out_when_no_write_goes_whole(arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(direct_write, "os", SimpleNamespace(write=takes_at_most(5, calls)))
    arena = await arena_factory()
    async with arena.bot("halting-1") as first, arena.bot("halting-2", binary=False) as second:
        match = await start_direct_match(arena, "connect-four", ["halting-1", "halting-2"], seed=3)
        ends: dict[int, dict[str, object]] = {}

        async def seat(index: int) -> None:
            ends[index] = await play_out((first, second)[index], match, index)

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(seat, 0)
                nursery.start_soon(seat, 1)
    record = Store(arena.db, read_only=True).match(match)
    assert record is not None and record["status"] == "finished" and record["reason"] == "complete"
    assert ends[0]["returns"] == ends[1]["returns"] == record["returns"]
    assert len(calls) > len(record["turns"])
    await arena.server.shutdown()


@pytest.mark.trio
async def test_no_frame_goes_to_a_file_that_took_over_a_closed_socket_number(arena_factory: ArenaFactory, tmp_path: Path) -> None:
    """websockets closes a socket (a reader cut off, a reset met by a send) and marks its
    connection closed only after a checkpoint: a message sent in between must not be written to
    whatever the process opened meanwhile under the freed descriptor (a client, the database)."""
    arena = await arena_factory()
    async with arena.bot("vanishing") as client:
        await client.send("ping")
        await client.expect("pong")
        (ws,) = arena.server._ws_server.connections  # type: ignore[union-attr]
        number = ws.stream.socket.fileno()
        ws.stream.socket.close()  # what close_stream does first, before its checkpoint
        fd = os.open(tmp_path / "opened-meanwhile", os.O_RDWR | os.O_CREAT)
        try:
            assert fd == number  # the lowest free number, as POSIX has it
            arena.server.sessions["vanishing"].send("pong")
        finally:
            os.close(fd)
        assert (tmp_path / "opened-meanwhile").read_bytes() == b""
        await ws.close_stream()
    await arena.server.shutdown()


@pytest.mark.trio
async def test_the_frames_of_one_pass_go_to_the_kernel_in_one_write(
    arena_factory: ArenaFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two messages for one bot in one pass of the event loop (a match's end, the next one's
    start) wake its reader once."""
    calls: list[int] = []
    monkeypatch.setattr(direct_write, "os", SimpleNamespace(write=takes_at_most(1 << 20, calls)))
    arena = await arena_factory()
    async with arena.bot("gathered") as client:
        await client.send("ping")
        await client.expect("pong")
        calls.clear()
        session = arena.server.sessions["gathered"]
        session.send("pong")
        session.send("pong")
        first, second = await client.expect("pong"), await client.expect("pong")
    assert second["seq"] == first["seq"] + 1
    assert len(calls) == 1
    await arena.server.shutdown()


@pytest.mark.trio
async def test_a_connection_whose_held_frames_fail_to_go_leaves_every_other_writing(
    arena_factory: ArenaFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The frames go out from a trio instrument, which trio drops for good if it raises: a bug
    met writing one connection's frames must not stop every connection's."""
    arena = await arena_factory()
    async with arena.bot("failing") as failing, arena.bot("fine") as fine:
        for client in (failing, fine):
            await client.send("ping")
            await client.expect("pong")
        connection = arena.server.sessions["failing"].connection
        assert connection is not None and connection.send is not None
        writer = connection.send.__self__  # type: ignore[attr-defined]

        def broken() -> None:
            raise RuntimeError("a bug in writing")

        writer._write_held = broken
        arena.server.sessions["failing"].send("pong")
        arena.server.sessions["fine"].send("pong")
        await fine.expect("pong", timeout=5)
        del writer._write_held
        await fine.send("ping")
        await fine.expect("pong", timeout=5)  # and the passes after it still write
    assert "writing a connection's held frames failed" in caplog.text
    await arena.server.shutdown()

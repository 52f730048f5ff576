"""Writing a message to a websocket without the connection's pump, once per pass of the event loop.

Every message for a connection otherwise goes through the connection's pump task: a
channel, a task switch, websockets' send lock and two trio checkpoints per frame, about a
fifth of the event loop's time per move on a busy server (``bench.server``). When nothing
is being written on the connection and nothing waits in its queue, the frame is built by
websockets' protocol object at once, and its bytes wait in the protocol's outgoing buffer
until the event loop has run every task that was ready: then, just before it waits for
I/O (``Flusher``, a trio instrument), each connection's bytes go to the kernel in one
write. What the kernel does not take at once goes back to the front of that buffer, and
the pump is told to flush it: websockets writes those bytes before any frame of its own (a
ping, a pong, the close), so frames keep their order and a reader that stopped is still cut
off by the pump.

Why wait for the end of the pass: written at once, each frame woke its reader for itself.
A bot's process (the bench's hundred bots in one event loop) woke for almost every frame,
read it, answered and slept again before the next came, and each wake-up cost the writer's
system call and the reader's loop a pass. Written together, the frames of one pass wake a
reader once, and two frames for one connection (a match's end, the next one's start) go
in one write. On ``bench.server`` the bots used 13% less CPU a move, the server 5% less,
and the server relayed 4% more moves a second; a turn waits for the end of the pass, a few
milliseconds under that load (the round trip's median went from about 29 to 33 ms), and
no time at all on an idle server, whose pass is that one task.

This reaches into ``websockets.trio.Connection`` (its send lock, its fragmented-send event,
its protocol's outgoing buffer), so the websockets version is pinned to one major release.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

import trio
from websockets.protocol import State
from websockets.trio.server import ServerConnection

log = logging.getLogger(__name__)

FLUSH = object()
"""Queued for the pump when held bytes could not all be written at the end of the pass (the
kernel took part of them, or websockets was writing): flush the protocol's outgoing bytes."""


class Flusher(trio.abc.Instrument):
    """Writes the bytes each ``DirectWrite`` held during a pass of the event loop, as the pass
    ends; add it to the run (``trio.lowlevel.add_instrument``) for as long as they are used."""

    def __init__(self) -> None:
        self._held: dict[DirectWrite, None] = {}  # a set in the order they were first held

    def hold(self, writer: DirectWrite) -> None:
        self._held[writer] = None

    def before_io_wait(self, timeout: float) -> None:
        held, self._held = self._held, {}
        for writer in held:
            try:
                writer.flush()
            except Exception:  # a bug of ours: raised here, trio would drop the instrument and every connection's writes
                log.exception("writing a connection's held frames failed")


class DirectWrite:
    """The one way messages go out on a connection: held for the end of the event loop's pass
    (``Flusher``) when the connection is idle, else queued for its pump, which calls
    ``done()`` once it has written each item it took."""

    def __init__(
        self,
        ws: ServerConnection,
        queue: trio.MemorySendChannel[Any],
        encode: Callable[[Mapping[str, Any] | bytes | str, bool], bytes | str],
        written: Callable[[], None],
        flusher: Flusher,
    ) -> None:
        self._ws = ws
        self._flusher = flusher
        self._queue = queue
        self.encode = encode
        self._written = written  # counts a frame out
        # TLS and other wrapped streams have no socket to write to: they always queue.
        self._socket = ws.stream.socket if isinstance(ws.stream, trio.SocketStream) else None
        # Queued and not yet written: a channel hands an item straight to a waiting receiver, so
        # its buffer can be empty while the pump still holds a message that must go first.
        self._unwritten = 0
        self._held = False  # bytes wait in the protocol's buffer for the end of the pass
        self._drained: trio.Event | None = None  # set when nothing waits unwritten, or the pump stopped
        self._stopped = False

    def put(self, message: Mapping[str, Any] | bytes | str, binary: bool) -> None:
        """Hold or queue ``message``; raises as ``send_nowait`` does when the queue is full or closed."""
        if self._unwritten or self._fd() == -1 or not self._open():
            self._queue.send_nowait(message)
            self._unwritten += 1
            return
        frame = self.encode(message, binary)
        protocol = self._ws.protocol
        if isinstance(frame, str):
            protocol.send_text(frame.encode())
        else:
            protocol.send_binary(frame)
        self._written()
        if not self._held:
            self._held = True
            self._flusher.hold(self)

    def flush(self) -> None:
        """Hand what was held to the kernel; what it does not take, and what cannot be written
        now (websockets itself is writing), is left to the pump."""
        self._held = False
        if not self._unwritten:  # else the pump's next send writes the protocol's pending bytes first
            self._write_held()
        self._settled()

    def _write_held(self) -> None:
        fd = self._fd()
        if fd == -1 or not self._open():
            self._pump_flushes()
            return
        protocol = self._ws.protocol
        data = b"".join(protocol.data_to_send())
        if not data:  # websockets wrote them with a frame of its own meanwhile
            return
        try:
            sent = os.write(fd, data)
        except OSError:  # full: the pump waits for room; failed: websockets meets the error there and closes
            sent = 0
        if sent < len(data):
            protocol.writes.insert(0, data[sent:])
            self._pump_flushes()

    def _pump_flushes(self) -> None:
        # Nothing is queued (the queue takes at least one item); a closed one means the
        # connection is closing, and websockets writes the pending bytes before its close frame.
        try:
            self._queue.send_nowait(FLUSH)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        self._unwritten += 1

    def _fd(self) -> int:
        # Asked at every write: websockets closes the socket a checkpoint before it marks the
        # connection closed, and meanwhile the number may already name another file or client.
        return -1 if self._socket is None else self._socket.fileno()

    def done(self) -> None:
        """The pump wrote (or gave up on) one item it took from the queue."""
        self._unwritten -= 1
        self._settled()

    def _settled(self) -> None:
        if not (self._unwritten or self._held) and self._drained is not None:
            self._drained.set()
            self._drained = None

    def stopped(self) -> None:
        """The pump stopped: what is still queued will never be written."""
        self._stopped = True
        if self._drained is not None:
            self._drained.set()

    async def drained(self) -> bool:
        """Until everything put so far has been handed to the kernel: True; False when it never
        will be (the pump stopped: the connection is gone or was cut off)."""
        if (self._unwritten or self._held) and not self._stopped:
            if self._drained is None:
                self._drained = trio.Event()
            await self._drained.wait()
        return not self._stopped

    def _open(self) -> bool:
        """Whether websockets itself is writing nothing now and takes new frames."""
        ws = self._ws
        return ws.protocol.state is State.OPEN and ws.send_in_progress is None and not ws.send_lock.locked()

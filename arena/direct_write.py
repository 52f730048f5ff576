"""Writing a message to a websocket at once, from the task that produced it.

Every message for a connection otherwise goes through the connection's pump task: a
channel, a task switch, websockets' send lock and two trio checkpoints per frame, about a
fifth of the event loop's time per move on a busy server (``bench.server``). When nothing
is being written on the connection and nothing waits in its queue, the frame is built by
websockets' protocol object and handed to the kernel right away. What the kernel does not
take at once goes back to the front of the protocol's outgoing bytes, and the pump is told
to flush them: websockets writes those before any frame of its own (a ping, a pong, the
close), so frames keep their order and a reader that stopped is still cut off by the pump.

This reaches into ``websockets.trio.Connection`` (its send lock, its fragmented-send event,
its protocol's outgoing buffer), so the websockets version is pinned to one major release.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import trio
from websockets.protocol import State
from websockets.trio.server import ServerConnection

FLUSH = object()
"""Queued for the pump after a partial write: flush the protocol's outgoing bytes."""


class DirectWrite:
    """The one way messages go out on a connection: written at once when the connection is idle,
    else queued for its pump, which calls ``done()`` once it has written each item it took."""

    def __init__(
        self,
        ws: ServerConnection,
        queue: trio.MemorySendChannel[Any],
        encode: Callable[[Mapping[str, Any] | bytes | str, bool], bytes | str],
        written: Callable[[], None],
    ) -> None:
        self._ws = ws
        self._queue = queue
        self.encode = encode
        self._written = written  # counts a frame out
        # TLS and other wrapped streams have no socket to write to: they always queue.
        self._socket = ws.stream.socket if isinstance(ws.stream, trio.SocketStream) else None
        # Queued and not yet written: a channel hands an item straight to a waiting receiver, so
        # its buffer can be empty while the pump still holds a message that must go first.
        self._unwritten = 0
        self._drained: trio.Event | None = None  # set when nothing waits unwritten, or the pump stopped
        self._stopped = False

    def put(self, message: Mapping[str, Any] | bytes | str, binary: bool) -> None:
        """Write or queue ``message``; raises as ``send_nowait`` does when the queue is full or closed."""
        # Asked at every write: websockets closes the socket a checkpoint before it marks the
        # connection closed, and meanwhile the number may already name another file or client.
        fd = -1 if self._socket is None else self._socket.fileno()
        if self._unwritten or fd == -1 or not self._open():
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
        data = b"".join(protocol.data_to_send())
        try:
            sent = os.write(fd, data)
        except OSError:  # full: the pump waits for room; failed: websockets meets the error there and closes
            sent = 0
        if sent < len(data):
            protocol.writes.insert(0, data[sent:])
            self._queue.send_nowait(FLUSH)
            self._unwritten += 1

    def done(self) -> None:
        """The pump wrote (or gave up on) one item it took from the queue."""
        self._unwritten -= 1
        if not self._unwritten and self._drained is not None:
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
        if self._unwritten and not self._stopped:
            if self._drained is None:
                self._drained = trio.Event()
            await self._drained.wait()
        return not self._stopped

    def _open(self) -> bool:
        """Whether websockets itself is writing nothing now and takes new frames."""
        ws = self._ws
        return ws.protocol.state is State.OPEN and ws.send_in_progress is None and not ws.send_lock.locked()

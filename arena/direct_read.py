"""Reading a websocket with fewer hops: a move taken where it is parsed.

websockets' connection reads in a task of its own, which hands every message to a queue
that the connection's handler task waits on: per message, a recv call that finds the
socket empty before the one that reads, trio checkpoints in the reader (after the recv, and
for the send lock it takes to flush nothing), and a task switch to the handler.
``ArenaConnection`` reads the socket when it is readable, takes the send lock only when
websockets has bytes of its own to write (a pong, a close), and offers each whole message
to ``take_at_once`` while the handler waits with nothing queued before it: what that
accepts is handled there and then, in order, and everything else (fragments, other
messages, anything while the handler is busy) goes through websockets' queue as before.
On ``bench.server`` the arena relays about a sixth more moves a second with it.

This replaces ``recv_events`` of ``websockets.trio.Connection`` (its flow control, close
deadline and error handling are kept) and reads its message queue's state, so the
websockets version is pinned to one major release, as ``arena.direct_write`` needs.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

import trio
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State
from websockets.trio.server import ServerConnection

READ_SIZE = 65536  # websockets' own chunk: a read that returns less found the socket emptied

TakeAtOnce = Callable[[bytes | str, float], bool]
"""Offered a whole message and the earliest it can have been sent (``time.monotonic()``); True
when it took the message, which then never reaches ``recv``."""


class ArenaConnection(ServerConnection):
    """A server connection whose handler may take messages as they are parsed."""

    take_at_once: TakeAtOnce | None = None
    _reading: bool = False  # whether this class's loop reads, which alone knows _quiet_since

    def __init__(self, *args: Any, handshake_s: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.handshake_s = handshake_s  # from connecting to the end of the opening handshake

    async def recv_events(self) -> None:
        stream = self.stream
        if not isinstance(stream, trio.SocketStream):  # TLS and other wrapped streams: websockets' own loop
            await super().recv_events()
            return
        # When the socket was last seen emptied (time.monotonic()): what is read next was sent
        # after it. Until then, after the connection opened, which bounds a flood that keeps
        # every read full by the rate limit from the start.
        self._quiet_since = time.monotonic()
        self._reading = True
        protocol = self.protocol
        try:
            while True:
                if self.recv_flow_control is not None:  # websockets' queue is full until the handler reads
                    await self.recv_flow_control.wait()
                if self.recv_messages.closed:  # closed meanwhile (close_stream): nothing more is read
                    break
                try:
                    await trio.lowlevel.wait_readable(stream.socket)
                    fd = stream.socket.fileno()
                    if fd == -1:  # closed by this side meanwhile
                        break
                    read_at = time.monotonic()
                    data = os.read(fd, READ_SIZE)
                except (trio.ClosedResourceError, BlockingIOError) as error:
                    if isinstance(error, BlockingIOError):  # woken without data (another reader of the socket)
                        continue
                    break
                except Exception as error:
                    self.set_connection_exc(error)
                    break
                if not data:
                    break
                held = len(protocol.writes)  # frames of ours held for the end of the pass (arena.direct_write)
                protocol.receive_data(data)
                events = protocol.events_received()
                if len(protocol.writes) > held:  # websockets' answers (a pong, a close) go out before anything is handled
                    try:
                        if not await self._answer():
                            return  # cut off (the finally closes the socket)
                    except Exception as error:
                        self.set_connection_exc(error)
                        break
                if protocol.close_expected() and self.close_deadline is None and self.close_timeout is not None:
                    self.close_deadline = trio.current_time() + self.close_timeout
                for event in events:
                    self.process_event(event)
                if len(data) < READ_SIZE:  # the socket was emptied: what comes next was sent after that
                    self._quiet_since = read_at
            protocol.receive_eof()
            events = protocol.events_received()
            await self._send_last()
            for event in events:
                self.process_event(event)
        except Exception as error:  # a bug here must still close the connection, as websockets' loop does
            self.logger.error("unexpected internal error", exc_info=True)
            self.set_connection_exc(error)
        finally:
            await self.close_stream()

    async def _answer(self) -> bool:
        """Write websockets' own answers; False when the peer took none of them for a heartbeat
        (``ping_timeout``) and is to be cut off. A client that sent pings and never read held
        this loop on their pongs for ever, and the heartbeat too, whose ping waits for the
        same lock: it kept its connection, and its place, as long as it liked (found by a QA
        helper)."""
        with trio.move_on_after(math.inf if self.ping_timeout is None else self.ping_timeout) as answering:
            await self.send_data()
        if answering.cancelled_caught:
            reset_on_close(self.stream)
            return False
        return True

    async def close_stream(self) -> None:
        """Also wake a reader waiting for room in the closed queue, which would never come:
        a client that floods without reading fills it as its connection is cut off.

        And let go of the tracebacks of the errors that ended the connection (a reset, the end
        of the stream before a close frame or in the request): with them the connection and
        the last message parsed, up to the hard cap. Clients that sent a large frame and hung
        up grew the server by 250 MB per 300 of them."""
        await super().close_stream()
        if self.recv_flow_control is not None:
            self.resume_reading()
        for error in (self.connection_exc, self.protocol.parser_exc, self.protocol.handshake_exc):
            drop_tracebacks(error)

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        """Within ``handshake_s``; a connection cut off by it is left not open, which websockets'
        handler then closes. The limit is kept here, not as websockets' ``open_timeout``: that
        one's ``trio.fail_after`` turns the cancellation into another error inside a generator,
        and on Python 3.12 and 3.13.0 that leaves the connection in a cycle (CPython gh-100964),
        about 15 KB for every client that connected and sent nothing (found by a QA helper).

        Also let go of the tracebacks of what ended a handshake that failed: a client that
        connected and sent nothing left about 150 objects in cycles (trio's cancellation through
        websockets' race of events), 45 MB per 3,000 such connections that the server never gave
        back (found by a QA helper)."""
        with trio.move_on_after(math.inf if self.handshake_s is None else self.handshake_s) as limit:
            try:
                await super().handshake(*args, **kwargs)
            except BaseException as error:
                drop_tracebacks(error)
                raise
        if limit.cancelled_caught and self.protocol.state is State.OPEN:
            # Cut off after websockets took its 101 to write and before it was written: open, it
            # went on to the handler, and the client read a close frame for an HTTP answer. Failed
            # as fail_after did, websockets closes the socket at once (found by a review).
            raise trio.TooSlowError(f"the opening handshake took more than {self.handshake_s:g} s")

    async def _send_last(self) -> None:
        """What websockets' ``send_data`` does once the peer's end of the stream came (its answer
        to a close, the half-close), letting go of the error when the peer is gone. websockets
        swallows it, and on Python 3.12 and 3.13.0 trio's translation of the socket's error
        then leaves it in a cycle with the frames it passed through (CPython gh-100964): this
        loop's, holding the connection and the message parsed last, up to the hard cap. About a
        megabyte per bot that sent a large frame and hung up, and the connection of every client
        that sent no request, waited for a full collection (found by a QA helper)."""
        try:
            async with self.send_lock:
                for data in self.protocol.data_to_send():
                    if data:
                        await self.stream.send_all(data)
                    else:
                        await self.stream.send_eof()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            drop_tracebacks(error)

    def process_event(self, event: Event) -> None:
        if self.recv_messages.closed:  # parsed from the last read as the connection was closed: no one takes it
            return
        if self.take_at_once is not None and self._reading and isinstance(event, Frame) and event.fin and self._idle():
            message = _whole_message(event)
            if message is not None and self.take_at_once(message, self._quiet_since):
                return
        super().process_event(event)

    def _idle(self) -> bool:
        """Whether the handler waits in ``recv`` with nothing queued or handed to it yet.

        Read from the channel's state, as websockets' ``Assembler`` itself reads it: its
        ``statistics()`` built an object of seven counts for the two asked, at every move."""
        state = self.recv_messages.recv_frames._state
        return bool(state.receive_tasks) and not state.data


def drop_tracebacks(error: BaseException | None) -> None:
    """Let go of the traceback of ``error`` and of every error it holds (its cause, its context,
    a group's members). A traceback holds the frames it passed through, and they often hold
    the error back (a cycle) or the object that raised it: freed only by the cycle collector,
    which a serving process runs seldom for what lived a while (``tune_gc_for_serving``)."""
    seen: set[int] = set()
    errors = [error]
    while errors:
        each = errors.pop()
        if each is None or id(each) in seen:
            continue
        seen.add(id(each))
        each.__traceback__ = None
        errors += [each.__cause__, each.__context__, *(each.exceptions if isinstance(each, BaseExceptionGroup) else ())]


def reset_on_close(stream: trio.abc.Stream) -> None:
    """Make the closing of a peer's socket a reset, for a peer that stopped reading: closed
    gracefully, what it never read stayed in the kernel, and a peer still sending waited
    there, for minutes."""
    if isinstance(stream, trio.SocketStream):
        with contextlib.suppress(OSError):
            stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _whole_message(frame: Frame) -> bytes | str | None:
    """The message a final data frame holds by itself; None for any other frame, and for text
    that is not UTF-8 (websockets' ``recv`` closes the connection with 1007 for it)."""
    if frame.opcode is Opcode.BINARY:
        return bytes(frame.data)
    if frame.opcode is Opcode.TEXT:
        try:
            return bytes(frame.data).decode()
        except UnicodeDecodeError:
            return None
    return None

"""The egress multiplexer: many TCP streams over one data channel, each with its own
credit-based flow control.

One side (the host) opens streams to ``host:port``; the other (the member) dials and
answers ``OPENED`` or ``REFUSED``. Frames are binary: a kind byte, a 4-byte stream id,
then the payload. A sender may have at most the credit its receiver granted in flight
on a stream (``WINDOW`` at first); the receiver grants more as its reader consumes. So a
stream whose reader stalls stops after one window, its buffer never grows past it, and
the channel keeps carrying every other stream. The channel's own send buffer is shared
and bounded too (``wait_writable``).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import struct
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

WINDOW = 256 * 1024
CHUNK = 16 * 1024
MAX_HOST_BYTES = 255
_HEAD = struct.Struct("!BI")


class Kind(enum.IntEnum):
    OPEN = 1  # host → member: port (2 bytes) and host name
    OPENED = 2  # member → host
    REFUSED = 3  # member → host: a reason byte
    DATA = 4
    CREDIT = 5  # payload: 4-byte grant
    CLOSE = 6  # the sender sends no more (end of its half)
    RESET = 7  # the stream is over, both halves


class Refusal(enum.IntEnum):
    """Why the member did not connect a stream."""

    POLICY = 1  # not a public address
    UNREACHABLE = 2  # the dial failed
    UNRESOLVED = 3  # the name did not resolve
    BUSY = 4  # too many streams


class StreamRefused(Exception):
    def __init__(self, reason: Refusal | None) -> None:
        super().__init__(reason.name if reason else "closed")
        self.reason = reason


class StreamReset(ConnectionError):
    """The stream ended abruptly (the other side reset it, or the channel went)."""


def encode(kind: Kind, stream_id: int, payload: bytes = b"") -> bytes:
    return _HEAD.pack(kind, stream_id) + payload


class EgressStream:
    """One stream: ``read`` and ``write`` with flow control, ``close`` ends our half."""

    def __init__(self, mux: Multiplexer, stream_id: int) -> None:
        self._mux = mux
        self.id = stream_id
        self._inbound = bytearray()
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._credit = mux.window
        self._unacknowledged = 0
        self._eof = False
        self._sent_close = False
        self.reset = False
        self._writable.set()

    # -- what the user of the stream calls -----------------------------------------------

    async def read(self, limit: int) -> bytes:
        """Up to ``limit`` bytes; b"" once the other side closed its half."""
        while not self._inbound:
            if self.reset:
                raise StreamReset("the egress stream was reset")
            if self._eof:
                return b""
            self._readable.clear()
            await self._readable.wait()
        data = bytes(self._inbound[:limit])
        del self._inbound[:limit]
        self._unacknowledged += len(data)
        if self._unacknowledged >= self._mux.window // 2 and not self.reset:
            self._mux.send(Kind.CREDIT, self.id, struct.pack("!I", self._unacknowledged))
            self._unacknowledged = 0
        return data

    async def write(self, data: bytes) -> None:
        """Sends ``data``, waiting for credit (this stream's) and channel room (everyone's)."""
        view = memoryview(data)
        while view:
            if self.reset or self._sent_close:
                raise StreamReset("the egress stream is closed")
            if self._credit <= 0:
                self._writable.clear()
                await self._writable.wait()
                continue
            size = min(len(view), self._credit, self._mux.chunk)
            await self._mux.wait_writable()
            if self.reset:
                raise StreamReset("the egress stream was reset")
            self._credit -= size
            self._mux.send(Kind.DATA, self.id, bytes(view[:size]))
            view = view[size:]

    async def close(self) -> None:
        """Ends our half; the stream goes when both halves ended."""
        if not self._sent_close and not self.reset:
            self._sent_close = True
            self._mux.send(Kind.CLOSE, self.id)
        self._mux.finished(self)

    def abort(self) -> None:
        if not self.reset:
            self._mux.send(Kind.RESET, self.id)
        self._ended()

    @property
    def done(self) -> bool:
        return self.reset or (self._eof and self._sent_close)

    # -- what the multiplexer calls ------------------------------------------------------

    def _data(self, payload: bytes) -> bool:
        if len(self._inbound) + len(payload) > self._mux.window:
            return False  # more than the credit given: a broken or hostile sender
        self._inbound += payload
        self._readable.set()
        return True

    def _grant(self, amount: int) -> None:
        self._credit += amount
        self._writable.set()

    def _closed(self) -> None:
        self._eof = True
        self._readable.set()

    def _ended(self) -> None:
        self.reset = True
        self._readable.set()
        self._writable.set()
        self._mux.finished(self)


Accept = Callable[[EgressStream, str, int], Coroutine[Any, Any, None]]


@dataclass
class _Pending:
    stream: EgressStream
    answer: asyncio.Future[Refusal | None]


class Multiplexer:
    """Both ends of the egress channel. ``send`` puts a frame on the channel;
    ``wait_writable`` returns once the channel's send buffer has room. The opening side
    calls ``open``; the other gives ``accept``, which answers with ``accepted`` or
    ``refuse`` and then uses the stream."""

    def __init__(
        self,
        send: Callable[[bytes], None],
        *,
        wait_writable: Callable[[], Awaitable[None]] | None = None,
        accept: Accept | None = None,
        window: int = WINDOW,
        chunk: int = CHUNK,
        max_streams: int = 512,
        open_seconds: float = 15.0,
    ) -> None:
        self._send = send
        self._wait_writable = wait_writable
        self._accept = accept
        self.window = window
        self.chunk = chunk
        self._max_streams = max_streams
        self._open_seconds = open_seconds
        self._streams: dict[int, EgressStream] = {}
        self._pending: dict[int, _Pending] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_id = 1
        self.closed = False

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    def send(self, kind: Kind, stream_id: int, payload: bytes = b"") -> None:
        if not self.closed:
            self._send(encode(kind, stream_id, payload))

    async def wait_writable(self) -> None:
        if self._wait_writable is not None:
            await self._wait_writable()

    async def open(self, host: str, port: int) -> EgressStream:
        """A stream to ``host:port`` through the other side; ``StreamRefused`` if it does
        not connect (``reason`` None: the channel closed or nobody answered)."""
        if self.closed:
            raise StreamRefused(None)
        name = host.encode("idna") if host.isascii() else host.encode("utf-8")
        if len(name) > MAX_HOST_BYTES:
            raise StreamRefused(Refusal.UNRESOLVED)
        stream_id = self._next_id
        self._next_id += 1
        stream = EgressStream(self, stream_id)
        answer: asyncio.Future[Refusal | None] = asyncio.get_running_loop().create_future()
        self._pending[stream_id] = _Pending(stream, answer)
        self._streams[stream_id] = stream
        self.send(Kind.OPEN, stream_id, struct.pack("!H", port) + name)
        try:
            refusal = await asyncio.wait_for(answer, self._open_seconds)
        except TimeoutError:
            stream.abort()
            raise StreamRefused(None) from None
        finally:
            self._pending.pop(stream_id, None)
        if refusal is not None or stream.reset:
            self._streams.pop(stream_id, None)
            raise StreamRefused(refusal)
        return stream

    def accepted(self, stream: EgressStream) -> None:
        self.send(Kind.OPENED, stream.id)

    def refuse(self, stream: EgressStream, reason: Refusal) -> None:
        self.send(Kind.REFUSED, stream.id, bytes((reason,)))
        self._streams.pop(stream.id, None)

    def receive(self, frame: bytes) -> None:
        """One frame from the channel. A frame that breaks the protocol resets its stream."""
        if len(frame) < _HEAD.size or self.closed:
            return
        kind_byte, stream_id = _HEAD.unpack_from(frame)
        payload = frame[_HEAD.size :]
        try:
            kind = Kind(kind_byte)
        except ValueError:
            return
        if kind == Kind.OPEN:
            self._opened_by_peer(stream_id, payload)
            return
        pending = self._pending.get(stream_id)
        if pending is not None and kind in (Kind.OPENED, Kind.REFUSED, Kind.RESET):
            reason = None
            if kind == Kind.REFUSED:
                with contextlib.suppress(ValueError, IndexError):
                    reason = Refusal(payload[0])
                reason = reason or Refusal.UNREACHABLE
            elif kind == Kind.RESET:
                pending.stream._ended()
            if not pending.answer.done():
                pending.answer.set_result(reason)
            return
        stream = self._streams.get(stream_id)
        if stream is None:
            return
        if kind == Kind.DATA:
            if not stream._data(payload):
                stream.abort()
        elif kind == Kind.CREDIT and len(payload) == 4:
            stream._grant(struct.unpack("!I", payload)[0])
        elif kind == Kind.CLOSE:
            stream._closed()
            self.finished(stream)
        elif kind == Kind.RESET:
            stream._ended()

    def finished(self, stream: EgressStream) -> None:
        if stream.done:
            self._streams.pop(stream.id, None)

    def close(self) -> None:
        """The channel went: every stream is reset, every pending open refused."""
        if self.closed:
            return
        self.closed = True
        for pending in list(self._pending.values()):
            if not pending.answer.done():
                pending.answer.set_result(None)
        for stream in list(self._streams.values()):
            stream._ended()
        self._streams.clear()
        for task in list(self._tasks):
            task.cancel()

    def _opened_by_peer(self, stream_id: int, payload: bytes) -> None:
        if self._accept is None or stream_id in self._streams or len(payload) < 3:
            self.send(Kind.RESET, stream_id)
            return
        stream = EgressStream(self, stream_id)
        if len(self._streams) >= self._max_streams:
            self.send(Kind.REFUSED, stream_id, bytes((Refusal.BUSY,)))
            return
        (port,) = struct.unpack_from("!H", payload)
        try:
            host = payload[2:].decode("utf-8")
        except UnicodeDecodeError:
            self.send(Kind.REFUSED, stream_id, bytes((Refusal.UNRESOLVED,)))
            return
        self._streams[stream_id] = stream
        task = asyncio.get_running_loop().create_task(self._accept(stream, host, port))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

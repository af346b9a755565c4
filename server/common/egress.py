"""The egress multiplexer: many TCP streams over one data channel, each with its own
credit-based flow control.

One side (the host) opens streams to ``host:port``; the other (the member) dials and
answers ``OPENED`` or ``REFUSED``. Frames are binary: a kind byte, a 4-byte stream id,
then the payload. A sender may have at most the credit its receiver granted in flight
on a stream (``WINDOW`` at first); the receiver grants more as its reader consumes. So a
stream whose reader stalls stops after one window, its buffer never grows past it, and
the channel keeps carrying every other stream.

Frames wait in the multiplexer, not in the channel, and leave in this order: control
frames, then one frame of each stream that has sent little so far (a small request),
then one frame of each bulk stream in turn. The channel's own buffer is not the only
queue: aiortc hands a message to its SCTP association as soon as the association's
queue is empty, and the association keeps up to its congestion window in flight, all
of it ahead of a later frame on the one ordered stream. So each end reports the data
bytes it has received (``RECEIVED``, stream 0), and a sender keeps at most
``LINK_WINDOW`` bytes of data sent and not yet reported: that bounds what waits ahead
of a small request wherever it waits. Small streams may go ``SMALL_ALLOWANCE`` past a
window that bulk data has filled, so a small request never waits a round trip for a bulk
frame's report. An end that never said it reports (an older peer) is sent to without
that limit, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import struct
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from server.common.tasks import BackgroundTasks

WINDOW = 256 * 1024
CHUNK = 16 * 1024
# Data bytes a sender keeps sent and not yet reported received, over all streams.
LINK_WINDOW = 16 * 1024
# A stream that has sent less than this is small: its frames go ahead of bulk streams'.
SMALL_STREAM_BYTES = 64 * 1024
# What small streams may send past a link window that bulk data has filled.
SMALL_ALLOWANCE = LINK_WINDOW
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
    RECEIVED = 8  # stream 0, payload: 4-byte count of data bytes received (0: "I report")


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
        # Frames of this stream waiting for the channel (data, then its CLOSE).
        self.frames: deque[bytes] = deque()
        self.queued_bytes = 0
        self.sent_bytes = 0
        self._drained = asyncio.Event()
        self._drained.set()

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
            if self.queued_bytes >= 2 * self._mux.chunk:
                self._drained.clear()
                await self._drained.wait()
                continue
            size = min(len(view), self._credit, self._mux.chunk)
            self._credit -= size
            self._mux.queue(self, encode(Kind.DATA, self.id, bytes(view[:size])))
            view = view[size:]

    async def close(self) -> None:
        """Ends our half; the stream goes when both halves ended."""
        if not self._sent_close and not self.reset:
            self._sent_close = True
            self._mux.queue(self, encode(Kind.CLOSE, self.id))  # after its data
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
        self.frames.clear()
        self.queued_bytes = 0
        self._readable.set()
        self._writable.set()
        self._drained.set()
        self._mux.finished(self)

    def _sent(self, size: int) -> None:
        self.queued_bytes -= size
        self.sent_bytes += size
        if self.queued_bytes < 2 * self._mux.chunk:
            self._drained.set()


Accept = Callable[[EgressStream, str, int], Coroutine[Any, Any, None]]


@dataclass
class _Pending:
    stream: EgressStream
    answer: asyncio.Future[Refusal | None]


class Multiplexer:
    """Both ends of the egress channel. ``send`` puts a frame on the channel; ``room()``
    says whether the channel's send buffer takes more now (the owner calls ``pump`` when
    it drains; None: always). The owner calls ``start`` once the channel is open: from
    then on this end reports what it receives. The opening side calls ``open``; the
    other gives ``accept``, which answers with ``accepted`` or ``refuse`` and then uses
    the stream."""

    def __init__(
        self,
        send: Callable[[bytes], None],
        *,
        room: Callable[[], bool] | None = None,
        accept: Accept | None = None,
        window: int = WINDOW,
        chunk: int = CHUNK,
        link_window: int = LINK_WINDOW,
        max_streams: int = 512,
        open_seconds: float = 15.0,
    ) -> None:
        self._send = send
        self._room = room
        self._control: deque[bytes] = deque()
        self._small_turns: deque[EgressStream] = deque()
        self._bulk_turns: deque[EgressStream] = deque()
        self.link_window = link_window
        # Data bytes sent and not yet reported by the other end (counted once it reports).
        self.in_flight = 0
        self._peer_reports = False
        self._reporting = False
        self._unreported = 0
        self._accept = accept
        self.window = window
        self.chunk = chunk
        self._max_streams = max_streams
        self._open_seconds = open_seconds
        self._streams: dict[int, EgressStream] = {}
        self._pending: dict[int, _Pending] = {}
        self._tasks = BackgroundTasks("egress channel")
        self._next_id = 1
        self.closed = False

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    def start(self) -> None:
        """The channel is open: say that this end reports the data bytes it receives."""
        if not self._reporting:
            self._reporting = True
            self.send(Kind.RECEIVED, 0, struct.pack("!I", 0))

    def send(self, kind: Kind, stream_id: int, payload: bytes = b"") -> None:
        """A control frame: it goes ahead of every stream's data."""
        if not self.closed:
            self._control.append(encode(kind, stream_id, payload))
            self.pump()

    def queue(self, stream: EgressStream, frame: bytes) -> None:
        """A frame of ``stream``'s own, sent in order after its earlier ones."""
        if self.closed or stream.reset:
            return
        if not stream.frames:
            self._take_turn(stream)
        stream.frames.append(frame)
        stream.queued_bytes += len(frame) - _HEAD.size
        self.pump()

    def _take_turn(self, stream: EgressStream) -> None:
        small = stream.sent_bytes < SMALL_STREAM_BYTES
        (self._small_turns if small else self._bulk_turns).append(stream)

    def _next_stream(self) -> EgressStream | None:
        """A small stream's turn while the data in flight is under the link window and
        the small allowance past it, else a bulk stream's while it is under the window."""
        for turns, allowance in ((self._small_turns, SMALL_ALLOWANCE), (self._bulk_turns, 0)):
            if self._peer_reports and self.in_flight >= self.link_window + allowance:
                continue
            while turns:
                stream = turns.popleft()
                if stream.frames:
                    return stream
                # reset meanwhile: its turn goes
        return None

    def pump(self) -> None:
        """Feeds the channel while it has room: control frames, then small streams in
        turn, then bulk streams in turn while the data in flight is under the link
        window. Small streams' frames may go ``SMALL_ALLOWANCE`` past a full link window:
        waiting there for the report of a bulk frame would cost a small request a round
        trip."""
        while not self.closed and (self._room is None or self._room()):
            if self._control:
                frame = self._control.popleft()
            elif (stream := self._next_stream()) is not None:
                frame = stream.frames.popleft()
                size = len(frame) - _HEAD.size
                stream._sent(size)
                if self._peer_reports:
                    self.in_flight += size
                if stream.frames:
                    self._take_turn(stream)
            else:
                return  # nothing to send, or a full window: the other end's RECEIVED pumps
            try:
                self._send(frame)
            except Exception:
                self.close()  # the channel is gone (aiortc raises once it closed)
                return

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
        if kind == Kind.RECEIVED:
            if len(payload) == 4:
                self._peer_reports = True
                self.in_flight = max(0, self.in_flight - struct.unpack("!I", payload)[0])
                self.pump()
            return
        if kind == Kind.DATA and self._reporting:
            self._report(len(payload))
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

    def _report(self, size: int) -> None:
        """Counts received data; reports it each quarter of the link window (so the
        sender, stopped at a full window, always has a report on its way)."""
        self._unreported += size
        if self._unreported >= self.link_window // 4:
            self.send(Kind.RECEIVED, 0, struct.pack("!I", self._unreported))
            self._unreported = 0

    def finished(self, stream: EgressStream) -> None:
        if stream.done:
            self._streams.pop(stream.id, None)

    def close(self) -> None:
        """The channel went: every stream is reset, every pending open refused."""
        if self.closed:
            return
        self.closed = True
        self._control.clear()
        self._small_turns.clear()
        self._bulk_turns.clear()
        for pending in list(self._pending.values()):
            if not pending.answer.done():
                pending.answer.set_result(None)
        for stream in list(self._streams.values()):
            stream._ended()
        self._streams.clear()
        self._tasks.cancel()

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
        self._tasks.start(self._accept(stream, host, port))


# The channel's send buffer the multiplexer keeps filled: enough to keep the link busy,
# little enough that a small request never waits behind much of a bulk transfer.
CHANNEL_HIGH_WATER = 64 * 1024
CHANNEL_LOW_WATER = 32 * 1024


def channel_multiplexer(
    channel: Any,
    *,
    accept: Accept | None = None,
    window: int = WINDOW,
    link_window: int = LINK_WINDOW,
) -> Multiplexer:
    """A multiplexer over an (aiortc) data channel: its frames in, and out while the
    channel's buffer is below ``CHANNEL_HIGH_WATER`` and the data in flight below
    ``link_window``. It starts reporting once the channel is open. The channel's end
    is the caller's to watch (it calls ``close``)."""
    mux = Multiplexer(
        channel.send,
        room=lambda: channel.bufferedAmount < CHANNEL_HIGH_WATER,
        accept=accept,
        window=window,
        link_window=link_window,
    )
    channel.bufferedAmountLowThreshold = CHANNEL_LOW_WATER
    if channel.readyState == "open":
        mux.start()
    else:
        channel.on("open", mux.start)

    def on_message(data: str | bytes) -> None:
        if isinstance(data, bytes):
            mux.receive(data)

    channel.on("bufferedamountlow", mux.pump)
    channel.on("message", on_message)
    return mux

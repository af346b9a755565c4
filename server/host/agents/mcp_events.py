"""The events of a host's MCP sessions, kept a while so a client whose stream dropped gets
what it missed: it reconnects with ``Last-Event-ID`` and the SDK's session manager replays
the events of that stream after it (the SDK's ``EventStore`` interface).

In memory, bounded: at most ``MAX_EVENTS_PER_STREAM`` events a stream and ``MAX_EVENTS`` in
all, none older than ``EVENT_SECONDS``. Past ``MAX_EVENTS`` the session that holds the most
gives up its oldest: the sessions of one team at work (a host may serve several teams)
never push out a quiet session's few events. Each session sees only its
own events: the session manager gives each session a view of its own (``for_session``),
and an event id of another session's is as unknown as an expired one.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

MAX_EVENTS_PER_STREAM = 100
MAX_EVENTS = 2000
# Long enough for a call that waits five minutes for its approval, and a client that comes
# back a while after.
EVENT_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class _Event:
    seq: int
    session: int
    stream_id: StreamId
    message: JSONRPCMessage | None
    at: float


class McpEventStore:
    """Every session's events of one host, in the order they were stored."""

    def __init__(
        self,
        *,
        per_stream: int = MAX_EVENTS_PER_STREAM,
        total: int = MAX_EVENTS,
        seconds: float = EVENT_SECONDS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._per_stream = per_stream
        self._total = total
        self._seconds = seconds
        self._now = now
        self._seq = itertools.count(1)
        self._sessions = itertools.count(1)
        self._events: OrderedDict[int, _Event] = OrderedDict()
        self._streams: dict[tuple[int, StreamId], deque[_Event]] = {}
        # Each session's events in the order stored (one dropped from a stream's own cap
        # leaves its entry here until it is reached), and how many it holds.
        self._by_session: dict[int, deque[_Event]] = {}
        self._held: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._events)

    def for_session(self) -> SessionEvents:
        """The store as one new session sees it."""
        return SessionEvents(self, next(self._sessions))

    def add(self, session: int, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event = _Event(next(self._seq), session, stream_id, message, self._now())
        self._expire(event.at)
        stream = self._streams.setdefault((session, stream_id), deque())
        if len(stream) >= self._per_stream:
            self._forget(stream.popleft())
        stream.append(event)
        self._events[event.seq] = event
        self._by_session.setdefault(session, deque()).append(event)
        self._held[session] = self._held.get(session, 0) + 1
        while len(self._events) > self._total:
            self._drop_from_largest()
        return str(event.seq)

    async def replay(
        self, session: int, last_event_id: EventId, send: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream after it, those stored while
        sending too; None when the session has no such event (any more)."""
        try:
            last = self._events.get(int(last_event_id))
        except ValueError:
            return None
        if last is None or last.session != session:
            return None
        stream = self._streams.get((session, last.stream_id), deque())
        after = last.seq
        while pending := [e for e in stream if e.seq > after]:
            for event in pending:
                after = event.seq
                if event.message is not None:  # a priming event has nothing to say
                    await send(EventMessage(event.message, str(event.seq)))
        return last.stream_id

    def _expire(self, now: float) -> None:
        while self._events:
            oldest = next(iter(self._events.values()))
            if now - oldest.at < self._seconds:
                return
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        self._drop(next(iter(self._events.values())))

    def _drop_from_largest(self) -> None:
        """The oldest event of the session that holds the most."""
        largest = max(self._held, key=self._held.__getitem__)
        events = self._by_session[largest]
        while events[0].seq not in self._events:
            events.popleft()  # dropped already, by its stream's cap
        self._drop(events[0])

    def _drop(self, event: _Event) -> None:
        """Drops ``event``, the oldest of its stream and of its session still held."""
        key = (event.session, event.stream_id)
        stream = self._streams.get(key)
        if stream is not None:
            if stream and stream[0].seq == event.seq:
                stream.popleft()
            if not stream:
                del self._streams[key]
        self._forget(event)

    def _forget(self, event: _Event) -> None:
        """``event`` out of the store and its session's count (its stream let it go)."""
        if self._events.pop(event.seq, None) is None:
            return
        left = self._held[event.session] - 1
        events = self._by_session[event.session]
        while events and events[0].seq not in self._events:
            events.popleft()
        if left:
            self._held[event.session] = left
        else:
            del self._held[event.session], self._by_session[event.session]


class SessionEvents(EventStore):
    """One session's view of its host's events: the SDK's ``EventStore``."""

    def __init__(self, store: McpEventStore, session: int) -> None:
        self._store = store
        self._session = session

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        return self._store.add(self._session, stream_id, message)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        return await self._store.replay(self._session, last_event_id, send_callback)

"""The host's store of MCP stream events: a session replays its own stream after an id,
within the caps and the lifetime, and nothing of another session's."""

from __future__ import annotations

from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCNotification, JSONRPCResponse

from server.host.agents.mcp_events import McpEventStore, SessionEvents


def note(n: int) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def replayed(store: McpEventStore, session: SessionEvents, last: str) -> list[object]:
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    await session.replay_events_after(last, send)
    return [e.message for e in sent]


async def test_a_session_replays_its_stream_after_an_event() -> None:
    store = McpEventStore()
    session = store.for_session()
    primed = await session.store_event("7", None)
    first = await session.store_event("7", note(1))
    await session.store_event("other", note(99))
    result = JSONRPCResponse(jsonrpc="2.0", id=7, result={})
    await session.store_event("7", result)
    # The priming event says nothing; the stream's events after the id come in order.
    assert await replayed(store, session, primed) == [note(1), result]
    assert await replayed(store, session, first) == [result]


async def test_another_sessions_event_id_replays_nothing() -> None:
    store = McpEventStore()
    mine, theirs = store.for_session(), store.for_session()
    event = await mine.store_event("1", note(1))
    await mine.store_event("1", note(2))
    sent: list[EventMessage] = []

    async def send(message: EventMessage) -> None:
        sent.append(message)

    assert await theirs.replay_events_after(event, send) is None
    assert await theirs.replay_events_after("not-an-id", send) is None
    assert sent == []


async def test_events_stored_while_replaying_are_sent_too() -> None:
    store = McpEventStore()
    session = store.for_session()
    start = await session.store_event("1", None)
    await session.store_event("1", note(1))
    sent: list[object] = []

    async def send(event: EventMessage) -> None:
        sent.append(event.message)
        if len(sent) == 1:  # the call's result is written while the replay runs
            await session.store_event("1", note(2))

    assert await session.replay_events_after(start, send) == "1"
    assert sent == [note(1), note(2)]


async def test_the_store_keeps_within_its_caps_and_lifetime() -> None:
    clock = Clock()
    store = McpEventStore(per_stream=3, total=5, seconds=60.0, now=clock)
    session = store.for_session()
    ids = [await session.store_event("a", note(n)) for n in range(5)]
    # Three a stream: the oldest two are gone, and an id among them resumes nothing.
    assert len(store) == 3
    assert await replayed(store, session, ids[0]) == []
    assert await replayed(store, session, ids[2]) == [note(3), note(4)]
    for n in range(3):
        await session.store_event(f"s{n}", note(10 + n))
    assert len(store) == 5  # in all, the oldest went first
    assert await replayed(store, session, ids[2]) == []
    clock.now = 61.0
    await session.store_event("late", note(20))
    assert len(store) == 1


async def test_a_busy_session_gives_up_its_own_events_not_a_quiet_ones() -> None:
    store = McpEventStore(per_stream=100, total=5)
    quiet, busy = store.for_session(), store.for_session()
    primed = await quiet.store_event("q", None)
    kept = await quiet.store_event("q", note(1))
    ids = [await busy.store_event("b", note(n)) for n in range(10)]
    # The quiet session still replays; the busy one keeps its newest three.
    assert len(store) == 5
    assert await replayed(store, quiet, primed) == [note(1)]
    assert await replayed(store, quiet, kept) == []
    assert await replayed(store, busy, ids[7]) == [note(8), note(9)]
    assert await replayed(store, busy, ids[6]) == []

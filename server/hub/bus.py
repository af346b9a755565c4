"""Messages between hub instances: in-process for one hub, PostgreSQL LISTEN/NOTIFY for many.

PostgreSQL, not Redis: the split topology already runs PostgreSQL and nothing
else, so fan-out costs no new service to deploy, secure and watch. NOTIFY
delivers to every listening instance after the sender's transaction commits;
payloads stay under its 8000-byte limit (an SDP offer for data channels is a
few kilobytes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import asyncpg
from sqlalchemy.engine import make_url

from server.common.tasks import BackgroundTasks

log = logging.getLogger(__name__)

CHANNEL = "crewhost_bus"
MAX_PAYLOAD = 7900

BusHandler = Callable[[dict[str, Any]], Coroutine[Any, Any, None]]


class Bus(Protocol):
    """Publish a JSON message to every hub instance, this one included."""

    async def start(self, handler: BusHandler) -> None: ...
    async def publish(self, message: dict[str, Any]) -> None: ...
    async def close(self) -> None: ...


class LocalBus:
    """One hub instance: messages go straight back to its own handler."""

    def __init__(self) -> None:
        self._handler: BusHandler | None = None

    async def start(self, handler: BusHandler) -> None:
        self._handler = handler

    async def publish(self, message: dict[str, Any]) -> None:
        if self._handler is not None:
            await self._handler(message)

    async def close(self) -> None:
        self._handler = None


# What a lost or ended sender connection raises, depending on when the loss is noticed.
_CONNECTION_LOST = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InternalClientError,
)


class PostgresBus:
    """Many hub instances on one PostgreSQL: LISTEN on one connection, NOTIFY to send.

    Both connections come back after PostgreSQL restarts or drops them. What was
    announced while the listener was away is lost, so the handler then gets a
    ``{"kind": "resync"}`` message and drops whatever it cached.
    """

    def __init__(self, sqlalchemy_url: str, schema: str | None = None) -> None:
        url = make_url(sqlalchemy_url).set(drivername="postgresql")
        self._dsn = url.render_as_string(hide_password=False)
        # Runs that share a server (tests, staging) keep apart by schema.
        self._channel = f"{CHANNEL}_{schema}" if schema else CHANNEL
        self._sender: asyncpg.Connection | None = None
        self._handler: BusHandler | None = None
        self._tasks = BackgroundTasks("hub bus")
        self._listening: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        # One connection runs one query at a time.
        self._send_lock = asyncio.Lock()

    async def start(self, handler: BusHandler) -> None:
        self._handler = handler
        self._sender = await asyncpg.connect(self._dsn)
        first = await self._listen_once()
        self._listening = asyncio.get_running_loop().create_task(self._listen_forever(first))

    async def _listen_once(self) -> tuple[asyncpg.Connection, asyncio.Event]:
        listener = await asyncpg.connect(self._dsn)
        lost = asyncio.Event()
        listener.add_termination_listener(lambda _conn: lost.set())
        await listener.add_listener(self._channel, self._on_notify)
        self.listening.set()
        return listener, lost

    async def _listen_forever(self, current: tuple[asyncpg.Connection, asyncio.Event]) -> None:
        listener, lost = current
        try:
            while True:
                await lost.wait()
                self.listening.clear()
                log.warning("lost the bus listener; reconnecting")
                delay = 0.25
                while True:
                    try:
                        listener, lost = await self._listen_once()
                        break
                    except (OSError, asyncpg.PostgresError):
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, 10.0)
                self._dispatch({"kind": "resync"})
        finally:
            await listener.close()

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            log.warning("dropped a malformed bus message")
            return
        self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if self._handler is None:
            return
        self._tasks.start(self._handler(message))

    async def publish(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message, separators=(",", ":"))
        if len(payload.encode()) > MAX_PAYLOAD:
            raise ValueError("bus message too large for NOTIFY")
        async with self._send_lock:
            for attempt in (1, 2):
                try:
                    if self._sender is None or self._sender.is_closed():
                        self._sender = await asyncpg.connect(self._dsn)
                    await self._sender.execute("SELECT pg_notify($1, $2)", self._channel, payload)
                    return
                except _CONNECTION_LOST:
                    # A connection the server ended may still be reading its goodbye: asyncpg
                    # then refuses the next query in the middle of that (InternalClientError).
                    if self._sender is not None:
                        self._sender.terminate()
                    self._sender = None
                    if attempt == 2:
                        raise

    async def close(self) -> None:
        self._handler = None
        self._tasks.cancel()
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
        if self._sender is not None:
            await self._sender.close()

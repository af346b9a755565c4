"""Messages between hub instances: in-process for one hub, PostgreSQL LISTEN/NOTIFY for many.

PostgreSQL, not Redis: the split topology already runs PostgreSQL and nothing
else, so fan-out costs no new service to deploy, secure and watch. NOTIFY
delivers to every listening instance after the sender's transaction commits;
payloads stay under its 8000-byte limit (an SDP offer for data channels is a
few kilobytes).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import asyncpg
from sqlalchemy.engine import make_url

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


class PostgresBus:
    """Many hub instances on one PostgreSQL: LISTEN on one connection, NOTIFY to send."""

    def __init__(self, sqlalchemy_url: str, schema: str | None = None) -> None:
        url = make_url(sqlalchemy_url).set(drivername="postgresql")
        self._dsn = url.render_as_string(hide_password=False)
        # Runs that share a server (tests, staging) keep apart by schema.
        self._channel = f"{CHANNEL}_{schema}" if schema else CHANNEL
        self._listener: asyncpg.Connection | None = None
        self._sender: asyncpg.Connection | None = None
        self._handler: BusHandler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # One connection runs one query at a time.
        self._send_lock = asyncio.Lock()

    async def start(self, handler: BusHandler) -> None:
        self._handler = handler
        self._listener = await asyncpg.connect(self._dsn)
        self._sender = await asyncpg.connect(self._dsn)
        await self._listener.add_listener(self._channel, self._on_notify)

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        if self._handler is None:
            return
        try:
            message = json.loads(payload)
        except ValueError:
            log.warning("dropped a malformed bus message")
            return
        task = asyncio.get_running_loop().create_task(self._handler(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def publish(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message, separators=(",", ":"))
        if len(payload.encode()) > MAX_PAYLOAD:
            raise ValueError("bus message too large for NOTIFY")
        assert self._sender is not None, "bus not started"
        async with self._send_lock:
            await self._sender.execute("SELECT pg_notify($1, $2)", self._channel, payload)

    async def close(self) -> None:
        self._handler = None
        for task in list(self._tasks):
            task.cancel()
        for conn in (self._listener, self._sender):
            if conn is not None:
                await conn.close()

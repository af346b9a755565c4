"""The PostgreSQL bus: messages reach every instance, and a lost connection comes back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from server.hub.bus import PostgresBus
from tests.support.databases import scratch_postgres_database


class Inbox:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __call__(self, message: dict[str, Any]) -> None:
        await self.messages.put(message)

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.messages.get(), 10)


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with scratch_postgres_database() as created:
        yield created


async def _terminate(url: str, query_prefix: str) -> int:
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    admin = await asyncpg.connect(dsn)
    try:
        rows = await admin.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1",
            query_prefix + "%",
        )
        return len(rows)
    finally:
        await admin.close()


async def test_messages_reach_every_instance_and_survive_lost_connections(url: str) -> None:
    first, second = PostgresBus(url), PostgresBus(url)
    inbox_one, inbox_two = Inbox(), Inbox()
    await first.start(inbox_one)
    await second.start(inbox_two)
    try:
        await second.publish({"kind": "ping", "n": 1})
        assert (await inbox_one.next())["n"] == 1
        assert (await inbox_two.next())["n"] == 1  # the sender hears itself too

        assert await _terminate(url, "LISTEN") == 2
        assert (await inbox_one.next())["kind"] == "resync"
        assert (await inbox_two.next())["kind"] == "resync"
        await asyncio.wait_for(first.listening.wait(), 10)
        await second.publish({"kind": "ping", "n": 2})
        assert (await inbox_one.next())["n"] == 2
        assert (await inbox_two.next())["n"] == 2

        assert await _terminate(url, "SELECT pg_notify") == 1  # second's sender
        await second.publish({"kind": "ping", "n": 3})  # it reconnects and sends
        assert (await inbox_one.next())["n"] == 3
    finally:
        await first.close()
        await second.close()

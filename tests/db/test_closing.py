"""Closing a database ends every connection it opened, one a task still holds too: no
SQLite thread outlives the event loop, no PostgreSQL socket is left to the collector."""

from __future__ import annotations

import asyncio
import functools
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database, DriverConnections
from tests.support.databases import ScratchDatabase


async def test_close_ends_the_connections_tasks_still_hold(database: ScratchDatabase) -> None:
    opened = database.open()
    await opened.migrate()
    holding = asyncio.Event()
    held: list[Any] = []

    async def hold(begun: AbstractAsyncContextManager[AsyncConnection]) -> None:
        async with begun as connection:
            await connection.execute(sa.text("SELECT 1"))
            raw = await connection.get_raw_connection()
            held.append(raw.driver_connection)
            holding.set()
            await asyncio.Event().wait()

    tasks = []
    for begin in (opened.read, opened.write):
        tasks.append(asyncio.create_task(hold(begin())))
        await holding.wait()
        holding.clear()
    # The process stops with both held: the engines' pools cannot close them.
    await opened.close()
    for driver in held:
        if isinstance(driver, aiosqlite.Connection):
            assert not driver._thread.is_alive()
        else:
            assert driver.is_closed()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_close_waits_for_the_thread_of_a_connection_stopped_without_waiting(
    tmp_path: Path,
) -> None:
    """As SQLAlchemy ends a connection whose task is cancelled: stopped, nobody waiting."""
    opened = DriverConnections()
    connection = await aiosqlite.connect(tmp_path / "crewhost.db")
    opened.track(connection)
    # Its thread is busy a moment longer, as on a loaded machine.
    connection._tx.put_nowait((None, functools.partial(time.sleep, 0.3)))
    connection.stop()
    await opened.close_all()
    assert not connection._thread.is_alive()


async def test_a_lookup_pool_opening_as_the_close_begins_is_closed_with_the_rest(
    database: ScratchDatabase,
) -> None:
    """A task still at work as the process stops: the lookup pool it is opening is waited
    for and closed. A database used after its close opens its connections anew (a hub's
    built-in host outlives the hub), and its next close ends them."""
    opened = database.open()
    await opened.migrate()
    pinging = asyncio.create_task(opened.ping())  # the first lookup opens the pool
    await asyncio.sleep(0)
    await opened.close()
    await pinging
    assert lookup_pool(opened) is None
    await opened.ping()
    async with opened.read() as connection:
        await connection.execute(sa.text("SELECT 1"))
        late = (await connection.get_raw_connection()).driver_connection
        held = late if isinstance(late, asyncpg.Connection) else None
    pool = lookup_pool(opened)
    await opened.close()
    if held is not None:  # PostgreSQL: the read's connection and the lookups' pool
        assert held.is_closed()
        assert pool is not None
        assert pool.is_closing()


def lookup_pool(opened: Database) -> asyncpg.Pool | None:
    return opened._lookup_pool

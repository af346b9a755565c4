"""Closing a database ends every SQLite connection thread it started, held ones too."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import aiosqlite
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database, SqliteThreads


async def test_close_ends_the_threads_of_connections_a_task_still_holds(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'crewhost.db'}", sqlite_readers=2)
    await database.migrate()
    holding = asyncio.Event()
    threads: list[threading.Thread] = []

    async def hold(opened: AbstractAsyncContextManager[AsyncConnection]) -> None:
        async with opened as connection:
            await connection.execute(sa.text("SELECT 1"))
            raw = await connection.get_raw_connection()
            assert raw.driver_connection is not None
            threads.append(raw.driver_connection._thread)
            holding.set()
            await asyncio.Event().wait()

    readers = asyncio.create_task(hold(database.read()))
    await holding.wait()
    holding.clear()
    writer = asyncio.create_task(hold(database.write()))
    await holding.wait()
    # The process stops with both held: the engines' pools cannot close them.
    await database.close()
    for thread in threads:
        await asyncio.to_thread(thread.join, 10)
        assert not thread.is_alive()
    for task in (readers, writer):
        task.cancel()
    await asyncio.gather(readers, writer, return_exceptions=True)


async def test_close_waits_for_the_thread_of_a_connection_stopped_without_waiting(
    tmp_path: Path,
) -> None:
    """As SQLAlchemy ends a connection whose task is cancelled: stopped, nobody waiting."""
    threads = SqliteThreads()
    connection = await aiosqlite.connect(tmp_path / "crewhost.db")
    threads.track(connection)
    # Its thread is busy a moment longer, as on a loaded machine.
    connection._tx.put_nowait((None, functools.partial(time.sleep, 0.3)))
    connection.stop()
    await threads.close_all()
    assert not connection._thread.is_alive()

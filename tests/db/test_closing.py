"""Closing a database ends every SQLite connection thread it started, held ones too."""

from __future__ import annotations

import asyncio
import threading
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database


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

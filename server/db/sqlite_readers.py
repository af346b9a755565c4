"""SQLite lookup connections that run their statements on the event loop's own thread.

aiosqlite gives every connection a thread and hands each call to it: a cursor,
the statement, the fetch, the close and the rollback at check-in are five round
trips through a queue and ``call_soon_threadsafe`` for one small query, and under
load each waits for the loop thread to let go of the GIL. A WAL reader never
waits for the writer, and the hub's reads are small indexed lookups that take
microseconds, so the connections of ``Database.lookup()`` call ``sqlite3``
directly instead. Other reads, which may be larger, and writes, which wait for
locks and for the disk, keep aiosqlite's threads.

The connections are opened ``query_only`` (a write through one is refused, never
waited for) with a short busy timeout, since a reader waits only in the rare
moment SQLite recovers its WAL index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Generator
from functools import partial
from pathlib import Path
from typing import Any

import aiosqlite

# A reader is busy only while another connection rebuilds the WAL index; never wait long
# on the loop's thread.
READER_BUSY_TIMEOUT_MS = 200


class InlineSqliteConnection(aiosqlite.Connection):
    """An aiosqlite connection without its worker thread: each call runs at once, in place."""

    def __init__(self, connector: Callable[[], sqlite3.Connection]) -> None:
        super().__init__(connector, iter_chunk_size=64)

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    async def _connect(self) -> InlineSqliteConnection:
        if self._connection is None:
            self._connection = self._connector()
        return self

    def __await__(self) -> Generator[Any, None, InlineSqliteConnection]:
        return self._connect().__await__()

    def stop(self) -> None:
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def close(self) -> None:
        self.stop()


def _open_reader(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA query_only=ON")
    connection.execute(f"PRAGMA busy_timeout={READER_BUSY_TIMEOUT_MS}")
    return connection


def reader_creator(path: Path) -> Callable[[], InlineSqliteConnection]:
    """What ``create_async_engine(async_creator=...)`` calls for each new read connection."""
    return partial(InlineSqliteConnection, partial(_open_reader, path))

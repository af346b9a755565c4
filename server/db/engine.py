"""The database: async engines, migrations on start, and transactions.

SQLite allows one writer at a time; rather than lean on ``busy_timeout`` for
read-then-write transactions (which SQLite may refuse outright), writes from one
process take a lock first, on one writer connection. Reads of a SQLite file use
read connections of their own: ``read()`` a pool on aiosqlite's threads. PostgreSQL
needs no lock and serves both from one pool. ``lookup()`` (small indexed reads on
the request path, see ``lookups``) bypasses the engine: one ``sqlite3`` connection
on the event loop's thread, or an asyncpg pool of its own.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import aiosqlite
import asyncpg
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import LRUCache

from server.common.data_folder import create_private_file, private_folder
from server.common.errors import CrewhostError
from server.db.lookups import Lookup, Row, keep_as_is, open_sqlite_reader, run_on_sqlite

if TYPE_CHECKING:
    from alembic.script import ScriptDirectory

    from server.config import Settings

log = logging.getLogger(__name__)

ALEMBIC_DIR = Path(__file__).resolve().parent / "migrations"
# Serialises migrations when several hubs start at once on one PostgreSQL.
_MIGRATION_LOCK_KEY = 0x637265776873


class CompiledStatements:
    """SQLAlchemy's compiled statements, shared by every engine of one kind of database in
    this process.

    SQLAlchemy keeps an engine's compiled statements in that engine, keyed by its dialect
    object: the read and write engines of one SQLite file compiled each statement twice,
    and a process that opens a database again (a test process opens one per test) compiled
    everything again each time. Here the key names the dialect's class and the server's
    version instead, which is all a compiled statement depends on for engines made with the
    same options, as ``Database`` makes them.
    """

    def __init__(self, size: int = 2000) -> None:
        self._cache: LRUCache[Any, Any] = LRUCache(size)

    @staticmethod
    def _key(key: tuple[Any, ...]) -> tuple[Any, ...]:
        dialect, *rest = key
        return (type(dialect), dialect.server_version_info, *rest)

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
        return self._cache.get(self._key(key), default)

    def __getitem__(self, key: tuple[Any, ...]) -> Any:
        return self._cache[self._key(key)]

    def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
        self._cache[self._key(key)] = value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self._key(key) in self._cache

    def __len__(self) -> int:
        return len(self._cache)


_COMPILED = CompiledStatements()


def _lower(value: object) -> object:
    return value.lower() if isinstance(value, str) else value


def _sqlite_functions(dbapi_connection: Any) -> None:
    # SQLite's own lower() folds A to Z only: a search that lowers its words in Python
    # ("ärger") would miss the same words stored ("Ärger"), where PostgreSQL finds them.
    dbapi_connection.create_function("lower", 1, _lower, deterministic=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
    _sqlite_functions(dbapi_connection)


class DriverConnections:
    """The driver's connections an engine opened: aiosqlite's, each with a thread of its
    own, or asyncpg's.

    Disposing an engine closes the connections in its pool, not one a task still holds
    (a task cancelled as the process stops, or one that never gave it back), and a SQLite
    connection SQLAlchemy ends as its task is cancelled is stopped without anyone waiting
    for its thread. Such a thread outlived its event loop: it answered into a closed loop,
    and failed there; such a socket was left to the garbage collector. ``close_all`` ends
    what is left open while the loop still runs, and waits for each thread to end.
    """

    def __init__(self) -> None:
        self._connections: weakref.WeakSet[aiosqlite.Connection | asyncpg.Connection] = (
            weakref.WeakSet()
        )

    def opened(self, dbapi_connection: Any, _record: Any) -> None:
        """The engine's ``connect`` event: SQLAlchemy's adapter holds the connection."""
        self.track(dbapi_connection._connection)

    def track(self, connection: aiosqlite.Connection | asyncpg.Connection) -> None:
        self._connections.add(connection)

    async def track_lookup(self, connection: asyncpg.Connection) -> None:
        """The lookup pool's ``init``: each of its connections, as it opens."""
        self.track(connection)

    async def close_all(self) -> None:
        threads = []
        for connection in list(self._connections):
            if isinstance(connection, asyncpg.Connection):
                # Whatever it was doing is given up: the process is stopping.
                if not connection.is_closed():
                    connection.terminate()
                continue
            # aiosqlite has no public way to ask whether a connection was stopped, nor to
            # wait for its thread. A stopped one must not be closed: its close would wait
            # for a thread that has ended.
            if connection._running:
                with suppress(Exception):
                    await connection.close()
            threads.append(connection._thread)
        if any(thread.is_alive() for thread in threads):
            await asyncio.to_thread(_join, threads)


def _join(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(_THREAD_END_SECONDS)


# A thread ends once the statement it runs is done; a statement waits for SQLite's lock
# for at most its busy_timeout (10 s).
_THREAD_END_SECONDS = 15


def _sqlite_reader_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
    _sqlite_functions(dbapi_connection)


class Database:
    """The engine plus the write discipline of its dialect."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        schema: str | None = None,
        sqlite_readers: int = 4,
        migration_copies: int = 0,
    ) -> None:
        parsed = make_url(url)
        self.url = url
        # How many copies of a SQLite file to keep from before its schema changes (0: none).
        self.migration_copies = migration_copies
        self.schema = schema
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        # A steady pool: opening a connection (a thread and PRAGMAs on SQLite) per burst costs more
        # than waiting a moment for a free one.
        kwargs: dict[str, Any] = {"pool_size": pool_size, "max_overflow": pool_size}
        path: Path | None = None
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                path = Path(parsed.database)
                private_folder(path.parent)
                # SQLite gives its -wal and -shm files the database file's mode: make that 0600.
                create_private_file(path)
                # Writes hold the write lock, so one connection serves them; the spare ones
                # are for the moments a read connection is not the one asked for (migrations).
                kwargs = {"pool_size": 1, "max_overflow": 2}
        else:
            kwargs["pool_pre_ping"] = True
            if schema:
                kwargs["connect_args"] = {"server_settings": {"search_path": schema}}
        kwargs["execution_options"] = {"compiled_cache": _COMPILED}
        # A failed statement's error names its SQL, never its values: they may be secrets
        # (a trigger's signing secret, a sealed token), and errors are logged.
        kwargs["hide_parameters"] = True
        self.engine: AsyncEngine = create_async_engine(parsed, **kwargs)
        # Every connection either engine opens, for ``close`` to end.
        self._opened = DriverConnections()
        event.listen(self.engine.sync_engine, "connect", self._opened.opened)
        # Reads of a SQLite file get connections of their own; elsewhere (PostgreSQL, an
        # in-memory SQLite) they share the one engine.
        self.read_engine: AsyncEngine = self.engine
        if path is not None:
            self.read_engine = create_async_engine(
                parsed,
                pool_size=sqlite_readers,
                max_overflow=0,
                execution_options={"compiled_cache": _COMPILED},
                hide_parameters=True,
            )
            event.listen(self.read_engine.sync_engine, "connect", _sqlite_reader_pragmas)
            event.listen(self.read_engine.sync_engine, "connect", self._opened.opened)
        # Lookups: see lookups. Opened at the first one.
        self._sqlite_path = path
        self._sqlite_reader: sqlite3.Connection | None = None
        self._lookup_pool_size = pool_size
        self._lookup_pool: asyncpg.Pool | None = None
        self._lookup_pool_lock = asyncio.Lock()
        # Lookups wait for a connection here, in turn: asyncpg's pool lets a newcomer take
        # the connection a woken waiter was handed, so under load some lookups waited long.
        self._lookup_turns = asyncio.Semaphore(pool_size)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self._write_lock = asyncio.Lock() if self.is_sqlite else None

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        """The database the settings name, with their pool sizes."""
        return cls(
            settings.database_url,
            pool_size=settings.database.pool_size,
            sqlite_readers=settings.database.sqlite_read_connections,
            migration_copies=settings.database.sqlite_migration_copies,
        )

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reads (autocommit-free, rolled back at the end)."""
        async with self.read_engine.connect() as connection:
            yield connection

    async def lookup(self, query: Lookup, /, **parameters: Any) -> list[Row]:
        """The rows of a small indexed read on the request path, as plain tuples.

        On a SQLite file the statement runs on the event loop's thread, without a
        thread hop: keep each to a lookup by key of a few rows, never a scan. A
        lookup sees every write committed before it began.
        """
        dialect = self.engine.dialect
        compiled = query.compiled(dialect)
        arguments = compiled.arguments(parameters)
        if self._sqlite_path is not None:
            if self._sqlite_reader is None:
                self._sqlite_reader = open_sqlite_reader(self._sqlite_path)
            return query.rows(run_on_sqlite(self._sqlite_reader, compiled, arguments))
        if self.is_sqlite:
            # An in-memory database lives in the engine's one connection.
            async with self.engine.connect() as connection:
                result = await connection.execute(query.statement, parameters)
                return [tuple(row) for row in result]
        pool = self._lookup_pool or await self._open_lookup_pool()
        async with self._lookup_turns:
            for attempt in range(2):
                connection = await pool.acquire()
                try:
                    fetched = await connection.fetch(compiled.sql, *arguments)
                except _DROPPED:
                    # The server ended the connection (a restart, an administrator): it
                    # never goes back to the pool in a state nobody knows, and a read is
                    # safe to repeat once on another, as the engine's pre-ping would have.
                    # When asyncpg saw the close first, it has already let the proxy go.
                    with suppress(asyncpg.InterfaceError):
                        connection.terminate()
                    if attempt:
                        raise
                else:
                    return query.rows(fetched)
                finally:
                    await pool.release(connection)
        raise AssertionError("unreachable")

    async def _open_lookup_pool(self) -> asyncpg.Pool:
        async with self._lookup_pool_lock:
            if self._lookup_pool is None:
                # The engine's own reading of the URL, so both connect alike (host, ssl, ...).
                _, arguments = self.engine.dialect.create_connect_args(make_url(self.url))
                # The engine's name for asyncpg's statement cache size (0 behind PgBouncer).
                cache_size = arguments.pop("prepared_statement_cache_size", 100)
                arguments.pop("prepared_statement_name_func", None)
                if self.schema:
                    arguments["server_settings"] = {"search_path": self.schema}
                self._lookup_pool = await asyncpg.create_pool(
                    **arguments,
                    statement_cache_size=cache_size,
                    min_size=1,
                    max_size=self._lookup_pool_size,
                    reset=keep_as_is,
                    init=self._opened.track_lookup,
                )
            return self._lookup_pool

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A transaction that commits when the block ends and rolls back on error."""
        if self._write_lock is None:
            async with self.engine.begin() as connection:
                yield connection
            return
        async with self._write_lock, self.engine.begin() as connection:
            yield connection

    async def ping(self) -> None:
        """One round trip to the database (for health checks)."""
        await self.lookup(_PING)

    async def migrate(self, to: str = "head") -> Path | None:
        """Bring the schema to the newest revision of the one Alembic history (or to ``to``).

        A database at a revision this code does not know is refused untouched
        (``databaseTooNew``). Before a SQLite file's schema changes, a copy of it is kept
        beside it (the newest ``migration_copies``); answers that copy's path, if one was made.
        """
        copy = None
        if self._sqlite_path is not None and self.migration_copies > 0 and to == "head":
            copy = await asyncio.to_thread(
                copy_before_migrating, self._sqlite_path, self.migration_copies
            )
            if copy is not None:
                log.warning(
                    "kept a copy of the database from before its migration",
                    extra={"copy": str(copy)},
                )
        async with self.engine.begin() as connection:
            if not self.is_sqlite:
                await connection.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY}
                )
            # The history's files are read (and compiled) once, off the event loop.
            scripts = await asyncio.to_thread(_script_directory)
            await connection.run_sync(_upgrade, to, scripts)
        return copy

    async def close(self) -> None:
        if self._sqlite_reader is not None:
            self._sqlite_reader.close()
            self._sqlite_reader = None
        # A pool still opening is waited for, then closed. (A database used after its
        # close opens its connections anew, and its next close ends them.)
        async with self._lookup_pool_lock:
            pool, self._lookup_pool = self._lookup_pool, None
        if pool is not None:
            await pool.close()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
        await self.engine.dispose()
        await self._opened.close_all()


# How a connection the server ended shows, depending on when the news reaches asyncpg.
_DROPPED = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InternalClientError,
    asyncpg.exceptions.InterfaceError,
    ConnectionError,
)
_PING = Lookup(sa.select(sa.literal_column("1", sa.Integer)))


MIGRATION_COPY_INFIX = ".before-"


def copy_before_migrating(database: Path, keep: int) -> Path | None:
    """A consistent copy of ``database`` beside it when a migration is due; None when not.

    Named ``<name>.before-<revision>-<UTC time>``; only the newest ``keep`` are kept.
    """
    if not database.is_file() or database.stat().st_size == 0:
        return None
    source = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master")}
        if "alembic_version" not in tables:
            return None  # an empty database: nothing to go back to
        current = [row[0] for row in source.execute("SELECT version_num FROM alembic_version")]
        head = _script_directory().get_current_head()
        if not current or current == [head]:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        copy = database.with_name(f"{database.name}{MIGRATION_COPY_INFIX}{current[0]}-{stamp}")
        create_private_file(copy)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
    finally:
        source.close()
    copies = sorted(
        database.parent.glob(f"{database.name}{MIGRATION_COPY_INFIX}*"),
        key=lambda path: path.name.rsplit("-", 1)[-1],
    )
    for old in copies[:-keep]:
        old.unlink(missing_ok=True)
    return copy


class DatabaseTooNew(CrewhostError):
    """The database is at a revision this code does not know: a newer Crewhost made it."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "databaseTooNew"


@functools.cache
def _script_directory() -> ScriptDirectory:
    """The one Alembic history, every revision file read: kept for the process's life."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    scripts = ScriptDirectory.from_config(config)
    scripts.get_current_head()  # reads the revision files now, not on the caller's loop
    return scripts


def _upgrade(connection: Connection, to: str, scripts: ScriptDirectory) -> None:
    from alembic import command
    from alembic.config import Config
    from alembic.migration import MigrationContext
    from alembic.util import CommandError

    # Checked before any step runs, so a newer database is refused untouched.
    current = MigrationContext.configure(connection).get_current_heads()
    for revision in current:
        try:
            known = scripts.get_revision(revision)
        except CommandError:
            known = None
        if known is None:
            raise DatabaseTooNew(
                f"the database is at revision {revision}, which this Crewhost does not know "
                f"(its newest is {scripts.get_current_head()}): a newer version wrote it. "
                "Run that version (or newer), or restore a backup made before the upgrade"
            )
    if to == "head" and tuple(current) == (scripts.get_current_head(),):
        return  # at the newest revision already: nothing to run
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.attributes["connection"] = connection
    command.upgrade(config, to)

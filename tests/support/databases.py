"""Databases for tests: a SQLite file per test, or a fresh PostgreSQL schema per test.

A test that asks for a migrated database gets a copy of one migrated once per test
process: a file copy on SQLite, and on PostgreSQL the template schema's ``pg_dump``
replayed under the test's own schema name, and once a test is done its schema emptied
back to the template's rows for the process's next test. Running the whole Alembic
history costs half a second to a second and a half a database; the copy a few tens of
milliseconds on SQLite, a fifth of a second on PostgreSQL, and emptying a used schema a
few tens of milliseconds. (A database per test copied with ``CREATE
DATABASE … TEMPLATE`` is faster to make, but dropping one waits for a checkpoint, which
takes seconds while other tests write.)
"""

from __future__ import annotations

import asyncio
import atexit
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from server.db.engine import Database

DEFAULT_POSTGRES_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgresql")


def postgres_url() -> str:
    return os.environ.get("CREWHOST_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


@dataclass(frozen=True)
class ScratchDatabase:
    url: str
    schema: str | None

    def open(self) -> Database:
        return Database(self.url, pool_size=4, schema=self.schema)


def _admin_dsn() -> str:
    return (
        make_url(postgres_url()).set(drivername="postgresql").render_as_string(hide_password=False)
    )


class _MigratedTemplates:
    """A database per backend migrated to head once in this process, to copy for each test."""

    def __init__(self) -> None:
        self._sqlite: Path | None = None
        self._postgres: tuple[str, str] | None = None

    async def sqlite_file(self) -> Path:
        if self._sqlite is None:
            folder = Path(tempfile.mkdtemp(prefix="crewhost-template-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "crewhost.db"
            db = Database(f"sqlite+aiosqlite:///{path}")
            try:
                await db.migrate()
            finally:
                await db.close()  # the last connection's close folds the WAL back in
            self._sqlite = path
        return self._sqlite

    async def postgres_script(self) -> tuple[str, str] | None:
        """The template schema's name and the SQL that makes it, rows and all; None
        without ``pg_dump``."""
        if self._postgres is None:
            pg_dump = shutil.which("pg_dump")
            if pg_dump is None:
                return None
            async with _postgres_schema() as schema:
                db = Database(postgres_url(), schema=schema)
                try:
                    await db.migrate()
                finally:
                    await db.close()
                url = make_url(_admin_dsn())
                dumped = await asyncio.create_subprocess_exec(
                    pg_dump,
                    f"--dbname={url.render_as_string(hide_password=False)}",
                    f"--schema={schema}",
                    "--inserts",
                    "--no-owner",
                    "--no-privileges",
                    stdout=asyncio.subprocess.PIPE,
                )
                out, _ = await dumped.communicate()
                if dumped.returncode != 0:
                    raise RuntimeError(f"pg_dump of the template schema exited {dumped.returncode}")
            # Lines that begin with a backslash are psql's meta-commands, not SQL.
            script = "\n".join(
                line for line in out.decode().splitlines() if not line.startswith("\\")
            )
            self._postgres = (schema, script)
        return self._postgres


_TEMPLATES = _MigratedTemplates()


def _schema_name() -> str:
    return f"crewhost_test_{os.getpid()}_{secrets.token_hex(4)}"


@asynccontextmanager
async def _postgres_schema(template: tuple[str, str] | None = None) -> AsyncIterator[str]:
    # Each test gets a schema of its own, so runs (and tests) never see each other's rows.
    if template is not None:
        schema = await _POOL.take(template)
        try:
            yield schema
        finally:
            await _POOL.give_back(schema, template)
        return
    schema = _schema_name()
    conn = await asyncpg.connect(_admin_dsn())
    try:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
        yield schema
    finally:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


class _SchemaPool:
    """Migrated schemas a test of this process has given back, emptied to the template's
    rows for the next one: deleting a test's few rows costs the database a tenth of
    dropping the schema and replaying the template's 900 statements. A schema whose
    tables, columns or indexes a test changed is dropped instead; the rest are dropped as the
    process ends."""

    def __init__(self) -> None:
        self._free: list[str] = []
        # The template's tables, columns and indexes, read off the first schema made from it.
        self._shape: tuple[tuple[str, ...], int, int] | None = None
        atexit.register(self._drop_left)

    async def take(self, template: tuple[str, str]) -> str:
        if self._free:
            return self._free.pop()
        name, script = template
        schema = _schema_name()
        conn = await asyncpg.connect(_admin_dsn())
        try:
            await conn.execute(script.replace(name, schema))
            if self._shape is None:
                self._shape = await _shape(conn, schema)
        finally:
            await conn.close()
        return schema

    async def give_back(self, schema: str, template: tuple[str, str]) -> None:
        conn = await asyncpg.connect(_admin_dsn())
        try:
            if await self._emptied(conn, schema, template):
                self._free.append(schema)
            else:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    async def _emptied(
        self, conn: asyncpg.Connection, schema: str, template: tuple[str, str]
    ) -> bool:
        """Whether ``schema`` is back at the template's state: its tables, columns and
        indexes the template's, their rows deleted and the template's (its revision) put
        back."""
        name, script = template
        rows = [
            line.replace(name, schema) for line in script.splitlines() if line.startswith("INSERT")
        ]
        try:
            async with conn.transaction():
                # A connection a test left in a transaction would hold its tables' locks.
                await conn.execute("SET LOCAL lock_timeout = '5s'")
                if self._shape is None or await _shape(conn, schema) != self._shape:
                    return False
                tables = self._shape[0]
                # Every table at once, whatever their foreign keys: no trigger checks them.
                await conn.execute("SET LOCAL session_replication_role = replica")
                emptied = "".join(
                    f'DELETE FROM "{schema}"."{table}";'  # noqa: S608 - the template's names
                    for table in tables
                )
                await conn.execute(emptied + "\n".join(rows))
        except asyncpg.PostgresError:
            return False
        return True

    def _drop_left(self) -> None:
        if self._free:
            asyncio.run(self._drop_all())

    async def _drop_all(self) -> None:
        conn = await asyncpg.connect(_admin_dsn())
        try:
            for schema in self._free:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()
        self._free.clear()


async def _shape(conn: asyncpg.Connection, schema: str) -> tuple[tuple[str, ...], int, int]:
    """The schema's tables by name, and how many columns and indexes they have."""
    row = await conn.fetchrow(
        # Plain text, not an array: a type asyncpg has not met costs it a slow lookup.
        "SELECT (SELECT string_agg(c.relname::text, ',' ORDER BY c.relname) FROM pg_class c"
        "   WHERE c.relnamespace = n.oid AND c.relkind = 'r'),"
        " (SELECT count(*) FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid"
        "   WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND a.attnum > 0"
        "   AND NOT a.attisdropped),"
        " (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'i')"
        " FROM pg_namespace n WHERE n.nspname = $1",
        schema,
    )
    if row is None:
        return (), 0, 0
    return tuple(str(row[0] or "").split(",")), int(row[1]), int(row[2])


_POOL = _SchemaPool()


@asynccontextmanager
async def scratch_database(
    backend: str, folder: Path, *, migrated: bool = False
) -> AsyncIterator[ScratchDatabase]:
    """An empty database, or with ``migrated`` one already at the newest revision."""
    if backend == "sqlite":
        path = folder / "crewhost.db"
        if migrated:
            shutil.copyfile(await _TEMPLATES.sqlite_file(), path)
        yield ScratchDatabase(f"sqlite+aiosqlite:///{path}", None)
        return
    template = await _TEMPLATES.postgres_script() if migrated else None
    async with _postgres_schema(template) as schema:
        yield ScratchDatabase(postgres_url(), schema)


@asynccontextmanager
async def scratch_postgres_database() -> AsyncIterator[str]:
    """A whole new PostgreSQL database (for several processes sharing one); its URL."""
    url = make_url(postgres_url())
    name = f"crewhost_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(
        url.set(drivername="postgresql").render_as_string(hide_password=False)
    )
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()

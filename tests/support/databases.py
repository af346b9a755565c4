"""Databases for tests: a SQLite file per test, or a fresh PostgreSQL schema per test.

A test that asks for a migrated database gets a copy of one migrated once per test
process: a file copy on SQLite, and on PostgreSQL the template schema's ``pg_dump``
replayed under the test's own schema name. Running the whole Alembic history costs half
a second to a second and a half a database; the copy a few tens of milliseconds on
SQLite, a third of a second on PostgreSQL. (A database per test copied with ``CREATE
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


@asynccontextmanager
async def _postgres_schema(template: tuple[str, str] | None = None) -> AsyncIterator[str]:
    # Each test gets a schema of its own, so runs (and tests) never see each other's rows.
    schema = f"crewhost_test_{os.getpid()}_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(_admin_dsn())
    try:
        if template is None:
            await conn.execute(f'CREATE SCHEMA "{schema}"')
        else:
            name, script = template
            await conn.execute(script.replace(name, schema))
        yield schema
    finally:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


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

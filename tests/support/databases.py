"""Databases for tests: a SQLite file per test, or a fresh PostgreSQL schema per test."""

from __future__ import annotations

import os
import secrets
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


@asynccontextmanager
async def _postgres_schema() -> AsyncIterator[str]:
    url = make_url(postgres_url())
    # Each test gets a schema of its own, so runs (and tests) never see each other's rows.
    schema = f"crewhost_test_{os.getpid()}_{secrets.token_hex(4)}"
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
        yield schema
    finally:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


@asynccontextmanager
async def scratch_database(backend: str, folder: Path) -> AsyncIterator[ScratchDatabase]:
    if backend == "sqlite":
        yield ScratchDatabase(f"sqlite+aiosqlite:///{folder / 'crewhost.db'}", None)
        return
    async with _postgres_schema() as schema:
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

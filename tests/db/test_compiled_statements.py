"""Compiled SQL is shared by the engines of one kind of database in a process: a second
database's first run of a statement is compiled already, and still reads its own rows."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine.default import DefaultDialect

from server.db.engine import Database
from server.db.tables import accounts
from tests.support.databases import BACKENDS, scratch_database


@pytest.fixture(params=BACKENDS)
async def two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Database]]:
    """Two databases of one kind, at the newest revision, each opened as the host opens it."""
    async with AsyncExitStack() as stack:
        opened = []
        for name in ("first", "second"):
            folder = tmp_path / name
            folder.mkdir()
            scratch = await stack.enter_async_context(
                scratch_database(request.param, folder, migrated=True)
            )
            database = scratch.open()
            stack.push_async_callback(database.close)
            opened.append(database)
        yield opened


async def _named(database: Database, label: str) -> tuple[list[str], object]:
    """The names of the accounts called Ada, selected under ``label`` (a statement made
    anew each time, as the storage makes them), and whether its compiled form was found in
    the cache."""
    query = sa.select(accounts.c.name.label(label)).where(accounts.c.name == "Ada")
    async with database.read() as conn:
        result = await conn.execute(query)
        return list(result.scalars()), result.context.cache_hit


async def test_a_second_database_runs_the_first_ones_compiled_statements(
    two: list[Database],
) -> None:
    first, second = two
    for number, database in enumerate(two):
        async with database.write() as conn:
            await conn.execute(
                accounts.insert().values(
                    id=f"{number:032x}",
                    email=f"{number}@example.com",
                    name="Ada",
                    password_hash="x",
                    created_at=1.0,
                )
            )
    # A statement no other test runs: compiled here first.
    shape = f"probe_{uuid.uuid4().hex}"
    names, hit = await _named(first, shape)
    assert (names, hit) == (["Ada"], DefaultDialect.CACHE_MISS)
    names, hit = await _named(second, shape)
    assert (names, hit) == (["Ada"], DefaultDialect.CACHE_HIT)
    # Each database still reads its own rows through the shared statement.
    async with second.write() as conn:
        await conn.execute(accounts.delete())
    assert await _named(second, shape) == ([], DefaultDialect.CACHE_HIT)
    assert (await _named(first, shape))[0] == ["Ada"]

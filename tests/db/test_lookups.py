"""Reads outside the writer: SQLite read connections, and lookups on both databases."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from server.db.engine import Database
from server.db.lookups import Lookup, open_sqlite_reader
from server.db.tables import accounts, avatars, metadata
from tests.support.databases import ScratchDatabase, scratch_database

ROW = {"email": "a@example.com", "name": "A", "password_hash": "x", "created_at": 1.5}
ACCOUNT_BY_ID = Lookup(
    sa.select(
        accounts.c.id,
        accounts.c.name,
        accounts.c.created_at,
        sa.exists().where(avatars.c.account_id == accounts.c.id).label("has_avatar"),
    ).where(accounts.c.id == sa.bindparam("account_id"))
)
BACKEND_PID = Lookup(sa.select(sa.func.pg_backend_pid(type_=sa.Integer).label("pid")))
ACCOUNT_COUNT = Lookup(sa.select(sa.func.count().label("count")).select_from(accounts))


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'crewhost.db'}", sqlite_readers=2)
    await database.migrate()
    yield database
    await database.close()


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


async def _add_account(db: Database, number: int) -> str:
    account_id = f"{number:032x}"
    async with db.write() as conn:
        await conn.execute(
            accounts.insert().values(id=account_id, **ROW | {"email": f"{number}@example.com"})
        )
    return account_id


async def test_a_lookup_returns_plain_tuples_with_booleans(db: Database) -> None:
    account_id = await _add_account(db, 1)
    assert await db.lookup(ACCOUNT_BY_ID, account_id=account_id) == [(account_id, "A", 1.5, False)]
    async with db.write() as conn:
        await conn.execute(
            avatars.insert().values(
                account_id=account_id, content_type="image/png", data=b"x", updated_at=2.0
            )
        )
    [row] = await db.lookup(ACCOUNT_BY_ID, account_id=account_id)
    assert row[3] is True
    assert await db.lookup(ACCOUNT_BY_ID, account_id="f" * 32) == []


async def test_a_lookup_sees_what_the_last_write_committed(db: Database) -> None:
    for number in range(3):
        await _add_account(db, number)
        assert await db.lookup(ACCOUNT_COUNT) == [(number + 1,)]


async def test_a_lookup_takes_exactly_its_parameters(db: Database) -> None:
    with pytest.raises(TypeError, match="account_id"):
        await db.lookup(ACCOUNT_BY_ID)
    with pytest.raises(TypeError, match="extra"):
        await db.lookup(ACCOUNT_BY_ID, account_id="0" * 32, extra=1)


async def test_the_health_ping_answers(db: Database) -> None:
    await db.ping()


def test_a_column_that_needs_converting_is_refused_when_the_lookup_is_built() -> None:
    with pytest.raises(TypeError, match="plain values"):
        Lookup(sa.select(metadata.tables["avatars"].c.data))


async def test_lookups_on_sqlite_start_no_thread(sqlite_db: Database) -> None:
    await sqlite_db.ping()  # the first lookup opens the connection
    threads = threading.active_count()
    for _ in range(20):
        assert await sqlite_db.lookup(ACCOUNT_COUNT) == [(0,)]
    assert threading.active_count() == threads


async def test_a_sqlite_lookup_holds_no_read_snapshot_open(sqlite_db: Database) -> None:
    await _add_account(sqlite_db, 1)
    assert await sqlite_db.lookup(ACCOUNT_COUNT) == [(1,)]
    reader = sqlite_db._sqlite_reader
    assert reader is not None
    assert not reader.in_transaction


def test_the_sqlite_lookup_connection_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    reader = open_sqlite_reader(path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute("INSERT INTO t VALUES (1)")
    finally:
        reader.close()


async def test_a_write_through_a_sqlite_read_connection_is_refused(sqlite_db: Database) -> None:
    async with sqlite_db.read() as conn:
        with pytest.raises(OperationalError, match="readonly"):
            await conn.execute(accounts.insert().values(id="0" * 32, **ROW))
    async with sqlite_db.read() as conn:
        assert (await conn.execute(sa.select(accounts.c.id))).first() is None


async def test_a_postgres_lookup_reads_its_own_schema_and_survives_a_dropped_connection(
    tmp_path: Path,
) -> None:
    async with scratch_database("postgresql", tmp_path) as scratch:
        db = scratch.open()
        await db.migrate()
        try:
            account_id = await _add_account(db, 7)
            # Only the test's schema has this row: the lookup pool searches that schema.
            assert await db.lookup(ACCOUNT_BY_ID, account_id=account_id) == [
                (account_id, "A", 1.5, False)
            ]
            [(dropped,)] = await db.lookup(BACKEND_PID)
            admin = await asyncpg.connect(
                make_url(scratch.url).set(drivername="postgresql").render_as_string(False)
            )
            try:
                assert await admin.fetchval("SELECT pg_terminate_backend($1)", dropped)
            finally:
                await admin.close()
            assert await db.lookup(ACCOUNT_BY_ID, account_id=account_id) == [
                (account_id, "A", 1.5, False)
            ]
            [(now,)] = await db.lookup(BACKEND_PID)
            assert now != dropped
        finally:
            await db.close()

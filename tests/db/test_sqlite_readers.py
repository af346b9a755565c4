"""SQLite reads: connections of their own (lookups on the loop's thread), refusing writes."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError

from server.db.engine import Database
from server.db.tables import accounts

ROW = {"email": "a@example.com", "name": "A", "password_hash": "x", "created_at": 1.0}


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'crewhost.db'}", sqlite_readers=2)
    await database.migrate()
    yield database
    await database.close()


async def test_lookups_use_their_own_engine_and_start_no_thread(db: Database) -> None:
    assert len({db.engine, db.read_engine, db.lookup_engine}) == 3
    async with db.lookup() as conn:  # the first lookup opens the connection
        await conn.execute(sa.text("SELECT 1"))
    threads = threading.active_count()
    for _ in range(20):
        async with db.lookup() as conn:
            assert (await conn.execute(sa.text("SELECT 1"))).scalar_one() == 1
    assert threading.active_count() == threads


async def test_a_read_sees_what_the_last_write_committed(db: Database) -> None:
    for number in range(3):
        async with db.write() as conn:
            await conn.execute(
                accounts.insert().values(
                    id=f"{number:032x}", **ROW | {"email": f"{number}@example.com"}
                )
            )
        for reader in (db.read, db.lookup):
            async with reader() as conn:
                count = (
                    await conn.execute(sa.select(sa.func.count()).select_from(accounts))
                ).scalar()
            assert count == number + 1


@pytest.mark.parametrize("reader", ["read", "lookup"])
async def test_a_write_through_a_read_connection_is_refused(db: Database, reader: str) -> None:
    async with getattr(db, reader)() as conn:
        with pytest.raises(OperationalError, match="readonly"):
            await conn.execute(accounts.insert().values(id="0" * 32, **ROW))
    async with db.read() as conn:
        assert (await conn.execute(sa.select(accounts.c.id))).first() is None

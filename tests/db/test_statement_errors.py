"""A failed statement's error, which the host and the hub log, names the statement and
never the values it was given: they may be secrets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from server.db.engine import Database
from server.db.tables import accounts
from tests.support.databases import BACKENDS, scratch_database

SECRET = "whsec_c2VjcmV0LW5vdC10by1iZS1sb2dnZWQ="


@pytest.fixture(params=BACKENDS)
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    async with scratch_database(request.param, tmp_path, migrated=True) as scratch:
        database = scratch.open()
        yield database
        await database.close()


def _account(password_hash: str) -> dict[str, object]:
    return {
        "id": "a" * 32,
        "email": "ada@example.com",
        "name": "Ada",
        "password_hash": password_hash,
        "created_at": 1.0,
    }


async def test_a_failed_write_names_its_statement_without_its_values(database: Database) -> None:
    async with database.write() as conn:
        await conn.execute(accounts.insert().values(_account("x")))
    with pytest.raises(sa.exc.IntegrityError) as caught:
        async with database.write() as conn:  # the same id again
            await conn.execute(accounts.insert().values(_account(SECRET)))
    told = str(caught.value)
    assert "INSERT INTO accounts" in told
    assert SECRET not in told
    assert "hidden" in told  # SQLAlchemy says the parameters were left out

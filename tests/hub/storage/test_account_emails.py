"""Emails stored before sign-in composed accents (NFC) are rewritten to that spelling by the
migration, on SQLite and PostgreSQL; one whose spelling another account has stays as it is."""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from server.db.tables import accounts
from server.hub.storage.accounts import AccountRepository
from tests.support.databases import BACKENDS, ScratchDatabase, scratch_database

COMPOSED = unicodedata.normalize("NFC", "josé@example.com")
DECOMPOSED = unicodedata.normalize("NFD", COMPOSED)
TWIN_COMPOSED = unicodedata.normalize("NFC", "zoë@example.com")
TWIN_DECOMPOSED = unicodedata.normalize("NFD", TWIN_COMPOSED)


@pytest.fixture(params=BACKENDS)
async def empty_database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ScratchDatabase]:
    async with scratch_database(request.param, tmp_path) as db:
        yield db


def _account(account_id: str, email: str) -> dict[str, object]:
    return {
        "id": account_id.ljust(32, "0"),
        "email": email,
        "name": account_id,
        "password_hash": "x",
        "created_at": 1.0,
    }


async def test_stored_emails_take_their_composed_spelling(
    empty_database: ScratchDatabase,
) -> None:
    db = empty_database.open()
    try:
        await db.migrate(to="0029")
        async with db.write() as conn:
            await conn.execute(
                accounts.insert(),
                [
                    _account("jose", DECOMPOSED),
                    _account("zoe", TWIN_COMPOSED),
                    _account("zoetwin", TWIN_DECOMPOSED),
                    _account("plain", "plain@example.com"),
                ],
            )
        await db.migrate()
        async with db.read() as conn:
            found_rows = await conn.execute(sa.select(accounts.c.name, accounts.c.email))
            rows = {str(name): str(email) for name, email in found_rows}
        assert rows == {
            "jose": COMPOSED,
            "zoe": TWIN_COMPOSED,
            "zoetwin": TWIN_DECOMPOSED,  # its composed spelling is taken: left for an operator
            "plain": "plain@example.com",
        }
        found = await AccountRepository().lookup_account_by_email(db, COMPOSED)
        assert found is not None
        assert found.name == "jose"
    finally:
        await db.close()

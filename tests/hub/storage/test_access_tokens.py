"""Access tokens and their audit list, on SQLite and PostgreSQL: kept as hashes, found by
hash, revoked once, their uses listed newest first per member and per token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from server.db.engine import Database
from server.hub.storage.access_tokens import AccessToken, AccessTokenRepository, AccessTokenUse
from tests.support.databases import ScratchDatabase

TEAM, HOST = "t" * 32, "h" * 32
ALICE, BOB = "a" * 32, "b" * 32
tokens = AccessTokenRepository()


def token(token_id: str, account_id: str, *, created_at: float = 1.0) -> AccessToken:
    return AccessToken(
        id=token_id,
        team_id=TEAM,
        host_id=HOST,
        account_id=account_id,
        name="laptop",
        token_hash=token_id * 2,
        scope="browser",
        created_at=created_at,
        expires_at=100.0,
        last_used_at=None,
        revoked_at=None,
    )


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


async def test_a_token_is_found_by_its_hash_and_revoked_once(db: Database) -> None:
    mine = token("1" * 32, ALICE)
    async with db.write() as conn:
        await tokens.add_token(conn, mine)
    assert await tokens.get_token_by_hash(db, mine.token_hash) == mine
    assert await tokens.get_token_by_hash(db, "0" * 64) is None
    async with db.write() as conn:
        assert await tokens.update_revoked(conn, TEAM, mine.id, 5.0)
        assert not await tokens.update_revoked(conn, TEAM, mine.id, 6.0)
    async with db.read() as conn:
        assert await tokens.get_token(conn, TEAM, mine.id) == replace(mine, revoked_at=5.0)


async def test_tokens_are_listed_per_member_newest_first(db: Database) -> None:
    async with db.write() as conn:
        await tokens.add_token(conn, token("1" * 32, ALICE, created_at=1.0))
        await tokens.add_token(conn, token("2" * 32, ALICE, created_at=2.0))
        await tokens.add_token(conn, token("3" * 32, BOB, created_at=3.0))
    async with db.read() as conn:
        assert [t.id for t in await tokens.list_tokens(conn, TEAM, ALICE)] == ["2" * 32, "1" * 32]
        every = await tokens.list_tokens(conn, TEAM, None)
    assert [t.id for t in every] == ["3" * 32, "2" * 32, "1" * 32]


async def test_a_use_is_kept_and_marks_the_token_used(db: Database) -> None:
    async with db.write() as conn:
        await tokens.add_token(conn, token("1" * 32, ALICE))
        await tokens.add_token(conn, token("2" * 32, BOB))
        # Written together, as the hub writes a group of a host's reports.
        await tokens.add_uses(
            conn,
            [
                AccessTokenUse(f"{at}" * 32, TEAM, token_id, account_id, 10.0 + at, tool, "ok")
                for at, (token_id, account_id, tool) in enumerate(
                    [
                        ("1" * 32, ALICE, "open"),
                        ("1" * 32, ALICE, "click"),
                        ("2" * 32, BOB, "snapshot"),
                    ]
                )
            ],
        )
    async with db.read() as conn:
        alices = await tokens.list_uses(conn, TEAM, account_id=ALICE)
        assert [u.tool for u in alices] == ["click", "open"]
        assert [u.tool for u in await tokens.list_uses(conn, TEAM, account_id=None)] == [
            "snapshot",
            "click",
            "open",
        ]
        of_bob = await tokens.list_uses(conn, TEAM, account_id=None, token_id="2" * 32)
        assert [u.account_id for u in of_bob] == [BOB]
        used = await tokens.get_token(conn, TEAM, "1" * 32)
    assert used is not None
    assert used.last_used_at == 11.0

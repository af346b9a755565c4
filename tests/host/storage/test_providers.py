"""The provider repository on both databases: rows of one team, never another's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.exc import IntegrityError

from server.db.engine import Database
from server.db.tables import PROVIDER_API_KEY
from server.host.storage.ciphertexts import CiphertextRepository
from server.host.storage.providers import ProviderRepository, ProviderRow
from tests.support.databases import ScratchDatabase

repo = ProviderRepository()
TEAM_A, TEAM_B = "a" * 32, "b" * 32


def row(team: str, provider_id: str, name: str, *, key: bytes | None = None) -> ProviderRow:
    return ProviderRow(
        team, provider_id, "custom", name, "http://x.test/v1", "m", ("m", "n"), key, None, 1.0, 1.0
    )


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    async with opened.write() as conn:
        await repo.add_provider(conn, row(TEAM_A, "custom-1", "One", key=b"\x01sealed-a"))
        await repo.add_provider(conn, row(TEAM_A, "custom-2", "Two"))
        # The same id in another team is another row.
        await repo.add_provider(conn, row(TEAM_B, "custom-1", "One", key=b"\x01sealed-b"))
    yield opened
    await opened.close()


async def test_each_team_reads_its_own_rows(db: Database) -> None:
    async with db.read() as conn:
        mine = await repo.list_providers(conn, TEAM_A)
        theirs = await repo.list_providers(conn, TEAM_B)
        assert [p.id for p in mine] == ["custom-1", "custom-2"]
        assert mine[0].models == ("m", "n")
        assert mine[0].api_key == b"\x01sealed-a"
        assert [p.api_key for p in theirs] == [b"\x01sealed-b"]
        assert await repo.get_provider(conn, TEAM_B, "custom-2") is None
    assert "sealed" not in repr(mine[0])


async def test_writes_touch_only_the_named_team(db: Database) -> None:
    async with db.write() as conn:
        await repo.update_provider(conn, TEAM_B, "custom-1", models=["z"], api_key=None)
        await repo.remove_provider(conn, TEAM_B, "custom-2")  # not theirs: nothing happens
    async with db.read() as conn:
        mine = await repo.get_provider(conn, TEAM_A, "custom-1")
        theirs = await repo.get_provider(conn, TEAM_B, "custom-1")
        assert mine is not None
        assert theirs is not None
        assert (mine.models, mine.api_key) == (("m", "n"), b"\x01sealed-a")
        assert (theirs.models, theirs.api_key) == (("z",), None)
        assert len(await repo.list_providers(conn, TEAM_A)) == 2
    async with db.write() as conn:
        await repo.remove_provider(conn, TEAM_A, "custom-2")
    async with db.read() as conn:
        assert [p.id for p in await repo.list_providers(conn, TEAM_A)] == ["custom-1"]


async def test_names_are_unique_within_a_team(db: Database) -> None:
    with pytest.raises(IntegrityError):
        async with db.write() as conn:
            await repo.add_provider(conn, row(TEAM_A, "custom-3", "One"))


async def test_the_ciphertext_walk_crosses_teams_in_order_and_replaces_only_what_it_read(
    db: Database,
) -> None:
    walk = CiphertextRepository()
    async with db.write() as conn:
        assert await walk.has_ciphertexts(conn, PROVIDER_API_KEY)
        first = await walk.list_ciphertexts(conn, PROVIDER_API_KEY, after=None, limit=1)
        rest = await walk.list_ciphertexts(
            conn, PROVIDER_API_KEY, after=(first[0].team_id, first[0].row_id), limit=10
        )
        assert [(c.team_id, c.ciphertext) for c in first + rest] == [
            (TEAM_A, b"\x01sealed-a"),
            (TEAM_B, b"\x01sealed-b"),
        ]
        assert await walk.update_ciphertext(conn, PROVIDER_API_KEY, rest[0], b"\x01new")
        assert not await walk.update_ciphertext(conn, PROVIDER_API_KEY, rest[0], b"\x01again")
        mine = await repo.get_provider(conn, TEAM_A, "custom-1")
        assert mine is not None
        assert mine.api_key == b"\x01sealed-a"
        await repo.update_provider(conn, TEAM_A, "custom-1", api_key=None)
        await repo.update_provider(conn, TEAM_B, "custom-1", api_key=None)
        assert not await walk.has_ciphertexts(conn, PROVIDER_API_KEY)

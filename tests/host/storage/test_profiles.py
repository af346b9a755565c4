"""The browser profile repository on both databases: a team's rows, and the one host-wide
read the browser makes at start."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.db.engine import Database
from server.host.browser.partitions import new_profile_id
from server.host.storage.profiles import BrowserProfile, BrowserProfileRepository
from tests.support.databases import ScratchDatabase

repo = BrowserProfileRepository()
TEAM_A, TEAM_B = "a" * 32, "b" * 32
ONE, TWO, THREE = new_profile_id(), new_profile_id(), new_profile_id()


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    async with opened.write() as conn:
        await repo.add_profile(conn, BrowserProfile(ONE, TEAM_A, "Work", 1, 1.0))
        await repo.add_profile(conn, BrowserProfile(TWO, TEAM_A, "Home", 2, 2.0))
        await repo.add_profile(conn, BrowserProfile(THREE, TEAM_B, "Work", 3, 3.0))
    yield opened
    await opened.close()


async def test_a_team_lists_only_its_own_profiles(db: Database) -> None:
    async with db.read() as conn:
        assert [p.id for p in await repo.list_profiles(conn, TEAM_A)] == [ONE, TWO]
        assert await repo.get_profile(conn, TEAM_B, ONE) is None


async def test_the_host_wide_read_names_each_profile_with_its_team(db: Database) -> None:
    async with db.write() as conn:
        await repo.remove_profile(conn, TEAM_A, TWO)
    async with db.read() as conn:
        keys = await repo.list_profile_keys_of_every_team(conn)
    assert keys == {(TEAM_A, ONE), (TEAM_B, THREE)}

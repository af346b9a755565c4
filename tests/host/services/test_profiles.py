"""Browser profiles on both databases: the profile limit and the casefolded unique name
hold when many creates and renames arrive at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from server.common.errors import CrewhostError
from server.db.engine import Database
from server.host.browser.partitions import Partition
from server.host.services.profiles import MAX_PROFILES, BrowserProfileService
from tests.support.clock import FakeClock

TEAM = "a" * 32
CASES = ("Shop", "SHOP", "shop", "sHop", "shOp", "ShoP", "SHop", "shOP")


class QuietPartitions:
    """The browser engine's side, with no browser: these tests open no tab."""

    async def close_partition(self, team_id: str, partition: Partition) -> None:
        pass

    async def clear_partition(self, team_id: str, partition: Partition) -> None:
        pass

    async def close_agent_tabs(self, team_id: str, agent_id: str) -> None:
        pass

    def profile_added(self, team_id: str, profile_id: str) -> None:
        pass

    def profile_removed(self, team_id: str, profile_id: str) -> None:
        pass


@pytest.fixture
def profiles(db: Database) -> BrowserProfileService:
    return BrowserProfileService(db, FakeClock(), QuietPartitions(), lambda _team, _event: None)


def codes(results: Sequence[object]) -> list[str]:
    return [r.code for r in results if isinstance(r, CrewhostError)]


async def test_creates_at_once_stop_at_the_limit(profiles: BrowserProfileService) -> None:
    for i in range(MAX_PROFILES - 20):
        await profiles.create_profile(TEAM, f"before {i}")
    results = await asyncio.gather(
        *(profiles.create_profile(TEAM, f"at once {i}") for i in range(40)),
        return_exceptions=True,
    )
    assert codes(results) == ["browserProfileLimit"] * 20
    assert len(await profiles.list_profiles(TEAM)) == MAX_PROFILES


async def test_names_differing_only_in_case_created_at_once_make_one_profile(
    profiles: BrowserProfileService,
) -> None:
    results = await asyncio.gather(
        *(profiles.create_profile(TEAM, name) for name in CASES), return_exceptions=True
    )
    assert codes(results) == ["browserProfileNameTaken"] * (len(CASES) - 1)
    assert [p.name.casefold() for p in await profiles.list_profiles(TEAM)] == ["shop"]


async def test_renames_at_once_to_names_differing_only_in_case_rename_one(
    profiles: BrowserProfileService,
) -> None:
    ids = [(await profiles.create_profile(TEAM, f"profile {i}")).id for i in range(len(CASES))]
    results = await asyncio.gather(
        *(
            profiles.update_profile(TEAM, profile_id, name=name, hue=None)
            for profile_id, name in zip(ids, CASES, strict=True)
        ),
        return_exceptions=True,
    )
    assert codes(results) == ["browserProfileNameTaken"] * (len(CASES) - 1)
    names = [p.name.casefold() for p in await profiles.list_profiles(TEAM)]
    assert names.count("shop") == 1

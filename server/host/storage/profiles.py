"""Browser profiles: the named persistent partitions of a team."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import browser_profiles


@dataclass(frozen=True, slots=True)
class BrowserProfile:
    id: str
    team_id: str
    name: str
    hue: int
    created_at: float


_PROFILE = (
    browser_profiles.c.id,
    browser_profiles.c.team_id,
    browser_profiles.c.name,
    browser_profiles.c.hue,
    browser_profiles.c.created_at,
)


class BrowserProfileRepository:
    """Reads and writes of ``browser_profiles``."""

    async def list_profiles(self, conn: AsyncConnection, team_id: str) -> list[BrowserProfile]:
        result = await conn.execute(
            sa.select(*_PROFILE)
            .where(browser_profiles.c.team_id == team_id)
            .order_by(browser_profiles.c.created_at, browser_profiles.c.id)
        )
        return [BrowserProfile(**row._mapping) for row in result]

    async def list_profile_keys_of_every_team(self, conn: AsyncConnection) -> set[tuple[str, str]]:
        """Every team's (team id, profile id) pairs: host-wide, not per team, because the
        browser restores the saved tabs of all teams at start and must know which named
        profiles still exist for each."""
        result = await conn.execute(sa.select(browser_profiles.c.team_id, browser_profiles.c.id))
        return {(row.team_id, row.id) for row in result}

    async def get_profile(
        self, conn: AsyncConnection, team_id: str, profile_id: str
    ) -> BrowserProfile | None:
        result = await conn.execute(
            sa.select(*_PROFILE).where(
                browser_profiles.c.team_id == team_id, browser_profiles.c.id == profile_id
            )
        )
        row = result.first()
        return None if row is None else BrowserProfile(**row._mapping)

    async def add_profile(self, conn: AsyncConnection, profile: BrowserProfile) -> None:
        await conn.execute(
            browser_profiles.insert().values(
                id=profile.id,
                team_id=profile.team_id,
                name=profile.name,
                hue=profile.hue,
                created_at=profile.created_at,
            )
        )

    async def update_profile(
        self, conn: AsyncConnection, team_id: str, profile_id: str, *, name: str, hue: int
    ) -> None:
        await conn.execute(
            browser_profiles.update()
            .where(browser_profiles.c.team_id == team_id, browser_profiles.c.id == profile_id)
            .values(name=name, hue=hue)
        )

    async def remove_profile(self, conn: AsyncConnection, team_id: str, profile_id: str) -> None:
        await conn.execute(
            browser_profiles.delete().where(
                browser_profiles.c.team_id == team_id, browser_profiles.c.id == profile_id
            )
        )

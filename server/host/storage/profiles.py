"""Browser profiles and the agent fields that choose one."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import agents, browser_profiles


@dataclass(frozen=True, slots=True)
class BrowserProfile:
    id: str
    team_id: str
    name: str
    hue: int
    created_at: float


@dataclass(frozen=True, slots=True)
class AgentBrowserChoice:
    """The agent fields that pick the partition its new tabs open in."""

    id: str
    team_id: str
    name: str
    own_browser_session: bool
    browser_profile_id: str | None


_PROFILE = (
    browser_profiles.c.id,
    browser_profiles.c.team_id,
    browser_profiles.c.name,
    browser_profiles.c.hue,
    browser_profiles.c.created_at,
)
_AGENT = (
    agents.c.id,
    agents.c.team_id,
    agents.c.name,
    agents.c.own_browser_session,
    agents.c.browser_profile_id,
)


class BrowserProfileRepository:
    """Reads and writes of ``browser_profiles`` and the profile fields of ``agents``."""

    async def list_profiles(self, conn: AsyncConnection, team_id: str) -> list[BrowserProfile]:
        result = await conn.execute(
            sa.select(*_PROFILE)
            .where(browser_profiles.c.team_id == team_id)
            .order_by(browser_profiles.c.created_at, browser_profiles.c.id)
        )
        return [BrowserProfile(**row._mapping) for row in result]

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

    async def get_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> AgentBrowserChoice | None:
        result = await conn.execute(
            sa.select(*_AGENT).where(agents.c.team_id == team_id, agents.c.id == agent_id)
        )
        row = result.first()
        return None if row is None else AgentBrowserChoice(**row._mapping)

    async def add_agent(
        self, conn: AsyncConnection, agent: AgentBrowserChoice, created_at: float
    ) -> None:
        await conn.execute(
            agents.insert().values(
                id=agent.id,
                team_id=agent.team_id,
                name=agent.name,
                own_browser_session=agent.own_browser_session,
                browser_profile_id=agent.browser_profile_id,
                created_at=created_at,
            )
        )

    async def list_agents_of_profile(
        self, conn: AsyncConnection, team_id: str, profile_id: str
    ) -> list[str]:
        result = await conn.execute(
            sa.select(agents.c.id).where(
                agents.c.team_id == team_id, agents.c.browser_profile_id == profile_id
            )
        )
        return list(result.scalars())

    async def update_agent_profile(
        self,
        conn: AsyncConnection,
        team_id: str,
        agent_id: str,
        *,
        own_browser_session: bool,
        browser_profile_id: str | None,
    ) -> None:
        await conn.execute(
            agents.update()
            .where(agents.c.team_id == team_id, agents.c.id == agent_id)
            .values(own_browser_session=own_browser_session, browser_profile_id=browser_profile_id)
        )

    async def move_profile_agents_to_shared(
        self, conn: AsyncConnection, team_id: str, profile_id: str
    ) -> None:
        await conn.execute(
            agents.update()
            .where(agents.c.team_id == team_id, agents.c.browser_profile_id == profile_id)
            .values(own_browser_session=False, browser_profile_id=None)
        )

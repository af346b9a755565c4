"""Agents: for now the fields that choose where an agent's tabs open."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import agents


@dataclass(frozen=True, slots=True)
class AgentBrowserChoice:
    """The agent fields that pick the partition its new tabs open in."""

    id: str
    team_id: str
    name: str
    own_browser_session: bool
    browser_profile_id: str | None


_AGENT = (
    agents.c.id,
    agents.c.team_id,
    agents.c.name,
    agents.c.own_browser_session,
    agents.c.browser_profile_id,
)


class AgentRepository:
    """Reads and writes of ``agents``, always within one team."""

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

    async def update_agents_of_profile_to_shared(
        self, conn: AsyncConnection, team_id: str, profile_id: str
    ) -> None:
        await conn.execute(
            agents.update()
            .where(agents.c.team_id == team_id, agents.c.browser_profile_id == profile_id)
            .values(own_browser_session=False, browser_profile_id=None)
        )

"""Agents: their settings (instructions, provider, model, permissions) and where tabs open."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent of a team. ``permissions`` maps a gated tool family to ``ask`` or
    ``auto-approve``; ``model`` and ``max_tool_calls`` None mean the defaults; ``may_ask``
    holds the ids of the team's agents it may hand a task to (``ask_agent``)."""

    id: str
    team_id: str
    name: str
    instructions: str
    provider: str
    model: str | None
    permissions: dict[str, str]
    max_tool_calls: int | None
    own_browser_session: bool
    browser_profile_id: str | None
    created_at: float
    updated_at: float | None
    may_ask: tuple[str, ...] = ()

    @property
    def browser_choice(self) -> AgentBrowserChoice:
        return AgentBrowserChoice(
            self.id, self.team_id, self.name, self.own_browser_session, self.browser_profile_id
        )


_FULL = (
    agents.c.id,
    agents.c.team_id,
    agents.c.name,
    agents.c.instructions,
    agents.c.provider,
    agents.c.model,
    agents.c.permissions,
    agents.c.max_tool_calls,
    agents.c.own_browser_session,
    agents.c.browser_profile_id,
    agents.c.created_at,
    agents.c.updated_at,
    agents.c.may_ask,
)


def _agent(row: Any) -> Agent:
    values = dict(row._mapping)
    values["permissions"] = json.loads(values["permissions"] or "{}")
    values["may_ask"] = tuple(values["may_ask"] or ())
    return Agent(**values)


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

    async def get_full_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> Agent | None:
        result = await conn.execute(
            sa.select(*_FULL).where(agents.c.team_id == team_id, agents.c.id == agent_id)
        )
        row = result.first()
        return None if row is None else _agent(row)

    async def list_agents(self, conn: AsyncConnection, team_id: str) -> list[Agent]:
        result = await conn.execute(
            sa.select(*_FULL)
            .where(agents.c.team_id == team_id)
            .order_by(agents.c.created_at, agents.c.id)
        )
        return [_agent(row) for row in result]

    async def count_agents(self, conn: AsyncConnection, team_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count()).select_from(agents).where(agents.c.team_id == team_id)
        )
        return int(result.scalar_one())

    async def add_full_agent(self, conn: AsyncConnection, agent: Agent) -> None:
        await conn.execute(agents.insert().values(**_row(agent)))

    async def update_agent(self, conn: AsyncConnection, agent: Agent) -> None:
        values = _row(agent)
        del values["id"], values["team_id"], values["created_at"]
        await conn.execute(
            agents.update()
            .where(agents.c.team_id == agent.team_id, agents.c.id == agent.id)
            .values(**values)
        )

    async def remove_agent(self, conn: AsyncConnection, team_id: str, agent_id: str) -> None:
        await conn.execute(
            agents.delete().where(agents.c.team_id == team_id, agents.c.id == agent_id)
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

    async def names_of_agents_using_provider(
        self, conn: AsyncConnection, team_id: str, provider_id: str
    ) -> list[str]:
        result = await conn.execute(
            sa.select(agents.c.name)
            .where(agents.c.team_id == team_id, agents.c.provider == provider_id)
            .order_by(agents.c.name)
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


def _row(agent: Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "team_id": agent.team_id,
        "name": agent.name,
        "instructions": agent.instructions,
        "provider": agent.provider,
        "model": agent.model,
        "permissions": json.dumps(agent.permissions, sort_keys=True),
        "max_tool_calls": agent.max_tool_calls,
        "own_browser_session": agent.own_browser_session,
        "browser_profile_id": agent.browser_profile_id,
        "created_at": agent.created_at,
        "updated_at": agent.updated_at,
        "may_ask": list(agent.may_ask) or None,
    }

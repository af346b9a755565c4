"""Agents' memories: what an agent chose to keep, optionally tied to a site."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import agent_memories


@dataclass(frozen=True, slots=True)
class AgentMemory:
    id: str
    team_id: str
    agent_id: str
    site: str | None
    text: str
    created_at: float


_MEMORY = (
    agent_memories.c.id,
    agent_memories.c.team_id,
    agent_memories.c.agent_id,
    agent_memories.c.site,
    agent_memories.c.text,
    agent_memories.c.created_at,
)
# Newest first; the id breaks ties between memories written in the same instant.
_NEWEST_FIRST = (agent_memories.c.created_at.desc(), agent_memories.c.id.desc())


class AgentMemoryRepository:
    """Reads and writes of ``agent_memories``; every query names the team."""

    async def add_memory(self, conn: AsyncConnection, memory: AgentMemory) -> None:
        await conn.execute(
            agent_memories.insert().values(
                id=memory.id,
                team_id=memory.team_id,
                agent_id=memory.agent_id,
                site=memory.site,
                text=memory.text,
                created_at=memory.created_at,
            )
        )

    async def list_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[AgentMemory]:
        """All of the agent's memories, newest first."""
        result = await conn.execute(
            sa.select(*_MEMORY)
            .where(agent_memories.c.team_id == team_id, agent_memories.c.agent_id == agent_id)
            .order_by(*_NEWEST_FIRST)
        )
        return [AgentMemory(**row._mapping) for row in result]

    async def list_site_memories(
        self,
        conn: AsyncConnection,
        team_id: str,
        agent_id: str,
        sites: Sequence[str],
        *,
        limit: int,
    ) -> list[AgentMemory]:
        """The agent's memories tied to any of ``sites``, newest first, at most ``limit``."""
        if not sites:
            return []
        result = await conn.execute(
            sa.select(*_MEMORY)
            .where(
                agent_memories.c.team_id == team_id,
                agent_memories.c.agent_id == agent_id,
                agent_memories.c.site.in_(list(sites)),
            )
            .order_by(*_NEWEST_FIRST)
            .limit(limit)
        )
        return [AgentMemory(**row._mapping) for row in result]

    async def count_memories(self, conn: AsyncConnection, team_id: str, agent_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count())
            .select_from(agent_memories)
            .where(agent_memories.c.team_id == team_id, agent_memories.c.agent_id == agent_id)
        )
        return int(result.scalar_one())

    async def update_memory(
        self, conn: AsyncConnection, team_id: str, memory_id: str, *, text: str, site: str | None
    ) -> bool:
        """Rewrites one memory of the team; False when the team has no such memory."""
        result = await conn.execute(
            agent_memories.update()
            .where(agent_memories.c.team_id == team_id, agent_memories.c.id == memory_id)
            .values(text=text, site=site)
        )
        return bool(result.rowcount)

    async def remove_memory(self, conn: AsyncConnection, team_id: str, memory_id: str) -> bool:
        """Deletes one memory of the team; False when the team has no such memory."""
        result = await conn.execute(
            agent_memories.delete().where(
                agent_memories.c.team_id == team_id, agent_memories.c.id == memory_id
            )
        )
        return bool(result.rowcount)

    async def remove_agent_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> None:
        """Deletes every memory of an agent (the agent was deleted)."""
        await conn.execute(
            agent_memories.delete().where(
                agent_memories.c.team_id == team_id, agent_memories.c.agent_id == agent_id
            )
        )

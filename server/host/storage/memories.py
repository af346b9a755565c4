"""Agents' memories: what an agent chose to keep, optionally tied to a site, kept for the
team or for one member, with where it came from and how often it was used."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import agent_memories

# Where a memory came from.
SOURCE_REMEMBER = "remember"
SOURCE_REVIEW = "review"
SOURCE_PERSON = "person"


@dataclass(frozen=True, slots=True)
class AgentMemory:
    id: str
    team_id: str
    agent_id: str
    site: str | None
    text: str
    created_at: float
    # The member whose private thread it came from: only their turns carry it. None: the team's.
    member_id: str | None = None
    pinned: bool = False
    uses: int = 0
    active_at: float | None = None
    updated_at: float | None = None
    updated_by: str | None = None
    source: str = SOURCE_REMEMBER
    source_threads: tuple[str, ...] = field(default_factory=tuple)
    source_turn_id: str | None = None


@dataclass(frozen=True, slots=True)
class PromptMemory:
    """What a turn's memory block needs of a memory: little, as it reads all of them."""

    id: str
    text: str
    pinned: bool


# A memory as ``list_prompt_rows`` reads it: id, text, pinned, active_at, uses, member_id.
PromptRowValues = tuple[str, str, bool, float | None, int, str | None]


@dataclass(frozen=True, slots=True)
class PromptCandidate:
    """A memory a turn may carry, by its size: a turn weighs them all and reads the text
    only of those that fit."""

    id: str
    chars: int
    pinned: bool


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """Which of an agent's memories to list: a page of them, newest first."""

    site: str | None = None
    # Only memories without a site (``site`` is then ignored).
    no_site: bool = False
    text: str | None = None
    # Only these members' memories and the team's; None: every memory.
    visible_to: str | None = None
    offset: int = 0
    limit: int = 50


_MEMORY = (
    agent_memories.c.id,
    agent_memories.c.team_id,
    agent_memories.c.agent_id,
    agent_memories.c.site,
    agent_memories.c.text,
    agent_memories.c.created_at,
    agent_memories.c.member_id,
    agent_memories.c.pinned,
    agent_memories.c.uses,
    agent_memories.c.active_at,
    agent_memories.c.updated_at,
    agent_memories.c.updated_by,
    agent_memories.c.source,
    agent_memories.c.source_threads,
    agent_memories.c.source_turn_id,
)
# Newest first; the id breaks ties between memories written in the same instant.
_NEWEST_FIRST = (agent_memories.c.created_at.desc(), agent_memories.c.id.desc())
# What a turn carries first: essential ones, then the last made or used, then the most used.
_PROMPT_ORDER = (
    agent_memories.c.pinned.desc(),
    agent_memories.c.active_at.desc(),
    agent_memories.c.uses.desc(),
    agent_memories.c.id.desc(),
)


def _memory(row: Any) -> AgentMemory:
    values = dict(row._mapping)
    values["pinned"] = bool(values["pinned"])
    values["source_threads"] = tuple(json.loads(values["source_threads"] or "[]"))
    return AgentMemory(**values)


def _of_agent(team_id: str, agent_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (agent_memories.c.team_id == team_id, agent_memories.c.agent_id == agent_id)


def _seen_by(member_id: str | None) -> sa.ColumnElement[bool]:
    """The team's memories, and ``member_id``'s own (none when it is None)."""
    if member_id is None:
        return agent_memories.c.member_id.is_(None)
    return sa.or_(agent_memories.c.member_id.is_(None), agent_memories.c.member_id == member_id)


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
                member_id=memory.member_id,
                pinned=memory.pinned,
                uses=memory.uses,
                active_at=memory.active_at if memory.active_at is not None else memory.created_at,
                updated_at=memory.updated_at,
                updated_by=memory.updated_by,
                source=memory.source,
                source_threads=json.dumps(list(memory.source_threads)),
                source_turn_id=memory.source_turn_id,
            )
        )

    async def get_memory(
        self, conn: AsyncConnection, team_id: str, agent_id: str, memory_id: str
    ) -> AgentMemory | None:
        result = await conn.execute(
            sa.select(*_MEMORY).where(
                *_of_agent(team_id, agent_id), agent_memories.c.id == memory_id
            )
        )
        row = result.first()
        return _memory(row) if row is not None else None

    async def list_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str, *, member_id: str | None = None
    ) -> list[AgentMemory]:
        """The agent's memories, newest first: all of them, or (``member_id`` given) the
        team's and that member's."""
        query = sa.select(*_MEMORY).where(*_of_agent(team_id, agent_id))
        if member_id is not None:
            query = query.where(_seen_by(member_id))
        result = await conn.execute(query.order_by(*_NEWEST_FIRST))
        return [_memory(row) for row in result]

    async def list_scope_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str, member_id: str | None
    ) -> list[AgentMemory]:
        """The team's memories of the agent and (``member_id`` given) that member's, newest
        first: what a turn or a review in that scope may read."""
        result = await conn.execute(
            sa.select(*_MEMORY)
            .where(*_of_agent(team_id, agent_id), _seen_by(member_id))
            .order_by(*_NEWEST_FIRST)
        )
        return [_memory(row) for row in result]

    async def find_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str, query: MemoryQuery
    ) -> tuple[list[AgentMemory], int]:
        """One page of the agent's memories that match ``query``, and how many match."""
        where: list[sa.ColumnElement[bool]] = list(_of_agent(team_id, agent_id))
        if query.no_site:
            where.append(agent_memories.c.site.is_(None))
        elif query.site is not None:
            where.append(agent_memories.c.site == query.site)
        if query.text:
            escaped = query.text.lower().replace("\\", "\\\\").replace("%", "\\%")
            escaped = escaped.replace("_", "\\_")
            where.append(sa.func.lower(agent_memories.c.text).like(f"%{escaped}%", escape="\\"))
        if query.visible_to is not None:
            where.append(_seen_by(query.visible_to))
        total = await conn.execute(
            sa.select(sa.func.count()).select_from(agent_memories).where(*where)
        )
        result = await conn.execute(
            sa.select(*_MEMORY)
            .where(*where)
            .order_by(agent_memories.c.pinned.desc(), *_NEWEST_FIRST)
            .offset(query.offset)
            .limit(query.limit)
        )
        return [_memory(row) for row in result], int(total.scalar_one())

    async def list_prompt_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str, member_id: str | None
    ) -> list[PromptMemory]:
        """The agent's memories without a site that a turn for ``member_id`` may carry,
        in the order a turn takes them."""
        result = await conn.execute(
            sa.select(agent_memories.c.id, agent_memories.c.text, agent_memories.c.pinned)
            .where(
                *_of_agent(team_id, agent_id),
                agent_memories.c.site.is_(None),
                _seen_by(member_id),
            )
            .order_by(*_PROMPT_ORDER)
        )
        return [PromptMemory(row.id, row.text, bool(row.pinned)) for row in result]

    async def list_prompt_rows(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[PromptRowValues]:
        """Every memory without a site of the agent, the team's and each member's, in the
        order a turn takes them: id, text, essential, last active, uses and member."""
        result = await conn.execute(
            sa.select(
                agent_memories.c.id,
                agent_memories.c.text,
                agent_memories.c.pinned,
                agent_memories.c.active_at,
                agent_memories.c.uses,
                agent_memories.c.member_id,
            )
            .where(*_of_agent(team_id, agent_id), agent_memories.c.site.is_(None))
            .order_by(*_PROMPT_ORDER)
        )
        # All at once and by position: a turn's first read takes up to 1,000 of them.
        return cast("list[PromptRowValues]", result.all())

    async def list_site_memories(
        self,
        conn: AsyncConnection,
        team_id: str,
        agent_id: str,
        sites: Sequence[str],
        *,
        limit: int,
        member_id: str | None = None,
    ) -> list[AgentMemory]:
        """The agent's memories tied to any of ``sites`` that a turn for ``member_id`` may
        see, essential ones first, then newest, at most ``limit``."""
        if not sites:
            return []
        result = await conn.execute(
            sa.select(*_MEMORY)
            .where(
                *_of_agent(team_id, agent_id),
                agent_memories.c.site.in_(list(sites)),
                _seen_by(member_id),
            )
            .order_by(agent_memories.c.pinned.desc(), *_NEWEST_FIRST)
            .limit(limit)
        )
        return [_memory(row) for row in result]

    async def count_memories(self, conn: AsyncConnection, team_id: str, agent_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count())
            .select_from(agent_memories)
            .where(*_of_agent(team_id, agent_id))
        )
        return int(result.scalar_one())

    async def update_memory(
        self,
        conn: AsyncConnection,
        team_id: str,
        memory_id: str,
        *,
        text: str,
        site: str | None,
        now: float | None = None,
        by: str | None = None,
    ) -> bool:
        """Rewrites one memory of the team; False when the team has no such memory."""
        values: dict[str, Any] = {"text": text, "site": site}
        if now is not None:
            values.update(updated_at=now, active_at=now, updated_by=by)
        result = await conn.execute(
            agent_memories.update()
            .where(agent_memories.c.team_id == team_id, agent_memories.c.id == memory_id)
            .values(**values)
        )
        return bool(result.rowcount)

    async def set_pinned(
        self, conn: AsyncConnection, team_id: str, memory_id: str, pinned: bool, now: float, by: str
    ) -> bool:
        result = await conn.execute(
            agent_memories.update()
            .where(agent_memories.c.team_id == team_id, agent_memories.c.id == memory_id)
            .values(pinned=pinned, updated_at=now, updated_by=by)
        )
        return bool(result.rowcount)

    async def add_uses(
        self, conn: AsyncConnection, team_id: str, memory_ids: Sequence[str], now: float
    ) -> None:
        """The memories were in a turn or a snapshot: one more use each, active now."""
        if memory_ids:
            await conn.execute(
                agent_memories.update()
                .where(
                    agent_memories.c.team_id == team_id,
                    agent_memories.c.id.in_(list(memory_ids)),
                )
                .values(uses=agent_memories.c.uses + 1, active_at=now)
            )

    async def remove_memory(self, conn: AsyncConnection, team_id: str, memory_id: str) -> bool:
        """Deletes one memory of the team; False when the team has no such memory."""
        result = await conn.execute(
            agent_memories.delete().where(
                agent_memories.c.team_id == team_id, agent_memories.c.id == memory_id
            )
        )
        return bool(result.rowcount)

    async def remove_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str, memory_ids: Sequence[str]
    ) -> int:
        """Deletes the agent's memories among ``memory_ids``; how many went."""
        if not memory_ids:
            return 0
        result = await conn.execute(
            agent_memories.delete().where(
                *_of_agent(team_id, agent_id), agent_memories.c.id.in_(list(memory_ids))
            )
        )
        return int(result.rowcount)

    async def remove_agent_memories(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> int:
        """Deletes every memory of an agent; how many went."""
        result = await conn.execute(agent_memories.delete().where(*_of_agent(team_id, agent_id)))
        return int(result.rowcount)

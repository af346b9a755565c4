"""Browsing steps recorded for agents, and each team's choice to record them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import browsing_memory_settings, browsing_steps


@dataclass(frozen=True, slots=True)
class BrowsingStep:
    id: str
    team_id: str
    agent_id: str
    line: str
    created_at: float
    # The member whose private thread's tab it was taken in; None: the team's.
    member_id: str | None = None


_STEP = (
    browsing_steps.c.id,
    browsing_steps.c.team_id,
    browsing_steps.c.agent_id,
    browsing_steps.c.line,
    browsing_steps.c.created_at,
    browsing_steps.c.member_id,
)


class BrowsingStepRepository:
    """Reads and writes of ``browsing_steps`` and ``browsing_memory_settings``; every query
    names the team."""

    async def get_enabled(self, conn: AsyncConnection, team_id: str) -> bool:
        result = await conn.execute(
            sa.select(browsing_memory_settings.c.enabled).where(
                browsing_memory_settings.c.team_id == team_id
            )
        )
        return bool(result.scalar_one_or_none())

    async def set_enabled(
        self, conn: AsyncConnection, team_id: str, enabled: bool, now: float
    ) -> None:
        table = browsing_memory_settings
        changed = await conn.execute(
            table.update().where(table.c.team_id == team_id).values(enabled=enabled, updated_at=now)
        )
        if not changed.rowcount:
            await conn.execute(
                table.insert().values(team_id=team_id, enabled=enabled, updated_at=now)
            )

    async def add_step(self, conn: AsyncConnection, step: BrowsingStep, *, keep: int) -> None:
        """Adds ``step`` and forgets the agent's older steps beyond the newest ``keep``."""
        await conn.execute(
            browsing_steps.insert().values(
                id=step.id,
                team_id=step.team_id,
                agent_id=step.agent_id,
                line=step.line,
                created_at=step.created_at,
                member_id=step.member_id,
            )
        )
        of_agent = (
            browsing_steps.c.team_id == step.team_id,
            browsing_steps.c.agent_id == step.agent_id,
        )
        kept = (
            sa.select(browsing_steps.c.id)
            .where(*of_agent)
            .order_by(browsing_steps.c.created_at.desc(), browsing_steps.c.id.desc())
            .limit(keep)
        )
        await conn.execute(
            browsing_steps.delete().where(
                *of_agent, browsing_steps.c.id.not_in(kept.scalar_subquery())
            )
        )

    async def list_steps(
        self, conn: AsyncConnection, team_id: str, agent_id: str, *, since: float
    ) -> list[BrowsingStep]:
        """The agent's steps recorded after ``since``, oldest first."""
        result = await conn.execute(
            sa.select(*_STEP)
            .where(
                browsing_steps.c.team_id == team_id,
                browsing_steps.c.agent_id == agent_id,
                browsing_steps.c.created_at > since,
            )
            .order_by(browsing_steps.c.created_at, browsing_steps.c.id)
        )
        return [BrowsingStep(**row._mapping) for row in result]

    async def remove_steps(
        self, conn: AsyncConnection, team_id: str, agent_id: str, ids: Sequence[str]
    ) -> None:
        if ids:
            await conn.execute(
                browsing_steps.delete().where(
                    browsing_steps.c.team_id == team_id,
                    browsing_steps.c.agent_id == agent_id,
                    browsing_steps.c.id.in_(list(ids)),
                )
            )

    async def remove_steps_before(
        self, conn: AsyncConnection, team_id: str, agent_id: str, before: float
    ) -> None:
        """Forgets the agent's steps recorded at or before ``before`` (expired)."""
        await conn.execute(
            browsing_steps.delete().where(
                browsing_steps.c.team_id == team_id,
                browsing_steps.c.agent_id == agent_id,
                browsing_steps.c.created_at <= before,
            )
        )

    async def remove_agent_steps(self, conn: AsyncConnection, team_id: str, agent_id: str) -> None:
        await conn.execute(
            browsing_steps.delete().where(
                browsing_steps.c.team_id == team_id, browsing_steps.c.agent_id == agent_id
            )
        )

    async def remove_member_steps(
        self, conn: AsyncConnection, team_id: str, member_id: str
    ) -> None:
        """Forgets the steps taken in one member's private threads' tabs (they left)."""
        await conn.execute(
            browsing_steps.delete().where(
                browsing_steps.c.team_id == team_id, browsing_steps.c.member_id == member_id
            )
        )

    async def remove_team_steps(self, conn: AsyncConnection, team_id: str) -> None:
        await conn.execute(browsing_steps.delete().where(browsing_steps.c.team_id == team_id))

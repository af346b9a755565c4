"""A team's web search settings: the row of ``web_search_settings``, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import web_search_settings

table = web_search_settings


@dataclass(frozen=True, slots=True)
class WebSearchRow:
    """One team's choice. ``api_key`` is secret-box output; None means no key."""

    team_id: str
    engine: str
    base_url: str | None
    engine_id: str | None
    api_key: bytes | None = field(repr=False)
    updated_at: float


class WebSearchRepository:
    """Reads and writes of ``web_search_settings``; every one names the team."""

    async def get_settings(self, conn: AsyncConnection, team_id: str) -> WebSearchRow | None:
        result = await conn.execute(sa.select(table).where(table.c.team_id == team_id))
        row = result.first()
        return None if row is None else WebSearchRow(**dict(row._mapping))

    async def update_settings(self, conn: AsyncConnection, row: WebSearchRow) -> None:
        """Write ``row`` as the team's settings, replacing any before."""
        await self.remove_settings(conn, row.team_id)
        await conn.execute(
            table.insert().values(
                team_id=row.team_id,
                engine=row.engine,
                base_url=row.base_url,
                engine_id=row.engine_id,
                api_key=row.api_key,
                updated_at=row.updated_at,
            )
        )

    async def remove_settings(self, conn: AsyncConnection, team_id: str) -> None:
        await conn.execute(table.delete().where(table.c.team_id == team_id))

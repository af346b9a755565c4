"""A routine's webhook triggers (``routine_hooks``) and the deliveries the host took."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import routine_hook_deliveries, routine_hooks

table = routine_hooks


@dataclass(frozen=True, slots=True)
class HookRow:
    """One hook. ``secret`` and ``previous_secret`` are secret-box output; ``filters`` is
    the JSON of ``HookFilters``."""

    id: str
    team_id: str
    routine_id: str
    created_by: str
    secret: bytes = field(repr=False)
    previous_secret: bytes | None = field(repr=False)
    previous_until: float | None
    filters: dict[str, Any]
    enabled: bool
    created_at: float
    rotated_at: float | None


def _row(row: sa.Row[Any] | None) -> HookRow | None:
    return None if row is None else HookRow(**dict(row._mapping))


class RoutineHookRepository:
    """Reads and writes of ``routine_hooks`` and ``routine_hook_deliveries``; every query
    names the team, but the listing of all for the hub's link."""

    async def add_hook(self, conn: AsyncConnection, hook: HookRow) -> None:
        await conn.execute(table.insert().values(**_values(hook)))

    async def get_hook(self, conn: AsyncConnection, team_id: str, hook_id: str) -> HookRow | None:
        result = await conn.execute(
            sa.select(table).where(table.c.team_id == team_id, table.c.id == hook_id)
        )
        return _row(result.first())

    async def list_hooks(
        self, conn: AsyncConnection, team_id: str, routine_id: str | None
    ) -> list[HookRow]:
        query = sa.select(table).where(table.c.team_id == team_id)
        if routine_id is not None:
            query = query.where(table.c.routine_id == routine_id)
        result = await conn.execute(query.order_by(table.c.created_at, table.c.id))
        return [HookRow(**dict(row._mapping)) for row in result]

    async def list_every_hook(self, conn: AsyncConnection) -> list[HookRow]:
        """Every team's hooks: what this host registers with its hub when it links."""
        result = await conn.execute(sa.select(table).order_by(table.c.created_at, table.c.id))
        return [HookRow(**dict(row._mapping)) for row in result]

    async def update_hook(self, conn: AsyncConnection, hook: HookRow) -> None:
        await conn.execute(
            table.update()
            .where(table.c.team_id == hook.team_id, table.c.id == hook.id)
            .values(**_values(hook))
        )

    async def remove_hook(self, conn: AsyncConnection, team_id: str, hook_id: str) -> None:
        await conn.execute(table.delete().where(table.c.team_id == team_id, table.c.id == hook_id))

    async def get_taken(self, conn: AsyncConnection, team_id: str, delivery_id: str) -> bool:
        result = await conn.execute(
            sa.select(routine_hook_deliveries.c.id).where(
                routine_hook_deliveries.c.team_id == team_id,
                routine_hook_deliveries.c.id == delivery_id,
            )
        )
        return result.first() is not None

    async def add_taken(
        self,
        conn: AsyncConnection,
        team_id: str,
        delivery_id: str,
        hook_id: str,
        routine_id: str,
        received_at: float,
        taken_at: float,
    ) -> None:
        await conn.execute(
            routine_hook_deliveries.insert().values(
                id=delivery_id,
                team_id=team_id,
                hook_id=hook_id,
                routine_id=routine_id,
                received_at=received_at,
                taken_at=taken_at,
            )
        )


def _values(hook: HookRow) -> dict[str, Any]:
    return {
        "id": hook.id,
        "team_id": hook.team_id,
        "routine_id": hook.routine_id,
        "created_by": hook.created_by,
        "secret": hook.secret,
        "previous_secret": hook.previous_secret,
        "previous_until": hook.previous_until,
        "filters": hook.filters,
        "enabled": hook.enabled,
        "created_at": hook.created_at,
        "rotated_at": hook.rotated_at,
    }

"""Webhook hooks the hosts registered, and the deliveries the hub accepted for them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database
from server.db.lookups import Lookup
from server.db.tables import hub_hook_deliveries, hub_hooks

PENDING = "pending"
DELIVERED = "delivered"
SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class HubHook:
    """A hook as the hub checks a delivery against it. ``filters`` is its JSON text."""

    id: str
    team_id: str
    host_id: str
    routine_id: str
    secret: str
    previous_secret: str | None
    previous_until: float | None
    filters: str
    enabled: bool
    updated_at: float


@dataclass(frozen=True, slots=True)
class HubDelivery:
    id: str
    team_id: str
    hook_id: str
    host_id: str
    routine_id: str
    webhook_id: str
    body: str
    status: str
    received_at: float


_HOOK_COLUMNS = (
    hub_hooks.c.id,
    hub_hooks.c.team_id,
    hub_hooks.c.host_id,
    hub_hooks.c.routine_id,
    hub_hooks.c.secret,
    hub_hooks.c.previous_secret,
    hub_hooks.c.previous_until,
    hub_hooks.c.filters,
    hub_hooks.c.enabled,
    hub_hooks.c.updated_at,
)
_HOOK_BY_ID = Lookup(sa.select(*_HOOK_COLUMNS).where(hub_hooks.c.id == sa.bindparam("hook_id")))
_DELIVERY_COLUMNS = (
    hub_hook_deliveries.c.id,
    hub_hook_deliveries.c.team_id,
    hub_hook_deliveries.c.hook_id,
    hub_hook_deliveries.c.host_id,
    hub_hook_deliveries.c.routine_id,
    hub_hook_deliveries.c.webhook_id,
    hub_hook_deliveries.c.body,
    hub_hook_deliveries.c.status,
    hub_hook_deliveries.c.received_at,
)


def _insert_ignoring_duplicates(conn: AsyncConnection) -> Any:
    dialect: Any = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(hub_hook_deliveries).on_conflict_do_nothing()


class HubHookRepository:
    """Reads and writes of ``hub_hooks`` and ``hub_hook_deliveries``.

    A hook is found by its id alone (the sender knows nothing else); every other query
    names the host or team the row belongs to."""

    async def lookup_hook(self, db: Database, hook_id: str) -> HubHook | None:
        """The hook, or None (a lookup: on the request path of every delivery)."""
        for row in await db.lookup(_HOOK_BY_ID, hook_id=hook_id):
            return HubHook(*row)
        return None

    async def get_hook(self, conn: AsyncConnection, hook_id: str) -> HubHook | None:
        row = (
            await conn.execute(sa.select(*_HOOK_COLUMNS).where(hub_hooks.c.id == hook_id))
        ).first()
        return None if row is None else HubHook(**row._mapping)

    async def update_hook(self, conn: AsyncConnection, hook: HubHook) -> None:
        """Add the hook, or replace it when the same host and team already hold it."""
        values = {
            "routine_id": hook.routine_id,
            "secret": hook.secret,
            "previous_secret": hook.previous_secret,
            "previous_until": hook.previous_until,
            "filters": hook.filters,
            "enabled": hook.enabled,
            "updated_at": hook.updated_at,
        }
        updated = await conn.execute(
            hub_hooks.update()
            .where(
                hub_hooks.c.id == hook.id,
                hub_hooks.c.team_id == hook.team_id,
                hub_hooks.c.host_id == hook.host_id,
            )
            .values(**values)
        )
        if updated.rowcount == 0:
            await conn.execute(
                hub_hooks.insert().values(
                    id=hook.id, team_id=hook.team_id, host_id=hook.host_id, **values
                )
            )

    async def remove_hook(
        self, conn: AsyncConnection, host_id: str, team_id: str, hook_id: str
    ) -> None:
        await conn.execute(
            hub_hooks.delete().where(
                hub_hooks.c.id == hook_id,
                hub_hooks.c.team_id == team_id,
                hub_hooks.c.host_id == host_id,
            )
        )

    async def remove_hooks_except(
        self, conn: AsyncConnection, host_id: str, keep: Sequence[str]
    ) -> None:
        await conn.execute(
            hub_hooks.delete().where(hub_hooks.c.host_id == host_id, hub_hooks.c.id.not_in(keep))
        )

    async def remove_host_hooks(self, conn: AsyncConnection, team_id: str, host_id: str) -> None:
        """Forget a removed host's hooks and the deliveries still waiting for it."""
        await conn.execute(
            hub_hooks.delete().where(hub_hooks.c.team_id == team_id, hub_hooks.c.host_id == host_id)
        )
        await conn.execute(
            hub_hook_deliveries.delete().where(
                hub_hook_deliveries.c.team_id == team_id,
                hub_hook_deliveries.c.host_id == host_id,
                hub_hook_deliveries.c.status == PENDING,
            )
        )

    async def add_deliveries(
        self, conn: AsyncConnection, deliveries: Sequence[HubDelivery]
    ) -> set[str]:
        """Store deliveries in one statement; the ids of those stored (a delivery whose hook
        already has its webhook id, from before or earlier in the list, is not)."""
        if not deliveries:
            return set()
        # One statement built the same way each time (cached), run for many rows at once.
        statement = _insert_ignoring_duplicates(conn).returning(hub_hook_deliveries.c.id)
        rows = [
            {
                "id": d.id,
                "team_id": d.team_id,
                "hook_id": d.hook_id,
                "host_id": d.host_id,
                "routine_id": d.routine_id,
                "webhook_id": d.webhook_id,
                "body": d.body,
                "status": d.status,
                "received_at": d.received_at,
            }
            for d in deliveries
        ]
        return {row[0] for row in await conn.execute(statement, rows)}

    async def list_pending(
        self, conn: AsyncConnection, host_id: str, limit: int
    ) -> list[HubDelivery]:
        """The host's deliveries it has not acknowledged, oldest first."""
        result = await conn.execute(
            sa.select(*_DELIVERY_COLUMNS)
            .where(
                hub_hook_deliveries.c.host_id == host_id,
                hub_hook_deliveries.c.status == PENDING,
            )
            .order_by(hub_hook_deliveries.c.received_at, hub_hook_deliveries.c.id)
            .limit(limit)
        )
        return [HubDelivery(**row._mapping) for row in result]

    async def get_delivery(
        self, conn: AsyncConnection, host_id: str, delivery_id: str
    ) -> HubDelivery | None:
        row = (
            await conn.execute(
                sa.select(*_DELIVERY_COLUMNS).where(
                    hub_hook_deliveries.c.id == delivery_id,
                    hub_hook_deliveries.c.host_id == host_id,
                )
            )
        ).first()
        return None if row is None else HubDelivery(**row._mapping)

    async def update_delivered(
        self, conn: AsyncConnection, host_id: str, delivery_id: str, now: float
    ) -> None:
        await conn.execute(
            hub_hook_deliveries.update()
            .where(
                hub_hook_deliveries.c.id == delivery_id,
                hub_hook_deliveries.c.host_id == host_id,
                hub_hook_deliveries.c.status == PENDING,
            )
            .values(status=DELIVERED, delivered_at=now, body="")
        )

    async def remove_old_deliveries(self, conn: AsyncConnection, before: float) -> int:
        """Forget what was delivered or skipped before ``before`` (its webhook id with it)."""
        result = await conn.execute(
            hub_hook_deliveries.delete().where(
                hub_hook_deliveries.c.received_at < before,
                hub_hook_deliveries.c.status != PENDING,
            )
        )
        return int(result.rowcount or 0)

"""Team webhooks and their deliveries: the rows of ``team_webhooks`` and
``team_webhook_deliveries``, one team at a time (the sender's claim names the row it took)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import team_webhook_deliveries, team_webhooks

hooks = team_webhooks
deliveries = team_webhook_deliveries


@dataclass(frozen=True, slots=True)
class TeamWebhookRow:
    """One endpoint. ``url_secret`` and ``signing_secret`` are secret-box output."""

    id: str
    team_id: str
    name: str
    url_origin: str
    url_secret: bytes | None = field(repr=False)
    body_format: str
    kinds: tuple[str, ...]
    signing_secret: bytes = field(repr=False)
    previous_signing_secret: bytes | None = field(repr=False)
    previous_secret_until: float | None
    enabled: bool
    created_by: str
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """One event for one endpoint: pending while ``next_attempt_at`` is set."""

    id: str
    team_id: str
    webhook_id: str
    kind: str
    body: str
    status: str
    attempts: int
    max_attempts: int
    next_attempt_at: float | None
    last_status: int | None
    last_error: str | None
    created_at: float
    updated_at: float


def _hook(mapping: Any) -> TeamWebhookRow:
    values = dict(mapping)
    values["kinds"] = tuple(values["kinds"] or ())
    return TeamWebhookRow(**values)


class TeamWebhookRepository:
    """Reads and writes of endpoints and deliveries; every one names the team."""

    async def list_webhooks(self, conn: AsyncConnection, team_id: str) -> list[TeamWebhookRow]:
        result = await conn.execute(
            sa.select(hooks)
            .where(hooks.c.team_id == team_id)
            .order_by(hooks.c.created_at, hooks.c.id)
        )
        return [_hook(row._mapping) for row in result]

    async def get_webhook(
        self, conn: AsyncConnection, team_id: str, webhook_id: str
    ) -> TeamWebhookRow | None:
        result = await conn.execute(
            sa.select(hooks).where(hooks.c.team_id == team_id, hooks.c.id == webhook_id)
        )
        row = result.first()
        return None if row is None else _hook(row._mapping)

    async def add_webhook(self, conn: AsyncConnection, row: TeamWebhookRow) -> None:
        values = {name: getattr(row, name) for name in row.__slots__}
        values["kinds"] = list(row.kinds)
        await conn.execute(hooks.insert().values(**values))

    async def update_webhook(
        self, conn: AsyncConnection, team_id: str, webhook_id: str, **values: Any
    ) -> None:
        """Set the named columns of one endpoint."""
        if "kinds" in values:
            values["kinds"] = list(values["kinds"])
        await conn.execute(
            hooks.update()
            .where(hooks.c.team_id == team_id, hooks.c.id == webhook_id)
            .values(**values)
        )

    async def remove_webhook(self, conn: AsyncConnection, team_id: str, webhook_id: str) -> None:
        """Remove an endpoint and its delivery log."""
        await conn.execute(
            deliveries.delete().where(
                deliveries.c.team_id == team_id, deliveries.c.webhook_id == webhook_id
            )
        )
        await conn.execute(
            hooks.delete().where(hooks.c.team_id == team_id, hooks.c.id == webhook_id)
        )

    async def add_delivery(self, conn: AsyncConnection, row: DeliveryRow) -> None:
        await conn.execute(
            deliveries.insert().values(**{name: getattr(row, name) for name in row.__slots__})
        )

    async def get_delivery(
        self, conn: AsyncConnection, team_id: str, delivery_id: str
    ) -> DeliveryRow | None:
        result = await conn.execute(
            sa.select(deliveries).where(
                deliveries.c.team_id == team_id, deliveries.c.id == delivery_id
            )
        )
        row = result.first()
        return None if row is None else DeliveryRow(**dict(row._mapping))

    async def list_deliveries(
        self, conn: AsyncConnection, team_id: str, webhook_id: str, limit: int
    ) -> list[DeliveryRow]:
        """An endpoint's latest deliveries, newest first."""
        result = await conn.execute(
            sa.select(deliveries)
            .where(deliveries.c.team_id == team_id, deliveries.c.webhook_id == webhook_id)
            .order_by(deliveries.c.created_at.desc(), deliveries.c.id.desc())
            .limit(limit)
        )
        return [DeliveryRow(**dict(row._mapping)) for row in result]

    async def list_due(self, conn: AsyncConnection, now: float, limit: int) -> list[DeliveryRow]:
        """Pending deliveries of every team whose next attempt is due at ``now``."""
        result = await conn.execute(
            sa.select(deliveries)
            .where(deliveries.c.status == "pending", deliveries.c.next_attempt_at <= now)
            .order_by(deliveries.c.next_attempt_at, deliveries.c.id)
            .limit(limit)
        )
        return [DeliveryRow(**dict(row._mapping)) for row in result]

    async def next_due_at(self, conn: AsyncConnection) -> float | None:
        """When the earliest pending delivery is due, or None when none is pending."""
        result = await conn.execute(
            sa.select(sa.func.min(deliveries.c.next_attempt_at)).where(
                deliveries.c.status == "pending"
            )
        )
        value = result.scalar()
        return None if value is None else float(value)

    async def claim_delivery(
        self, conn: AsyncConnection, row: DeliveryRow, lease_until: float
    ) -> bool:
        """Take ``row`` for one attempt: moves its next attempt to ``lease_until`` only if
        nobody moved it since it was read. False: another sender took it."""
        result = await conn.execute(
            deliveries.update()
            .where(
                deliveries.c.team_id == row.team_id,
                deliveries.c.id == row.id,
                deliveries.c.status == "pending",
                deliveries.c.next_attempt_at == row.next_attempt_at,
            )
            .values(next_attempt_at=lease_until)
        )
        return bool(result.rowcount == 1)

    async def remove_finished_deliveries(self, conn: AsyncConnection, before: float) -> int:
        """Remove delivered and failed deliveries of every team last changed before
        ``before``; answers how many."""
        result = await conn.execute(
            deliveries.delete().where(
                deliveries.c.status != "pending", deliveries.c.updated_at < before
            )
        )
        return int(result.rowcount or 0)

    async def update_delivery(
        self, conn: AsyncConnection, team_id: str, delivery_id: str, **values: Any
    ) -> None:
        """Set the named columns of one delivery (an attempt's outcome)."""
        await conn.execute(
            deliveries.update()
            .where(deliveries.c.team_id == team_id, deliveries.c.id == delivery_id)
            .values(**values)
        )

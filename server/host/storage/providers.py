"""Model providers: the rows of ``providers``, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import providers


@dataclass(frozen=True, slots=True)
class ProviderRow:
    """One stored provider. ``api_key`` is secret-box output; None means no key."""

    team_id: str
    id: str
    kind: str
    name: str
    base_url: str | None
    default_model: str | None
    models: tuple[str, ...]
    api_key: bytes | None = field(repr=False)
    last_error: str | None
    created_at: float
    updated_at: float
    # When it last answered with its current key and address; None: not since a change.
    verified_at: float | None = None


def _row(mapping: Any) -> ProviderRow:
    values = dict(mapping)
    values["models"] = tuple(values["models"] or ())
    return ProviderRow(**values)


class ProviderRepository:
    """Reads and writes of ``providers``; every one names the team."""

    async def list_providers(self, conn: AsyncConnection, team_id: str) -> list[ProviderRow]:
        result = await conn.execute(
            sa.select(providers)
            .where(providers.c.team_id == team_id)
            .order_by(providers.c.created_at, providers.c.id)
        )
        return [_row(row._mapping) for row in result]

    async def get_provider(
        self, conn: AsyncConnection, team_id: str, provider_id: str
    ) -> ProviderRow | None:
        result = await conn.execute(
            sa.select(providers).where(
                providers.c.team_id == team_id, providers.c.id == provider_id
            )
        )
        row = result.first()
        return None if row is None else _row(row._mapping)

    async def add_provider(self, conn: AsyncConnection, row: ProviderRow) -> None:
        await conn.execute(
            providers.insert().values(
                team_id=row.team_id,
                id=row.id,
                kind=row.kind,
                name=row.name,
                base_url=row.base_url,
                default_model=row.default_model,
                models=list(row.models),
                api_key=row.api_key,
                last_error=row.last_error,
                verified_at=row.verified_at,
                created_at=row.created_at,
                updated_at=row.updated_at,
            )
        )

    async def update_provider(
        self, conn: AsyncConnection, team_id: str, provider_id: str, **values: Any
    ) -> None:
        """Set the named columns (``base_url``, ``default_model``, ``models``, ``api_key``,
        ``last_error``, ``verified_at``, ``updated_at``) of one provider."""
        if "models" in values:
            values["models"] = list(values["models"])
        await conn.execute(
            providers.update()
            .where(providers.c.team_id == team_id, providers.c.id == provider_id)
            .values(**values)
        )

    async def remove_provider(self, conn: AsyncConnection, team_id: str, provider_id: str) -> None:
        await conn.execute(
            providers.delete().where(providers.c.team_id == team_id, providers.c.id == provider_id)
        )

"""Vault items: the rows of ``vault_items``, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import vault_items


@dataclass(frozen=True, slots=True)
class VaultItemRow:
    """One stored item. The four secret fields are secret-box output; None means not set."""

    team_id: str
    id: str
    kind: str
    name: str
    sites: tuple[str, ...]
    username: str | None
    notes: str | None
    cardholder: str | None
    expiry: str | None
    billing_address: str | None
    card_last4: str | None
    card_brand: str | None
    email: str | None
    phone: str | None
    postal_address: str | None
    password: bytes | None = field(repr=False)
    totp_secret: bytes | None = field(repr=False)
    card_number: bytes | None = field(repr=False)
    security_code: bytes | None = field(repr=False)
    created_at: float
    updated_at: float


_COLUMNS = tuple(f.name for f in fields(VaultItemRow))


def _row(mapping: Any) -> VaultItemRow:
    values = {name: mapping[name] for name in _COLUMNS}
    values["sites"] = tuple(values["sites"] or ())
    for secret in ("password", "totp_secret", "card_number", "security_code"):
        if values[secret] is not None:
            values[secret] = bytes(values[secret])
    return VaultItemRow(**values)


class VaultRepository:
    """Reads and writes of ``vault_items``; every one names the team."""

    async def list_items(
        self, conn: AsyncConnection, team_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[VaultItemRow]:
        """The team's items by name, ``limit`` of them from ``offset`` (all by default)."""
        result = await conn.execute(
            sa.select(vault_items)
            .where(vault_items.c.team_id == team_id)
            .order_by(vault_items.c.name, vault_items.c.id)
            .offset(offset)
            .limit(limit)
        )
        return [_row(row._mapping) for row in result]

    async def count_items(self, conn: AsyncConnection, team_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count())
            .select_from(vault_items)
            .where(vault_items.c.team_id == team_id)
        )
        return int(result.scalar_one())

    async def get_item(
        self, conn: AsyncConnection, team_id: str, item_id: str
    ) -> VaultItemRow | None:
        result = await conn.execute(
            sa.select(vault_items).where(
                vault_items.c.team_id == team_id, vault_items.c.id == item_id
            )
        )
        row = result.first()
        return None if row is None else _row(row._mapping)

    async def add_item(self, conn: AsyncConnection, row: VaultItemRow) -> None:
        values = {name: getattr(row, name) for name in _COLUMNS}
        values["sites"] = list(row.sites)
        await conn.execute(vault_items.insert().values(**values))

    async def update_item(
        self, conn: AsyncConnection, team_id: str, item_id: str, **values: Any
    ) -> None:
        """Set the named columns of one item."""
        if "sites" in values:
            values["sites"] = list(values["sites"])
        await conn.execute(
            vault_items.update()
            .where(vault_items.c.team_id == team_id, vault_items.c.id == item_id)
            .values(**values)
        )

    async def remove_item(self, conn: AsyncConnection, team_id: str, item_id: str) -> bool:
        result = await conn.execute(
            vault_items.delete().where(
                vault_items.c.team_id == team_id, vault_items.c.id == item_id
            )
        )
        return result.rowcount == 1

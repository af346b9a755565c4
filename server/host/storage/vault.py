"""Vault items: the rows of ``vault_items``, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import vault_items


@dataclass(frozen=True, slots=True)
class VaultItemFields:
    """The columns of an item that hold no secret."""

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
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class VaultItemRow(VaultItemFields):
    """One stored item. The four secret fields are secret-box output; None means not set."""

    password: bytes | None = field(repr=False)
    totp_secret: bytes | None = field(repr=False)
    card_number: bytes | None = field(repr=False)
    security_code: bytes | None = field(repr=False)


SECRET_COLUMNS = ("password", "totp_secret", "card_number", "security_code")
_PLAIN = tuple(f.name for f in fields(VaultItemFields))
_COLUMNS = (*_PLAIN, *SECRET_COLUMNS)


@dataclass(frozen=True, slots=True)
class VaultItemMarks(VaultItemFields):
    """An item as a list shows it: every column but the ciphertexts, and the names of the
    secret columns that hold one."""

    secrets_set: tuple[str, ...]

    @classmethod
    def of(cls, row: VaultItemRow) -> VaultItemMarks:
        """The marks of a full row (one just written or read for its secrets)."""
        values = {name: getattr(row, name) for name in _PLAIN}
        marked = tuple(name for name in SECRET_COLUMNS if getattr(row, name) is not None)
        return cls(**values, secrets_set=marked)


def _row(mapping: Any) -> VaultItemRow:
    values = {name: mapping[name] for name in _COLUMNS}
    values["sites"] = tuple(values["sites"] or ())
    for secret in SECRET_COLUMNS:
        if values[secret] is not None:
            values[secret] = bytes(values[secret])
    return VaultItemRow(**values)


class VaultRepository:
    """Reads and writes of ``vault_items``; every one names the team."""

    async def list_marked(
        self, conn: AsyncConnection, team_id: str, *, offset: int = 0, limit: int | None = None
    ) -> tuple[list[VaultItemMarks], int]:
        """A page of the team's items by name without their ciphertexts (a database-side
        mark says which secrets are set), and how many items the team has: one query."""
        team = vault_items.c.team_id == team_id
        total = sa.select(sa.func.count()).select_from(vault_items).where(team).scalar_subquery()
        marks = [vault_items.c[name].is_not(None).label(f"{name}_set") for name in SECRET_COLUMNS]
        result = await conn.execute(
            sa.select(*(vault_items.c[name] for name in _PLAIN), *marks, total.label("total"))
            .where(team)
            .order_by(vault_items.c.name, vault_items.c.id)
            .offset(offset)
            .limit(limit)
        )
        rows = result.all()
        if not rows:
            return [], 0 if offset == 0 else await self.count_items(conn, team_id)
        listed = []
        for row in rows:
            mapping = row._mapping
            values = {name: mapping[name] for name in _PLAIN}
            values["sites"] = tuple(values["sites"] or ())
            marked = tuple(name for name in SECRET_COLUMNS if mapping[f"{name}_set"])
            listed.append(VaultItemMarks(**values, secrets_set=marked))
        return listed, int(rows[0]._mapping["total"])

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

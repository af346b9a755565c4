"""Every ciphertext of one encrypted column, for the start-up check and key rotation.

These walk all teams on purpose (a key ring serves the whole host); a write still
names the row's team, and replaces a ciphertext only if it is still the one read.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.crypto.columns import EncryptedColumn


@dataclass(frozen=True, slots=True)
class StoredCiphertext:
    team_id: str
    row_id: str
    ciphertext: bytes


class CiphertextRepository:
    """Reads and replacements of the ciphertexts of an ``EncryptedColumn``."""

    async def has_ciphertexts(self, conn: AsyncConnection, column: EncryptedColumn) -> bool:
        cell = column.table.c[column.column]
        result = await conn.execute(sa.select(sa.literal(1)).where(cell.is_not(None)).limit(1))
        return result.first() is not None

    async def list_ciphertexts(
        self,
        conn: AsyncConnection,
        column: EncryptedColumn,
        *,
        after: tuple[str, str] | None,
        limit: int,
    ) -> list[StoredCiphertext]:
        """Up to ``limit`` ciphertexts in (team, row) order, starting after ``after``."""
        team = column.table.c[column.team_column]
        row = column.table.c[column.id_column]
        cell = column.table.c[column.column]
        query = sa.select(
            team.label("team_id"), row.label("row_id"), cell.label("ciphertext")
        ).where(cell.is_not(None))
        if after is not None:
            query = query.where(sa.tuple_(team, row) > sa.tuple_(*after))
        result = await conn.execute(query.order_by(team, row).limit(limit))
        return [
            StoredCiphertext(str(row.team_id), str(row.row_id), bytes(row.ciphertext))
            for row in result
        ]

    async def update_ciphertext(
        self,
        conn: AsyncConnection,
        column: EncryptedColumn,
        stored: StoredCiphertext,
        ciphertext: bytes,
    ) -> bool:
        """Replace ``stored`` with ``ciphertext``; False if the row changed meanwhile."""
        table = column.table
        result = await conn.execute(
            table.update()
            .where(
                table.c[column.team_column] == stored.team_id,
                table.c[column.id_column] == stored.row_id,
                table.c[column.column] == stored.ciphertext,
            )
            .values({column.column: ciphertext})
        )
        return result.rowcount == 1

"""One-time setup codes that let the first sign-up become an owner."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import setup_codes


class SetupCodeRepository:
    """Reads and writes of ``setup_codes``."""

    async def add_setup_code(
        self, conn: AsyncConnection, code_id: str, code_hash: str, at: float
    ) -> None:
        await conn.execute(
            setup_codes.insert().values(id=code_id, code_hash=code_hash, created_at=at)
        )

    async def remove_setup_code(self, conn: AsyncConnection, code_hash: str) -> bool:
        """Spend a code; True if it existed (so each code works once)."""
        result = await conn.execute(
            setup_codes.delete().where(setup_codes.c.code_hash == code_hash)
        )
        return bool(result.rowcount)

    async def lock_setup_codes(self, conn: AsyncConnection) -> None:
        """Hold the table until the transaction ends, so hub instances starting together on
        PostgreSQL issue codes one after the other (SQLite writes are one at a time anyway)."""
        if conn.dialect.name == "postgresql":
            await conn.execute(sa.text("LOCK TABLE setup_codes IN SHARE ROW EXCLUSIVE MODE"))

    async def count_setup_codes(self, conn: AsyncConnection) -> int:
        result = await conn.execute(sa.select(sa.func.count()).select_from(setup_codes))
        return int(result.scalar_one())

    async def remove_all_setup_codes(self, conn: AsyncConnection) -> None:
        await conn.execute(setup_codes.delete())

"""One-time setup codes that let the first sign-up become an owner."""

from __future__ import annotations

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

    async def remove_all_setup_codes(self, conn: AsyncConnection) -> None:
        await conn.execute(setup_codes.delete())

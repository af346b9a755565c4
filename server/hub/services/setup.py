"""First start: the one-time setup code that makes the first sign-up an owner."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.tokens import hash_secret, new_id, new_secret
from server.db.engine import Database
from server.hub.storage.accounts import AccountRepository
from server.hub.storage.setup_codes import SetupCodeRepository


@dataclass(frozen=True, slots=True)
class StartCode:
    """What a hub's start says about the first owner's setup code."""

    code: str | None = None
    """A new code, for this hub to print (no other hub can have replaced it)."""
    issued_elsewhere: bool = False
    """No new code: one that no one used yet was issued before (by another hub instance
    starting beside this one, or an earlier start); ``crewhost admin setup-code`` makes
    a new one."""


class SetupService:
    """Issues setup codes while the hub has no account yet."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock
        self._accounts = AccountRepository()
        self._codes = SetupCodeRepository()

    async def needs_setup(self) -> bool:
        async with self._db.read() as conn:
            return await self._accounts.count_accounts(conn) == 0

    async def issue_code(self) -> str | None:
        """A fresh code (older ones stop working) while no account exists; None after."""
        async with self._db.write() as conn:
            await self._codes.lock_setup_codes(conn)
            if await self._accounts.count_accounts(conn) > 0:
                return None
            return await self._replace_codes(conn)

    async def issue_start_code(self) -> StartCode:
        """The code a starting hub prints while no account exists.

        Several hub instances share PostgreSQL and may start together: each would replace
        the others' codes, and every link printed but the last would be dead. There, a
        start issues a code only while none is outstanding, one start at a time, so the
        code a hub prints is the one that works. A hub alone (SQLite) replaces the code of
        its earlier start, as ``issue_code`` does."""
        async with self._db.write() as conn:
            await self._codes.lock_setup_codes(conn)
            if await self._accounts.count_accounts(conn) > 0:
                return StartCode()
            if not self._db.is_sqlite and await self._codes.count_setup_codes(conn) > 0:
                return StartCode(issued_elsewhere=True)
            return StartCode(code=await self._replace_codes(conn))

    async def _replace_codes(self, conn: AsyncConnection) -> str:
        await self._codes.remove_all_setup_codes(conn)
        code = new_secret()
        await self._codes.add_setup_code(conn, new_id(), hash_secret(code), self._clock.now())
        return code

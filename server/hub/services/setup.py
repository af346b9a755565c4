"""First start: the one-time setup code that makes the first sign-up an owner."""

from __future__ import annotations

from server.common.clock import Clock
from server.common.tokens import hash_secret, new_id, new_secret
from server.db.engine import Database
from server.hub.storage.accounts import AccountRepository
from server.hub.storage.setup_codes import SetupCodeRepository


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
            if await self._accounts.count_accounts(conn) > 0:
                return None
            await self._codes.remove_all_setup_codes(conn)
            code = new_secret()
            await self._codes.add_setup_code(conn, new_id(), hash_secret(code), self._clock.now())
        return code

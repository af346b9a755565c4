"""argon2id password hashing, off the event loop."""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher as Argon2Hasher
from argon2 import Type
from argon2.exceptions import InvalidHashError, VerificationError

from server.config import SecuritySettings


class PasswordHasher:
    """Hashes and checks passwords in a worker thread; the hash cost comes from settings."""

    def __init__(self, settings: SecuritySettings) -> None:
        self._argon2 = Argon2Hasher(
            time_cost=settings.password_hash_time_cost,
            memory_cost=settings.password_hash_memory_kib,
            parallelism=settings.password_hash_parallelism,
            type=Type.ID,
        )
        # Checked against when the email is unknown, so both answers take the same time.
        self._decoy = self._argon2.hash("crewhost-decoy-password")

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._argon2.hash, password)

    async def verify(self, password_hash: str | None, password: str) -> bool:
        """True if the password matches; with no hash, spend the same time and answer False."""
        return await asyncio.to_thread(self._verify, password_hash, password)

    def _verify(self, password_hash: str | None, password: str) -> bool:
        try:
            ok = self._argon2.verify(password_hash or self._decoy, password)
        except (VerificationError, InvalidHashError):
            return False
        return ok and password_hash is not None

    def needs_rehash(self, password_hash: str) -> bool:
        return self._argon2.check_needs_rehash(password_hash)

"""argon2id password hashing, off the event loop."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher as Argon2Hasher
from argon2 import Type
from argon2.exceptions import InvalidHashError, VerificationError

from server.config import SecuritySettings


class PasswordHasher:
    """Hashes and checks passwords in worker threads of its own; the cost comes from settings.

    The threads are its own so that a burst of sign-ins queues here instead of
    filling the loop's default executor, which file serving and DNS also use.
    """

    def __init__(self, settings: SecuritySettings) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=os.cpu_count() or 2, thread_name_prefix="argon2"
        )
        self._argon2 = Argon2Hasher(
            time_cost=settings.password_hash_time_cost,
            memory_cost=settings.password_hash_memory_kib,
            parallelism=settings.password_hash_parallelism,
            type=Type.ID,
        )
        # Checked against when the email is unknown, so both answers take the same time.
        self._decoy = self._argon2.hash("crewhost-decoy-password")

    async def hash(self, password: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._argon2.hash, password
        )

    async def verify(self, password_hash: str | None, password: str) -> bool:
        """True if the password matches; with no hash, spend the same time and answer False."""
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._verify, password_hash, password
        )

    def _verify(self, password_hash: str | None, password: str) -> bool:
        try:
            ok = self._argon2.verify(password_hash or self._decoy, password)
        except (VerificationError, InvalidHashError):
            return False
        return ok and password_hash is not None

    def needs_rehash(self, password_hash: str) -> bool:
        return self._argon2.check_needs_rehash(password_hash)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

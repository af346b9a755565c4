"""A small read-through cache whose entries expire with jitter, so they never all expire at once.

Every hub instance drops entries as soon as the bus announces a change, so the
lifetime only bounds staleness if an announcement is lost.

A value read from the database before a change committed must not land in the cache
after that change's ``forget()``: it would outlive the change by the whole lifetime
(a removed member keeping the team, a revoked session still signing in). So a reader
takes a ``stamp()`` before it reads, and ``put()`` keeps the value only if the key was
not forgotten (nor the cache cleared) since that stamp.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from server.common.clock import Clock

K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """Entries by key, each dropped after its lifetime or when forgotten; see the module."""

    def __init__(self, clock: Clock, *, seconds: float, max_entries: int = 100_000) -> None:
        self._clock = clock
        self._seconds = seconds
        self._max = max_entries
        self._entries: dict[K, tuple[V, float]] = {}
        # Generations: each forget() or clear() takes the next one. A key's generation is
        # when it was last forgotten, or when the cache was last cleared if that is later.
        self._generation = 0
        self._forgotten: dict[K, int] = {}
        self._cleared = 0

    def stamp(self) -> int:
        """The current generation: take it before reading what ``put()`` is to keep."""
        return self._generation

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock.now():
            del self._entries[key]
            return None
        return entry[0]

    def put(self, key: K, value: V, stamp: int) -> bool:
        """Keep ``value``, read after ``stamp()`` answered ``stamp``, unless the key was
        forgotten since (then the value may predate the change that forgot it). True if kept."""
        if max(self._forgotten.get(key, 0), self._cleared) > stamp:
            return False
        if len(self._entries) >= self._max:
            self._entries.clear()
        # Between 75% and 100% of the lifetime: entries made together expire apart.
        lifetime = self._seconds * (0.75 + 0.25 * random.random())  # noqa: S311 - not secret
        self._entries[key] = (value, self._clock.now() + lifetime)
        return True

    async def get_or_read(self, key: K, read: Callable[[], Awaitable[V | None]]) -> V | None:
        """The cached value, or what ``read`` answers (kept unless the key was forgotten
        while it read; None is never kept)."""
        value = self.get(key)
        if value is None:
            stamp = self.stamp()
            value = await read()
            if value is not None:
                self.put(key, value, stamp)
        return value

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)
        self._generation += 1
        if len(self._forgotten) >= self._max:
            # Bounded: forgetting every key at once refuses no more than a clear() would.
            self._forgotten.clear()
            self._cleared = self._generation
        else:
            self._forgotten[key] = self._generation

    def clear(self) -> None:
        self._entries.clear()
        self._generation += 1
        self._forgotten.clear()
        self._cleared = self._generation

"""A small read-through cache whose entries expire with jitter, so they never all expire at once.

Every hub instance drops entries as soon as the bus announces a change, so the
lifetime only bounds staleness if an announcement is lost.
"""

from __future__ import annotations

import random
from typing import Generic, TypeVar

from server.common.clock import Clock

K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    def __init__(self, clock: Clock, *, seconds: float, max_entries: int = 100_000) -> None:
        self._clock = clock
        self._seconds = seconds
        self._max = max_entries
        self._entries: dict[K, tuple[V, float]] = {}

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock.now():
            del self._entries[key]
            return None
        return entry[0]

    def put(self, key: K, value: V) -> None:
        if len(self._entries) >= self._max:
            self._entries.clear()
        # Between 75% and 100% of the lifetime: entries made together expire apart.
        lifetime = self._seconds * (0.75 + 0.25 * random.random())  # noqa: S311 - not secret
        self._entries[key] = (value, self._clock.now() + lifetime)

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

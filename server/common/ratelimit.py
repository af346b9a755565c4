"""Token buckets keyed by a string (a client address, an account)."""

from __future__ import annotations

from dataclasses import dataclass

from server.common.clock import Clock


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated_at: float


class TokenBuckets:
    """Each key may spend ``burst`` tokens at once and earns one back every ``refill_seconds``.

    A full bucket is forgotten, so memory follows the number of keys under pressure.
    """

    def __init__(self, clock: Clock, *, burst: int, refill_seconds: float) -> None:
        self._clock = clock
        self._burst = float(burst)
        self._refill = refill_seconds
        self._buckets: dict[str, _Bucket] = {}

    def _bucket(self, key: str) -> _Bucket:
        now = self._clock.now()
        bucket = self._buckets.get(key)
        if bucket is None:
            return _Bucket(self._burst, now)
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated_at) / self._refill)
        bucket.updated_at = now
        return bucket

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may spend a token (0 when it may now)."""
        bucket = self._bucket(key)
        if bucket.tokens >= 1:
            return 0.0
        return (1 - bucket.tokens) * self._refill

    def spend(self, key: str) -> None:
        bucket = self._bucket(key)
        bucket.tokens = max(0.0, bucket.tokens - 1)
        self._buckets[key] = bucket
        if len(self._buckets) > 10_000:
            self._forget_full()

    def _forget_full(self) -> None:
        now = self._clock.now()
        for key in [
            key
            for key, b in self._buckets.items()
            if b.tokens + (now - b.updated_at) / self._refill >= self._burst
        ]:
            del self._buckets[key]

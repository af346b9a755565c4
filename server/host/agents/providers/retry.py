"""When a model request is tried again, and how long to wait first.

The adapters retry by themselves only while nothing has reached the stream's
consumer: before the response starts, and when a stream fails before its first
event. Waits honour the provider's ``retry-after-ms`` or ``retry-after`` header
(seconds or an HTTP date); without one they grow exponentially with jitter. A
bounded number of attempts and a cap on the total wait keep a turn from hanging:
an error whose advised wait would break the cap is reported at once, with its
``retry_after``, rather than waited out.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from server.host.agents.providers.errors import ProviderError


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a request is tried again.

    ``max_attempts`` counts the first try. ``max_delay`` caps one wait, and an
    advised wait longer than it is not waited for. ``max_total_wait`` caps the waits
    of one request added up. ``retry_kinds`` are the error kinds retried at all.
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_total_wait: float = 60.0
    retry_kinds: frozenset[str] = frozenset({"rate_limited", "overloaded"})

    def delay_before_retry(
        self, error: ProviderError, attempt: int, waited: float, rng: random.Random
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to give up with ``error``.

        ``attempt`` is the number of the attempt that failed (1 for the first) and
        ``waited`` the seconds already waited for this request.
        """
        if error.kind not in self.retry_kinds or attempt >= self.max_attempts:
            return None
        if error.retry_after is not None:
            delay = error.retry_after
            if delay > self.max_delay:
                return None
        else:
            backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
            # Full-range jitter on the upper half, so agents that failed together
            # don't come back together.
            delay = backoff * (0.5 + 0.5 * rng.random())
        if waited + delay > self.max_total_wait:
            return None
        return delay


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """The wait a response advises: ``retry-after-ms``, else ``retry-after`` in seconds or as
    an HTTP date (measured from ``now``, epoch seconds). None when absent or unreadable."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)

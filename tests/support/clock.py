"""A clock the test moves by hand."""

from __future__ import annotations

import time


class FakeClock:
    """Stands still but for a microsecond per reading, so events keep their order."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start

    def now(self) -> float:
        self._now += 1e-6
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

"""The firing loop: sleeps until the earliest routine is due, then fires what is due.

The database is the only schedule: each pass reads the due routines and claims each
by moving its next fire time on, so a restart computes nothing from memory and two
schedulers over one database never fire a time twice. It runs in the container of the
host that owns the agents (their rows are in its database), so no other host fires them.
"""

from __future__ import annotations

import logging

from server.common.clock import Clock
from server.common.tasks import BackgroundTasks, wait_set
from server.host.agents.routines import RoutineService

log = logging.getLogger(__name__)

# The longest sleep between passes: a routine changed elsewhere is seen within it.
MAX_SLEEP_SECONDS = 30.0
# After a failed pass (the database away), wait this long before the next.
RETRY_SECONDS = 5.0


class RoutineScheduler:
    """Fires due routines from ``start`` until ``close``; ``tick`` is one pass."""

    def __init__(self, routines: RoutineService, clock: Clock) -> None:
        self._routines = routines
        self._clock = clock
        self._tasks = BackgroundTasks("routine scheduler")

    async def start(self) -> None:
        """Settles the runs a previous life left, then fires in the background."""
        await self._routines.recover()
        self._tasks.start(self._loop())

    async def tick(self) -> int:
        """One pass: fires what is due now; how many runs it admitted."""
        return len(await self._routines.fire_due())

    async def _loop(self) -> None:
        changed = self._routines.schedule_changed
        while True:
            changed.clear()
            try:
                await self.tick()
                earliest = await self._routines.earliest_fire()
            except Exception:
                log.exception("the routine scheduler's pass failed")
                earliest, changed_wait = None, RETRY_SECONDS
            else:
                changed_wait = MAX_SLEEP_SECONDS
            if earliest is not None:
                changed_wait = min(changed_wait, max(0.0, earliest - self._clock.now()))
            if changed_wait > 0:
                await wait_set(changed, changed_wait)

    async def close(self) -> None:
        await self._tasks.close()

"""Background tasks that belong to an owner and end with it.

A task made with ``asyncio.create_task`` and kept nowhere can be collected while
it runs, and one kept in a set must be cancelled at shutdown by hand; every
long-lived part keeps its tasks in one ``BackgroundTasks`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


async def wait_set(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set within ``seconds``.

    The loops of background tasks wait so, never with ``asyncio.wait_for``: on Python
    3.11 that answers the event and drops a cancel that arrives as it is set, so a
    loop cancelled at that moment runs on and its owner's ``close`` waits forever.
    """
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def every(seconds: float, step: Callable[[], Awaitable[object]], what: str) -> None:
    """Run ``step`` now and every ``seconds`` after it, until cancelled: the body of a
    housekeeping task. A round that fails is logged as ``what`` failing (a database
    hiccup, say), and the next round tries again."""
    while True:
        try:
            await step()
        except Exception:
            log.exception("%s failed", what)
        await asyncio.sleep(seconds)


class BackgroundTasks:
    """The running tasks of one owner; ``close`` cancels them and waits for them to end."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coroutine`` in the background; an exception it raises is logged, not lost."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._keep(task)
        return task

    def start(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """``spawn`` for a caller that keeps no handle: the task is the owner's alone."""
        self._keep(asyncio.get_running_loop().create_task(coroutine))

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def adopt(self, task: asyncio.Task[Any]) -> None:
        """Keep a task something else started (a server's connection handler) until it ends."""
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "a background task of the %s failed",
                self._owner,
                exc_info=task.exception(),
            )

    def __len__(self) -> int:
        return len(self._tasks)

    def cancel(self) -> None:
        """Cancels every task without waiting for them to end, for an owner whose close
        cannot wait."""
        for task in list(self._tasks):
            task.cancel()

    async def drain(self) -> None:
        """Waits until every task has ended, those started meanwhile too; cancels none."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

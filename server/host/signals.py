"""The host's in-process signals: typed publish and subscribe of frozen dataclasses.

A subsystem publishes a signal from the one place its state changes (a tab list, a
tab's protection, a proxy's mark, a member's egress, a turn, a recorded step); the
container subscribes the subsystems that follow it, all in one block. A subscriber that
fails is logged and skipped: it never stops the publisher or the other subscribers.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from server.common.tasks import BackgroundTasks

log = logging.getLogger(__name__)

S = TypeVar("S")

Handler = Callable[[S], Awaitable[object] | None]


class Signals:
    """One host's hub. Sync handlers run in the publisher's call; an async handler's
    coroutine runs as a task the hub holds until it ends, and ``close`` waits for."""

    def __init__(self) -> None:
        self._handlers: dict[type[Any], list[Handler[Any]]] = {}
        self._tasks = BackgroundTasks("signal hub")

    def subscribe(self, kind: type[S], handler: Handler[S]) -> None:
        """``handler(signal)`` runs for every published signal of class ``kind``."""
        self._handlers.setdefault(kind, []).append(handler)

    def publish(self, signal: object) -> None:
        """Tells every subscriber of the signal's class, in the order they subscribed."""
        for handler in list(self._handlers.get(type(signal), ())):
            try:
                result = handler(signal)
            except Exception:
                log.exception("a subscriber to %s failed", type(signal).__name__)
                continue
            if inspect.isawaitable(result):
                self._schedule(type(signal).__name__, result)

    async def deliver(self, signal: object) -> None:
        """Tells every subscriber in order, awaiting each async one before the next: for
        signals whose subscribers must see them in the order they happened (steps)."""
        for handler in list(self._handlers.get(type(signal), ())):
            try:
                result = handler(signal)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("a subscriber to %s failed", type(signal).__name__)

    def _schedule(self, name: str, awaitable: Awaitable[object]) -> None:
        async def run() -> None:
            try:
                await awaitable
            except Exception:
                log.exception("a subscriber to %s failed", name)

        self._tasks.start(run())

    async def close(self) -> None:
        """Waits for the async subscribers still running."""
        await self._tasks.drain()

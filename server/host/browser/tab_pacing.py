"""One browser's pages opened and closed one at a time, with a breath between them while a
person watches a tab.

Making a page and closing one are the heaviest work of a browser process's main thread,
and that thread also passes every frame of a watched tab out and every key a person
presses in. Agents that open and close tabs at once stacked that work into stretches in
which the watched tab's frames waited (the capacity bench, ``docs/benchmarks.md``): taken
one at a time they leave the thread free between them, and while anyone watches a tab,
each one is followed by a short breath for the frames that waited. With nobody watching,
the breath is skipped: one at a time costs the agents nothing measurable, a breath would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext

# After each page made or closed while a tab is watched, the next one waits this long.
BREATH_SECONDS = 0.1


class TabPacing:
    """A turn per page made or closed, one browser at a time."""

    def __init__(
        self,
        watched: Callable[[], bool],
        breath: float = BREATH_SECONDS,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._watched = watched
        self._breath = breath
        self._sleep = sleep
        # One lock per browser, gone with it.
        self._locks: WeakKeyDictionary[object, asyncio.Lock] = WeakKeyDictionary()

    @asynccontextmanager
    async def turn(self, context: BrowserContext) -> AsyncIterator[None]:
        """The context's browser makes or closes one page inside this, and no other."""
        lock = self._locks.setdefault(browser_of(context), asyncio.Lock())
        async with lock:
            yield
            if self._breath > 0 and self._watched():
                await self._sleep(self._breath)


def browser_of(context: BrowserContext) -> object:
    """The browser a context's pages live in: a persistent context is a browser of its own."""
    return context.browser or context

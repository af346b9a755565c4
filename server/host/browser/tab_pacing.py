"""One browser's pages opened and closed one at a time, with a breath between them while a
person watches one of its tabs; while one is watched, its navigations start in turn too.

Making a page and closing one are the heaviest work of a browser process's main thread,
and that thread also passes every frame of a watched tab out and every key a person
presses in. Agents that open and close tabs at once stacked that work into stretches
in which the watched tab's frames waited (the capacity bench, ``docs/benchmarks.md``):
taken one at a time they leave the thread free between them, and while anyone watches
one of the browser's tabs, each one is followed by a short breath for the frames that
waited. With nobody watching, the breath is skipped: one at a time costs the agents
nothing measurable, a breath would.

A navigation's start and its commit (a new document, often a new renderer) are the next
heaviest; while one of the browser's tabs is watched, each navigation holds the browser's
turn from its start until it commits, at most ``NAVIGATION_HOLD_SECONDS`` (a slow site's
answer keeps nobody waiting longer). No breath follows it: the hold already spaces the
navigations out, and with 50 agents at work it already costs them turns. Nobody
watching, navigations take no turn: holding one through each navigation's network wait
would slow every agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext

# After each page made or closed while one of its browser's tabs is watched, the next one
# waits this long.
BREATH_SECONDS = 0.05
# A navigation in a watched browser holds its turn until it commits, at most this long.
NAVIGATION_HOLD_SECONDS = 0.5


class TabPacing:
    """A turn per page made or closed, and per navigation while a tab is watched, one at a
    time in each browser; ``watched`` says whether a person watches one of a browser's
    tabs (the browser as ``browser_of`` gives it)."""

    def __init__(
        self,
        watched: Callable[[object], bool],
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
        browser = browser_of(context)
        async with self._lock(browser):
            yield
            if self._breath > 0 and self._watched(browser):
                await self._sleep(self._breath)

    @asynccontextmanager
    async def watched_turn(self, context: BrowserContext) -> AsyncIterator[bool]:
        """The browser's turn, with no breath after it, while one of its tabs is watched;
        else none. Says which."""
        browser = browser_of(context)
        if self._breath <= 0 or not self._watched(browser):
            yield False
            return
        async with self._lock(browser):
            yield True

    def _lock(self, browser: object) -> asyncio.Lock:
        return self._locks.setdefault(browser, asyncio.Lock())


def browser_of(context: BrowserContext) -> object:
    """The browser a context's pages live in: a persistent context is a browser of its own."""
    return context.browser or context

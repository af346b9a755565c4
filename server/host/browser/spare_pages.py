"""A blank page kept ready in each warm persistent partition.

Making a page is most of what a new tab waits for in a partition whose browser already
runs. After a tab of a persistent partition loads, the partition makes its next page
in the background; the next new tab there takes it (or waits for the one on its way)
instead of asking for one of its own. A spare page is no tab: nothing lists it, it has
no identity override or tab listeners until a tab takes it, and it goes with its context.
A spare that closed or whose renderer crashed while it waited is never handed out: it
is closed and the tab gets a new page.
"""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

# Closing a spare whose renderer is gone must not hold up the tab that wanted it.
_CLOSE_LIMIT = 5.0


class _Spare:
    """One page on its way or ready, and whether its renderer crashed while it waited."""

    def __init__(self, context: BrowserContext) -> None:
        self.crashed = False
        self.making = asyncio.get_running_loop().create_task(self._make(context))
        self.making.add_done_callback(_observe)

    def usable(self, page: Page) -> bool:
        return not self.crashed and not page.is_closed()

    async def _make(self, context: BrowserContext) -> Page:
        page = await context.new_page()
        # Only a flag: a tab that takes the page adds crash listeners of its own.
        page.once("crash", self._crashed)
        return page

    def _crashed(self, _page: Page) -> None:
        self.crashed = True


class SparePages:
    """At most one spare page per browser context, made after the last one was taken."""

    def __init__(self) -> None:
        self._spares: dict[BrowserContext, _Spare] = {}
        self._watched: set[BrowserContext] = set()

    async def take(self, context: BrowserContext) -> Page:
        """The context's spare page, else a new one."""
        spare = self._spares.pop(context, None)
        if spare is not None:
            try:
                page = await asyncio.shield(spare.making)
            except asyncio.CancelledError:
                if not spare.making.cancelled():  # the caller gave up, not the spare
                    if not spare.making.done():  # the page on its way stays spare
                        self._spares.setdefault(context, spare)
                    raise
            except PlaywrightError:
                pass  # the context is closing: asking it anew says so
            else:
                if spare.usable(page):
                    return page
                await _close(page)
        return await context.new_page()

    def refill(self, context: BrowserContext) -> None:
        """Starts making the context's next page, unless one is ready or on its way."""
        if context in self._spares:
            return
        if context not in self._watched:
            self._watched.add(context)
            context.once("close", lambda _context: self._forget(context))
        self._spares[context] = _Spare(context)

    def close(self) -> None:
        """Stops the pages on their way (the browser is closing, and its pages with it)."""
        for context in list(self._spares):
            self._forget(context)
        self._watched.clear()

    def _forget(self, context: BrowserContext) -> None:
        self._watched.discard(context)
        spare = self._spares.pop(context, None)
        if spare is not None:
            spare.making.cancel()


async def _close(page: Page) -> None:
    with contextlib.suppress(PlaywrightError, TimeoutError):
        async with asyncio.timeout(_CLOSE_LIMIT):
            await page.close()


def _observe(spare: asyncio.Task[Page]) -> None:
    """A spare that failed (its context closed) is dropped without a warning."""
    if not spare.cancelled():
        spare.exception()

"""A blank page kept ready in each warm persistent partition.

Making a page is most of what a new tab waits for in a partition whose browser already
runs. After a tab of a persistent partition loads, the partition makes its next page
in the background; the next new tab there takes it (or waits for the one on its way)
instead of asking for one of its own. A spare page is no tab: nothing lists it, it has
no identity override or listeners until a tab takes it, and it goes with its context.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError


class SparePages:
    """At most one spare page per browser context, made after the last one was taken."""

    def __init__(self) -> None:
        self._spares: dict[BrowserContext, asyncio.Task[Page]] = {}
        self._watched: set[BrowserContext] = set()

    async def take(self, context: BrowserContext) -> Page:
        """The context's spare page, else a new one."""
        spare = self._spares.pop(context, None)
        if spare is not None:
            try:
                page = await asyncio.shield(spare)
            except asyncio.CancelledError:
                if not spare.cancelled():  # the caller gave up, not the spare
                    if not spare.done():  # the page on its way stays spare
                        self._spares.setdefault(context, spare)
                    raise
            except PlaywrightError:
                pass  # the context is closing: asking it anew says so
            else:
                if not page.is_closed():
                    return page
        return await context.new_page()

    def refill(self, context: BrowserContext) -> None:
        """Starts making the context's next page, unless one is ready or on its way."""
        if context in self._spares:
            return
        if context not in self._watched:
            self._watched.add(context)
            context.once("close", lambda _context: self._forget(context))
        spare = asyncio.get_running_loop().create_task(context.new_page())
        spare.add_done_callback(_observe)
        self._spares[context] = spare

    def close(self) -> None:
        """Stops the pages on their way (the browser is closing, and its pages with it)."""
        for context in list(self._spares):
            self._forget(context)
        self._watched.clear()

    def _forget(self, context: BrowserContext) -> None:
        self._watched.discard(context)
        spare = self._spares.pop(context, None)
        if spare is not None:
            spare.cancel()


def _observe(spare: asyncio.Task[Page]) -> None:
    """A spare that failed (its context closed) is dropped without a warning."""
    if not spare.cancelled():
        spare.exception()

"""A blank page kept ready in each warm persistent partition, set up as a tab's page.

Making a page and sending it the identity and the page scripts is most of what a new tab
waits for in a partition whose browser already runs. After a tab of a persistent partition
loads, the partition makes its next page in the background, with the identity override and
the page scripts already on it; the next new tab there takes it (or waits for the one on
its way) and only adds its listeners. A spare page is no tab: nothing lists it, nothing but
its own crash is listened to until a tab takes it, and it goes with its context.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.page_setup import PreparedPage

# Sets up a new blank page as a tab's page (``PageEvents.prepare``).
Prepare = Callable[[Page], Awaitable[PreparedPage]]


class SparePages:
    """At most one spare page per browser context, made after the last one was taken."""

    def __init__(self, prepare: Prepare) -> None:
        self._prepare = prepare
        self._spares: dict[BrowserContext, asyncio.Task[PreparedPage]] = {}
        self._watched: set[BrowserContext] = set()
        # Spare pages whose renderer crashed before a tab took them.
        self._crashed: set[Page] = set()

    async def take(self, context: BrowserContext) -> PreparedPage:
        """The context's spare page, else a new one set up now."""
        spare = self._spares.pop(context, None)
        if spare is not None:
            try:
                prepared = await asyncio.shield(spare)
            except asyncio.CancelledError:
                if not spare.cancelled():  # the caller gave up, not the spare
                    if not spare.done():  # the page on its way stays spare
                        self._spares.setdefault(context, spare)
                    raise
            except PlaywrightError:
                pass  # the context is closing: asking it anew says so
            else:
                page = prepared.page
                if page not in self._crashed and not page.is_closed():
                    return prepared
                self._crashed.discard(page)
                with contextlib.suppress(PlaywrightError):
                    await page.close()
        return await self._make(context)

    def refill(self, context: BrowserContext) -> None:
        """Starts making the context's next page, unless one is ready or on its way."""
        if context in self._spares:
            return
        if context not in self._watched:
            self._watched.add(context)
            context.once("close", lambda _context: self._forget(context))
        spare = asyncio.get_running_loop().create_task(self._make(context, spare=True))
        spare.add_done_callback(_observe)
        self._spares[context] = spare

    def close(self) -> None:
        """Stops the pages on their way (the browser is closing, and its pages with it)."""
        for context in list(self._spares):
            self._forget(context)
        self._watched.clear()
        self._crashed.clear()

    async def _make(self, context: BrowserContext, *, spare: bool = False) -> PreparedPage:
        page = await context.new_page()
        try:
            prepared = await self._prepare(page)
        except BaseException:
            with contextlib.suppress(PlaywrightError):
                await page.close()
            raise
        if spare:
            # A spare whose renderer crashed is no page to give a tab: the next one is made.
            page.once("crash", lambda _page: self._spare_crashed(page))
        return prepared

    def _spare_crashed(self, page: Page) -> None:
        for spare in self._spares.values():
            made = spare.done() and not spare.cancelled() and spare.exception() is None
            if made and spare.result().page is page:
                self._crashed.add(page)

    def _forget(self, context: BrowserContext) -> None:
        self._watched.discard(context)
        self._crashed = {page for page in self._crashed if page.context is not context}
        spare = self._spares.pop(context, None)
        if spare is not None:
            spare.cancel()


def _observe(spare: asyncio.Task[PreparedPage]) -> None:
    """A spare that failed (its context closed) is dropped without a warning."""
    if not spare.cancelled():
        spare.exception()

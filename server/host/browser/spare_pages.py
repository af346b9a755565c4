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
from dataclasses import dataclass, field

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.page_close import close_page
from server.host.browser.page_setup import PreparedPage
from server.host.browser.tab_pacing import TabPacing

# Sets up a new blank page as a tab's page (``PageEvents.prepare``).
Prepare = Callable[[Page], Awaitable[PreparedPage]]


@dataclass
class _Spare:
    """A spare page on its way or made, and whether its renderer crashed since."""

    crashed: asyncio.Event = field(default_factory=asyncio.Event)
    making: asyncio.Task[PreparedPage] | None = None


class SparePages:
    """At most one spare page per browser context, made after the last one was taken."""

    def __init__(self, prepare: Prepare, pacing: TabPacing) -> None:
        self._prepare = prepare
        self._pacing = pacing
        self._spares: dict[BrowserContext, _Spare] = {}
        self._watched: set[BrowserContext] = set()

    async def take(self, context: BrowserContext) -> PreparedPage:
        """The context's spare page, else a new one set up now."""
        spare = self._spares.pop(context, None)
        if spare is not None and spare.making is not None:
            making = spare.making
            try:
                prepared = await asyncio.shield(making)
            except asyncio.CancelledError:
                if not making.cancelled():  # the caller gave up, not the spare
                    if not making.done():  # the page on its way stays spare
                        self._spares.setdefault(context, spare)
                    raise
            except PlaywrightError:
                pass  # the context is closing (asking it anew says so), or the page crashed
            else:
                if not spare.crashed.is_set() and not prepared.page.is_closed():
                    return prepared
                await close_page(prepared.page)
        return await self._make(context, _Spare())

    def refill(self, context: BrowserContext) -> None:
        """Starts making the context's next page, unless one is ready or on its way."""
        if context in self._spares:
            return
        if context not in self._watched:
            self._watched.add(context)
            context.once("close", lambda _context: self._forget(context))
        spare = _Spare()
        spare.making = asyncio.get_running_loop().create_task(self._make(context, spare))
        spare.making.add_done_callback(_observe)
        self._spares[context] = spare

    def close(self) -> None:
        """Stops the pages on their way (the browser is closing, and its pages with it)."""
        for context in list(self._spares):
            self._forget(context)
        self._watched.clear()

    async def _make(self, context: BrowserContext, spare: _Spare) -> PreparedPage:
        async with self._pacing.turn(context):
            page = await context.new_page()
        page.once("crash", lambda _page: spare.crashed.set())
        try:
            return await _unless_crashed(spare.crashed, self._prepare(page))
        except BaseException as exc:
            # A spare is stopped only as its context closes, and its page goes with it.
            if not (spare.making is not None and isinstance(exc, asyncio.CancelledError)):
                await close_page(page)
            raise

    def _forget(self, context: BrowserContext) -> None:
        self._watched.discard(context)
        spare = self._spares.pop(context, None)
        if spare is not None and spare.making is not None:
            spare.making.cancel()


async def _unless_crashed(crashed: asyncio.Event, setup: Awaitable[PreparedPage]) -> PreparedPage:
    """``setup``'s page, unless its renderer crashed first: a crashed page answers no more."""
    working = asyncio.ensure_future(setup)
    waiter = asyncio.ensure_future(crashed.wait())
    try:
        await asyncio.wait({working, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not working.done():
            working.cancel()
            with contextlib.suppress(BaseException):
                await working
    if working.cancelled():
        raise PlaywrightError("the page crashed while it was set up")
    return working.result()


def _observe(making: asyncio.Task[PreparedPage]) -> None:
    """A spare that failed (its context closed, its page crashed) is dropped without a warning."""
    if not making.cancelled():
        making.exception()

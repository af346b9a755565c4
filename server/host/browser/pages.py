"""A tab's page: loading a sleeping tab in its partition, loading an address, sleeping.

A sleeping tab keeps its address and gets a fresh page on its next call; so does a
tab whose renderer crashed.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from server.common.errors import Conflict
from server.host.browser.contexts import ContextPool
from server.host.browser.page_close import close_page
from server.host.browser.page_events import PageEvents
from server.host.browser.spare_pages import SparePages
from server.host.browser.tab_pacing import NAVIGATION_HOLD_SECONDS, TabPacing, browser_of
from server.host.browser.tab_registry import TabRegistry
from server.host.browser.tabs import BLANK, Tab
from server.host.signals import Signals

_NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")
# How Playwright says another navigation committed in the frame before this one did.
_REPLACED = "is interrupted by another navigation"


# How long a load is waited for: until the load event, or until the response arrived.
LoadWait = Literal["load", "commit"]


@dataclass(frozen=True, slots=True)
class PageAttached:
    """The tab has a new page, loaded (woken from sleep, reloaded after a crash)."""

    tab: Tab


class TabPages:
    """Gives tabs their pages and takes them away."""

    def __init__(
        self,
        contexts: ContextPool,
        events: PageEvents,
        tabs: TabRegistry,
        signals: Signals,
    ) -> None:
        self._contexts = contexts
        self._events = events
        self._tabs = tabs
        self._signals = signals
        self.pacing = TabPacing(self._watched)
        self._spares = SparePages(events.prepare, self.pacing)

    def _watched(self, browser: object) -> bool:
        """Whether a person watches one of the browser's tabs: its pages are made and closed
        with a breath between them."""
        return any(
            tab.viewers and tab.page is not None and browser_of(tab.page.context) is browser
            for tab in self._tabs
        )

    async def load(self, tab: Tab) -> None:
        """Gives a sleeping (or crashed) tab a fresh page in its partition at its URL."""
        async with self._contexts.loading(tab.team_id, tab.partition) as context:
            prepared = await self._spares.take(context)
            self._events.attach(tab, prepared)
        if tab.url != BLANK:
            await self.goto(tab, prepared.page, tab.url)
        if tab.partition.persistent:
            # Made after this tab's load, not during it (both would wait for the same
            # browser process); the next tab here finds its page ready.
            self._spares.refill(context)
        self._signals.publish(PageAttached(tab))

    def close(self) -> None:
        """The browser is closing: no more spare pages."""
        self._spares.close()

    async def ready(self, tab: Tab) -> Page:
        """The tab's page, loaded again if it crashed or slept."""
        if tab.crashed:
            await self.unload(tab)
        if tab.page is None:
            await self.load(tab)
        assert tab.page is not None
        return tab.page

    async def goto(
        self, tab: Tab, page: Page, url: str, *, wait_until: LoadWait = "load"
    ) -> Response | None:
        """Loads ``url``; a dialog the page opens while loading ends the wait (load is blocked).

        ``wait_until="commit"`` returns once the main document's response arrived, while the
        page goes on loading. Gives the main document's response, if the load ended with one.
        Raises ``navigationReplaced`` when another navigation came in between.
        """
        tab.any_dialog.clear()
        loading = await self._start_loading(page, url, wait_until)
        waiter = asyncio.ensure_future(tab.any_dialog.wait())
        try:
            await asyncio.wait({loading, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not loading.done():
                loading.cancel()
                with contextlib.suppress(BaseException):
                    await loading
        if not loading.done() or loading.cancelled():
            return None
        proxied = self._contexts.proxied
        try:
            response = loading.result()
        except PlaywrightError as exc:
            if _REPLACED in str(exc):
                # Another navigation (the page's own, or one a person or an agent started
                # meanwhile) came in between: the later one goes on, this one is over.
                raise Conflict(
                    "another navigation replaced this one before its page loaded; the tab "
                    "goes on to the one that came later",
                    code="navigationReplaced",
                ) from None
            found = _NET_ERROR.search(str(exc))
            await proxied.failed(tab.team_id, tab.partition, url, found.group(1) if found else None)
            if found is None:
                raise
            named = self._contexts.load_error(url, found.group(1))
            if named == found.group(1):
                raise
            raise PlaywrightError(str(exc).replace(found.group(0), f"net::{named}")) from None
        if response is not None:
            await proxied.loaded(
                tab.team_id, tab.partition, response.url, response.status, response.headers
            )
        return response

    async def _start_loading(
        self, page: Page, url: str, wait_until: LoadWait
    ) -> asyncio.Task[Response | None]:
        """``page.goto`` started; while a person watches a tab of the page's browser, in the
        browser's turn until the main frame commits (``NAVIGATION_HOLD_SECONDS`` at most)."""
        async with self.pacing.watched_turn(page.context) as paced:
            loading = asyncio.create_task(page.goto(url, wait_until=wait_until))
            if paced:
                committed: asyncio.Future[Any] = asyncio.ensure_future(
                    page.wait_for_event(
                        "framenavigated",
                        lambda frame: frame == page.main_frame,
                        timeout=NAVIGATION_HOLD_SECONDS * 1000,
                    )
                )
                committed.add_done_callback(_settled)
                try:
                    either: set[asyncio.Future[Any]] = {loading, committed}
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                except BaseException:
                    loading.cancel()
                    raise
                finally:
                    committed.cancel()
        return loading

    async def unload(self, tab: Tab) -> None:
        """Closes the tab's page but keeps the tab and its URL; the next call loads it again."""
        await self.close_page(self._tabs.detach_page(tab))

    async def close_page(self, page: Page | None) -> None:
        """Closes a page that is no tab's any more, in its browser's turn."""
        if page is None:
            return
        async with self.pacing.turn(page.context):
            await close_page(page)


def _settled(waiting: asyncio.Future[Any]) -> None:
    """A commit not seen within the hold (its wait timed out, or the page closed) is no
    error: the navigation goes on, and its caller hears how it ends."""
    if not waiting.cancelled():
        waiting.exception()

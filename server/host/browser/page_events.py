"""What a tab's page tells the engine: a crash, a navigation, a title and icon, its close, a
dialog, a popup.

The handlers are wired onto each page when it becomes a tab's page. A popup becomes a
tab of its own in the opener's partition; a page that closes itself ends its tab.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from playwright.async_api import CDPSession, Dialog, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from server.common.clock import Clock
from server.common.tasks import BackgroundTasks
from server.host.browser import page_facts, page_setup, passkeys
from server.host.browser.dialogs import PendingDialog
from server.host.browser.identity import BrowserIdentity
from server.host.browser.page_setup import PreparedPage
from server.host.browser.tab_registry import TabRegistry
from server.host.browser.tabs import BLANK, Tab
from server.host.page.scripts import page_script

log = logging.getLogger(__name__)

# Chromium's own page for a load that failed; the tab lists the address that failed instead.
ERROR_PAGE_PREFIX = "chrome-error://"
# A title is read only from a page that answers at once.
_TITLE_LIMIT = 1.0
# A title a page changes is written to the team's state file at most this often.
_SAVE_TITLES_EVERY = 2.0
# A popup whose document is replaced while it is asked about its opener is asked again.
_OPENER_ASKS = 3


class PageEvents:
    """Wires pages to their tabs and runs the background steps the events start."""

    def __init__(
        self,
        tabs: TabRegistry,
        clock: Clock,
        *,
        identity: Callable[[], BrowserIdentity],
        deadline: float,
        forget: Callable[[Tab], Coroutine[Any, Any, None]],
        save: Callable[[str], Awaitable[None]],
    ) -> None:
        self._tabs = tabs
        self._clock = clock
        self._identity = identity
        self._deadline = deadline
        self._forget = forget
        self._save = save
        self._tasks = BackgroundTasks("page events")
        self._closing = False
        self._saves_due: set[str] = set()

    async def prepare(self, page: Page) -> PreparedPage:
        """Sets up a blank page as a tab's page: the identity and the page scripts."""
        return await page_setup.prepare(page, self._identity())

    def attach(self, tab: Tab, prepared: PreparedPage) -> None:
        """Makes the prepared page the tab's page and listens to it, and to the title and
        icon its documents report."""
        tab.identity_session = prepared.identity_session
        self._listen(tab, prepared.page)
        self._watch_facts(tab, prepared.page, prepared.facts_session)

    def _listen(self, tab: Tab, page: Page) -> None:
        self._tabs.attach_page(tab, page)
        page.on("crash", lambda _page: self._on_crash(tab, page))
        page.on("dialog", lambda dialog: self._on_dialog(tab, page, dialog))
        page.on("popup", lambda popup: self._on_popup(tab, popup))
        page.on("close", lambda _page: self._on_close(tab, page))
        page.on("framenavigated", lambda frame: self._on_navigated(tab, page, frame))
        page.on("requestfailed", lambda request: self._on_request_failed(tab, page, request))
        page.on("domcontentloaded", lambda _page: self._spawn(self._read_title(tab, page)))
        page.on("load", lambda _page: self._spawn(self._read_title(tab, page)))

    def _watch_facts(self, tab: Tab, page: Page, session: CDPSession) -> None:
        if tab.page is page:
            tab.facts_session = session
            session.on("Runtime.bindingCalled", lambda event: self._on_binding(tab, page, event))

    async def close(self) -> None:
        """Stops listening (the browser is closing) and ends the background steps."""
        self._closing = True
        await self._tasks.close()

    def _on_crash(self, tab: Tab, page: Page) -> None:
        if tab.page is page:
            log.info("renderer of tab %s crashed; it reloads on the next call", tab.id)
            tab.crashed = True

    def _on_navigated(self, tab: Tab, page: Page, frame: Frame) -> None:
        if tab.page is not page or frame.parent_frame is not None or not frame.url:
            return
        if frame.url.startswith(ERROR_PAGE_PREFIX):
            # The error page stands for the address that failed, as in a browser's bar.
            if tab.failed_url:
                self._tabs.record_url(tab, tab.failed_url)
            self._tabs.record_title(tab, "")  # not the title of the page before
            return
        tab.failed_url = None
        self._tabs.record_url(tab, frame.url)

    def _on_request_failed(self, tab: Tab, page: Page, request: Request) -> None:
        if tab.page is not page or not request.is_navigation_request():
            return
        with contextlib.suppress(PlaywrightError):
            if request.frame.parent_frame is not None:
                return
        tab.failed_url = request.url
        if page.main_frame.url.startswith(ERROR_PAGE_PREFIX):
            self._tabs.record_url(tab, request.url)  # the error page came first

    async def _read_title(self, tab: Tab, page: Page) -> None:
        if tab.page is not page or tab.dialog is not None or page.is_closed():
            return  # a dialog blocks the page's scripts
        if page.url.startswith(ERROR_PAGE_PREFIX):
            return  # the tab lists the address that failed, under no title
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_TITLE_LIMIT):
                title = await page.title()
            if tab.page is page:
                self._tabs.record_title(tab, title)

    def _on_binding(self, tab: Tab, page: Page, event: dict[str, object]) -> None:
        if tab.page is not page:
            return
        if event.get("name") == passkeys.BINDING:
            passkeys.record(tab, event.get("payload"))
            return
        if event.get("name") != page_facts.BINDING:
            return
        payload = event.get("payload")
        facts = page_facts.PageFacts.parse(payload, page.url) if isinstance(payload, str) else None
        if facts is None or page.url.startswith(ERROR_PAGE_PREFIX):
            return
        if facts.title != tab.title:
            self._tabs.record_title(tab, facts.title)
            self._save_soon(tab.team_id)
        if facts.icon_url != tab.icon_url:
            tab.icon_url = facts.icon_url
            self._spawn(self._load_icon(tab, page, facts.icon_url))

    async def _load_icon(self, tab: Tab, page: Page, url: str) -> None:
        session = tab.facts_session
        if session is None:
            return
        icon = await page_facts.fetch_icon(session, url)
        if tab.page is page and tab.icon_url == url:
            self._tabs.record_icon(tab, icon)

    def _save_soon(self, team_id: str) -> None:
        """Titles a page sets by itself reach the state file, a few at a time."""
        if team_id in self._saves_due:
            return
        self._saves_due.add(team_id)

        async def save() -> None:
            await asyncio.sleep(_SAVE_TITLES_EVERY)
            self._saves_due.discard(team_id)
            await self._save(team_id)

        self._spawn(save())

    def _on_close(self, tab: Tab, page: Page) -> None:
        # A page that closed itself (a popup's window.close()) ends its tab.
        if self._closing or tab.page is not page or tab not in self._tabs:
            return
        self._tabs.forget(tab)
        self._spawn(self._forget(tab))

    def _on_dialog(self, tab: Tab, page: Page, dialog: Dialog) -> None:
        # With a listener Playwright leaves the dialog open: it waits for the agent or a person.
        if tab.page is not page:
            return
        tab.dialog = PendingDialog(dialog, agent_id=tab.input_agent_id)
        tab.any_dialog.set()
        if tab.input_agent_id is not None and tab.dialog_opened is not None:
            tab.dialog_opened.set()

    def _on_popup(self, opener: Tab, page: Page) -> None:
        if self._closing or opener not in self._tabs:
            return
        popup = Tab(
            id=str(uuid.uuid4()),
            team_id=opener.team_id,
            partition=opener.partition,
            owner_agent_id=opener.owner_agent_id,
            owner_thread_id=opener.owner_thread_id,
            opener_tab_id=opener.id,
            url=page.url or BLANK,
            last_used=self._clock.now(),
            dependent=True,
            opened_by=opener.opened_by,
        )
        self._tabs.add(popup)
        self._spawn(self._adopt(popup, page))

    async def _adopt(self, popup: Tab, page: Page) -> None:
        # The popup's document may be loading already: it is listened to first.
        self._listen(popup, page)
        popup.identity_session = await self._identity().apply(page)
        # Playwright names an opener even for noopener pages; the page itself knows better.
        popup.dependent = await self._has_opener(page)
        self._watch_facts(popup, page, await page_setup.scripts_session(page))
        await self._save(popup.team_id)

    async def _has_opener(self, page: Page) -> bool:
        """Whether the popup keeps its link to the tab that opened it; asked again when its
        document was replaced while asking (the popup loading its address), and assumed
        when the page never answers."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._deadline):
                for _ in range(_OPENER_ASKS):
                    try:
                        return not await page.evaluate(page_script("opener"))
                    except PlaywrightError:
                        if page.is_closed():
                            break
                        with contextlib.suppress(PlaywrightError):
                            await page.wait_for_load_state("domcontentloaded")
        return True

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        async def run() -> None:
            try:
                await coroutine
            except PlaywrightError as exc:
                log.debug("background browser step failed: %s", exc)

        task = self._tasks.spawn(run())

        def close_unstarted(done: asyncio.Task[None]) -> None:
            # A step cancelled before it began (the browser closed) will never run.
            if done.cancelled():
                coroutine.close()

        task.add_done_callback(close_unstarted)

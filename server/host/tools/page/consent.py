"""Refusing cookie banners in agents' tabs.

A banner costs an agent turns and covers the page it came for. When a document of
an agent's tab reaches DOM ready, a script of ours (in an isolated world) looks,
for up to ``consent_window`` seconds, for one visible button that refuses optional
cookies: a common consent platform's reject button, or a button whose whole label
refuses ("Reject all", "Nur notwendige" and the like) inside a dialog, a fixed or sticky box,
or a container that says "cookie". It clicks that one button and stops. It never
accepts: a banner without a way to refuse stays for the agent or a person.

A tab a person opened keeps its banner, and so does a tab that holds a secret; a
person taking the tab stops the search. The site keeps the refusal in the tab's
profile, so its next tabs show no banner either. Banners inside frames are left.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.tools.context import ToolContext, ToolSettings
from server.host.tools.page.address import BLANK
from server.host.tools.page.tab_access import holds_secret

log = logging.getLogger(__name__)

# How often the page is searched while a banner may still appear.
POLL_SECONDS = 0.25


@dataclass
class ConsentWatch:
    """One tab's banner refusal: the page it listens to, the documents already handled,
    the search running now, and what was clicked (for the agent's next result)."""

    page: Page | None = None
    documents: set[float] = field(default_factory=set)
    task: asyncio.Task[str | None] | None = None
    refused: list[str] = field(default_factory=list)


def is_agent_tab(tab: Tab) -> bool:
    """An agent opened the tab (or it is a popup of one an agent opened)."""
    return tab.owner_agent_id is not None


def _stopped(tab: Tab, page: Page) -> bool:
    return tab.held_by is not None or holds_secret(tab) or page.is_closed() or tab.page is not page


async def dismiss_consent(context: ToolContext, tab: Tab, page: Page) -> str | None:
    """Searches the page's current document for a reject button, clicks it, and says which.

    Returns ``"<platform>: <label>"`` (or the label alone) for the button clicked, and None
    when the window passed, the document changed, or the search had to stop.
    """
    return await _dismiss(context.settings, tab, page)


async def _dismiss(settings: ToolSettings, tab: Tab, page: Page) -> str | None:
    if not is_agent_tab(tab) or _stopped(tab, page):
        return None
    watch = _watch_of(tab)
    loop = asyncio.get_running_loop()
    until = loop.time() + settings.consent_window
    document: float | None = None
    while not _stopped(tab, page):
        try:
            current = float(await evaluate_isolated(page, "document-id"))
            if document is None:
                if current in watch.documents:
                    return None  # this document was searched already
                watch.documents.add(current)
                document = current
            elif current != document:
                return None  # a new document gets its own search
            if _stopped(tab, page):
                return None
            clicked: dict[str, Any] | None = await evaluate_isolated(page, "consent")
        except (PlaywrightError, IsolatedScriptError):
            return None  # the page navigated or closed mid-search
        if clicked is not None:
            what = str(clicked["label"])
            if clicked.get("platform"):
                what = f"{clicked['platform']}: {what}"
            watch.refused.append(what)
            log.debug("refused a cookie banner in tab %s", tab.id)
            return what
        if loop.time() >= until:
            return None
        await asyncio.sleep(POLL_SECONDS)
    return None


_WATCH: PerTab[ConsentWatch] = PerTab("consent", ConsentWatch)


def _watch_of(tab: Tab) -> ConsentWatch:
    return _WATCH.get_or_create(tab)


def watch_consent(context: ToolContext, tab: Tab) -> None:
    """Refuses banners on every new document of the tab's current page from now on.

    Call it once the tab has a page (``open`` and ``navigate`` do, and a snapshot of a
    popup should); calling it again is harmless, and a document is searched only once.
    A person's tab is never watched.
    """
    page = tab.page
    if page is None or not is_agent_tab(tab):
        return
    watch = _watch_of(tab)
    if watch.page is page:
        return
    watch.page = page
    settings = context.settings

    def on_dom_ready(_page: Page) -> None:
        if watch.task is not None and not watch.task.done():
            watch.task.cancel()  # the old document is gone; its search with it
        watch.task = asyncio.get_running_loop().create_task(_dismiss(settings, tab, page))

    page.on("domcontentloaded", on_dom_ready)
    if page.url not in ("", BLANK):
        # A page first seen with a document (a popup, a tab that woke up): search it now.
        on_dom_ready(page)


def take_refusals(tab: Tab) -> list[str]:
    """The banners refused since the last call, for a result to mention once."""
    watch = _WATCH.get(tab)
    if watch is None or not watch.refused:
        return []
    refused, watch.refused = watch.refused, []
    return refused

"""The ``list_tabs`` tool: the tabs the agent may reach, with their addresses and titles."""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import Error as PlaywrightError

from server.host.browser.tabs import Tab
from server.host.tools.base import Tool, ToolArgs, ToolContext
from server.host.tools.page.consent import watch_consent
from server.host.tools.page.snapshots import shown_url
from server.host.tools.page.tab_access import reachable_tabs

# A title is read only from a tab that can answer at once.
_TITLE_LIMIT = 1.0


class ListTabsArgs(ToolArgs):
    """No arguments."""


async def title_of(tab: Tab) -> str | None:
    """The page's title now; for a sleeping tab, or one whose dialog blocks its scripts, the
    title it last had (None if it had none)."""
    page = tab.page
    if page is None or tab.dialog is not None or page.is_closed():
        return tab.title or None
    try:
        async with asyncio.timeout(_TITLE_LIMIT):
            return await page.title()
    except (PlaywrightError, TimeoutError):
        return tab.title or None


async def list_tabs(context: ToolContext, _args: ListTabsArgs) -> dict[str, Any]:
    tabs = []
    for tab in reachable_tabs(context):
        watch_consent(context, tab)  # a popup the agent has not seen yet
        entry: dict[str, Any] = {
            "tabId": tab.id,
            "url": shown_url(tab.url),
            "title": await title_of(tab),
            "openerTabId": tab.opener_tab_id,
            "heldByPerson": tab.held_by is not None,
        }
        if tab.dialog is not None:
            entry["dialog"] = tab.dialog.to_wire()
        tabs.append(entry)
    return {"tabs": tabs}


TOOL = Tool(
    name="list_tabs",
    description=(
        "List your tabs: id, address, title, the tab that opened it, whether a person "
        "holds it, and any open dialog. Use it after a sign-in or a click that may open "
        "a new tab."
    ),
    args=ListTabsArgs,
    gated=False,
    run=list_tabs,
)

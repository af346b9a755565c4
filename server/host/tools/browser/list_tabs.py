"""The ``list_tabs`` tool: the tabs the agent may reach, with their addresses and titles."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any

from playwright.async_api import Error as PlaywrightError
from pydantic import Field, StringConstraints

from server.host.browser.protection import protection_of
from server.host.browser.tabs import Tab
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.consent import watch_consent
from server.host.tools.page.snapshots import shown_tab_url
from server.host.tools.page.tab_access import reachable_tabs
from server.host.tools.results import ToolFailure

# A title is read only from a tab that can answer at once.
_TITLE_LIMIT = 1.0


# A pattern longer than this is refused: a filter, not a program.
MAX_PATTERN_LENGTH = 200
# ...and it is matched against this much of an address or title, so no pattern can
# backtrack over a huge one.
MAX_SUBJECT_LENGTH = 2_000
Pattern = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATTERN_LENGTH)]


class ListTabsArgs(ToolArgs):
    url_pattern: Pattern | None = Field(
        default=None, description="A regular expression an address must contain a match of."
    )
    title_pattern: Pattern | None = Field(
        default=None, description="A regular expression a title must contain a match of."
    )
    active: bool | None = Field(
        default=None, description="true: only the team's active tab; false: all but it."
    )


def compiled(pattern: str | None, name: str) -> re.Pattern[str] | None:
    """``pattern`` compiled, case-insensitive; a bad one is refused with its reason."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ToolFailure("invalidPattern", f"{name} is not a regular expression: {exc}") from None


async def title_of(tab: Tab) -> str | None:
    """The page's title now; for a sleeping tab, or one whose dialog blocks its scripts, the
    title it last had (None if it had none)."""
    page = tab.page
    if page is None or tab.dialog is not None or page.is_closed():
        title = tab.title or None
    else:
        try:
            async with asyncio.timeout(_TITLE_LIMIT):
                title = await page.title()
        except (PlaywrightError, TimeoutError):
            title = tab.title or None
    entered = protection_of(tab)
    if title and entered is not None and entered.shows(title):
        return "(hidden: the page shows a value that went in from the vault)"
    return title


async def list_tabs(context: ToolContext, args: ListTabsArgs) -> dict[str, Any]:
    url_pattern = compiled(args.url_pattern, "urlPattern")
    title_pattern = compiled(args.title_pattern, "titlePattern")
    active_id = context.engine.active_tab_id(context.team_id)
    tabs = []
    for tab in reachable_tabs(context):
        watch_consent(context, tab)  # a popup the agent has not seen yet
        url, title, active = shown_tab_url(tab), await title_of(tab), tab.id == active_id
        if args.active is not None and active != args.active:
            continue
        if url_pattern is not None and not url_pattern.search(url[:MAX_SUBJECT_LENGTH]):
            continue
        if title_pattern is not None and not title_pattern.search(
            (title or "")[:MAX_SUBJECT_LENGTH]
        ):
            continue
        entry: dict[str, Any] = {
            "tabId": tab.id,
            "url": url,
            "title": title,
            "active": active,
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
        "List your tabs: id, address, title, whether it is the team's active tab, the tab "
        "that opened it, whether a person holds it, and any open dialog. `urlPattern` and "
        "`titlePattern` (regular expressions, case-insensitive) and `active` filter the "
        "list. Use it after a sign-in or a click that may open a new tab."
    ),
    args=ListTabsArgs,
    gated=False,
    run=list_tabs,
)

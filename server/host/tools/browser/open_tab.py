"""The ``open_tab`` tool: an address in a new tab or in one of the agent's tabs.

``open`` always opens a new tab (and drops a ``tabId`` an agent gives it); ``open_tab``
takes ``tabId`` to load the address there, may skip the wait for the load, and may make
the tab the team's active one.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.address import BLANK, resolve_address
from server.host.tools.page.consent import watch_consent
from server.host.tools.page.descriptions import described_url, page_name, tab_of
from server.host.tools.page.loading import (
    REFUSED_ADDRESSES,
    Address,
    load,
    new_blank_tab,
    snapshot_of,
)
from server.host.tools.page.snapshots import shown_tab_url
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.results import ToolFailure


class OpenTabArgs(ToolArgs):
    url: Address = Field(
        description=(
            "An address (example.com, https://example.com/a) or a search phrase, as typed "
            "into a browser's address bar."
        ),
    )
    tab_id: str | None = Field(
        default=None,
        min_length=1,
        description="One of your tabs to load the address in, instead of a new tab.",
    )
    wait_until_loaded: bool = Field(
        default=True,
        description="false: return once the page answered, without waiting for it to load "
        "or for a snapshot.",
    )
    active: bool = Field(
        default=False, description="Also make the tab the team's active tab (see activate_tab)."
    )


async def open_tab(context: ToolContext, args: OpenTabArgs) -> dict[str, Any]:
    address = resolve_address(args.url, context.settings.search_url)
    if args.tab_id is not None:
        tab = reachable_tab(context, args.tab_id)
    else:
        tab = await new_blank_tab(context)
    if args.active:
        context.engine.activate_tab(context.team_id, tab.id)
    watch_consent(context, tab)
    try:
        await load(context, tab, address, wait_until="load" if args.wait_until_loaded else "commit")
    except ToolFailure as failure:
        if args.tab_id is not None:
            raise
        # The tab exists either way: say so, so the agent can use or close it.
        return {"tabId": tab.id, "url": BLANK, "loadError": failure.to_result()["error"]}
    if not args.wait_until_loaded:
        return {"tabId": tab.id, "resolvedAs": address.kind, "url": shown_tab_url(tab)}
    return {"tabId": tab.id, "resolvedAs": address.kind, **await snapshot_of(context, tab)}


async def describe(context: ToolContext, args: OpenTabArgs) -> str:
    tab = tab_of(context, args.tab_id)
    if tab is None:
        return f"Open {described_url(args.url, context.settings.search_url)} in a new tab"
    return (
        f"Go to {described_url(args.url, context.settings.search_url)} in the tab {page_name(tab)}"
    )


TOOL = Tool(
    name="open_tab",
    description=(
        "Load an address in a new tab, or in your tab `tabId`, and return its snapshot. "
        "`url` is an address or a search phrase, as typed into a browser's address bar. "
        "`waitUntilLoaded: false` returns once the page answered, without a snapshot; "
        "`active: true` makes it the tab people see first. " + REFUSED_ADDRESSES
    ),
    args=OpenTabArgs,
    gated=True,
    run=open_tab,
    describe=describe,
)

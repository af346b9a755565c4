"""The ``navigate`` tool: a tab to an address as a person types it, with its snapshot."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.address import resolve_address
from server.host.tools.page.descriptions import described_url, page_name, tab_of
from server.host.tools.page.loading import Address, load, snapshot_of
from server.host.tools.page.tab_access import reachable_tab


class NavigateArgs(TabArgs):
    url: Address = Field(
        description=(
            "An address (example.com, https://example.com/a) or a search phrase, as typed "
            "into a browser's address bar."
        )
    )


async def navigate(context: ToolContext, args: NavigateArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    address = resolve_address(args.url, context.settings.search_url)
    await load(context, tab, address)
    # A brief read: a bot check still running is reported as `checking`, and the rest of
    # the document's wait is left for the next snapshot.
    snapshot = await snapshot_of(
        context, tab, challenge_wait=context.settings.navigate_challenge_wait
    )
    return {"resolvedAs": address.kind, **snapshot}


async def describe(context: ToolContext, args: NavigateArgs) -> str:
    tab = tab_of(context, args.tab_id)
    where = f" in the tab {page_name(tab)}" if tab is not None else ""
    return f"Go to {described_url(args.url, context.settings.search_url)}{where}"


TOOL = Tool(
    name="navigate",
    description=(
        "Load an address or a search phrase in a tab, as a browser's address bar would, "
        "and return the page's snapshot. Addresses of other apps (mailto:, tel:) and of "
        "the browser itself (file:, chrome:, javascript:, data:) are refused."
    ),
    args=NavigateArgs,
    gated=True,
    run=navigate,
    describe=describe,
)

"""The ``open`` tool: a new tab at an address as a person types it, with its snapshot."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.address import BLANK, resolve_address
from server.host.tools.page.consent import watch_consent
from server.host.tools.page.descriptions import described_url
from server.host.tools.page.loading import (
    REFUSED_ADDRESSES,
    Address,
    load,
    new_blank_tab,
    snapshot_of,
)
from server.host.tools.results import ToolFailure


class OpenArgs(ToolArgs):
    url: Address | None = Field(
        default=None,
        description=(
            "An address (example.com, https://example.com/a) or a search phrase, as typed "
            "into a browser's address bar. Leave it out for a blank tab."
        ),
    )


async def open_new(context: ToolContext, args: OpenArgs) -> dict[str, Any]:
    address = None
    if args.url is not None:
        address = resolve_address(args.url, context.settings.search_url)
    tab = await new_blank_tab(context)
    watch_consent(context, tab)
    if address is None:
        return {"tabId": tab.id, **await snapshot_of(context, tab)}
    try:
        await load(context, tab, address)
    except ToolFailure as failure:
        # The tab exists either way: say so, so the agent can use or close it.
        return {"tabId": tab.id, "url": BLANK, "loadError": failure.to_result()["error"]}
    return {"tabId": tab.id, "resolvedAs": address.kind, **await snapshot_of(context, tab)}


async def describe(context: ToolContext, args: OpenArgs) -> str:
    if args.url is None:
        return "Open a blank tab"
    return f"Open {described_url(args.url, context.settings.search_url)} in a new tab"


TOOL = Tool(
    name="open",
    description=(
        "Open a new tab and return its first snapshot. `url` is an address or a search "
        "phrase, as typed into a browser's address bar. " + REFUSED_ADDRESSES
    ),
    args=OpenArgs,
    gated=True,
    run=open_new,
    describe=describe,
)

"""The ``request_takeover`` tool: asks a person to take the tab for what only a person may do."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.tab_access import announce_takeover, reachable_tab


class RequestTakeoverArgs(TabArgs):
    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)
    ] = Field(description="What the person should do in the tab, such as 'solve the captcha'.")


async def request_takeover(context: ToolContext, args: RequestTakeoverArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    if tab.held_by is not None:
        return {
            "status": "held",
            "tabId": tab.id,
            "next": "A person has this tab now. When they hand it back, take a snapshot.",
        }
    announce_takeover(context, tab, args.reason)
    return {
        "status": "requested",
        "tabId": tab.id,
        "next": (
            "Stop working in this tab and tell the user what to do there and why. A person "
            "takes the tab in the live view and hands it back; then take a snapshot."
        ),
    }


TOOL = Tool(
    name="request_takeover",
    description=(
        "Ask a person to take the tab, for what only a person may do: a captcha or bot "
        "check, a password, a one-time code, a passkey, a payment. Returns at once; stop "
        "working in the tab until they hand it back."
    ),
    args=RequestTakeoverArgs,
    gated=False,
    run=request_takeover,
)

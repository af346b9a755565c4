"""The ``close_tab`` tool."""

from __future__ import annotations

from typing import Any

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.tab_access import reachable_tab


async def close_tab(context: ToolContext, args: TabArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    await context.engine.close_tab(context.team_id, tab.id, context.caller)
    return {"closed": True, "tabId": tab.id}


TOOL = Tool(
    name="close_tab",
    description=(
        "Close a tab (and the popups that depend on it) once the task no longer needs "
        "it. Works while a dialog is open."
    ),
    args=TabArgs,
    gated=False,
    run=close_tab,
)

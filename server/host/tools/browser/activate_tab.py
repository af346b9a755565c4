"""The ``activate_tab`` tool: the tab the team's viewers see first."""

from __future__ import annotations

from typing import Any

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.snapshots import shown_tab_url
from server.host.tools.page.tab_access import reachable_tab


class ActivateTabArgs(TabArgs):
    """The tab to show first."""


async def activate_tab(context: ToolContext, args: ActivateTabArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    context.engine.activate_tab(context.team_id, tab.id)
    return {"tabId": tab.id, "url": shown_tab_url(tab), "active": True}


TOOL = Tool(
    name="activate_tab",
    description=(
        "Make one of your tabs the team's active tab: the one people watching see first, "
        "such as the tab you want a person to look at."
    ),
    args=ActivateTabArgs,
    gated=False,
    run=activate_tab,
)

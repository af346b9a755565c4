"""The ``snapshot`` tool: the page's accessibility tree as compact text, with refs."""

from __future__ import annotations

from typing import Any

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.snapshots import take_snapshot
from server.host.tools.page.tab_access import reachable_tab


class SnapshotArgs(TabArgs):
    """Input of ``snapshot``."""


async def _run(context: ToolContext, args: SnapshotArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    return await take_snapshot(context, tab)


TOOL = Tool(
    name="snapshot",
    description=(
        "Read the tab's page as an accessibility tree: one line per node with its role, "
        "name, value and states, indented by nesting. Each control has a ref such as "
        "4:main:12 to pass as a target to click, type and the other page tools. Refs "
        "belong to this snapshot: after the page changes, take a new snapshot. Also "
        "reports a bot check (challenge), an open dialog and your notes for this site."
    ),
    args=SnapshotArgs,
    gated=False,
    run=_run,
)

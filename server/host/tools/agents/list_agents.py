"""The ``list_agents`` tool: the team's agents this agent may ask (``ask_agent``), each with
its name and what it is for."""

from __future__ import annotations

from typing import Any

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


class ListAgentsArgs(ToolArgs):
    pass


async def list_agents(context: ToolContext, _args: ListAgentsArgs) -> dict[str, Any]:
    askable = [] if context.delegation is None else await context.delegation.askable()
    result: dict[str, Any] = {
        "agents": [{"id": a.id, "name": a.name, "purpose": a.purpose} for a in askable]
    }
    if not askable:
        result["note"] = "You may ask no other agent: the team's admins choose whom you may ask."
    return result


TOOL = Tool(
    name="list_agents",
    description=(
        "The team's agents you may hand a task to with ask_agent: each one's id, name and "
        "what it is for."
    ),
    args=ListAgentsArgs,
    gated=False,
    run=list_agents,
)

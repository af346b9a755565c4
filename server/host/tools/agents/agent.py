"""The ``agent`` tool: hand a sub-task to a sub-agent and wait for its report.

The sub-agent has its own conversation (only the prompt), the parent's provider,
model and instructions, and a subset of the tools by its type. Its tool calls count
against the calling turn's cap; stopping the turn stops it; its gated calls ask the
same members for consent; what it does is told in the parent's thread as ``sub-agent``
events. It cannot ask people nor start sub-agents of its own.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import SubAgentRequest, ToolContext
from server.host.tools.page.tab_access import reachable_tabs
from server.host.tools.results import ToolFailure

MAX_PROMPT_CHARS = 16_000


class AgentArgs(ToolArgs):
    prompt: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_PROMPT_CHARS)
    ] = Field(description="The sub-task, with everything the sub-agent needs to know.")
    description: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)
    ] = Field(default="Sub-task", description="A short label (3 to 5 words) people see.")
    type: Literal["researcher", "page_operator", "general"] = Field(
        default="general",
        description=(
            "researcher: reading only (web search and fetch, snapshots, tab content); "
            "page_operator: tabs and page actions; general (default): every tool."
        ),
    )
    tab_id: str | None = Field(
        default=None, min_length=1, description="A tab of yours for the sub-agent to work in."
    )


async def agent(context: ToolContext, args: AgentArgs) -> dict[str, Any]:
    if context.sub_agent or context.spawn_sub_agent is None:
        raise ToolFailure("notInSubAgent", "a sub-agent cannot start sub-agents of its own")
    if args.tab_id is not None and args.tab_id not in {t.id for t in reachable_tabs(context)}:
        raise ToolFailure("tabNotFound", f"you have no tab {args.tab_id!r}; see list_tabs")
    report = await context.spawn_sub_agent(
        SubAgentRequest(args.prompt, args.description, args.type, args.tab_id)
    )
    if report is None:
        raise ToolFailure(
            "budgetSpent", "this turn has no tool calls left for a sub-agent; finish it yourself"
        )
    result: dict[str, Any] = {
        "subAgentId": report.sub_agent_id,
        "status": report.status,
        "report": report.report,
        "toolCalls": report.tool_calls,
    }
    if report.reason:
        result["reason"] = report.reason
    return result


TOOL = Tool(
    name="agent",
    description=(
        "Hand a self-contained sub-task to a sub-agent with its own conversation, and get "
        "its report. Give it all it needs in `prompt`: it sees nothing of this "
        "conversation. Its tool calls count against yours. `type` chooses its tools; "
        "`tabId` hands it one of your tabs."
    ),
    args=AgentArgs,
    gated=False,
    run=agent,
)

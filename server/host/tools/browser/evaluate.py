"""The ``evaluate`` tool: a script the agent wrote, run in the page's main world."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.agent_scripts import run_agent_script
from server.host.tools.page.descriptions import on_page, script_summary
from server.host.tools.page.tab_access import reachable_tab, refuse_secret_tab


class EvaluateArgs(TabArgs):
    """Input of ``evaluate``."""

    expression: str = Field(
        min_length=1,
        max_length=100_000,
        description="A JavaScript expression, a function's source, or statements that "
        "return a value; its JSON value is returned.",
    )


async def evaluate(context: ToolContext, args: EvaluateArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    refuse_secret_tab(tab)
    value = await run_agent_script(
        context, tab, args.expression, world="MAIN", recheck=refuse_secret_tab
    )
    return {"value": value}


async def describe(context: ToolContext, args: EvaluateArgs) -> str:
    return f"Run a script{on_page(context, args.tab_id)}: {script_summary(args.expression)}"


TOOL = Tool(
    name="evaluate",
    description=(
        "Run JavaScript in the page and return its JSON value (a promise is awaited; at most "
        "1 MB of JSON). For reading what a snapshot does not show; prefer the page tools for "
        "actions. A script still running after 10 s is stopped."
    ),
    args=EvaluateArgs,
    gated=True,
    run=evaluate,
    describe=describe,
)

"""The ``evaluate`` tool: a script the agent wrote, run in the page's main world."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field

from server.host.tools.base import TabArgs, Tool, ToolContext, ToolFailure
from server.host.tools.page.descriptions import on_page, script_summary
from server.host.tools.page.tab_access import reachable_tab, refuse_secret_tab


class EvaluateArgs(TabArgs):
    """Input of ``evaluate``."""

    expression: str = Field(
        min_length=1,
        max_length=100_000,
        description="A JavaScript expression or function source; its JSON value is returned.",
    )


async def evaluate(context: ToolContext, args: EvaluateArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    refuse_secret_tab(tab)

    async def run(page: Page) -> Any:
        refuse_secret_tab(tab)  # again: secure entry may have started while this waited
        try:
            return await page.evaluate(args.expression)
        except PlaywrightError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "the script failed"
            raise ToolFailure("scriptError", first[:300]) from None

    done = await context.engine.run(
        context.team_id, tab.id, context.caller, run, deadline=context.settings.evaluate_deadline
    )
    return {"value": done.value}


async def describe(context: ToolContext, args: EvaluateArgs) -> str:
    return f"Run a script{on_page(context, args.tab_id)}: {script_summary(args.expression)}"


TOOL = Tool(
    name="evaluate",
    description=(
        "Run JavaScript in the page and return its JSON value (a promise is awaited). "
        "For reading what a snapshot does not show; prefer the page tools for actions."
    ),
    args=EvaluateArgs,
    gated=True,
    run=evaluate,
    describe=describe,
)

"""The ``execute_script`` tool: the agent's JavaScript in the page, or in the sandbox.

``target: "page"`` runs it in the tab's page: ``world: "ISOLATED"`` (the default) in an
isolated world of its own (the page's DOM, none of the page's JavaScript, and not the
world the tools' own scripts keep their state in), ``"MAIN"`` in the page's own world
(its functions and globals). ``target: "sandbox"`` runs it in the QuickJS sandbox:
pure computation, no page, no helpers. A tab in secure entry is refused.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from server.host.browser.access import holds_secret
from server.host.browser.tabs import Tab
from server.host.sandbox.runner import SandboxLimits, run_in_sandbox
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.agent_scripts import MAX_VALUE_CHARS, run_agent_script
from server.host.tools.page.descriptions import on_page, script_summary
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.results import ToolFailure


class ExecuteScriptArgs(ToolArgs):
    """Input of ``execute_script``."""

    code: str = Field(
        min_length=1,
        max_length=100_000,
        description="JavaScript: an expression, or a function that is then called; its JSON "
        "value returns.",
    )
    target: Literal["page", "sandbox"] = Field(
        description="page: in the tab's page; sandbox: pure computation, no page."
    )
    tab_id: str | None = Field(
        default=None, min_length=1, description="The tab, for target page (from list_tabs)."
    )
    world: Literal["ISOLATED", "MAIN"] = Field(
        default="ISOLATED",
        description="page only: ISOLATED reads the DOM apart from the page's scripts; MAIN "
        "also reaches the page's own functions.",
    )

    @model_validator(mode="after")
    def tab_for_page(self) -> Self:
        if self.target == "page" and self.tab_id is None:
            raise ValueError("target page needs tabId")
        return self


def _refuse_secret(tab: Tab) -> None:
    if holds_secret(tab):
        raise ToolFailure("secretTab", "this tab holds a secret; scripts do not run in it")


async def _in_page(context: ToolContext, args: ExecuteScriptArgs) -> dict[str, Any]:
    assert args.tab_id is not None
    tab = reachable_tab(context, args.tab_id)
    _refuse_secret(tab)
    value = await run_agent_script(
        context, tab, args.code, world=args.world, recheck=_refuse_secret
    )
    return {"target": "page", "world": args.world, "value": value}


async def execute_script(context: ToolContext, args: ExecuteScriptArgs) -> dict[str, Any]:
    if args.target == "page":
        return await _in_page(context, args)
    outcome = await run_in_sandbox(
        f"return ({args.code}\n)",
        limits=SandboxLimits(deadline=context.settings.evaluate_deadline),
    )
    if outcome.parse_error:
        # Statements rather than an expression: run them as a function body.
        outcome = await run_in_sandbox(
            args.code, limits=SandboxLimits(deadline=context.settings.evaluate_deadline)
        )
    if outcome.status != "ok":
        raise ToolFailure(
            "scriptError", outcome.message or "the script failed", status=outcome.status
        )
    if len(outcome.value_json) > MAX_VALUE_CHARS:
        raise ToolFailure(
            "valueTooLarge",
            f"the value is {len(outcome.value_json):,} characters of JSON; at most "
            f"{MAX_VALUE_CHARS:,} return",
            size=len(outcome.value_json),
        )
    result: dict[str, Any] = {"target": "sandbox", "value": outcome.value}
    if outcome.log:
        result["log"] = outcome.log
    return result


async def describe(context: ToolContext, args: ExecuteScriptArgs) -> str:
    if args.target == "sandbox":
        return f"Run a script apart from any page: {script_summary(args.code)}"
    return f"Run a script{on_page(context, args.tab_id)}: {script_summary(args.code)}"


TOOL = Tool(
    name="execute_script",
    description=(
        "Run JavaScript and return its JSON value. target page runs it in a tab's page: "
        "world ISOLATED (default) sees the DOM but none of the page's scripts, MAIN also "
        "reaches the page's own functions. target sandbox runs it with no page at all, for "
        "pure computation (an expression, or statements with return). Refused on a tab in "
        "secure entry."
    ),
    args=ExecuteScriptArgs,
    gated=True,
    run=execute_script,
    describe=describe,
)

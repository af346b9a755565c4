"""The ``execute_script`` tool: the agent's JavaScript in the page, or in the sandbox.

``target: "page"`` runs it in the tab's page: ``world: "ISOLATED"`` (the default) in an
isolated world of its own (the page's DOM, none of the page's JavaScript, and not the
world the tools' own scripts keep their state in), ``"MAIN"`` in the page's own world
(its functions and globals). ``target: "sandbox"`` runs it in the QuickJS sandbox:
pure computation, no page, no helpers. A tab in secure entry is refused.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Literal, Self

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field, model_validator

from server.host.browser.access import holds_secret
from server.host.sandbox.runner import SandboxLimits, run_in_sandbox
from server.host.tools.base import Tool, ToolArgs, ToolContext, ToolFailure
from server.host.tools.page.descriptions import on_page, script_summary
from server.host.tools.page.tab_access import reachable_tab

# The agent's own isolated world: a fresh one per call, apart from the tools' world.
AGENT_WORLD = "crewhost-agent-script"
MAX_VALUE_BYTES = 1024 * 1024


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


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else "the script failed")[:300]


async def _in_isolated_world(page: Page, code: str) -> Any:
    session = await page.context.new_cdp_session(page)
    try:
        tree = await session.send("Page.getFrameTree")
        created = await session.send(
            "Page.createIsolatedWorld",
            {"frameId": tree["frameTree"]["frame"]["id"], "worldName": AGENT_WORLD},
        )
        world = int(created["executionContextId"])

        async def run(method: str, params: dict[str, Any]) -> dict[str, Any]:
            answer = await session.send(
                method, {**params, "awaitPromise": True, "returnByValue": True}
            )
            if "exceptionDetails" in answer:
                details = answer["exceptionDetails"]
                thrown = details.get("exception", {}).get("description") or details.get("text")
                raise ToolFailure("scriptError", str(thrown).splitlines()[0][:300])
            result: dict[str, Any] = answer["result"]
            return result

        result = await run("Runtime.evaluate", {"expression": code, "contextId": world})
        if result.get("type") == "function":  # a function given as the code is called
            result = await run(
                "Runtime.callFunctionOn",
                {"functionDeclaration": code, "executionContextId": world},
            )
        return result.get("value")
    finally:
        with contextlib.suppress(PlaywrightError):
            await session.detach()


async def _in_page(context: ToolContext, args: ExecuteScriptArgs) -> dict[str, Any]:
    assert args.tab_id is not None
    tab = reachable_tab(context, args.tab_id)
    if holds_secret(tab):
        raise ToolFailure("secretTab", "this tab holds a secret; scripts do not run in it")

    async def run(page: Page) -> Any:
        try:
            if args.world == "MAIN":
                return await page.evaluate(args.code)
            return await _in_isolated_world(page, args.code)
        except PlaywrightError as exc:
            raise ToolFailure("scriptError", _first_line(exc)) from None

    done = await context.engine.run(
        context.team_id, tab.id, context.caller, run, deadline=context.settings.evaluate_deadline
    )
    value = done.value
    if len(json.dumps(value, default=str)) > MAX_VALUE_BYTES:
        raise ToolFailure("valueTooLarge", f"the value is larger than {MAX_VALUE_BYTES} bytes")
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
    if len(outcome.value_json) > MAX_VALUE_BYTES:
        raise ToolFailure("valueTooLarge", f"the value is larger than {MAX_VALUE_BYTES} bytes")
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

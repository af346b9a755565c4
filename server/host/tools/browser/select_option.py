"""The ``select_option`` tool: one option of a ``<select>``, by value or label, read back."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import TARGET_HELP, resolve_approved, run_input
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page, quoted
from server.host.tools.page.targets import element_of, run_on_element
from server.host.tools.results import ToolFailure


class SelectOptionArgs(TabArgs):
    """Input of ``select_option``."""

    target: Target = Field(description="The <select>: a ref from the latest snapshot.")
    value: str = Field(min_length=1, description="The option's value or its label (any case).")


async def select_option(context: ToolContext, args: SelectOptionArgs) -> dict[str, Any]:
    approved = approved_element(args.target)

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved, facts = await resolve_approved(tab, page, args.target, approved)
        safety.refuse_gone(facts)
        if not facts.get("select"):
            raise ToolFailure("notSelect", "the target is not a <select>; click it instead")
        safety.refuse_disabled(facts)
        found: dict[str, Any] = await run_on_element(resolved, "options", wanted=args.value)
        if found["index"] < 0:
            listed = ", ".join(found["options"]) + (
                f" and {found['more']} more" if found["more"] else ""
            )
            raise ToolFailure(
                "optionNotFound",
                f"no option has the value or label {args.value!r}; it has {listed}",
            )
        if found["disabled"]:
            raise ToolFailure("targetDisabled", f"the option {args.value!r} is disabled")
        await (await element_of(resolved)).select_option(
            index=found["index"], timeout=context.settings.action_timeout * 1000
        )
        chosen = await run_on_element(resolved, "selected-option")
        if chosen[0] != found["index"]:
            return {
                "ok": False,
                "selected": chosen[1],
                "note": "MISMATCH: the page changed the selection back; check it before going on",
            }
        return {"ok": True, "selected": chosen[1]}

    return await run_input(context, args.tab_id, operation)


async def describe(context: ToolContext, args: SelectOptionArgs) -> str:
    name = await element_name(context, args.tab_id, args.target)
    return f"Choose {quoted(args.value)} in {name}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="select_option",
    description=(
        "Choose an option of a <select> by its value or label; the choice is read back."
        + TARGET_HELP
    ),
    args=SelectOptionArgs,
    gated=True,
    run=select_option,
    describe=describe,
)

"""The ``set_checked`` tool: a checkbox, radio button or switch set and read back."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import (
    TARGET_HELP,
    not_actionable,
    resolve_approved,
    run_input,
)
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page
from server.host.tools.page.targets import element_of, inspect
from server.host.tools.results import ToolFailure


class SetCheckedArgs(TabArgs):
    """Input of ``set_checked``."""

    target: Target = Field(description="The checkbox, radio button or switch: a ref.")
    checked: bool = Field(description="true to check it, false to clear it")


async def set_checked(context: ToolContext, args: SetCheckedArgs) -> dict[str, Any]:
    approved = approved_element(args.target)

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved, facts = await resolve_approved(tab, page, args.target, approved)
        safety.refuse_gone(facts)
        if not facts.get("checkable"):
            raise ToolFailure(
                "notCheckable", "the target is not a checkbox, radio button or switch"
            )
        safety.refuse_disabled(facts)
        safety.refuse_read_only(facts)
        if bool(facts.get("checked")) == args.checked:
            return {"ok": True, "changed": False, "checked": args.checked, "note": "it already was"}
        if not args.checked and (facts.get("type") == "radio" or facts.get("role") == "radio"):
            raise ToolFailure(
                "invalidArguments", "a radio button is cleared by checking another one"
            )
        native = facts.get("type") in ("checkbox", "radio")
        if not native:
            safety.refuse_submit(facts)  # it is clicked, like a button
        timeout = context.settings.action_timeout * 1000
        element = await element_of(resolved)
        try:
            if native:
                await element.set_checked(args.checked, timeout=timeout)
            else:
                await element.click(timeout=timeout)
        except PlaywrightTimeout as exc:
            raise not_actionable(resolved.label, exc) from None
        except PlaywrightError:
            pass  # the page undid the change: the read-back below says so
        now = bool((await inspect(resolved)).get("checked"))
        if now != args.checked:
            return {
                "ok": False,
                "checked": now,
                "note": "MISMATCH: the page kept the old state; check it before going on",
            }
        return {"ok": True, "changed": True, "checked": now}

    return await run_input(context, args.tab_id, operation)


async def describe(context: ToolContext, args: SetCheckedArgs) -> str:
    name = await element_name(context, args.tab_id, args.target)
    verb = "Check" if args.checked else "Uncheck"
    return f"{verb} {name}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="set_checked",
    description=(
        "Check or clear a checkbox, radio button or switch; the state is read back." + TARGET_HELP
    ),
    args=SetCheckedArgs,
    gated=True,
    run=set_checked,
    describe=describe,
)

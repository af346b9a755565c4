"""The ``click`` tool: one click on one element, refused where a click would commit.

Like every page action it runs in the tab's input queue, resolves its target to
exactly one element, applies the refusals of ``page.safety`` and only then touches
the page; afterwards it says what changed, or NOT VERIFIED.
"""

from __future__ import annotations

from typing import Any

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
    changed_result,
    not_actionable,
    observed,
    resolve_approved,
    run_input,
)
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page
from server.host.tools.page.targets import element_of


class ClickArgs(TabArgs):
    """Input of ``click``."""

    target: Target = Field(description="The element to click: a ref from the latest snapshot.")


async def click(context: ToolContext, args: ClickArgs) -> dict[str, Any]:
    approved = approved_element(args.target)

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved, facts = await resolve_approved(tab, page, args.target, approved)
        # A point on another site's frame (a bot-check box a snapshot offered) has no facts here.
        if resolved.point is None or not facts.get("iframe"):
            safety.check_clickable(facts)
        timeout = context.settings.action_timeout * 1000
        element = await element_of(resolved) if resolved.point is None else None

        async def act() -> None:
            try:
                if element is not None:
                    await element.click(timeout=timeout)
                elif resolved.point is not None:
                    await page.mouse.click(*resolved.point)
            except PlaywrightTimeout as exc:
                raise not_actionable(resolved.label, exc) from None

        return changed_result(*await observed(context, tab, page, resolved, act))

    return await run_input(context, args.tab_id, operation)


async def describe(context: ToolContext, args: ClickArgs) -> str:
    name = await element_name(context, args.tab_id, args.target)
    return f"Click {name}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="click",
    description=(
        "Click one element. Refused for disabled controls, password fields, controls whose "
        "text reads like a commit (submit, pay, send, confirm, place order...) and buttons "
        "that would submit a form: those are for a person. The result says what changed, "
        "or NOT VERIFIED when nothing did." + TARGET_HELP
    ),
    args=ClickArgs,
    gated=True,
    run=click,
    describe=describe,
)

"""The ``hover`` tool: the pointer over one element (menus, tooltips)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import ElementHandle, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import TARGET_HELP, not_actionable, observed, run_input
from server.host.tools.page.targets import (
    element_of,
    inspect,
    resolve_target,
)


class HoverArgs(TabArgs):
    """Input of ``hover``."""

    target: Target = Field(description="The element to point at: a ref from the latest snapshot.")


async def hover(context: ToolContext, args: HoverArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        element: ElementHandle | None = None
        if resolved.point is None:
            safety.refuse_gone(await inspect(resolved))
            element = await element_of(resolved)

        async def act() -> None:
            try:
                if element is not None:
                    await element.hover(timeout=context.settings.action_timeout * 1000)
                elif resolved.point is not None:
                    await page.mouse.move(*resolved.point)
            except PlaywrightTimeout as exc:
                raise not_actionable(resolved.label, exc) from None

        reasons, _ = await observed(context, tab, page, resolved, act)
        return {"ok": True, "changed": bool(reasons), "reasons": reasons}

    return await run_input(context, args.tab_id, operation)


TOOL = Tool(
    name="hover",
    description="Move the pointer over one element (menus, tooltips)." + TARGET_HELP,
    args=HoverArgs,
    gated=False,
    run=hover,
)

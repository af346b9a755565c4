"""The ``scroll`` tool: the page or its scrolling part by a viewport or pixels, or to an element."""

from __future__ import annotations

from typing import Any, Literal

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.page.scripts import page_script
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import not_actionable, run_input
from server.host.tools.page.targets import (
    element_of,
    inspect,
    resolve_target,
)


class ScrollArgs(TabArgs):
    """Input of ``scroll``."""

    target: Target | None = Field(
        default=None, description="Scroll until this element is in view (direction is ignored)."
    )
    direction: Literal["down", "up", "left", "right"] = "down"
    pixels: int | None = Field(
        default=None, ge=1, le=100_000, description="How far; one viewport when left out."
    )


async def scroll(context: ToolContext, args: ScrollArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        if args.target is not None:
            resolved = await resolve_target(tab, page, args.target)
            safety.refuse_gone(await inspect(resolved))
            element = await element_of(resolved)
            try:
                await element.scroll_into_view_if_needed(
                    timeout=context.settings.action_timeout * 1000
                )
            except PlaywrightTimeout as exc:
                raise not_actionable(resolved.label, exc) from None
            return {"ok": True, "inView": True}
        size = await page.evaluate(page_script("viewport-size"))
        step = args.pixels or int(size[1 if args.direction in ("down", "up") else 0] * 0.9)
        dx = {"left": -step, "right": step}.get(args.direction, 0)
        dy = {"up": -step, "down": step}.get(args.direction, 0)
        moved: dict[str, Any] = await page.evaluate(page_script("scroll"), [dx, dy])
        result: dict[str, Any] = {"ok": True, **moved}
        if not moved["moved"]:
            result["note"] = "nothing moved: the page (or the part at its middle) is at its end"
        return result

    return await run_input(context, args.tab_id, operation)


TOOL = Tool(
    name="scroll",
    description=(
        "Scroll the page (or the scrollable part at its middle) by a viewport or some "
        "pixels, or bring one element into view."
    ),
    args=ScrollArgs,
    gated=False,
    run=scroll,
)

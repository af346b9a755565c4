"""The ``press`` tool: a key or chord; Enter that would submit a form is refused."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import (
    changed_result,
    hold_focus,
    observed,
    resolve_approved,
    run_input,
)
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page, shortened
from server.host.tools.page.targets import (
    Resolved,
    element_of,
    focused_element,
    inspect,
)
from server.host.tools.results import ToolFailure


class PressArgs(TabArgs):
    """Input of ``press``."""

    key: str = Field(
        min_length=1,
        description="A key or chord as Playwright names it: Enter, Escape, ArrowDown, Control+A.",
    )
    target: Target | None = Field(
        default=None, description="Focus this element first; without it the key goes to focus."
    )


async def press(context: ToolContext, args: PressArgs) -> dict[str, Any]:
    approved = approved_element(args.target) if args.target is not None else None

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved: Resolved | None = None
        # The element the key reaches: the target, or what has focus (inside frames too).
        reached: Resolved | None = None
        if args.target is not None:
            resolved, facts = await resolve_approved(tab, page, args.target, approved)
            safety.refuse_gone(facts)
            safety.refuse_disabled(facts)
            reached = resolved
            if facts.get("iframe"):
                # Focusing a frame sends the key on to what is focused inside it: judge that.
                reached = await focused_element(page, within=resolved) or resolved
                facts = await inspect(reached)
        else:
            reached = await focused_element(page)
            facts = await inspect(reached) if reached is not None else {}
        safety.check_key(args.key, facts)
        if resolved is not None:
            await (await element_of(resolved)).focus()
            await hold_focus(resolved, typed=False)

        async def act() -> None:
            try:
                await page.keyboard.press(args.key)
            except PlaywrightError as exc:
                if "Unknown key" in str(exc):
                    raise ToolFailure("invalidArguments", f"unknown key {args.key!r}") from None
                raise

        # Watched in the frame the key reaches too: a form there may load a new document.
        return changed_result(*await observed(context, tab, page, reached, act))

    return await run_input(context, args.tab_id, operation)


async def describe(context: ToolContext, args: PressArgs) -> str:
    key = shortened(args.key)
    if args.target is None:
        return f"Press {key}{on_page(context, args.tab_id)}"
    name = await element_name(context, args.tab_id, args.target)
    return f"Press {key} in {name}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="press",
    description=(
        "Press a key or chord, on a target or on whatever has focus. Enter that would "
        "submit a form is refused. The result says what changed, or NOT VERIFIED."
    ),
    args=PressArgs,
    gated=True,
    run=press,
    describe=describe,
)

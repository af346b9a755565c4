"""The ``wait_for`` tool: until text or an element appears, or the page reaches a load state."""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Self

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field, model_validator

from server.host.browser.tabs import Tab
from server.host.page.scripts import page_script
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.page.targets import inspect, resolve_target
from server.host.tools.results import ToolFailure

_POLL = 0.1


_DOM_QUIET_MS = 500


_MARGIN = 2.0


class WaitForArgs(TabArgs):
    """Input of ``wait_for``: exactly one of ``text``, ``target`` and ``state``."""

    text: str | None = Field(default=None, min_length=1, description="Wait until this text shows.")
    target: Target | None = Field(default=None, description="Wait until this element shows.")
    state: Literal["load", "domcontentloaded", "dom-quiet"] | None = Field(
        default=None,
        description="Wait for the page's load event, its DOM, or 500 ms without DOM changes.",
    )
    timeout: int = Field(
        default=10_000, ge=100, le=30_000, description="Milliseconds to wait at most."
    )

    @model_validator(mode="after")
    def one_condition(self) -> Self:
        given = [name for name in ("text", "target", "state") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, target and state")
        return self


async def _wait_for_target(tab: Tab, page: Page, args: WaitForArgs, end: float) -> None:
    loop = asyncio.get_running_loop()
    assert args.target is not None
    while True:
        try:
            resolved = await resolve_target(tab, page, args.target)
            if resolved.pick is None or (await inspect(resolved)).get("visible"):
                return
        except ToolFailure as failure:
            if failure.code != "targetNotFound":
                raise
        if loop.time() >= end:
            raise ToolFailure("waitTimeout", f"the element did not show within {args.timeout} ms")
        await asyncio.sleep(_POLL)


async def _wait(tab: Tab, page: Page, args: WaitForArgs) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    end = start + args.timeout / 1000
    if args.state == "load" or args.state == "domcontentloaded":
        try:
            await page.wait_for_load_state(args.state, timeout=args.timeout)
        except PlaywrightError:
            raise ToolFailure("waitTimeout", f"no {args.state} within {args.timeout} ms") from None
    elif args.state == "dom-quiet":
        if not await page.evaluate(page_script("dom-quiet"), [_DOM_QUIET_MS, args.timeout]):
            raise ToolFailure("waitTimeout", f"the page kept changing for {args.timeout} ms")
    elif args.text is not None:
        while not await page.evaluate(page_script("text-shown"), args.text):
            if loop.time() >= end:
                raise ToolFailure("waitTimeout", f"the text did not show within {args.timeout} ms")
            await asyncio.sleep(_POLL)
    else:
        await _wait_for_target(tab, page, args, end)
    return {"ok": True, "waitedMs": round((loop.time() - start) * 1000)}


async def wait_for(context: ToolContext, args: WaitForArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    done = await context.engine.run(
        context.team_id,
        tab.id,
        context.caller,
        lambda page: _wait(tab, page, args),
        deadline=args.timeout / 1000 + _MARGIN,
    )
    return dict(done.value or {})


TOOL = Tool(
    name="wait_for",
    description=(
        "Wait until some text shows, an element shows, or the page reaches a state "
        "(load, domcontentloaded, or dom-quiet: 500 ms without DOM changes). Give exactly "
        "one of text, target and state; timeout in milliseconds (at most 30000)."
    ),
    args=WaitForArgs,
    gated=False,
    run=wait_for,
)

"""Did an action change the page? Two page states compared, as seed 000 does after a click.

A state holds the address, the title, the number of visible fields, their values,
what is expanded, open dialogs and the length of the visible text, read in the tools'
isolated world (a page cannot hide a change or fake one). An action whose states
differ returns ``changed`` with the reasons; one whose states do not is reported as
NOT VERIFIED, never as done.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.host.browser.engine import BrowserEngine
from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated

NOT_VERIFIED = (
    "NOT VERIFIED: the page showed no change after this action (same address, title, "
    "fields, values, expansion and text); take a snapshot before assuming it worked"
)
_POLL = 0.05


async def page_state(page: Page, pick: str | None = None) -> dict[str, Any]:
    """The state of the main frame, and (as ``frame``) of the frame holding the element
    ``pick`` names in the isolated world, when that is a child frame."""
    state: dict[str, Any] = await evaluate_isolated(page, "state", pick)
    return state


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Why ``after`` is not ``before``, in words an agent reads."""
    reasons: list[str] = []
    if before["url"] != after["url"]:
        reasons.append("the address changed")
    if before["title"] != after["title"]:
        reasons.append("the title changed")
    if before["fields"] != after["fields"]:
        reasons.append(f"visible fields went from {before['fields']} to {after['fields']}")
    elif before["values"] != after["values"]:
        reasons.append("a field value changed")
    if before["expanded"] != after["expanded"]:
        reasons.append("something expanded or collapsed")
    if before["dialogs"] != after["dialogs"]:
        reasons.append(f"open dialogs went from {before['dialogs']} to {after['dialogs']}")
    if before["textLength"] != after["textLength"]:
        reasons.append(f"the text length went from {before['textLength']} to {after['textLength']}")
    if "frame" in before and "frame" in after:
        reasons.extend(f"in the frame: {r}" for r in differences(before["frame"], after["frame"]))
    return reasons


def opened_tabs(engine: BrowserEngine, tab: Tab, before: set[str]) -> list[str]:
    """Ids of the tabs this tab opened since ``before`` (the ids that existed then)."""
    return [
        t.id
        for t in engine.list_tabs(tab.team_id)
        if t.id not in before and t.opener_tab_id == tab.id
    ]


async def observe_change(
    engine: BrowserEngine,
    tab: Tab,
    page: Page,
    pick: str | None,
    before: dict[str, Any],
    tabs_before: set[str],
    window: float,
) -> tuple[list[str], list[str]]:
    """Watches the page for up to ``window`` seconds after an action.

    Gives ``(reasons, new tab ids)``; it returns as soon as something differs. A
    navigation in progress is waited for.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + window
    while True:
        new_tabs = opened_tabs(engine, tab, tabs_before)
        try:
            after = await page_state(page, pick)
        except (PlaywrightError, IsolatedScriptError):
            # The document is being replaced: that is a change; wait for the new one to read.
            with contextlib.suppress(PlaywrightError):
                await page.wait_for_load_state("domcontentloaded", timeout=window * 1000 + 1000)
            after = None
        if after is None:
            reasons = ["the page loaded a new document"]
        else:
            reasons = differences(before, after)
        if new_tabs:
            reasons.append("a new tab opened")
        if reasons or loop.time() >= end or page.is_closed():
            return reasons, new_tabs
        await asyncio.sleep(_POLL)

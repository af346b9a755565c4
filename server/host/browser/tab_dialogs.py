"""A tab's page dialogs: the one an agent's input action opens goes to that agent.

Any other dialog waits for a person. A dialog holds the page (its load, the click that
opened it), so an input action ends when its dialog opens and the dialog is its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from playwright.async_api import Page

from server.common.errors import Conflict
from server.common.tasks import wait_set
from server.host.browser.callers import Caller
from server.host.browser.tabs import Tab, TabResult

T = TypeVar("T")


async def run_input_action(
    tab: Tab,
    agent_id: str,
    page: Page,
    operation: Callable[[Page], Awaitable[T]],
    *,
    stale: bool,
    settle: float,
) -> TabResult[T]:
    """Runs an agent's input action; a dialog it opens ends it and goes to that agent."""
    opened = asyncio.Event()
    tab.input_agent_id, tab.dialog_opened = agent_id, opened
    action = asyncio.ensure_future(operation(page))
    waiter = asyncio.ensure_future(opened.wait())
    try:
        await asyncio.wait({action, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not opened.is_set() and action.exception() is None:
            # A dialog may come just after the action (a handler on a timer): settle briefly.
            await wait_set(opened, settle)
    finally:
        tab.input_agent_id, tab.dialog_opened = None, None
        waiter.cancel()
        if not action.done():
            action.cancel()  # the click waits on the dialog; the dialog is the answer
            with contextlib.suppress(BaseException):
                await action
    if opened.is_set():
        return TabResult(None, stale_refs=stale, dialog=tab.dialog)
    return TabResult(action.result(), stale_refs=stale)


async def answer_dialog(tab: Tab, caller: Caller, accept: bool, text: str | None) -> None:
    """Answers the tab's dialog: an agent only its own, a person any."""
    pending = tab.dialog
    if pending is None:
        raise Conflict("this dialog is closed", code="dialogClosed")
    if caller.is_agent and pending.agent_id != caller.agent_id:
        raise Conflict("a person must answer this dialog", code="dialogForPerson")
    tab.dialog = None
    if accept:
        await pending.dialog.accept(*([text] if text is not None else []))
    else:
        await pending.dialog.dismiss()

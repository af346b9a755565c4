"""Running the tools' own scripts in an isolated world of a page's main frame.

An isolated world shares the page's DOM but none of its JavaScript: a page that
replaces ``querySelectorAll``, ``MutationObserver`` or ``Element.prototype.click``
cannot change what these scripts see or do, and cannot see them.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

WORLD_NAME = "crewhost-tools"
# performance.timeOrigin names one document: a new document of the tab has a new one.
DOCUMENT_ID = "performance.timeOrigin"

S = TypeVar("S")


class IsolatedScriptError(Exception):
    """The script threw, or the page went away while it ran."""


# One CDP session per page, made on first use and gone with the page: attaching and
# detaching for every call cost more than the calls themselves.
_SESSIONS: WeakKeyDictionary[Page, CDPSession] = WeakKeyDictionary()


async def _session(page: Page) -> CDPSession:
    session = _SESSIONS.get(page)
    if session is None:
        session = await page.context.new_cdp_session(page)
        _SESSIONS[page] = session
    return session


async def _evaluate_in_new_world(session: CDPSession, expression: str) -> dict[str, Any]:
    # A world per call: a context id kept across calls could name another document's
    # context after the page changed process, so each call asks for the current frame's.
    tree = await session.send("Page.getFrameTree")
    frame_id = tree["frameTree"]["frame"]["id"]
    world = await session.send(
        "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME}
    )
    return await session.send(
        "Runtime.evaluate",
        {
            "expression": expression,
            "contextId": world["executionContextId"],
            "returnByValue": True,
            "awaitPromise": True,
        },
    )


async def evaluate_isolated(page: Page, function: str, argument: Any = None) -> Any:
    """Calls the JavaScript ``function`` (an expression) with ``argument``; its JSON result.

    A returned promise is awaited. The world lasts as long as the document.
    """
    expression = f"({function})({json.dumps(argument)})"
    session = await _session(page)
    try:
        reply = await _evaluate_in_new_world(session, expression)
    except PlaywrightError:
        # The session may have ended with its target (a renderer swap); one new attempt.
        _SESSIONS.pop(page, None)
        with contextlib.suppress(PlaywrightError):
            await session.detach()
        session = await _session(page)
        reply = await _evaluate_in_new_world(session, expression)
    details = reply.get("exceptionDetails")
    if details is not None:
        text = (details.get("exception") or {}).get("description") or details.get("text")
        raise IsolatedScriptError(str(text)[:300])
    return reply.get("result", {}).get("value")


class PerDocument(Generic[S]):
    """State the tools keep about a page's current document, forgotten with the page.

    A world of our own forgets its globals between calls, and the page's own world is
    the page's to read, so this state stays on the Python side, keyed by the page and
    the document's time origin.
    """

    def __init__(self, factory: type[S]) -> None:
        self._factory = factory
        self._states: WeakKeyDictionary[Page, tuple[float, S]] = WeakKeyDictionary()

    def get(self, page: Page, document_id: float) -> S:
        """The state of the document ``document_id`` of ``page``; fresh for a new document."""
        held = self._states.get(page)
        if held is None or held[0] != document_id:
            held = (document_id, self._factory())
            self._states[page] = held
        return held[1]

"""An agent's own JavaScript in a tab's page (``evaluate``, ``execute_script``).

Its value is written as JSON and measured in the page (``agent-value.js``, in the world the
agent chose): a value longer than ``MAX_VALUE_CHARS`` never crosses to the host, only its
length does, and the host checks the length of what it got all the same.

A script that runs past its deadline would keep the page's main thread, and every later call
on the tab would wait for it. So it is stopped (``Runtime.terminateExecution``, sent on a CDP
session attached before the script ran: one attached to a busy renderer gets no answer), and
the page is asked a trivial question. A page that does not answer (the script started again,
or it waits in the browser's own code, such as a synchronous request) has its renderer ended,
and the engine loads the tab again at its address on its next call; unless the tab holds a
secret or a person's work, which that would lose: then a person is asked to take it over.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any, Literal
from weakref import WeakKeyDictionary

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.tabs import Tab
from server.host.page.scripts import around_agent_code
from server.host.tools.context import ToolContext
from server.host.tools.page.tab_access import announce_takeover, holds_secret
from server.host.tools.results import ToolFailure

# The longest JSON text of a value that returns, in characters.
MAX_VALUE_CHARS = 1024 * 1024
# The agent's own isolated world: a fresh one per call, apart from the tools' world.
AGENT_WORLD = "crewhost-agent-script"
_VALUE_SCRIPT = "agent-value"
# What became of a tab whose script ran past its deadline.
Recovery = Literal["terminated", "reloaded", "takeoverRequested"]
World = Literal["MAIN", "ISOLATED"]

_SESSIONS: WeakKeyDictionary[Page, CDPSession] = WeakKeyDictionary()


async def run_agent_script(
    context: ToolContext, tab: Tab, code: str, *, world: World, recheck: Callable[[Tab], None]
) -> Any:
    """The JSON value of the agent's ``code`` run in ``tab``'s page (an expression, a function
    that is then called, or statements that ``return`` it), in the page's main world or in an
    isolated world of its own. ``recheck`` refuses the tab again once the call's turn came.

    Fails with ``scriptError``, ``valueTooLarge`` (with the value's ``size``), or
    ``tabDeadline`` (with ``recovered``: what became of the tab)."""
    settings = context.settings
    deadline = settings.evaluate_deadline
    # The script's deadline, then the time to stop it, ask the page and end its renderer.
    budget = deadline + 2 * settings.script_answer_wait + settings.script_end_wait + 1.0

    async def run(page: Page) -> Any:
        recheck(tab)  # again: secure entry may have started while this waited
        try:
            session = await _session(page)
            context_id = await _agent_world(session) if world == "ISOLATED" else None
            try:
                async with asyncio.timeout(deadline):
                    answer = await _evaluate(session, code, context_id)
            except TimeoutError:
                recovered = await _recover(context, tab, page, session)
                raise ToolFailure(
                    "tabDeadline", _OUTCOMES[recovered].format(deadline), recovered=recovered
                ) from None
        except PlaywrightError as exc:
            raise ToolFailure("scriptError", _first_line(str(exc))) from None
        return _value(answer)

    done = await context.engine.run(context.team_id, tab.id, context.caller, run, deadline=budget)
    return done.value


_OUTCOMES: dict[Recovery, str] = {
    "terminated": "the script ran longer than {:g} s and was stopped; the tab works",
    "reloaded": (
        "the script ran longer than {:g} s and the page stopped answering: it was ended, and "
        "the tab loads its address again on its next call (what the page held is gone)"
    ),
    "takeoverRequested": (
        "the script ran longer than {:g} s and the page stopped answering; it was left as it "
        "is (it holds a secret or a person's work, or it would not end), and a person was "
        "asked to take the tab over"
    ),
}


async def _session(page: Page) -> CDPSession:
    """The page's session for agent scripts, attached while the page still answers."""
    session = _SESSIONS.get(page)
    if session is None:
        session = await page.context.new_cdp_session(page)
        _SESSIONS[page] = session
    return session


async def _agent_world(session: CDPSession) -> int:
    tree = await session.send("Page.getFrameTree")
    created = await session.send(
        "Page.createIsolatedWorld",
        {"frameId": tree["frameTree"]["frame"]["id"], "worldName": AGENT_WORLD},
    )
    return int(created["executionContextId"])


async def _evaluate(session: CDPSession, code: str, context_id: int | None) -> dict[str, Any]:
    """Runs ``agent-value.js`` around ``code``: as an expression, or, when it does not parse
    as one, as statements. Gives the CDP answer of the form that parsed (else the first)."""
    first: dict[str, Any] | None = None
    for body in (False, True):
        params: dict[str, Any] = {
            "expression": around_agent_code(_VALUE_SCRIPT, code, MAX_VALUE_CHARS, body=body),
            "awaitPromise": True,
            "returnByValue": True,
        }
        if context_id is not None:
            params["contextId"] = context_id
        answer = await session.send("Runtime.evaluate", params)
        if not _unparsed(answer):
            return answer
        first = first or answer
    assert first is not None
    return first


def _unparsed(answer: dict[str, Any]) -> bool:
    """Whether the script did not parse: nothing of it ran. Everything that runs is inside
    the async ``agent-value.js``, so what it throws rejects a promise, with a stack."""
    details = answer.get("exceptionDetails")
    if details is None:
        return False
    thrown = details.get("exception", {})
    return thrown.get("className") == "SyntaxError" and "stackTrace" not in details


def _value(answer: dict[str, Any]) -> Any:
    if "exceptionDetails" in answer:
        raise ToolFailure("scriptError", _thrown(answer["exceptionDetails"]))
    given = answer.get("result", {}).get("value")
    if not isinstance(given, dict):
        raise ToolFailure("scriptError", "the page gave no value for the script")
    if "size" in given:
        raise _too_large(int(given["size"]))
    if given.get("unserializable"):
        raise ToolFailure(
            "scriptError", "the value cannot be written as JSON (it holds a cycle or a BigInt)"
        )
    if given.get("fits"):
        value = given.get("value")
        if len(json.dumps(value)) > MAX_VALUE_CHARS:  # a main world whose page changed JSON
            raise _too_large(len(json.dumps(value)))
        return value
    text = given.get("json")
    if not isinstance(text, str):
        raise ToolFailure("scriptError", "the page gave no value for the script")
    if len(text) > MAX_VALUE_CHARS:  # a main world whose page changed what measures it
        raise _too_large(len(text))
    try:
        return json.loads(text)
    except ValueError:
        raise ToolFailure("scriptError", "the page gave a value that is not JSON") from None


def _too_large(size: int) -> ToolFailure:
    return ToolFailure(
        "valueTooLarge",
        f"the value is {size:,} characters of JSON; at most {MAX_VALUE_CHARS:,} return",
        size=size,
    )


def _thrown(details: dict[str, Any]) -> str:
    thrown = details.get("exception", {}).get("description") or details.get("text")
    return _first_line(str(thrown))


def _first_line(text: str) -> str:
    text = text.strip()
    return (text.splitlines()[0] if text else "the script failed")[:300]


async def _recover(context: ToolContext, tab: Tab, page: Page, session: CDPSession) -> Recovery:
    """Stops the page's script; a page that still does not answer is ended (the engine
    loads it again), or, when that would lose a secret or a person's work, handed to a
    person."""
    wait = context.settings.script_answer_wait
    with contextlib.suppress(PlaywrightError, TimeoutError):
        async with asyncio.timeout(wait):
            await session.send("Runtime.terminateExecution")
    if await _answers(session, wait):
        return "terminated"
    if not (holds_secret(tab) or tab.person_held) and await _end_renderer(
        page, session, context.settings.script_end_wait
    ):
        return "reloaded"
    announce_takeover(
        context,
        tab,
        "the page stopped answering after the agent's script; reload it when nothing on it "
        "is needed",
        "pageNotAnswering",
    )
    return "takeoverRequested"


async def _answers(session: CDPSession, wait: float) -> bool:
    try:
        async with asyncio.timeout(wait):
            answer = await session.send("Runtime.evaluate", {"expression": "0"})
    except (PlaywrightError, TimeoutError):
        return False
    return "exceptionDetails" not in answer


async def _end_renderer(page: Page, session: CDPSession, wait: float) -> bool:
    """Ends the page's renderer (``Page.crash``): the tab is marked crashed, as by any crash,
    and loads again on its next call. Whether it ended within ``wait``."""
    ended = asyncio.ensure_future(page.wait_for_event("crash", timeout=wait * 1000))
    # Never answered: the renderer that would answer is gone.
    asking = asyncio.ensure_future(session.send("Page.crash"))
    try:
        await ended
    except PlaywrightError:
        return False
    finally:
        for task in (ended, asking):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    return True

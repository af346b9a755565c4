"""An agent's own page scripts (evaluate, execute_script in both worlds) in real Chromium:
a script that never ends is stopped and its tab answers the next call; a page that stays
stuck is reloaded, or handed to a person when it holds a person's work; and a value larger
than the cap is cut in the page, so the host never receives it.

The deadlines are shortened through the tools' settings.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import CDPSession

from server.common.protocol.events import BrowserTakeoverRequested, HostEvent
from server.host.tools.context import ToolContext
from server.host.tools.page.agent_scripts import MAX_VALUE_CHARS
from tests.host.tools.conftest import TEAM, call, open_page
from tests.support.sites import Site, serving

PAGE = "/script.html"
# Each way to run an agent's script in a page: the tool and its arguments but the code.
RUNNERS = {
    "evaluate": ("evaluate", "expression", {}),
    "execute_script MAIN": ("execute_script", "code", {"target": "page", "world": "MAIN"}),
    "execute_script ISOLATED": ("execute_script", "code", {"target": "page"}),
}
ENDLESS = "while (true) {}"


def _quick(context: ToolContext, *, answer_wait: float = 2.0) -> ToolContext:
    settings = dataclasses.replace(
        context.settings, evaluate_deadline=0.5, script_answer_wait=answer_wait
    )
    return dataclasses.replace(context, settings=settings)


async def _run(context: ToolContext, runner: str, tab_id: str, code: str) -> dict[str, Any]:
    tool, field, extra = RUNNERS[runner]
    return await call(context, tool, tabId=tab_id, **{field: code}, **extra)


class Stuck:
    """A site whose /never answers no request until the test ends (or releases it)."""

    def __init__(self) -> None:
        self.site: Site | None = None
        self.released = asyncio.Event()

    def script(self) -> str:
        """A script the page cannot be stopped in: it waits in the browser's own code, on a
        synchronous request that is not answered."""
        assert self.site is not None
        url = json.dumps(self.site.url("/never"))
        return (
            f"(() => {{ const x = new XMLHttpRequest(); x.open('GET', {url}, false); x.send(); "
            "return 1 })()"
        )


@pytest_asyncio.fixture(loop_scope="module")
async def stuck() -> AsyncIterator[Stuck]:
    made = Stuck()

    async def never(_request: web.Request) -> web.Response:
        await made.released.wait()
        return web.Response(text="late")

    async def page(_request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>stuck</title>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/never", never)
    app.router.add_get("/", page)
    async with serving(app) as running:
        made.site = running
        try:
            yield made
        finally:
            made.released.set()


@pytest.mark.parametrize("runner", list(RUNNERS))
async def test_a_script_that_never_ends_is_stopped_and_the_tab_answers_next(
    context: ToolContext, site: Site, runner: str
) -> None:
    tab = await open_page(context, site, PAGE)
    stopped = await _run(_quick(context), runner, tab.id, ENDLESS)
    assert stopped["error"]["code"] == "tabDeadline", stopped
    assert stopped["error"]["recovered"] == "terminated"
    assert "was stopped" in stopped["error"]["message"]
    # The next script within the usual deadline: a loaded machine can take more than the
    # short one the endless script was stopped at to run the next one in that tab.
    after = await _run(context, runner, tab.id, "document.title")
    assert after == {**after, "value": "script steps"}
    snapshot = await call(context, "snapshot", tabId=tab.id)
    assert "Steps" in snapshot["tree"]


async def test_a_promise_that_never_settles_leaves_the_next_script_alone(
    context: ToolContext, site: Site
) -> None:
    context = _quick(context)
    tab = await open_page(context, site, PAGE)
    waited = await call(context, "evaluate", tabId=tab.id, expression="new Promise(() => {})")
    assert waited["error"]["recovered"] == "terminated", waited
    after = await call(context, "evaluate", tabId=tab.id, expression="1 + 1")
    assert after == {"value": 2}


@pytest.mark.parametrize("runner", ["evaluate", "execute_script MAIN"])
async def test_a_page_that_stays_stuck_is_reloaded_at_its_address(
    context: ToolContext, stuck: Stuck, runner: str
) -> None:
    assert stuck.site is not None
    context = _quick(context, answer_wait=0.5)
    tab = await open_page(context, stuck.site, "/")
    await _run(context, runner, tab.id, "window.mark = 'before'")
    ended = await _run(context, runner, tab.id, stuck.script())
    assert ended["error"]["code"] == "tabDeadline", ended
    assert ended["error"]["recovered"] == "reloaded"
    after = await _run(context, runner, tab.id, "[document.title, typeof window.mark]")
    assert after["value"] == ["stuck", "undefined"]  # a new document, at the same address
    assert tab.url == stuck.site.url("/")


async def test_a_stuck_page_a_person_worked_on_is_handed_to_a_person(
    context: ToolContext, stuck: Stuck
) -> None:
    assert stuck.site is not None
    announced: list[HostEvent] = []
    context = _quick(
        dataclasses.replace(context, announce=lambda _team, event: announced.append(event)),
        answer_wait=0.5,
    )
    tab = await open_page(context, stuck.site, "/")
    context.engine.take_control(TEAM, tab.id, "account-of-a-person")
    context.engine.release(TEAM, tab.id, "account-of-a-person")
    ended = await call(context, "evaluate", tabId=tab.id, expression=stuck.script())
    assert ended["error"]["code"] == "tabDeadline", ended
    assert ended["error"]["recovered"] == "takeoverRequested"
    assert [(type(e), getattr(e, "code", None)) for e in announced] == [
        (BrowserTakeoverRequested, "pageNotAnswering")
    ]
    assert not tab.crashed  # the person's page stays as it was
    stuck.released.set()  # the page's request ends: the page answers again
    after = await call(context, "evaluate", tabId=tab.id, expression="document.title")
    assert after == {"value": "stuck"}


@pytest.fixture
def cdp_answers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every CDP answer the host receives on a CDP session, as JSON text."""
    sizes: list[int] = []
    send = CDPSession.send

    async def recording(self: CDPSession, method: str, params: Any = None) -> Any:
        answer = await send(self, method, params)
        sizes.append(len(json.dumps(answer)))
        return answer

    monkeypatch.setattr(CDPSession, "send", recording)
    return sizes


@pytest.mark.parametrize("runner", list(RUNNERS))
async def test_a_value_past_the_cap_is_cut_in_the_page(
    context: ToolContext, site: Site, runner: str, cdp_answers: list[int]
) -> None:
    tab = await open_page(context, site, PAGE)
    fifty_megabytes = 50 * 1024 * 1024
    big = await _run(context, runner, tab.id, f"'x'.repeat({fifty_megabytes})")
    assert big["error"]["code"] == "valueTooLarge", big
    assert big["error"]["size"] == fifty_megabytes + 2  # its JSON text: the quotes too
    assert f"{fifty_megabytes + 2:,} characters" in big["error"]["message"]
    assert cdp_answers
    assert max(cdp_answers) < 10_000  # the string never left the page
    at_the_cap = await _run(context, runner, tab.id, f"'x'.repeat({MAX_VALUE_CHARS - 2})")
    assert at_the_cap["truncated"] is True  # returned, then cut to what a result holds


@pytest.mark.parametrize("runner", list(RUNNERS))
async def test_statements_return_their_value_and_a_syntax_error_is_the_scripts(
    context: ToolContext, site: Site, runner: str
) -> None:
    tab = await open_page(context, site, PAGE)
    statements = await _run(context, runner, tab.id, "const a = 21; return a * 2;")
    assert statements == {**statements, "value": 42}
    function = await _run(context, runner, tab.id, "async () => document.title")
    assert function == {**function, "value": "script steps"}
    broken = await _run(context, runner, tab.id, "return (")
    assert broken["error"]["code"] == "scriptError"
    assert broken["error"]["message"].startswith("SyntaxError")
    thrown = await _run(context, runner, tab.id, "(() => { throw new Error('boom') })()")
    assert thrown["error"] == {**thrown["error"], "code": "scriptError", "message": "Error: boom"}
    circle = await _run(context, runner, tab.id, "(() => { const o = {}; o.o = o; return o })()")
    assert circle["error"]["code"] == "scriptError"
    assert "JSON" in circle["error"]["message"]

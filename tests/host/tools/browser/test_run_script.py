"""run_script against fixture pages: every helper form, the checks before each step, and
every way a script stops; and execute_script in both page worlds and in the sandbox.

The module shares one Chromium (tests/host/tools/conftest.py), and its loop watchdog fails
a test whose script blocked the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest_asyncio
from aiohttp import web

from server.host.browser.callers import Caller
from server.host.browser.protection import protect, release
from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import TEAM, call, open_page
from tests.support.sites import Site, serving

PERSON = "account-of-a-person"


class Hook:
    """A loopback server a page script fetches, so a test acts at a known point of a script."""

    def __init__(self) -> None:
        self.site: Site | None = None
        self.action: Callable[[], Awaitable[None]] | None = None

    def url(self) -> str:
        assert self.site is not None
        return self.site.url("/hook")

    def fetch(self) -> str:
        """A page expression that calls the hook and waits for its answer."""
        return f"fetch({json.dumps(self.url())}, {{mode: 'no-cors'}}).then(() => 1)"


@pytest_asyncio.fixture(loop_scope="module")
async def hook() -> AsyncIterator[Hook]:
    made = Hook()

    async def handle(_request: web.Request) -> web.Response:
        if made.action is not None:
            await made.action()
        return web.Response(text="ok", headers={"Access-Control-Allow-Origin": "*"})

    app = web.Application()
    app.router.add_get("/hook", handle)
    async with serving(app) as running:
        made.site = running
        yield made


async def script(context: ToolContext, tab: Tab, source: str, **extra: Any) -> dict[str, Any]:
    return await call(context, "run_script", tabId=tab.id, script=source, **extra)


async def on_script_page(
    context: ToolContext, site: Site, source: str, **extra: Any
) -> dict[str, Any]:
    """Runs ``source`` on a new tab of the script fixture page."""
    return await script(context, await open_page(context, site, "/script.html"), source, **extra)


# -- the helpers ----------------------------------------------------------------------------


async def test_each_action_helper_runs_its_tool(context: ToolContext, site: Site) -> None:
    result = await on_script_page(
        context,
        site,
        """
        await type('#name', 'Grace');
        await selectOption('#color', 'Green');
        await setChecked('#news', true);
        await press('Tab');
        await hover('#reveal');
        await scroll('down', 300);
        await click('#reveal');
        await waitFor('text', 'Revealed');
        const shot = await snapshot();
        return {
          values: await evaluate(() => [document.querySelector('#name').value,
            document.querySelector('#color').value, document.querySelector('#news').checked]),
          title: await evaluate('document.title'),
          snapshotHasTree: typeof shot.tree === 'string',
        };
        """,
    )
    assert result["status"] == "ok", result
    assert result["value"] == {
        "values": ["Grace", "g", True],
        "title": "ready",
        "snapshotHasTree": True,
    }
    assert result["stepsRun"] == 11
    assert "Revealed" in result["snapshot"]["tree"]


async def test_step_takes_an_action_and_its_fields(context: ToolContext, site: Site) -> None:
    result = await on_script_page(
        context,
        site,
        """
        await step({action: 'type', target: 'css #name', text: 'Ada', tabId: 'ignored'});
        await step({action: 'select_option', target: '#color', value: 'Green'});
        await step({action: 'sleep', ms: 10});
        return await evaluate(
          () => document.querySelector('#name').value + document.querySelector('#color').value);
        """,
    )
    assert result["value"] == "Adag", result


async def test_navigate_and_a_role_target(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/forms.html")
    result = await script(
        context,
        tab,
        f"""
        await navigate({json.dumps(site.url("/script.html"))});
        await click(role('button', {{name: 'Reveal'}}));
        await waitFor(role('paragraph'), 3000).catch(() => null);
        await waitFor({{selector: '#late'}});
        return await evaluate('location.pathname');
        """,
    )
    assert result["value"] == "/script.html", result


async def test_every_wait_for_form(context: ToolContext, site: Site) -> None:
    result = await on_script_page(
        context,
        site,
        """
        await click('#reveal');
        const polled = await waitFor(() => document.title === 'ready' && document.title);
        await waitFor({selector: '#late'});
        await waitFor('#late', 'visible');
        await waitFor('Revealed', 'text');
        await waitFor({text: 'Revealed', timeout: 2000});
        await waitFor({state: 'networkidle'});
        await waitFor('load');
        await waitFor(() => true, 5000);
        await waitFor(() => true, {timeout: 5000});
        await waitFor({selector: '#late', state: 'attached'});
        await waitFor(20);
        await sleep(20);
        let timedOut = null;
        try { await waitFor(() => false, 300) } catch (e) { timedOut = e.code }
        let unknown = null;
        try { await waitFor(true) } catch (e) { unknown = e.message }
        return {polled, timedOut, unknown};
        """,
    )
    assert result["status"] == "ok", result
    assert result["value"]["polled"] == "ready"
    assert result["value"]["timedOut"] == "waitTimeout"
    assert "waitFor takes one of" in result["value"]["unknown"]


async def test_a_wait_for_function_that_calls_helpers_is_polled_in_the_sandbox(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context,
        site,
        """
        await click('#reveal');
        const title = await waitFor(async () => (await evaluate('document.title')) === 'ready');
        let timedOut = null;
        try { await waitFor(async () => await evaluate('false'), 1500) }
        catch (e) { timedOut = e.code }
        return {title, timedOut};
        """,
    )
    assert result["value"] == {"title": True, "timedOut": "waitTimeout"}, result


async def test_evaluate_gives_null_for_undefined_and_up_to_a_megabyte(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context,
        site,
        """
        const nothing = await evaluate('void 0');
        const big = await evaluate("'x'.repeat(900000)");
        let tooBig = null;
        try { await evaluate("'x'.repeat(1100000)") } catch (e) { tooBig = e.code }
        const sum = await evaluate((n) => n + 1, 41);
        return {nothing, bigLength: big.length, tooBig, sum};
        """,
    )
    assert result["value"] == {
        "nothing": None,
        "bigLength": 900_000,
        "tooBig": "valueTooLarge",
        "sum": 42,
    }, result


async def test_a_failed_step_throws_and_the_script_may_go_on(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context,
        site,
        """
        let caught;
        try { await click('#missing') } catch (e) { caught = [e.name, e.code] }
        console.log('went on');
        return caught;
        """,
    )
    assert result["status"] == "ok"
    assert result["value"] == ["StepError", "targetNotFound"]
    assert result["log"] == ["went on"]
    assert result["failedSteps"][0]["code"] == "targetNotFound"


async def test_an_uncaught_step_failure_ends_the_script_with_its_snapshot(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context, site, "await type('#name', 'Ok'); await click('#missing')"
    )
    assert result["status"] == "error"
    assert result["errorCode"] == "targetNotFound"
    assert "snapshot" in result


async def test_the_value_is_at_most_64_kb(context: ToolContext, site: Site) -> None:
    result = await on_script_page(context, site, "return 'x'.repeat(70000)")
    assert "value" not in result
    assert "64" in result["valueError"] or "65536" in result["valueError"]


async def test_a_sandbox_global_read_says_to_use_evaluate(context: ToolContext, site: Site) -> None:
    result = await on_script_page(context, site, "return document.title")
    assert result["status"] == "error"
    assert "evaluate" in result["message"]


# -- limits and stops -----------------------------------------------------------------------


async def test_at_most_200_steps(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/script.html")
    result = await script(
        context, tab, "for (let i = 0; i < 250; i++) { await sleep(0) } return 'done'"
    )
    assert result["status"] == "step_limit"
    assert result["stepsRun"] == 200


async def test_refused_helper_calls_count_towards_the_200_steps(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context, site, "for (let i = 0; i < 250; i++) { await sleep().catch(() => null) }"
    )
    assert result["status"] == "step_limit"
    assert result["stepsRun"] == 200
    assert result["failedSteps"][0] == {
        "action": "sleep",
        "ok": False,
        "code": "invalidArguments",
        "index": 195,
    }


async def test_arguments_too_long_never_reach_the_host(context: ToolContext, site: Site) -> None:
    result = await on_script_page(
        context,
        site,
        """
        // A small value whose JSON is some 1.2 million characters: 400 references to
        // one list of a thousand empty objects.
        const inner = new Array(1000).fill(0).map(() => ({}));
        const outer = new Array(400).fill(inner);
        for (let i = 0; i < 3; i++) {
          try { await sleep(outer) } catch (e) { if (i === 2) return [e.code, e.message] }
        }
        """,
    )
    assert result["status"] == "ok"
    assert result["value"] == [
        "argumentsTooLarge",
        "the arguments of sleep are longer than 1048576 characters as JSON",
    ]
    assert result["stepsRun"] == 0


async def test_arguments_nested_too_deeply_are_a_refused_step(
    context: ToolContext, site: Site
) -> None:
    result = await on_script_page(
        context,
        site,
        """
        const deep = JSON.parse("[".repeat(1100) + "]".repeat(1100));
        try { await sleep(deep) } catch (e) { return [e.code, e.message] }
        """,
    )
    assert result["value"] == ["invalidArguments", "the arguments of sleep are nested too deeply"]
    assert result["stepsRun"] == 1


async def test_a_loop_without_steps_ends_at_the_deadline(context: ToolContext, site: Site) -> None:
    result = await on_script_page(context, site, "await sleep(0); while (true) {}", timeoutMs=1000)
    assert result["status"] == "timeout"
    assert "snapshot" in result


async def test_the_timeout_has_bounds(context: ToolContext, site: Site) -> None:
    result = await on_script_page(context, site, "return 1", timeoutMs=121_000)
    assert result["error"]["code"] == "invalidArguments"


async def test_a_dialog_stops_the_script(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/confirm-dialog.html")
    result = await script(
        context, tab, "await click('#ask'); await evaluate('1'); return 'not reached'"
    )
    assert result["status"] == "dialog", result
    assert result["dialog"]["type"] == "confirm"
    assert result["url"].endswith("/confirm-dialog.html")
    assert "snapshot" not in result


async def test_a_takeover_mid_script_stops_it_with_user_control(
    context: ToolContext, site: Site, hook: Hook
) -> None:
    tab = await open_page(context, site, "/script.html")

    async def take() -> None:
        context.engine.take_control(TEAM, tab.id, PERSON)

    hook.action = take
    result = await script(
        context,
        tab,
        f"""
        await type('#name', 'before');
        await evaluate({json.dumps(hook.fetch())});
        console.log('after the takeover');
        try {{ await click('#reveal') }} catch (e) {{ console.log(e.code) }}
        await type('#name', 'never');
        return 'not reached';
        """,
    )
    assert result["status"] == "user_control", result
    assert result["log"] == ["after the takeover", "user_control"]
    assert result["url"].endswith("/script.html")
    assert "snapshot" not in result
    context.engine.release(TEAM, tab.id, PERSON)
    value = await call(
        context, "evaluate", tabId=tab.id, expression="document.querySelector('#name').value"
    )
    assert value["value"] == "before"


async def test_a_crashed_page_stops_the_script_at_once(
    context: ToolContext, site: Site, hook: Hook
) -> None:
    tab = await open_page(context, site, "/script.html")
    crashing: list[asyncio.Task[Any]] = []

    async def crash() -> None:
        page = tab.page
        assert page is not None
        session = await page.context.new_cdp_session(page)

        async def send() -> None:
            with contextlib.suppress(Exception):
                await session.send("Page.crash")

        crashing.append(asyncio.create_task(send()))

    hook.action = crash
    result = await script(
        context,
        tab,
        f"""
        await evaluate({json.dumps(hook.fetch())}).catch(() => null);
        await waitFor(() => false, 20000).catch(() => null);
        await click('#reveal').catch(() => null);
        return 'stopped?';
        """,
        timeoutMs=10_000,
    )
    # At once: the step under way when the page crashed (the evaluate or the 20-second
    # wait, as the crash falls) stopped it, well before the 10-second deadline.
    assert result["status"] == "page_crashed", result
    assert result["stepsRun"] <= 2
    assert result["failedSteps"][-1]["code"] == "page_crashed"
    # The final snapshot loads the page again.
    assert "snapshot" in result
    for task in crashing:
        task.cancel()


async def test_a_secret_tab_is_not_touched(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/script.html")
    assert tab.page is not None
    await protect(tab, tab.page, site.base, context.engine.signals)
    try:
        result = await script(context, tab, "await type('#name', 'x'); return 1")
    finally:
        await release(tab)
    assert result["status"] == "secret_tab"
    assert "snapshot" not in result


async def test_another_agents_tab_is_unknown(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/script.html")
    other = ToolContext(
        engine=context.engine,
        team_id=TEAM,
        caller=Caller.agent("b" * 32, "thread-2"),
        settings=context.settings,
    )
    result = await script(other, tab, "return 1")
    assert result["error"]["code"] == "tabNotFound"


# -- execute_script -------------------------------------------------------------------------


async def test_execute_script_in_the_isolated_world_sees_the_dom_only(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/script.html")
    isolated = await call(
        context,
        "execute_script",
        target="page",
        tabId=tab.id,
        code="[document.querySelector('h1').textContent, typeof window.pageOnly]",
    )
    assert isolated["value"] == ["Steps", "undefined"], isolated
    main = await call(
        context,
        "execute_script",
        target="page",
        tabId=tab.id,
        world="MAIN",
        code="() => window.pageOnly",
    )
    assert main["value"] == "main world"


async def test_execute_script_in_the_sandbox_computes_without_a_page(
    context: ToolContext,
) -> None:
    expression = await call(
        context, "execute_script", target="sandbox", code="[1, 2, 3].map((x) => x * 2)"
    )
    assert expression["value"] == [2, 4, 6]
    statements = await call(
        context,
        "execute_script",
        target="sandbox",
        code="const xs = [3, 1, 2]; xs.sort(); return {xs, page: typeof document}",
    )
    assert statements["value"] == {"xs": [1, 2, 3], "page": "undefined"}
    settings = dataclasses.replace(context.settings, evaluate_deadline=1.0)
    context = dataclasses.replace(context, settings=settings)
    failed = await call(context, "execute_script", target="sandbox", code="while (true) {}")
    assert failed["error"]["code"] == "scriptError"
    assert failed["error"]["status"] == "timeout"


async def test_execute_script_refuses_a_secret_tab_and_needs_a_tab_for_the_page(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/script.html")
    assert tab.page is not None
    await protect(tab, tab.page, site.base, context.engine.signals)
    try:
        refused = await call(
            context, "execute_script", target="page", tabId=tab.id, code="document.title"
        )
    finally:
        await release(tab)
    assert refused["error"]["code"] == "secretTab"
    missing = await call(context, "execute_script", target="page", code="1")
    assert missing["error"]["code"] == "invalidArguments"

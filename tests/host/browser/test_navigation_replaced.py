"""A load that another navigation replaces answers ``navigationReplaced``, in the full browser
and in the headless shell alike: to a person's address-bar load and to an agent's
``navigate`` (before, a person's answered ``internal``).

The other navigation is the page's own: a page that sends itself to a new address every few
milliseconds, so one of them comes in while the host's load is on its way. Which one gets in
first is up to the browser, so each test loads until one was replaced (within a bound).
Every load ends where it was sent, or is replaced, or (a few in a hundred, in either browser)
loads and is then left by the page's own navigation that the old page had started before: the
answer is then where the tab went, one of the page's own addresses; never anything else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp import web

from server.common.errors import CrewhostError
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext
from tests.support.chromium import installed
from tests.support.sites import SITES_ALLOWED, Site, serving

TEAM = "team-a"
AGENT = Caller.agent("a" * 32, "thread-1")
PERSON = Caller.person("account-1")
# Enough loads that one is replaced: about every other one is, in either browser.
TRIES = 60


async def _restless(request: web.Request) -> web.Response:
    step = int(request.query.get("n", "0"))
    return web.Response(
        text=f"<!doctype html><title>restless {step}</title>"
        f"<script>setTimeout(() => {{ location.href = '/restless?n={step + 1}' }}, 2)</script>",
        content_type="text/html",
    )


async def _calm(request: web.Request) -> web.Response:
    return web.Response(text="<!doctype html><title>calm</title>", content_type="text/html")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[Site]:
    app = web.Application()
    app.router.add_get("/restless", _restless)
    app.router.add_get("/calm/{n}", _calm)
    async with serving(app) as running:
        yield running


@pytest.fixture(scope="module", params=["chromium", "chromium-headless-shell"])
def chromium(request: pytest.FixtureRequest) -> str:
    """The full browser and the headless shell, as the install step installs them."""
    return installed(str(request.param))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine(
    tmp_path_factory: pytest.TempPathFactory, chromium: str
) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(
        tmp_path_factory.mktemp("browser"), chromium=chromium, address_policy=SITES_ALLOWED
    ) as running:
        yield running


@pytest.mark.asyncio(loop_scope="module")
async def test_a_persons_load_that_the_page_replaced_says_so(
    engine: BrowserEngine, site: Site
) -> None:
    outcomes: list[tuple[str, int] | str] = []
    for n in range(TRIES):
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/restless"))
        try:
            visit = await engine.visit(TEAM, tab.id, PERSON, site.url(f"/calm/{n}"))
            outcomes.append(visit.url)
        except CrewhostError as error:
            outcomes.append((error.code, error.status))
        finally:
            await engine.close_tab(TEAM, tab.id, PERSON)
        if ("navigationReplaced", 409) in outcomes:
            break
    assert ("navigationReplaced", 409) in outcomes
    sent = {site.url(f"/calm/{n}") for n in range(TRIES)}
    restless = site.url("/restless")
    assert all(
        o == ("navigationReplaced", 409)
        or (isinstance(o, str) and (o in sent or o.startswith(restless)))
        for o in outcomes
    ), outcomes


@pytest.mark.asyncio(loop_scope="module")
async def test_an_agents_navigate_that_the_page_replaced_says_so(
    engine: BrowserEngine, site: Site
) -> None:
    context = ToolContext(engine=engine, team_id=TEAM, caller=AGENT)
    codes: list[str | None] = []
    for n in range(TRIES):
        tab = await engine.open_tab(
            TEAM, Partition.shared(), url=site.url("/restless"), owner_agent_id=AGENT.agent_id
        )
        try:
            result = await call_tool(
                context, "navigate", {"tabId": tab.id, "url": site.url(f"/calm/{n}")}
            )
        finally:
            await engine.close_tab(TEAM, tab.id, AGENT)
        codes.append(result.get("error", {}).get("code"))
        if "navigationReplaced" in codes:
            break
    assert set(codes) <= {None, "navigationReplaced"}, codes
    assert "navigationReplaced" in codes

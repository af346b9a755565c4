"""Agent tool tests: a real engine, and a local site serving every file of ``site/``.

A test drops its page into ``site/`` and opens ``site.url("/name.html")``.

Starting Chromium is most of a browser test's time, so one engine and one site serve each
test module, and its tests run in the module's event loop. Each test still starts from
nothing: no tab open, no partition running but the team's shared one, an empty request log
and a fresh ``ToolContext`` and ``TurnState``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext, ToolSettings, TurnState
from tests.support.clock import FakeClock
from tests.support.loop_watch import watch_event_loop
from tests.support.sites import SITES_ALLOWED, Site, serving

TEAM = "team-a"
AGENT = Caller.agent("a" * 32, "thread-1")
SITE_FOLDER = Path(__file__).parent / "site"
# Short waits: a test page either changes at once or not at all.
FAST = ToolSettings(
    consent_window=2.0,
    challenge_budget=2.0,
    challenge_click_wait=1.0,
    settle_max=1.0,
)
# Who closes what a test left open: a person, so that tabs with a dialog open close too.
CLEANER_ACCOUNT = "tests-cleanup"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs every async test of this folder in its module's loop, where the engine lives."""
    here = Path(__file__).parent
    module_loop = pytest.mark.asyncio(loop_scope="module")
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("asyncio") is not None:
            # In front of the plain marker asyncio_mode = "auto" gave it, so this one counts.
            item.add_marker(module_loop, append=False)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """The suite's watchdog, on the module's loop the tests here run in."""
    watched = request.node.get_closest_marker("allow_blocking") is None
    if not watched or not inspect.iscoroutinefunction(getattr(request, "function", None)):
        yield
        return
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_site() -> AsyncIterator[Site]:
    app = web.Application()
    app.router.add_static("/", SITE_FOLDER)
    async with serving(app) as running:
        yield running


@pytest.fixture
def site(module_site: Site) -> Site:
    """The module's site, its request log emptied for this test."""
    module_site.requests.clear()
    return module_site


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_engine(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(
        tmp_path_factory.mktemp("browser"),
        clock=FakeClock(),
        dialog_settle=0.3,
        address_policy=SITES_ALLOWED,
    ) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def engine(module_engine: BrowserEngine) -> AsyncIterator[BrowserEngine]:
    """The module's engine; what the test opens in it is closed when the test ends."""
    yield module_engine
    await close_what_was_left(module_engine)


async def close_what_was_left(engine: BrowserEngine) -> None:
    """Closes the team's tabs (held ones and ones with a dialog open too) and every partition
    but the shared one, whose browser the next test uses again."""
    while tabs := engine.list_tabs(TEAM):
        # One at a time: closing a tab closes its popups too.
        tab = tabs[0]
        await engine.close_tab(TEAM, tab.id, Caller.person(tab.held_by or CLEANER_ACCOUNT))
    for partition in engine.open_partitions(TEAM):
        if partition != Partition.shared():
            await engine.close_partition(TEAM, partition)


@pytest.fixture
def context(engine: BrowserEngine) -> ToolContext:
    """An agent's tool context on the team's shared partition, with short waits."""
    return ToolContext(engine=engine, team_id=TEAM, caller=AGENT, turn=TurnState(), settings=FAST)


async def open_page(context: ToolContext, site: Site, path: str) -> Tab:
    """A new agent tab on the fixture page ``path``."""
    return await context.engine.open_tab(
        TEAM,
        Partition.shared(),
        url=site.url(path),
        owner_agent_id=AGENT.agent_id,
        owner_thread_id=AGENT.thread_id,
    )


def ref_of(snapshot: dict[str, Any], line_part: str) -> str:
    """The ref of the one snapshot line that contains ``line_part`` (such as ``button "Save"``)."""
    lines: list[str] = [line.strip() for line in snapshot["tree"].splitlines() if line_part in line]
    assert len(lines) == 1, f"{len(lines)} lines contain {line_part!r}:\n{snapshot['tree']}"
    return lines[0].split(" ", 1)[0]


async def call(context: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    """Runs a catalog tool as the agent runtime does."""
    # Imported here: the catalog loads every tool module, which tests of one module need not.
    from server.host.tools.catalog import call_tool

    return await call_tool(context, name, args)

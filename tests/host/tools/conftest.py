"""Agent tool tests: a real engine, and a local site serving every file of ``site/``.

A test drops its page into ``site/`` and opens ``site.url("/name.html")``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.tools.base import ToolContext, ToolSettings, TurnState
from tests.support.clock import FakeClock
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


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    app = web.Application()
    app.router.add_static("/", SITE_FOLDER)
    async with serving(app) as running:
        yield running


@pytest.fixture
async def engine(tmp_path: Path, clock: FakeClock) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(
        tmp_path, clock=clock, dialog_settle=0.3, address_policy=SITES_ALLOWED
    ) as running:
        yield running


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
    lines = [line.strip() for line in snapshot["tree"].splitlines() if line_part in line]
    assert len(lines) == 1, f"{len(lines)} lines contain {line_part!r}:\n{snapshot['tree']}"
    return lines[0].split(" ", 1)[0]


async def call(context: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    """Runs a catalog tool as the agent runtime does."""
    # Imported here: the catalog loads every tool module, which tests of one module need not.
    from server.host.tools.catalog import call_tool

    return await call_tool(context, name, args)

"""``remember`` and site memories: up to five, newest first, once per host per turn."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from server.db.engine import Database
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.services.memories import MemoryService, host_and_parents, normalize_site
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext, TurnState
from server.host.tools.page.site_memories import site_memories_for
from tests.host.tools.conftest import AGENT, TEAM, open_page
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.sites import Site


@pytest_asyncio.fixture(loop_scope="module")
async def memories(database: ScratchDatabase, clock: FakeClock) -> AsyncIterator[MemoryService]:
    db = database.open()
    await db.migrate()
    yield MemoryService(db, clock)
    await db.close()


@pytest.fixture
def agent(tmp_path: Path, memories: MemoryService) -> ToolContext:
    """An agent's context for tools that need no browser: the engine is never started."""
    return ToolContext(
        engine=BrowserEngine(tmp_path), team_id=TEAM, caller=AGENT, memories=memories
    )


@pytest.mark.parametrize(
    ("given", "site"),
    [
        ("example.com", "example.com"),
        ("WWW.Example.COM", "example.com"),
        ("https://www.example.com/account/login?next=1", "example.com"),
        ("app.example.com/settings", "app.example.com"),
        ("localhost", "localhost"),
        ("http://127.0.0.1:8080/", "127.0.0.1"),
    ],
)
def test_a_site_is_kept_as_a_lowercase_host_without_www(given: str, site: str) -> None:
    assert normalize_site(given) == site


@pytest.mark.parametrize("given", ["", "com", "not a host", "https://", "exa mple.com"])
def test_what_names_no_host_is_refused(given: str) -> None:
    with pytest.raises(Exception, match="site must be a host"):
        normalize_site(given)


def test_a_host_brings_its_parent_domains() -> None:
    assert host_and_parents("a.app.example.com") == [
        "a.app.example.com",
        "app.example.com",
        "example.com",
    ]
    assert host_and_parents("example.com") == ["example.com"]
    assert host_and_parents("127.0.0.1") == ["127.0.0.1"]


async def test_remember_keeps_a_memory_for_a_site(agent: ToolContext) -> None:
    done = await call_tool(
        agent, "remember", {"text": "Search is under the menu", "site": "https://WWW.shop.test/a"}
    )
    assert (done["remembered"], done["site"]) == (True, "shop.test")
    plain = await call_tool(agent, "remember", {"text": "The user prefers trains"})
    assert plain["site"] is None
    assert agent.memories is not None
    kept = await agent.memories.list_memories(TEAM, str(agent.caller.agent_id))
    assert [(m.site, m.text) for m in kept] == [
        (None, "The user prefers trains"),
        ("shop.test", "Search is under the menu"),
    ]


async def test_remember_keeps_no_secret(agent: ToolContext) -> None:
    await call_tool(agent, "remember", {"text": "api key: sk-live-0042abc for the shop"})
    await call_tool(agent, "remember", {"text": "the admin password Plainsecret9 works"})
    assert agent.memories is not None
    kept = await agent.memories.list_memories(TEAM, str(agent.caller.agent_id))
    assert sorted(m.text for m in kept) == [
        "api key: [redacted] for the shop",
        "the admin password [redacted] works",
    ]


async def test_remember_refuses_a_bad_site_and_a_person(agent: ToolContext) -> None:
    bad = await call_tool(agent, "remember", {"text": "x", "site": "nowhere"})
    assert bad["error"]["code"] == "invalidSite"
    person = dataclasses.replace(agent, caller=Caller.person("account-1"))
    refused = await call_tool(person, "remember", {"text": "x"})
    assert refused["error"]["code"] == "agentsOnly"


async def test_site_memories_are_five_newest_for_the_host_and_parents_once_per_turn(
    agent: ToolContext, clock: FakeClock
) -> None:
    assert agent.memories is not None
    agent_id = str(agent.caller.agent_id)
    for n in range(6):
        await agent.memories.add_memory(TEAM, agent_id, f"parent {n}", "example.com")
        clock.advance(1)
    await agent.memories.add_memory(TEAM, agent_id, "sub", "app.example.com")
    await agent.memories.add_memory(TEAM, agent_id, "sibling", "other.example.com")
    await agent.memories.add_memory(TEAM, "e" * 32, "another agent's", "example.com")

    shown = await site_memories_for(agent, "https://www.app.example.com/x")
    assert [m["text"] for m in shown] == ["sub", "parent 5", "parent 4", "parent 3", "parent 2"]
    # Once per host and turn: the next page of the site in this turn shows none.
    assert await site_memories_for(agent, "https://app.example.com/y") == []
    # The parent host is a host of its own.
    assert len(await site_memories_for(agent, "https://example.com/")) == 5
    next_turn = dataclasses.replace(agent, turn=TurnState())
    assert len(await site_memories_for(next_turn, "https://app.example.com/")) == 5


async def test_no_site_memories_in_a_secret_tab_or_off_the_web(agent: ToolContext) -> None:
    assert agent.memories is not None
    await agent.memories.add_memory(TEAM, str(agent.caller.agent_id), "a", "example.com")
    assert await site_memories_for(agent, "https://example.com/", secret=True) == []
    assert await site_memories_for(agent, "data:text/html,example.com") == []
    assert len(await site_memories_for(agent, "https://example.com/")) == 1


@pytest_asyncio.fixture(loop_scope="module")
async def sqlite_memories(tmp_path: Path, clock: FakeClock) -> AsyncIterator[MemoryService]:
    async with scratch_database("sqlite", tmp_path) as scratch:
        db: Database = scratch.open()
        await db.migrate()
        yield MemoryService(db, clock)
        await db.close()


async def test_a_snapshot_shows_the_sites_memories_once_per_turn(
    context: ToolContext, sqlite_memories: MemoryService, site: Site
) -> None:
    agent = dataclasses.replace(context, memories=sqlite_memories)
    await call_tool(agent, "remember", {"text": "Fares are on the second tab", "site": site.base})
    tab = await open_page(agent, site, "/behind-check.html")
    first = await call_tool(agent, "snapshot", {"tabId": tab.id})
    assert first["siteMemories"] == [{"site": "127.0.0.1", "text": "Fares are on the second tab"}]
    second = await call_tool(agent, "snapshot", {"tabId": tab.id})
    assert "siteMemories" not in second

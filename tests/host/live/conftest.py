"""A member watching a tab of the built-in host: the site, the tab and a connected peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from peer.connection import HostConnection
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import Member, peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

# Positions are fixed so that a click in fractions of the frame lands on a known element.
STYLE = "<style>body{margin:0;font:16px sans-serif} .at{position:absolute}</style>"
PAGES = {
    "/board": STYLE + "<button id=b class=at style='left:0;top:0;width:200px;height:100px' "
    "onclick=\"this.textContent='clicked'\">press</button>"
    "<input id=field class=at style='left:0;top:150px;width:300px;height:40px'>"
    "<a id=link class=at style='left:0;top:250px;width:200px;height:40px;cursor:pointer' "
    "href='http://127.0.0.1:1/elsewhere'>a link</a>"
    "<a id=js class=at style='left:0;top:320px;width:200px;height:40px' "
    "href='javascript:void(0)'>a script link</a>"
    "<p id=words class=at style='left:0;top:400px'>select these words</p>",
    "/big": STYLE + "<textarea id=big style='width:300px;height:100px'></textarea>",
    "/animated": STYLE + "<div id=box style='width:100vw;height:100vh'></div><script>let n=0;"
    "setInterval(()=>{document.getElementById('box').style.background="
    "'hsl('+(n++%360)+',70%,50%)'},16)</script>",
}


@asynccontextmanager
async def serving_pages() -> AsyncIterator[Site]:
    pages = {path: f"<!doctype html>{body}" for path, body in PAGES.items()}
    async with serving(pages_app(pages)) as running:
        yield running


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with serving_pages() as running:
        yield running


@dataclass
class Watching:
    server: RunningHub
    team_id: str
    engine: BrowserEngine
    tab: Tab
    member: Member
    connection: HostConnection


@pytest.fixture
async def watching(server: RunningHub, site: Site, tmp_path: Path) -> AsyncIterator[Watching]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", "member")
    host_id = await wait_linked(server)
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared(), url=site.url("/board"))
    member = await peer_member(server, "member@example.com", tmp_path)
    connection = await member.connect(host_id)
    yield Watching(server, team_id, engine, tab, member, connection)
    await connection.close()
    await member.hub.close()


@dataclass
class LiveWorld:
    """One hub, built-in host, Chromium, site and watching member for a whole module."""

    server: RunningHub
    site: Site
    team_id: str
    engine: BrowserEngine
    member: Member
    connection: HostConnection


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live_world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveWorld]:
    """The world of a module whose tests all run on the module's loop: each test watches a
    tab of its own (``watching_in``), and leaves no tab, view or screencast behind."""
    folder = tmp_path_factory.mktemp("live")
    async with (
        scratch_database("sqlite", folder) as database,
        serving_pages() as site,
        running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        await server.invite(owner, team_id, "member@example.com", "member")
        host_id = await wait_linked(server)
        engine = await server.builtin.services.browser.engine()
        member = await peer_member(server, "member@example.com", folder)
        connection = await member.connect(host_id)
        yield LiveWorld(server, site, team_id, engine, member, connection)
        await connection.close()
        await member.hub.close()


@asynccontextmanager
async def watching_in(world: LiveWorld) -> AsyncIterator[Watching]:
    """A fresh tab of the world's team on the board, watched by its member; afterwards every
    tab the test opened is given back and closed, and its views and screencasts are gone."""
    engine, team_id = world.engine, world.team_id
    before = {tab.id for tab in engine.list_tabs(team_id)}
    tab = await engine.open_tab(team_id, Partition.shared(), url=world.site.url("/board"))
    try:
        yield Watching(world.server, team_id, engine, tab, world.member, world.connection)
    finally:
        live = world.server.builtin.services.live
        opened = [tab for tab in engine.list_tabs(team_id) if tab.id not in before]
        for left in opened:  # views the test left open end as a secret would end them
            await live.end_views(team_id, left.id, "viewEnded", "the test ended")
        await eventually(lambda: live.table_sizes() == dict.fromkeys(live.table_sizes(), 0))
        for left in opened:
            if left.held_by is not None:
                engine.release(team_id, left.id, left.held_by)
            await engine.close_tab(team_id, left.id, Caller.person(world.member.account_id))


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Live view is about the browser, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db

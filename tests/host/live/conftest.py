"""A member watching a tab of the built-in host: the site, the tab and a connected peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from peer.connection import HostConnection
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import RunningHub
from tests.support.peers import Member, peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving

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


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    pages = {path: f"<!doctype html>{body}" for path, body in PAGES.items()}
    async with serving(pages_app(pages)) as running:
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


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Live view is about the browser, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db

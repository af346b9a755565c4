"""Clearing and deleting a browser profile with the browser running: tabs close, data goes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.connection import HostConnection
from server.common.errors import CrewhostError
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Site

pytestmark = pytest.mark.sqlite_only

AGENT = Caller.agent("a" * 32, "t" * 32)


@pytest.fixture
async def admin(server: RunningHub, tmp_path: Path) -> AsyncIterator[HostConnection]:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    yield connection
    await connection.close()
    await member.hub.close()


async def test_clear_closes_tabs_and_forgets_cookies_delete_refuses_new_tabs(
    server: RunningHub, admin: HostConnection, site: Site
) -> None:
    services = server.builtin.services
    profile = await admin.call("browser-profiles-v1/create", {"name": "Work"})
    team_id = (await admin.call("host-v1/whoami"))["teamId"]
    partition = Partition.profile(profile["id"])
    engine = await services.browser.engine()

    tab = await engine.open_tab(team_id, partition, url=site.url("/set-cookie?v=kept"))
    shared = await engine.open_tab(team_id, Partition.shared(), url=site.url("/set-cookie?v=other"))
    assert [t.id for t in engine.list_tabs(team_id)] == [tab.id, shared.id]

    assert await admin.call("browser-profiles-v1/clear", {"id": profile["id"]}) == {"cleared": True}
    assert [t.id for t in engine.list_tabs(team_id)] == [shared.id]
    fresh = await engine.open_tab(team_id, partition, url=site.url("/cookies"))
    cookie = await engine.run(team_id, fresh.id, AGENT, lambda p: p.evaluate("document.cookie"))
    assert cookie.value == ""
    kept = await engine.run(team_id, shared.id, AGENT, lambda p: p.evaluate("document.cookie"))
    assert kept.value == "session=other"  # another partition is untouched

    await admin.call("browser-profiles-v1/delete", {"id": profile["id"]})
    assert [t.id for t in engine.list_tabs(team_id)] == [shared.id]
    with pytest.raises(CrewhostError) as caught:
        await engine.open_tab(team_id, partition, url=site.url("/"))
    assert caught.value.code == "browserProfileMissing"

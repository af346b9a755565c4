"""A member's computer as egress, over real aiortc from another process: a tab's traffic
leaves from the member's side, only allowed addresses are dialed, and when the member
goes the computer is offline with no fallback."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from peer.connection import HostConnection
from server.common.errors import CrewhostError
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from tests.support.hub_server import PASSWORD, RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.waiting import eventually

pytestmark = pytest.mark.sqlite_only

NOBODY = Caller.person("p" * 32)
ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Site:
    base: str = ""
    paths: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


@asynccontextmanager
async def fixture_site() -> AsyncIterator[Site]:
    site = Site()

    async def page(request: web.Request) -> web.Response:
        if request.path != "/favicon.ico":
            site.paths.append(request.path)
        return web.Response(text="<title>via member</title>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    site.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield site
    finally:
        await runner.cleanup()


@asynccontextmanager
async def member_sharing(
    server: RunningHub, folder: Path, allowed_port: int, *, then: str = "stop"
) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.egress_member",
        server.url,
        "owner@example.com",
        PASSWORD,
        server.builtin.services.host_id,
        str(folder),
        str(allowed_port),
        then,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def status(admin: HostConnection, proxy_id: str) -> str | None:
    listed = (await admin.call("browser-proxies-v1/list"))["proxies"]
    found: str | None = next(p["status"] for p in listed if p["id"] == proxy_id)
    return found


@pytest.fixture
async def admin(server: RunningHub, tmp_path: Path) -> AsyncIterator[HostConnection]:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    yield connection
    await connection.close()
    await member.hub.close()


async def test_a_tab_goes_out_through_the_members_computer_until_it_leaves(
    server: RunningHub, admin: HostConnection, tmp_path: Path
) -> None:
    whoami = await admin.call("host-v1/whoami")
    team_id, account_id = whoami["teamId"], whoami["accountId"]
    egress = server.builtin.services.egress
    engine = await server.builtin.services.browser.engine()
    async with fixture_site() as site, fixture_site() as other:
        async with member_sharing(server, tmp_path, site.port) as process:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), 30)
            proxy_id = line.decode().split()[1]
            await eventually(lambda: egress.online(team_id, account_id))
            assert await status(admin, proxy_id) is None  # online, no mark
            profile = await admin.call("browser-profiles-v1/create", {"name": "Via laptop"})
            await admin.call(
                "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy_id}
            )
            partition = Partition.profile(profile["id"])

            tab = await engine.open_tab(team_id, partition, url=site.base + "/through")
            assert tab.url.endswith("/through")
            assert site.paths == ["/through"]

            # Any other loopback port is refused by the member's policy: no request, and a
            # load error naming the computer and why, not the relay's 502 as a page.
            with pytest.raises(CrewhostError) as caught:
                await engine.open_tab(team_id, partition, url=other.base + "/private")
            assert caught.value.code == "browserProxyTargetRefused"
            assert caught.value.message == (
                f"the page did not load: the member's computer (test laptop) refused "
                f"{other.base}: not a public address, and a member's computer reaches only "
                "public ones"
            )
            tab = await engine.open_tab(team_id, partition)
            with pytest.raises(CrewhostError) as caught:
                await engine.navigate(team_id, tab.id, NOBODY, other.base + "/private")
            assert caught.value.code == "browserProxyTargetRefused"
            secure = other.base.replace("http://", "https://")  # a refused tunnel, the same
            with pytest.raises(CrewhostError) as caught:
                await engine.navigate(team_id, tab.id, NOBODY, secure + "/private")
            assert caught.value.code == "browserProxyTargetRefused"
            assert f"refused {secure}: not a public address" in caught.value.message
            assert other.paths == []
            assert await status(admin, proxy_id) is None  # the computer itself is fine

            assert process.stdin is not None
            process.stdin.close()  # the member stops sharing
            await asyncio.wait_for(process.wait(), 30)
        await eventually(lambda: not egress.online(team_id, account_id))
        assert await status(admin, proxy_id) == "offline"
        with pytest.raises(CrewhostError) as caught:
            await engine.open_tab(team_id, partition, url=site.base + "/after")
        assert caught.value.code == "browserProxyComputerUnreachable"
        assert site.paths == ["/through"]  # no fallback
        listed = (await admin.call("browser-proxies-v1/list"))["proxies"]
        assert [p["id"] for p in listed] == [proxy_id]  # the row stays


async def test_a_member_who_disconnects_leaves_the_computer_offline(
    server: RunningHub, admin: HostConnection, tmp_path: Path
) -> None:
    whoami = await admin.call("host-v1/whoami")
    team_id, account_id = whoami["teamId"], whoami["accountId"]
    egress = server.builtin.services.egress
    engine = await server.builtin.services.browser.engine()
    async with fixture_site() as site:
        async with member_sharing(server, tmp_path, site.port, then="disconnect") as process:
            assert process.stdout is not None
            proxy_id = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().split()[1]
            await eventually(lambda: egress.online(team_id, account_id))
            profile = await admin.call("browser-profiles-v1/create", {"name": "Via laptop"})
            await admin.call(
                "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy_id}
            )
            partition = Partition.profile(profile["id"])
            await engine.open_tab(team_id, partition, url=site.base + "/before")
            assert process.stdin is not None
            process.stdin.close()  # the member's connection closes, sharing never stopped
            await asyncio.wait_for(process.wait(), 30)
        await eventually(lambda: not egress.online(team_id, account_id))
        assert await status(admin, proxy_id) == "offline"
        with pytest.raises(CrewhostError) as caught:
            await engine.open_tab(team_id, partition, url=site.base + "/after")
        assert caught.value.code == "browserProxyComputerUnreachable"
        assert site.paths == ["/before"]

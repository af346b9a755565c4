"""A named profile behind a proxy, in real Chromium: each page goes through the proxy
(tinyproxy, microsocks, a faulty SOCKS5 server), refusals mark the proxy and name it in
the page error, and nothing ever falls back to a direct connection."""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.async_api import Error as PlaywrightError

from peer.connection import HostConnection, TeamApiCallError
from server.common.errors import CrewhostError
from server.common.public_addresses import PublicOnlyPolicy
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.tools.catalog import call_tool
from server.host.web.fetcher import WebFetcher
from tests.support.chromium import full_browser, installed
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.socks5 import faulty_socks5
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked
from tests.support.resolvers import TableResolver
from tests.support.upstreams import free_port, microsocks, tinyproxy

pytestmark = pytest.mark.sqlite_only

NOBODY = Caller.person("p" * 32)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Seen:
    """The fixture site's view: each request's path, the address it came from, its Via."""

    base: str = ""
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)


@pytest.fixture
async def server(
    request: pytest.FixtureRequest, tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """The suite's hub, whose proxies may be at 127.0.0.1 (where tinyproxy and microsocks
    listen) as an on-premises proxy would be allowed; nothing else on loopback."""
    # A proxy's sign-in and WebRTC's flags are the full browser's (the product's default),
    # unless a test asks for the headless shell (``indirect`` parametrization).
    shell = getattr(request, "param", "full") == "shell"
    chromium = installed("chromium-headless-shell") if shell else full_browser()
    settings = hub_settings(
        tmp_path,
        database,
        **{"host.proxy_allowed_hosts": ["127.0.0.1"], "host.chromium": chromium},
    )
    async with running_hub(settings, database, clock=clock) as running:
        yield running


@pytest.fixture
async def site() -> AsyncIterator[Seen]:
    seen = Seen()

    async def page(request: web.Request) -> web.Response:
        if request.path == "/favicon.ico":
            raise web.HTTPNotFound()  # Chromium asks on its own; only pages are counted
        seen.requests.append((request.path, request.remote or "", request.headers.get("Via")))
        if request.path.startswith("/members-only"):  # the site's own sign-in, not the proxy's
            headers = {"WWW-Authenticate": 'Basic realm="members"'}
            return web.Response(status=401, text="<title>members only</title>", headers=headers)
        return web.Response(text="<title>through</title><p>hello</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    seen.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    yield seen
    await runner.cleanup()


@dataclass
class Admin:
    connection: HostConnection
    team_id: str


@pytest.fixture
async def admin(server: RunningHub, tmp_path: Path) -> AsyncIterator[Admin]:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    team_id = (await connection.call("host-v1/whoami"))["teamId"]
    yield Admin(connection, team_id)
    await connection.close()
    await member.hub.close()


async def profile_behind(admin: Admin, address: str) -> tuple[Partition, dict[str, Any]]:
    proxy = await admin.connection.call("browser-proxies-v1/create", {"address": address})
    profile = await admin.connection.call(
        "browser-profiles-v1/create", {"name": f"Behind {proxy['id'][-8:]}"}
    )
    await admin.connection.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy["id"]}
    )
    return Partition.profile(profile["id"]), proxy


async def status_of(admin: Admin, proxy_id: str) -> str | None:
    listed = (await admin.connection.call("browser-proxies-v1/list"))["proxies"]
    found: str | None = next(p["status"] for p in listed if p["id"] == proxy_id)
    return found


async def refusal(server: RunningHub, admin: Admin, partition: Partition, url: str) -> str:
    engine = await server.builtin.services.browser.engine()
    with pytest.raises(CrewhostError) as caught:
        await engine.open_tab(admin.team_id, partition, url=url)
    assert admin.team_id not in str(caught.value)
    return caught.value.code or ""


async def test_http_proxies_with_and_without_a_sign_in(
    server: RunningHub, admin: Admin, site: Seen, tmp_path: Path
) -> None:
    engine = await server.builtin.services.browser.engine()
    async with tinyproxy(tmp_path, outgoing="127.0.0.2") as plain:
        partition, _ = await profile_behind(admin, f"127.0.0.1:{plain.port}")
        tab = await engine.open_tab(admin.team_id, partition, url=site.base + "/plain")
        assert tab.url.endswith("/plain")
    path, remote, via = site.requests[-1]
    assert (path, remote) == ("/plain", "127.0.0.2")
    assert via is not None
    assert "tinyproxy" in via

    async with tinyproxy(tmp_path, outgoing="127.0.0.3", sign_in=("agent", "passw0rd")) as guarded:
        good, proxy = await profile_behind(admin, f"http://agent:passw0rd@127.0.0.1:{guarded.port}")
        await engine.open_tab(admin.team_id, good, url=site.base + "/signed-in")
        assert site.requests[-1][:2] == ("/signed-in", "127.0.0.3")

        count = len(site.requests)
        await admin.connection.call(
            "browser-proxies-v1/update",
            {
                "id": proxy["id"],
                "previousAddress": proxy["address"],
                "address": f"http://agent:wrong@127.0.0.1:{guarded.port}",
            },
        )
        assert await refusal(server, admin, good, site.base + "/wrong") == (
            "browserProxySignInRefused"
        )
        assert await status_of(admin, proxy["id"]) == "signIn"
        assert len(site.requests) == count  # never went direct
        assert [path for path, *_ in site.requests].count("/wrong") == 0

        await admin.connection.call(
            "browser-proxies-v1/update",
            {
                "id": proxy["id"],
                "previousAddress": proxy["address"],
                "address": f"http://agent:passw0rd@127.0.0.1:{guarded.port}",
            },
        )
        await engine.open_tab(admin.team_id, good, url=site.base + "/again")
        assert site.requests[-1][:2] == ("/again", "127.0.0.3")
        assert await status_of(admin, proxy["id"]) is None  # the good load cleared the mark


async def test_a_sites_own_sign_in_is_not_the_proxys(
    server: RunningHub, admin: Admin, site: Seen, tmp_path: Path
) -> None:
    """A page that asks for its own sign-in fails as the full browser fails it anywhere,
    through a proxy with a sign-in or a relay: the site's error, not the proxy's, and the
    proxy is not marked."""
    engine = await server.builtin.services.browser.engine()
    async with (
        tinyproxy(tmp_path, outgoing="127.0.0.2", sign_in=("agent", "passw0rd")) as http,
        microsocks(outgoing="127.0.0.3", sign_in=("agent", "passw0rd")) as socks,
    ):
        for address, outgoing in (
            (f"http://agent:passw0rd@127.0.0.1:{http.port}", "127.0.0.2"),
            (f"socks5://agent:passw0rd@127.0.0.1:{socks.port}", "127.0.0.3"),
        ):
            partition, proxy = await profile_behind(admin, address)
            with pytest.raises(PlaywrightError, match="net::ERR_INVALID_AUTH_CREDENTIALS"):
                await engine.open_tab(admin.team_id, partition, url=site.base + "/members-only")
            assert site.requests[-1][:2] == ("/members-only", outgoing)
            assert await status_of(admin, proxy["id"]) is None


@pytest.mark.parametrize("server", ["shell"], indirect=True)
async def test_a_sign_in_the_proxy_refuses_reads_the_same_in_the_headless_shell(
    server: RunningHub, admin: Admin, site: Seen, tmp_path: Path
) -> None:
    """The shell shows a refusing proxy's own answer (tinyproxy's 401) as a page: the host
    asks the proxy, and the load is the same sign-in refusal as in the full browser."""
    engine = await server.builtin.services.browser.engine()
    async with tinyproxy(tmp_path, outgoing="127.0.0.2", sign_in=("agent", "passw0rd")) as guarded:
        partition, proxy = await profile_behind(
            admin, f"http://agent:wrong@127.0.0.1:{guarded.port}"
        )
        with pytest.raises(CrewhostError) as caught:
            await engine.open_tab(admin.team_id, partition, url=site.base + "/shell")
        assert caught.value.code == "browserProxySignInRefused"
        assert await status_of(admin, proxy["id"]) == "signIn"
        assert all(path != "/shell" for path, *_ in site.requests)
        # A site's own sign-in there is the site's page, and the proxy is not marked.
        await admin.connection.call(
            "browser-proxies-v1/update",
            {
                "id": proxy["id"],
                "previousAddress": proxy["address"],
                "address": f"http://agent:passw0rd@127.0.0.1:{guarded.port}",
            },
        )
        tab = await engine.open_tab(admin.team_id, partition, url=site.base + "/members-only/2")
        assert tab.url.endswith("/members-only/2")
        assert await status_of(admin, proxy["id"]) is None


async def test_socks5_with_a_sign_in_goes_through_the_relay(
    server: RunningHub, admin: Admin, site: Seen
) -> None:
    engine = await server.builtin.services.browser.engine()
    async with microsocks(outgoing="127.0.0.4", sign_in=("agent", "s0cks@/#")) as socks:
        partition, proxy = await profile_behind(
            admin, f"socks5://agent:s0cks@/#@127.0.0.1:{socks.port}"
        )
        tab = await engine.open_tab(admin.team_id, partition, url=site.base + "/socks")
        assert tab.url.endswith("/socks")
        assert site.requests[-1][:2] == ("/socks", "127.0.0.4")
        assert await status_of(admin, proxy["id"]) is None


async def test_a_dead_proxy_is_unreachable_and_never_falls_back(
    server: RunningHub, admin: Admin, site: Seen
) -> None:
    for address in (f"127.0.0.1:{free_port()}", f"socks5://u:p@127.0.0.1:{free_port()}"):
        partition, proxy = await profile_behind(admin, address)
        assert await refusal(server, admin, partition, site.base + "/") == (
            "browserProxyUnreachable"
        )
        assert await status_of(admin, proxy["id"]) == "unreachable"
        await admin.connection.call(
            "browser-proxies-v1/delete", {"id": proxy["id"], "profiles": [partition.key]}
        )
        await admin.connection.call("browser-profiles-v1/delete", {"id": partition.key})
    assert site.requests == []
    engine = await server.builtin.services.browser.engine()
    assert engine.list_tabs(admin.team_id) == []  # the tabs did not open


async def test_socks5_refusals_and_silence(server: RunningHub, admin: Admin, site: Seen) -> None:
    server.builtin.services.browser.proxied.launcher.connect_timeout = 1.0
    expected = {"refuse": "browserProxySignInRefused", "silent": "browserProxyUnreachable"}
    marks = {"refuse": "signIn", "silent": "unreachable"}
    for mode, code in expected.items():
        async with faulty_socks5(mode) as fake:  # type: ignore[arg-type]
            partition, proxy = await profile_behind(
                admin, f"socks5://user:secret@127.0.0.1:{fake.port}"
            )
            assert await refusal(server, admin, partition, site.base + "/") == code
            assert fake.connections >= 1
            assert await status_of(admin, proxy["id"]) == marks[mode]
            await admin.connection.call(
                "browser-proxies-v1/delete", {"id": proxy["id"], "profiles": [partition.key]}
            )
            await admin.connection.call("browser-profiles-v1/delete", {"id": partition.key})
    async with faulty_socks5("ok") as fake:
        partition, proxy = await profile_behind(
            admin, f"socks5://user:secret@127.0.0.1:{fake.port}"
        )
        engine = await server.builtin.services.browser.engine()
        await engine.open_tab(admin.team_id, partition, url=site.base + "/fine")
    assert [path for path, _, _ in site.requests] == ["/fine"]


async def test_a_proxy_change_closes_the_tabs_of_its_profiles(
    server: RunningHub, admin: Admin, site: Seen, tmp_path: Path
) -> None:
    engine = await server.builtin.services.browser.engine()
    async with tinyproxy(tmp_path, outgoing="127.0.0.2") as plain:
        partition, proxy = await profile_behind(admin, f"127.0.0.1:{plain.port}")
        tab = await engine.open_tab(admin.team_id, partition, url=site.base + "/one")
        shared = await engine.open_tab(admin.team_id, Partition.shared(), url="about:blank")
        await admin.connection.call(
            "browser-proxies-v1/update",
            {
                "id": proxy["id"],
                "previousAddress": proxy["address"],
                "address": f"127.0.0.1:{plain.port + 0}",
            },
        )
        # The same address: nothing changed, nothing closed.
        assert [t.id for t in engine.list_tabs(admin.team_id)] == [tab.id, shared.id]
        dead = free_port()
        await admin.connection.call(
            "browser-proxies-v1/update",
            {
                "id": proxy["id"],
                "previousAddress": proxy["address"],
                "address": f"127.0.0.1:{dead}",
            },
        )
        assert [t.id for t in engine.list_tabs(admin.team_id)] == [shared.id]


async def test_a_proxied_browser_keeps_webrtc_behind_the_proxy(
    server: RunningHub, admin: Admin, tmp_path: Path
) -> None:
    engine = await server.builtin.services.browser.engine()
    async with tinyproxy(tmp_path, outgoing="127.0.0.2") as plain:
        partition, _ = await profile_behind(admin, f"127.0.0.1:{plain.port}")
        tab = await engine.open_tab(admin.team_id, partition, url="chrome://version")
        shown = await engine.run(admin.team_id, tab.id, NOBODY, lambda page: page.content())
    # Chromium's own page lists the command line it was launched with.
    assert shown.value is not None
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in shown.value
    assert "--webrtc-ip-handling-policy=disable_non_proxied_udp" in shown.value
    assert "--proxy-pac-url" not in shown.value  # the proxy, not the address guard's PAC


async def test_web_fetch_leaves_through_the_agents_profile_proxy(
    server: RunningHub, admin: Admin, site: Seen, tmp_path: Path
) -> None:
    """An agent whose browser profile is behind a proxy fetches through it too: the site
    sees the proxy's address, never the host's own."""
    agent = await admin.connection.call("agents-v1/create", {"name": "Fetcher"})
    services = server.builtin.services
    port = int(site.base.rsplit(":", 1)[1])
    only_the_site = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.ip_address("127.0.0.1"), port)})
    )

    async def fetch(path: str) -> dict[str, Any]:
        context = dataclasses.replace(
            await services.tool_contexts.for_turn(admin.team_id, Caller.agent(agent["id"], None)),
            web=WebFetcher(only_the_site),
        )
        return await call_tool(context, "web_fetch", {"url": site.base + path})

    assert (await fetch("/straight"))["status"] == 200  # Automatic: straight out
    assert site.requests[-1][:2] == ("/straight", "127.0.0.1")

    async with (
        tinyproxy(tmp_path, outgoing="127.0.0.4", sign_in=("agent", "s3cret-pass")) as http_up,
        microsocks(outgoing="127.0.0.5", sign_in=("agent", "s0/c#k@s")) as socks_up,
    ):
        for address, outgoing, path in (
            (f"agent:s3cret-pass@127.0.0.1:{http_up.port}", "127.0.0.4", "/via-http"),
            (f"socks5://agent:s0/c#k@s@127.0.0.1:{socks_up.port}", "127.0.0.5", "/via-socks"),
        ):
            socks_partition, _ = await profile_behind(admin, address)
            await admin.connection.call(
                "browser-profiles-v1/assign",
                {"agentId": agent["id"], "profile": socks_partition.key},
            )
            fetched = await fetch(path)
            assert fetched["status"] == 200, fetched
            assert site.requests[-1][:2] == (path, outgoing)
        # A wrong password is the proxy's refusal, not a page answered 401 or 407.
        count = len(site.requests)
        partition, wrong = await profile_behind(admin, f"agent:wrong@127.0.0.1:{http_up.port}")
        await admin.connection.call(
            "browser-profiles-v1/assign", {"agentId": agent["id"], "profile": partition.key}
        )
        refused = await fetch("/wrong-password")
        assert refused["error"]["code"] == "browserProxySignInRefused", refused
        assert "wrong" not in str(refused)
        assert await status_of(admin, wrong["id"]) == "signIn"

    # With the SOCKS5 proxy gone its relay refuses: the fetch says the proxy did not
    # answer, and no connection goes direct.
    await admin.connection.call(
        "browser-profiles-v1/assign", {"agentId": agent["id"], "profile": socks_partition.key}
    )
    failed = await fetch("/after")
    assert failed["error"]["code"] == "browserProxyUnreachable", failed
    assert len(site.requests) == count


async def test_a_proxy_name_that_turns_to_loopback_is_never_dialled(
    server: RunningHub, admin: Admin, site: Seen
) -> None:
    """A proxy's name is judged again at every connection: public when saved, the host's
    loopback when the browser launches, and nothing connects to it (neither Chromium nor
    the relay); an address outside the allow-list is refused when saved."""
    dialled: list[str] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        dialled.append(writer.get_extra_info("peername")[0])
        writer.close()

    listener = await asyncio.start_server(record, "127.0.0.2", 0)
    port = listener.sockets[0].getsockname()[1]
    resolver = TableResolver({"proxy.test": ["93.184.216.34"]})
    server.builtin.services.proxies.judge.resolver = resolver
    try:
        for address, code in (
            (f"http://proxy.test:{port}", "proxyAddressRefused"),
            (f"socks5://proxy.test:{port}", "proxyAddressRefused"),
            (f"socks5://user:pass@proxy.test:{port}", "browserProxyUnreachable"),
        ):
            resolver.table["proxy.test"] = ["93.184.216.34"]
            partition, proxy = await profile_behind(admin, address)
            resolver.table["proxy.test"] = ["93.184.216.34", "127.0.0.2"]
            assert await refusal(server, admin, partition, site.base + "/") == code, address
            await admin.connection.call(
                "browser-proxies-v1/delete", {"id": proxy["id"], "profiles": [partition.key]}
            )
        with pytest.raises(TeamApiCallError) as caught:
            await admin.connection.call(
                "browser-proxies-v1/create", {"address": f"http://127.0.0.2:{port}"}
            )
        assert caught.value.code == "proxyAddressRefused"
        assert "127.0.0.2 is loopback" in caught.value.message
    finally:
        listener.close()
        await listener.wait_closed()
    assert dialled == []
    assert site.requests == []

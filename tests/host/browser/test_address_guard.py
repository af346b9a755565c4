"""The browser address policy in real Chromium: loopback, link-local, private, the host's
own and every other non-public address are refused however a page asks for them, in the
full browser (the PAC script) and in the headless shell (the filtering proxy) alike.

The refused service listens on 127.0.0.1; the allowed origin that redirects and
fetches is on 127.0.0.2 (also loopback on Linux), which the engines here allow.

The engine with the default policy runs once per browser for the module; each test opens
its own tabs and closes them, and gets its own services on new ports.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from server.common.browser_address_policy import (
    AddressPolicy,
    AddressRefused,
    IPAddress,
    Rule,
    interface_addresses,
)
from server.host.browser.address_guard import AddressGuard
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from tests.support.chromium import installed
from tests.support.loop_watch import module_loop_watch  # noqa: F401 - a fixture
from tests.support.ports import closed_port
from tests.support.sites import Site, pages_app, serving

TEAM = "team-a"
AGENT = Caller.agent("agent-1", "thread-1")
ORIGIN_HOST = "127.0.0.2"
# A name that resolves to loopback, and a private address served by the origin, both
# given to Chromium's resolver as DNS would.
LOOPBACK_NAME = "loopback.test"
PRIVATE_ADDRESS = "10.11.12.13"
# Names that look like refused addresses but resolve to the allowed origin.
LOOKALIKES = ("127.example.test", "0.example.test", "169.254.example.test")
HOST_MAP = {
    LOOPBACK_NAME: "127.0.0.1",
    PRIVATE_ADDRESS: ORIGIN_HOST,
    **dict.fromkeys(LOOKALIKES, ORIGIN_HOST),
}

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _redirect(request: web.Request) -> web.Response:
    raise web.HTTPFound(request.query["to"])


async def _socket(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    await ws.send_str("secret over a socket")
    await ws.close()
    return ws


@pytest_asyncio.fixture(loop_scope="module")
async def secret() -> AsyncIterator[Site]:
    """A service on the host's loopback that a browser must not read."""
    app = pages_app(
        {"/secret": "<!doctype html><title>secret</title><p>the hub's secret</p>"},
        routes={"/ws": _socket},
    )
    async with serving(app, "127.0.0.1") as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def origin() -> AsyncIterator[Site]:
    """An allowed origin whose pages fetch, embed and redirect wherever they are told."""
    app = pages_app({"/page": "<!doctype html><title>origin</title>"}, routes={"/go": _redirect})
    async with serving(app, ORIGIN_HOST) as running:
        yield running


@pytest.fixture(scope="module", params=["chromium", "chromium-headless-shell"])
def chromium(request: pytest.FixtureRequest) -> str:
    """The full browser and the headless shell, as the install step installs them."""
    return installed(request.param)


def _engine(
    tmp_path: Path,
    chromium: str,
    allowed: list[str],
    *,
    refuse_private: bool = True,
    own_addresses: frozenset[IPAddress] = frozenset(),
) -> BrowserEngine:
    policy = AddressPolicy.from_entries(
        allowed, refuse_private=refuse_private, own_addresses=own_addresses
    )
    return BrowserEngine(tmp_path, chromium=chromium, address_policy=policy, host_map=HOST_MAP)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running_engine(
    tmp_path_factory: pytest.TempPathFactory, chromium: str
) -> AsyncIterator[BrowserEngine]:
    """The default policy, with only the origin allowed: one engine per browser."""
    async with _engine(tmp_path_factory.mktemp("engine"), chromium, [ORIGIN_HOST]) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def engine(running_engine: BrowserEngine) -> AsyncIterator[BrowserEngine]:
    """The module's engine; the tabs a test opens are closed after it."""
    yield running_engine
    for tab in running_engine.list_tabs(TEAM):
        await running_engine.close_tab(TEAM, tab.id, AGENT)
    assert running_engine.list_tabs(TEAM) == []


def _paths(site: Site) -> list[str]:
    """The pages a site served (without the icons a browser asks for by itself)."""
    return [path for path, _ in site.requests if path != "/favicon.ico"]


async def _blank_tab(engine: BrowserEngine) -> Tab:
    return await engine.open_tab(TEAM, Partition.shared(), owner_agent_id=AGENT.agent_id)


async def _refusal(engine: BrowserEngine, tab: Tab, url: str) -> AddressRefused:
    with pytest.raises(AddressRefused) as refused:
        await engine.navigate(TEAM, tab.id, AGENT, url)
    return refused.value


async def _page_text(engine: BrowserEngine, tab: Tab) -> str:
    result = await engine.run(TEAM, tab.id, AGENT, lambda page: page.inner_text("body"))
    return str(result.value)


async def test_a_loopback_navigation_shows_a_page_naming_the_rule(
    engine: BrowserEngine, secret: Site
) -> None:
    tab = await _blank_tab(engine)
    refused = await _refusal(engine, tab, secret.url("/secret"))
    assert refused.rule == "loopback"
    assert refused.message == (
        f"Crewhost refused {secret.url('/secret')}: loopback addresses are blocked for "
        "browsers on this host (setting browser_allowed_hosts)"
    )
    assert refused.code == "addressRefused"
    shown = await _page_text(engine, tab)
    assert "Refused by Crewhost" in shown
    assert refused.message in shown
    assert "the hub's secret" not in shown
    assert secret.requests == []


async def test_a_redirect_from_an_allowed_origin_to_loopback_is_refused(
    engine: BrowserEngine, secret: Site, origin: Site
) -> None:
    tab = await _blank_tab(engine)
    for target in (secret.url("/secret"), f"http://{LOOPBACK_NAME}:{secret.port}/secret"):
        refused = await _refusal(engine, tab, origin.url(f"/go?to={target}"))
        assert (refused.rule, refused.url) == ("loopback", target)
    assert _paths(origin) == ["/go", "/go"]
    assert secret.requests == []


async def test_a_page_cannot_fetch_embed_or_open_a_socket_to_loopback(
    engine: BrowserEngine, secret: Site, origin: Site
) -> None:
    tab = await _blank_tab(engine)
    await engine.navigate(TEAM, tab.id, AGENT, origin.url("/page"))
    by_name = f"http://{LOOPBACK_NAME}:{secret.port}"
    script = """async ([secret, redirected, byName, socket]) => {
      const read = (url) => fetch(url).then((r) => r.text(), (e) => 'refused: ' + e.name);
      const image = new Promise((done) => {
        const img = new Image();
        img.onload = () => done('loaded');
        img.onerror = () => done('refused');
        img.src = secret + '/secret';
      });
      const ws = new Promise((done) => {
        const s = new WebSocket(socket);
        s.onmessage = (e) => done(e.data);
        s.onerror = () => done('refused');
      });
      return [await read(secret + '/secret'), await read(redirected),
              await read(byName + '/secret'), await image, await ws];
    }"""
    args = [
        secret.base,
        origin.url(f"/go?to={secret.url('/secret')}"),
        by_name,
        secret.base.replace("http:", "ws:") + "/ws",
    ]
    result = await engine.run(TEAM, tab.id, AGENT, lambda page: page.evaluate(script, args))
    assert result.value == ["refused: TypeError"] * 3 + ["refused", "refused"]
    assert secret.requests == []


async def test_every_spelling_of_loopback_is_refused(engine: BrowserEngine, secret: Site) -> None:
    tab = await _blank_tab(engine)
    spellings = ("127.1", "2130706433", "[::1]", "[::ffff:127.0.0.1]", "127.9.8.7")
    for host in (*spellings, "localhost", "app.localhost", "localhost.", LOOPBACK_NAME):
        refused = await _refusal(engine, tab, f"http://{host}:{secret.port}/secret")
        assert refused.rule == "loopback"
    assert secret.requests == []


async def test_a_headless_shell_under_another_name_is_kept_to_the_policy_all_the_same(
    tmp_path: Path, secret: Site
) -> None:
    shell = installed("chromium-headless-shell")
    renamed = tmp_path / "chrome"
    renamed.symlink_to(shell)
    async with _engine(tmp_path / "data", str(renamed), [ORIGIN_HOST]) as engine:
        tab = await _blank_tab(engine)
        # A name that resolves to loopback: only the PAC script or the proxy catches it.
        by_name = f"http://{LOOPBACK_NAME}:{secret.port}/secret"
        refused = await _refusal(engine, tab, by_name)
        assert refused.rule == "loopback"
        assert "Refused by Crewhost" in await _page_text(engine, tab)
    assert secret.requests == []


async def test_https_to_loopback_is_refused_and_says_why(
    engine: BrowserEngine, secret: Site
) -> None:
    tab = await _blank_tab(engine)
    refused = await _refusal(engine, tab, f"https://127.0.0.1:{secret.port}/secret")
    assert refused.rule == "loopback"
    assert secret.requests == []


async def test_link_local_metadata_is_refused_before_connecting(engine: BrowserEngine) -> None:
    tab = await _blank_tab(engine)
    # Nothing listens there: the page comes from the host's refusal, not the network.
    for url in ("http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/"):
        refused = await _refusal(engine, tab, url)
        assert refused.rule == "link-local"
        assert "link-local addresses (cloud metadata among them)" in await _page_text(engine, tab)
    for url in ("http://0.0.0.0:8750/", "http://[::]:8750/"):
        assert (await _refusal(engine, tab, url)).rule == "unspecified"


async def test_a_load_that_fails_names_its_cause_in_either_browser(engine: BrowserEngine) -> None:
    tab = await _blank_tab(engine)
    dead = f"http://{ORIGIN_HOST}:{closed_port(ORIGIN_HOST)}/page"
    unknown = "http://nowhere.invalid/page"
    visits = [await engine.visit(TEAM, tab.id, AGENT, url) for url in (dead, unknown)]
    assert [(v.url, v.load_error) for v in visits] == [
        (dead, "ERR_CONNECTION_REFUSED"),
        (unknown, "ERR_NAME_NOT_RESOLVED"),
    ]


async def test_what_only_looks_refused_still_loads(engine: BrowserEngine, origin: Site) -> None:
    tab = await _blank_tab(engine)
    for name in LOOKALIKES:
        url = f"http://{name}:{origin.port}/page"
        assert (await engine.navigate(TEAM, tab.id, AGENT, url)).value == url
    loaded = await engine.navigate(TEAM, tab.id, AGENT, "data:text/html,<p>inline page</p>")
    assert str(loaded.value).startswith("data:")
    assert await _page_text(engine, tab) == "inline page"
    loaded = await engine.navigate(TEAM, tab.id, AGENT, "about:blank")
    assert loaded.value == "about:blank"


async def test_listed_loopback_addresses_and_names_are_allowed(
    tmp_path: Path, chromium: str, secret: Site, origin: Site
) -> None:
    async with _engine(tmp_path, chromium, [ORIGIN_HOST, "127.0.0.1", "localhost"]) as engine:
        tab = await _blank_tab(engine)
        for url in (secret.url("/secret"), f"http://localhost:{secret.port}/secret"):
            await engine.navigate(TEAM, tab.id, AGENT, url)
            assert await _page_text(engine, tab) == "the hub's secret"
        await engine.navigate(TEAM, tab.id, AGENT, origin.url(f"/go?to={secret.url('/secret')}"))
        assert await _page_text(engine, tab) == "the hub's secret"
        socket = secret.base.replace("http:", "ws:") + "/ws"
        read = """(url) => new Promise((done) => {
          const s = new WebSocket(url);
          s.onmessage = (e) => done(e.data);
          s.onerror = () => done('refused');
        })"""
        said = await engine.run(TEAM, tab.id, AGENT, lambda page: page.evaluate(read, socket))
        assert said.value == "secret over a socket"
        # Only the name listed: another localhost name stays refused.
        refused = await _refusal(engine, tab, f"http://app.localhost:{secret.port}/secret")
        assert refused.rule == "loopback"
        # A name is judged by its addresses: this one's is allowed.
        await engine.navigate(TEAM, tab.id, AGENT, f"http://{LOOPBACK_NAME}:{secret.port}/secret")
        assert await _page_text(engine, tab) == "the hub's secret"
    assert _paths(secret) == ["/secret"] * 3 + ["/ws", "/secret"]


async def test_private_addresses_are_refused_unless_opened(
    tmp_path: Path, chromium: str, origin: Site
) -> None:
    private = f"http://{PRIVATE_ADDRESS}:{origin.port}/page"
    async with _engine(tmp_path / "default", chromium, [ORIGIN_HOST]) as engine:
        tab = await _blank_tab(engine)
        refused = await _refusal(engine, tab, private)
        assert refused.rule == "private"
        assert "(settings browser_refuse_private, browser_allowed_hosts)" in refused.message
    assert _paths(origin) == []
    async with _engine(
        tmp_path / "opened", chromium, [ORIGIN_HOST], refuse_private=False
    ) as engine:
        tab = await _blank_tab(engine)
        assert (await engine.navigate(TEAM, tab.id, AGENT, private)).value == private
    assert _paths(origin) == ["/page"]


@pytest_asyncio.fixture(loop_scope="module")
async def everywhere() -> AsyncIterator[Site]:
    """A service listening on all interfaces, as many a host's services do."""
    app = pages_app({"/secret": "<!doctype html><title>secret</title><p>all interfaces</p>"})
    async with serving(app, "0.0.0.0") as running:  # noqa: S104 - the point of the test
        yield running


async def test_the_hosts_own_interface_addresses_are_refused(
    tmp_path: Path, chromium: str, everywhere: Site
) -> None:
    own = interface_addresses()
    reachable = [a for a in own if a.version == 4] + [a for a in own if a.version == 6]
    assert reachable, "this machine has no non-loopback interface address"
    async with _engine(tmp_path, chromium, [ORIGIN_HOST], own_addresses=own) as engine:
        tab = await _blank_tab(engine)
        for address in reachable:
            host = f"[{address}]" if address.version == 6 else str(address)
            refused = await _refusal(engine, tab, f"http://{host}:{everywhere.port}/secret")
            assert refused.rule == "host", address
            assert "this host's own addresses are blocked" in refused.message
            assert "all interfaces" not in await _page_text(engine, tab)
    assert everywhere.requests == []


# Addresses that wrap loopback in IPv6 or fall in a special-purpose block, each with the
# rule that refuses it. Nothing listens there: the rule named is the policy's answer.
WRAPPED_AND_SPECIAL = (
    ("[::127.0.0.1]", "loopback"),
    ("[64:ff9b::7f00:1]", "loopback"),
    ("[2002:7f00:1::]", "loopback"),
    ("[64:ff9b::a9fe:a9fe]", "link-local"),
    ("100.64.0.1", "reserved"),
    ("192.0.2.1", "reserved"),
    ("198.18.0.1", "reserved"),
    ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "reserved"),
    ("[fd00::1]", "private"),
)


async def test_loopback_wrapped_in_ipv6_and_special_ranges_are_refused(
    engine: BrowserEngine, secret: Site
) -> None:
    tab = await _blank_tab(engine)
    for host, rule in WRAPPED_AND_SPECIAL:
        refused = await _refusal(engine, tab, f"http://{host}:{secret.port}/secret")
        assert refused.rule == rule, host
    assert secret.requests == []


# -- the refusal listeners, without a browser ---------------------------------------------


async def _ask(guard: AddressGuard, rule: Rule, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", guard.ports[rule])
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def test_the_listeners_answer_http_connect_and_tls() -> None:
    async with AddressGuard(AddressPolicy()) as guard:
        page = await _ask(
            guard, "loopback", b"GET /a?b=<c> HTTP/1.1\r\nHost: 127.0.0.1:8750\r\n\r\n"
        )
        assert page.startswith(b"HTTP/1.1 403 Forbidden\r\n")
        assert b"X-Crewhost-Refused: loopback" in page
        assert b"Crewhost refused http://127.0.0.1:8750/a?b=&lt;c&gt;: loopback" in page
        proxied = await _ask(guard, "link-local", b"GET http://meta.test/x HTTP/1.1\r\n\r\n")
        assert b"Crewhost refused http://meta.test/x: link-local" in proxied
        tunnel = await _ask(guard, "loopback", b"CONNECT a.test:443 HTTP/1.1\r\n\r\n")
        assert tunnel == b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        assert await _ask(guard, "loopback", b"\x16\x03\x01\x02\x00") == b""


async def test_allowed_literals_are_excluded_from_chromiums_rules() -> None:
    policy = AddressPolicy.from_entries(["127.0.0.8/30", "localhost", "fe80::5", "10.0.0.0/8"])
    async with AddressGuard(policy) as guard:
        await guard.start_proxy()  # every browser's way out, so every launch's flags name it
        rules = next(a for a in guard.chromium_args() if a.startswith("--host-resolver-rules="))
    excluded = [r.removeprefix("EXCLUDE ") for r in rules.split("=", 1)[1].split(", ")]
    excluded = [r for r in excluded if not r.startswith("MAP ")]
    assert excluded == [
        "localhost",
        "localhost.",
        "127.0.0.8",
        "127.0.0.9",
        "127.0.0.10",
        "127.0.0.11",
        "fe80::5",
    ]
    assert "MAP localhost 127.0.0.1:" in rules  # excluded, yet app.localhost stays mapped

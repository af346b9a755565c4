"""The fetcher under the public-only policy: pinned dials, vetted redirects, caps, timeouts."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator
from urllib.parse import quote

import pytest
from aiohttp import web

from server.common.browser_address_policy import AddressRefused
from server.common.errors import InvalidArgument
from server.common.public_addresses import NameNotResolved, PublicOnlyPolicy
from server.host.web.fetcher import FetchFailed, FetchLimits, WebFetcher
from tests.support.resolvers import TableResolver
from tests.support.sites import Site, serving

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def site_app(never: asyncio.Event) -> web.Application:
    async def page(_request: web.Request) -> web.Response:
        return web.Response(text="<p>hello</p>", content_type="text/html")

    async def hops(request: web.Request) -> web.Response:
        left = int(request.match_info["n"])
        raise web.HTTPFound(f"/hops/{left - 1}" if left > 0 else "/page")

    async def to(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["target"])

    async def raw_to(request: web.Request) -> web.Response:
        # The Location exactly as given: HTTPFound would refuse one that is no address.
        return web.Response(status=302, headers={"Location": request.query["target"]})

    async def big(_request: web.Request) -> web.Response:
        return web.Response(body=b"x" * 300_000, content_type="text/plain")

    async def slow(_request: web.Request) -> web.Response:
        await never.wait()
        return web.Response(text="late")

    async def host(request: web.Request) -> web.Response:
        return web.Response(text=request.host, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/hops/{n}", hops)
    app.router.add_get("/to", to)
    app.router.add_get("/raw-to", raw_to)
    app.router.add_get("/big", big)
    app.router.add_get("/slow", slow)
    app.router.add_get("/host", host)
    return app


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    never = asyncio.Event()
    async with serving(site_app(never)) as running:
        try:
            yield running
        finally:
            never.set()  # before the server stops, which waits for its handlers


def fetcher_for(site: Site, **table: list[str]) -> WebFetcher:
    """A fetcher allowed exactly the site's loopback endpoint, names resolved from ``table``."""
    policy = PublicOnlyPolicy(allowed_endpoints=frozenset({(LOOPBACK, site.port)}))
    return WebFetcher(
        policy, FetchLimits(timeout=2.0, max_bytes=100_000), TableResolver(dict(table))
    )


async def test_a_page_is_fetched_from_the_allowed_endpoint(site: Site) -> None:
    page = await fetcher_for(site).fetch(site.url("/page"))
    assert (page.status, page.content_type, page.body, page.cut) == (
        200,
        "text/html",
        b"<p>hello</p>",
        False,
    )
    assert page.final_url == site.url("/page")


async def test_a_name_is_dialed_at_its_vetted_address_with_its_own_host_header(
    site: Site,
) -> None:
    fetcher = fetcher_for(site, **{"news.example": ["127.0.0.1"]})
    page = await fetcher.fetch(f"http://news.example:{site.port}/host")
    assert page.body == f"news.example:{site.port}".encode()
    assert fetcher.resolver.asked == ["news.example"]  # type: ignore[attr-defined]


async def test_redirects_are_followed_and_each_hop_vetted(site: Site) -> None:
    page = await fetcher_for(site).fetch(site.url("/hops/3"))
    assert page.final_url == site.url("/page")
    with pytest.raises(FetchFailed) as failed:
        await fetcher_for(site).fetch(site.url("/hops/11"))
    assert failed.value.code == "tooManyRedirects"


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{other}/",
        "http://localhost:{port}/page",
        "http://127.1:{other}/",
        "http://[::1]:{port}/page",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://evil.example:{other}/page",
    ],
)
async def test_a_redirect_to_a_refused_address_is_refused(site: Site, target: str) -> None:
    fetcher = fetcher_for(site, **{"evil.example": ["93.184.216.34", "127.0.0.1"]})
    where = target.format(port=site.port, other=site.port + 1)
    with pytest.raises(AddressRefused) as refused:
        await fetcher.fetch(site.url(f"/to?target={where}"))
    assert refused.value.code == "addressRefused"
    # The first hop was fetched; the refused one never was.
    assert [path for path, _ in site.requests] == ["/to"]


@pytest.mark.parametrize(
    "target", ["http://[oops/", "http://127.0.0.1:99999/page", "http://shop.example:port/"]
)
async def test_a_redirect_to_no_address_at_all_fails_clearly(site: Site, target: str) -> None:
    with pytest.raises(FetchFailed) as failed:
        await fetcher_for(site).fetch(site.url(f"/raw-to?target={quote(target, safe='')}"))
    assert failed.value.code == "fetchFailed"
    assert repr(target) in failed.value.message
    assert [path for path, _ in site.requests] == ["/raw-to"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/page",  # the right address, another port than allowed
        "http://localhost/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://0.0.0.0/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://169.254.169.254/",
        "http://192.168.1.1/",
        "http://172.16.5.4/",
        "http://100.64.0.1/",
        "http://loopback.example/",
        "http://metadata.example/",
    ],
)
async def test_the_refusal_table(site: Site, url: str) -> None:
    fetcher = fetcher_for(
        site,
        **{"loopback.example": ["127.0.0.1"], "metadata.example": ["169.254.169.254"]},
    )
    with pytest.raises(AddressRefused):
        await fetcher.fetch(url.format(port=site.port + 1))
    assert site.requests == []


async def test_a_listed_private_host_may_be_fetched(site: Site) -> None:
    policy = PublicOnlyPolicy.from_entries(["127.0.0.1"])
    page = await WebFetcher(policy).fetch(site.url("/page"))
    assert page.status == 200


async def test_an_oversize_body_is_cut_at_the_cap(site: Site) -> None:
    page = await fetcher_for(site).fetch(site.url("/big"))
    assert (len(page.body), page.cut) == (100_000, True)


async def test_a_silent_server_times_out(site: Site) -> None:
    policy = PublicOnlyPolicy(allowed_endpoints=frozenset({(LOOPBACK, site.port)}))
    fetcher = WebFetcher(policy, FetchLimits(timeout=0.3))
    with pytest.raises(FetchFailed) as failed:
        await fetcher.fetch(site.url("/slow"))
    assert failed.value.code == "fetchTimeout"


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "http://", "nope"])
async def test_only_http_and_https_addresses(url: str) -> None:
    with pytest.raises(InvalidArgument) as invalid:
        await WebFetcher().fetch(url)
    assert invalid.value.code == "invalidUrl"


async def test_a_name_that_does_not_resolve(site: Site) -> None:
    with pytest.raises(NameNotResolved):
        await fetcher_for(site).fetch("http://nowhere.example/")


async def test_a_closed_port_fails_clearly(site: Site) -> None:
    policy = PublicOnlyPolicy(allowed_endpoints=frozenset({(LOOPBACK, 9)}))
    with pytest.raises(FetchFailed) as failed:
        await WebFetcher(policy).fetch("http://127.0.0.1:9/")
    assert failed.value.code == "fetchFailed"


async def test_through_a_proxy_the_target_is_still_vetted_here() -> None:
    seen: list[str] = []

    async def forward(request: web.Request) -> web.Response:
        # A forward proxy receives the target's absolute address as the request target.
        seen.append(str(request.url))
        return web.Response(text="through the proxy", content_type="text/plain")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", forward)
    async with serving(app) as proxy:
        fetcher = WebFetcher(resolver=TableResolver({"news.example": ["93.184.216.34"]}))
        page = await fetcher.fetch("http://news.example/today", proxy=proxy.base)
        assert page.body == b"through the proxy"
        assert seen == ["http://news.example/today"]
        with pytest.raises(AddressRefused):
            await fetcher.fetch("http://127.0.0.1/admin", proxy=proxy.base)
        assert len(seen) == 1

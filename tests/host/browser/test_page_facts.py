"""A tab's title and icon follow its page: titles a page sets after its load, the icon it
names (or its /favicon.ico), nothing a page's own scripts can forge, and titles that come
back after a restart."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.page_facts import MAX_ICON_BYTES, PageFacts, default_icon_url
from server.host.browser.partitions import Partition
from server.host.browser.tab_registry import TabsChanged
from tests.support.sites import SITES_ALLOWED, Site, pages_app, serving
from tests.support.waiting import eventually

TEAM = "team-a"
AGENT = Caller.agent("agent-1", "thread-1")
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ICO = b"\x00\x00\x01\x00" + bytes(60)
PAGES = {
    "/app": (
        "<title>Inbox</title><link rel=icon href='/icon.png'>"
        "<button id=go onclick=\"history.pushState({}, '', '/app/mail/1');"
        " setTimeout(() => { document.title = 'Mail 1 — Inbox' }, 50)\">open</button>"
    ),
    "/plain": "<title>plain</title><p>no icon named</p>",
    "/big-icon": "<title>big</title><link rel=icon href='/big.png'>",
    "/html-icon": "<title>html</title><link rel=icon href='/plain'>",
    "/forger": (
        "<title>forger</title><script>document.title = typeof window.__crewhostPageFacts</script>"
    ),
}


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    def image(body: bytes, content_type: str) -> web.Response:
        return web.Response(body=body, content_type=content_type)

    async def icon(_request: web.Request) -> web.Response:
        return image(PNG, "image/png")

    async def favicon(_request: web.Request) -> web.Response:
        return image(ICO, "image/x-icon")

    async def big(_request: web.Request) -> web.Response:
        return image(PNG + bytes(MAX_ICON_BYTES), "image/png")

    pages = {path: f"<!doctype html>{body}" for path, body in PAGES.items()}
    routes = {"/icon.png": icon, "/favicon.ico": favicon, "/big.png": big}
    async with serving(pages_app(pages, routes=routes)) as running:
        yield running


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as running:
        yield running


async def test_a_title_set_after_the_load_reaches_the_tab_and_is_announced(
    engine: BrowserEngine, site: Site
) -> None:
    announced: list[str] = []
    engine.signals.subscribe(TabsChanged, lambda s: announced.append(s.team_id))
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/app"))
    await eventually(lambda: tab.title == "Inbox")
    announced.clear()
    await engine.run(TEAM, tab.id, AGENT, lambda page: page.click("#go"))
    await eventually(lambda: tab.title == "Mail 1 — Inbox")
    assert tab.url == site.url("/app/mail/1")
    assert TEAM in announced


async def test_the_icon_the_page_names_or_its_favicon_is_listed_by_hash(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/app"))
    await eventually(lambda: tab.icon is not None)
    assert tab.icon is not None
    assert tab.icon.digest == digest(PNG)
    assert tab.icon.data_url == "data:image/png;base64," + base64.b64encode(PNG).decode()

    await engine.navigate(TEAM, tab.id, AGENT, site.url("/plain"))
    await eventually(lambda: tab.icon is not None and tab.icon.digest == digest(ICO))
    assert tab.icon is not None
    assert tab.icon.data_url.startswith("data:image/x-icon;base64,")


@pytest.mark.parametrize("path", ["/big-icon", "/html-icon"])
async def test_an_icon_too_large_or_not_an_image_is_not_listed(
    engine: BrowserEngine, site: Site, path: str
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/app"))
    await eventually(lambda: tab.icon is not None)
    await engine.navigate(TEAM, tab.id, AGENT, site.url(path))
    icon_path = "/big.png" if path == "/big-icon" else "/plain"
    await eventually(lambda: any(p == icon_path for p, _ in site.requests))
    await eventually(lambda: tab.icon is None)
    assert tab.icon is None


async def test_the_pages_scripts_neither_see_nor_forge_the_report(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/forger"))
    # The binding lives in the host's world only: the page's own world has no such name.
    await eventually(lambda: tab.title == "undefined")
    page = tab.page
    assert page is not None
    assert await page.evaluate("typeof window.__crewhostPageFacts") == "undefined"
    await page.evaluate("document.title = 'own title'")
    await eventually(lambda: tab.title == "own title")


async def test_a_title_comes_back_with_its_tab_after_a_restart(tmp_path: Path, site: Site) -> None:
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/app"))
        await engine.run(TEAM, tab.id, AGENT, lambda page: page.click("#go"))
        await eventually(lambda: tab.title == "Mail 1 — Inbox")
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        [restored] = engine.list_tabs(TEAM)
        assert (restored.id, restored.title, restored.loaded) == (tab.id, "Mail 1 — Inbox", False)


def test_a_report_is_read_only_when_it_is_one() -> None:
    page = "https://example.test/a/b?c=d"
    assert PageFacts.parse('{"title": " A \\n  title ", "icon": ""}', page) == PageFacts(
        "A title", "https://example.test/favicon.ico"
    )
    for payload in ("[]", "not json", '{"title": 1, "icon": ""}', "x" * 5000):
        assert PageFacts.parse(payload, page) is None
    assert PageFacts.parse('{"title": "' + "t" * 400 + '", "icon": ""}', page) == PageFacts(
        "t" * 300, "https://example.test/favicon.ico"
    )
    assert default_icon_url("about:blank") == ""
    assert default_icon_url("data:text/html,x") == ""

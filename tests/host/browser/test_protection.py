"""A tab's protection in secure entry: the phases it goes through, each told once, and what
the access rules read of each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from aiohttp import web

from server.host.browser.access import holds_secret, secret_view_allowed
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.protection import (
    ProtectionChanged,
    address_carries,
    kept_address,
    protect,
)
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from tests.support.clock import FakeClock
from tests.support.sites import SITES_ALLOWED, Site, pages_app, serving
from tests.support.waiting import eventually

TEAM = "team-a"
PERSON = "account-1"


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as running:
        yield running


def phase(tab: Tab) -> Protection:
    """The tab's phase now (read afresh: each step of the test moves it)."""
    return tab.protection


async def test_an_entry_goes_through_its_phases_until_a_new_document(
    engine: BrowserEngine, site: Site
) -> None:
    told: list[ProtectionChanged] = []
    engine.signals.subscribe(ProtectionChanged, told.append)
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    page = tab.page
    assert page is not None
    assert phase(tab) is Protection.NONE

    protection = await protect(tab, page, site.base, engine.signals)
    # Entering: the secret goes in; nobody watches, not even the holder.
    assert phase(tab) is Protection.ENTERING
    assert holds_secret(tab)
    assert not secret_view_allowed(tab, PERSON, taking=True)

    protection.keep()
    protection.keep()  # no change, nothing told
    assert phase(tab) is Protection.KEPT
    assert holds_secret(tab)
    assert secret_view_allowed(tab, PERSON, taking=True)

    protection.hand_to_person()
    assert phase(tab) is Protection.TAKEOVER
    # A same-document navigation keeps the document, and the protection with it.
    await page.evaluate("location.hash = 'next'")
    assert phase(tab) is Protection.TAKEOVER

    await engine.navigate(TEAM, tab.id, Caller.person(PERSON), site.url("/child"))
    await asyncio.wait_for(protection.released.wait(), 10)
    assert phase(tab) is Protection.NONE
    assert not holds_secret(tab)
    assert [(t.tab_id, t.protection) for t in told] == [
        (tab.id, Protection.ENTERING),
        (tab.id, Protection.KEPT),
        (tab.id, Protection.TAKEOVER),
        (tab.id, Protection.NONE),
    ]


async def test_a_page_that_closes_ends_protection(engine: BrowserEngine, site: Site) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    assert tab.page is not None
    protection = await protect(tab, tab.page, site.base, engine.signals)
    await tab.page.close()
    await asyncio.wait_for(protection.released.wait(), 10)
    await eventually(lambda: phase(tab) is Protection.NONE)


async def test_a_protected_tab_does_not_sleep_and_a_page_gone_at_a_secret_keeps_its_site(
    tmp_path: Path, site: Site
) -> None:
    clock = FakeClock()
    async with BrowserEngine(tmp_path, clock=clock, address_policy=SITES_ALLOWED) as engine:
        secret = "s3cret-in-the-address"
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url(f"/child?pw={secret}"))
        assert tab.page is not None
        protection = await protect(tab, tab.page, site.base, engine.signals)
        protection.values = protection.secrets = (secret,)
        protection.hand_to_person()
        # Idle past every limit, it stays loaded: waking it would send its address again.
        clock.advance(16 * 60)
        assert await engine.tick() == []
        assert kept_address(tab) == site.url("/")
        # Its page goes (it crashed, or closed): the tab keeps the site, not the address.
        await tab.page.close()
        await asyncio.wait_for(protection.released.wait(), 10)
        assert tab.url == site.url("/")


VALUE = "pa ss&wörd+1"


@pytest.mark.parametrize(
    "url",
    [
        f"https://a.example/?v={VALUE}",
        f"https://a.example/?v={quote(VALUE, safe='')}",
        f"https://a.example/?v={quote_plus(VALUE)}",
        f"https://a.example/{quote(VALUE)}/next",
        f"https://a.example/?v={quote_plus(VALUE).lower()}",
        f"https://a.example/?v={quote(VALUE, encoding='windows-1252')}",
    ],
)
def test_an_address_carries_a_value_as_typed_or_encoded(url: str) -> None:
    assert address_carries(url, ("other", VALUE))


def test_an_address_without_the_value_carries_nothing() -> None:
    assert not address_carries(f"https://a.example/?v={quote_plus(VALUE)}", ())
    assert not address_carries("https://a.example/?v=pa+ss%26w", (VALUE,))


CODE = "737"


@pytest.mark.parametrize(
    "url",
    [
        f"https://a.example/pay?csc={CODE}",
        f"https://a.example/pay?a=1&csc={CODE}&b=2",
        f"https://a.example/pay/{CODE}/next",
        f"https://a.example/pay?{CODE}",
        f"https://a.example/pay#csc={CODE}",
        "https://a.example/?c=%C3%A4+1",  # "ä 1", as UTF-8 with a space as +
        "https://a.example/?c=%E4%201",  # and as windows-1252
    ],
)
def test_a_short_value_is_carried_whole_as_a_form_sends_it(url: str) -> None:
    assert address_carries(url, (CODE, "ä 1"))


@pytest.mark.parametrize(
    "url",
    [
        f"https://a.example/collect?ts=1733500{CODE}123",
        f"https://a.example/item/88{CODE}",
        f"https://a.example/?id=x{CODE}#v{CODE}1",
    ],
)
def test_a_short_value_inside_another_is_not_carried(url: str) -> None:
    assert not address_carries(url, (CODE,))


async def test_no_request_carrying_a_value_leaves_a_protected_tab(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    page = tab.page
    assert page is not None
    protection = await protect(tab, page, site.base, engine.signals)
    protection.secrets = (VALUE,)
    sent = await page.evaluate(
        """async (value) => {
            const lower = (text) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
            const sent = [];
            for (const address of [
                '/leak?v=' + encodeURIComponent(value),
                '/leak?' + new URLSearchParams({v: value}),
                '/leak?v=' + lower(encodeURIComponent(value)),
            ]) {
                try { await fetch(address); sent.push(address) } catch (_) {}
            }
            await fetch('/child');  // carries no value: it goes
            return sent;
        }""",
        VALUE,
    )
    assert sent == []
    # A frame's navigation, and the tab's own, are stopped too; the document stays.
    async with page.expect_event("requestfailed"):
        await page.evaluate(
            """(value) => { const frame = document.createElement('iframe');
            frame.src = '/child?v=' + encodeURIComponent(value); document.body.append(frame) }""",
            VALUE,
        )
    async with page.expect_event("requestfailed"):
        await page.evaluate("(value) => { location.search = '?' + value }", VALUE)
    assert page.url == site.url("/")
    assert (protection.stopped, protection.navigations_stopped) == (5, 2)
    paths = [path for path, _headers in site.requests]
    assert "/leak" not in paths
    assert paths.count("/child") == 1
    # A new document ends protection, and the page's route with it.
    await engine.navigate(TEAM, tab.id, Caller.person(PERSON), site.url("/child"))
    await asyncio.wait_for(protection.released.wait(), 10)
    assert await page.evaluate("async (v) => (await fetch('/leak?v=' + v)).status", VALUE) == 404
    assert protection.stopped == 5


# A service worker that answers the page's requests with its own fetch, and one address
# itself (so a test sees whether it is in the way).
WORKER = """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (new URL(e.request.url).pathname === '/sw/probe') {
    e.respondWith(new Response('worker'));
  } else {
    e.respondWith(fetch(e.request));
  }
});"""
WORKER_PAGE = "<!doctype html><title>worker</title><form><input name=pw></form>"


async def test_a_service_worker_does_not_carry_a_value_past_the_stop(engine: BrowserEngine) -> None:
    async def worker(_request: web.Request) -> web.Response:
        return web.Response(text=WORKER, content_type="text/javascript")

    app = pages_app({"/sw/": WORKER_PAGE}, routes={"/sw/worker.js": worker})
    async with serving(app) as site:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/sw/"))
        page = tab.page
        assert page is not None
        probe = "async () => (await fetch('/sw/probe')).text()"
        await page.evaluate(
            """async () => {
                const workers = navigator.serviceWorker;
                await workers.register('/sw/worker.js', {scope: '/sw/'});
                await workers.ready;
                if (!workers.controller) {
                    await new Promise((r) => workers.addEventListener('controllerchange', r));
                }
            }"""
        )
        assert await page.evaluate(probe) == "worker"
        protection = await protect(tab, page, site.base, engine.signals)
        protection.secrets = (VALUE,)
        # The worker is passed by: the page's requests are its own, which the route sees.
        assert await page.evaluate(probe) != "worker"
        sent = await page.evaluate(
            """async (value) => {
                try { await fetch('/sw/leak?v=' + encodeURIComponent(value)); return true }
                catch (_) { return false }
            }""",
            VALUE,
        )
        assert not sent
        # A form with no method: the browser sends it with GET, the value in the address.
        async with page.expect_event("requestfailed"):
            await page.evaluate(
                "(value) => { const form = document.forms[0]; form.pw.value = value;"
                " form.submit() }",
                VALUE,
            )
        assert page.url == site.url("/sw/")
        assert (protection.stopped, protection.navigations_stopped) == (2, 1)
        paths = [path for path, _headers in site.requests]
        assert "/sw/leak" not in paths
        assert paths.count("/sw/") == 1
        # A new document ends protection (it came past the worker too); the next one is the
        # worker's again.
        await engine.navigate(TEAM, tab.id, Caller.person(PERSON), site.url("/sw/"))
        await asyncio.wait_for(protection.released.wait(), 10)
        await engine.navigate(TEAM, tab.id, Caller.person(PERSON), site.url("/sw/"))
        assert await page.evaluate(probe) == "worker"

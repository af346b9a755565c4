"""A tab's protection in secure entry: the phases it goes through, each told once, and what
the access rules read of each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from server.host.browser.access import holds_secret, secret_view_allowed
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.protection import ProtectionChanged, address_carries, protect
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from tests.support.sites import SITES_ALLOWED, Site
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


async def test_no_request_carrying_a_value_leaves_a_protected_tab(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    page = tab.page
    assert page is not None
    protection = await protect(tab, page, site.base, engine.signals)
    protection.values = (VALUE,)
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
    assert protection.stopped == 5
    paths = [path for path, _headers in site.requests]
    assert "/leak" not in paths
    assert paths.count("/child") == 1
    # A new document ends protection, and the page's route with it.
    await engine.navigate(TEAM, tab.id, Caller.person(PERSON), site.url("/child"))
    await asyncio.wait_for(protection.released.wait(), 10)
    assert await page.evaluate("async (v) => (await fetch('/leak?v=' + v)).status", VALUE) == 404
    assert protection.stopped == 5

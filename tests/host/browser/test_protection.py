"""A tab's protection in secure entry: the phases it goes through, each told once, and what
the access rules read of each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.host.browser.access import holds_secret, secret_view_allowed
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.protection import ProtectionChanged, protect
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

"""The host's tab screen in real Chromium: a new tab in a chosen profile, an address typed
without a scheme, page titles in the tab list, and a failed load that keeps its address."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_web_client import FRAME_MS, LIVE_CANVAS, open_host_screen
from tests.support.ports import closed_port
from tests.support.sites import Site
from tests.support.web_client import DESKTOP, Crewhost, HubApi, Screens, owner_peer, sign_in_context

pytestmark = pytest.mark.e2e


async def type_address(page: Page, typed: str) -> None:
    address = page.get_by_role("textbox", name="Address")
    await address.fill(typed)
    await address.press("Enter")


async def address_takes_the_free_width(page: Page) -> None:
    """Nothing but the toolbar's gaps lies between the address field and the profile chip."""
    field = await page.get_by_role("textbox", name="Address").bounding_box()
    chip = await page.get_by_role("toolbar", name="Tab controls").locator(".chip").bounding_box()
    assert field is not None
    assert chip is not None
    assert 0 <= chip["x"] - (field["x"] + field["width"]) <= 16, (field, chip)


async def test_host_tabs_open_in_a_profile_take_typed_addresses_and_show_titles(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Tabs")
    async with owner_peer(team, tmp_path) as agent:
        await agent.call("browser-profiles-v1/create", {"name": "Work"})
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team)

    # A new tab in the profile the person chose.
    await page.get_by_role("combobox", name="Profile of the new tab").select_option(label="Work")
    await page.get_by_role("button", name="New tab").click()
    rows = page.get_by_role("list", name="Tabs").get_by_role("button")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Work")
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)

    # An address without a scheme loads over http, as Chrome's address bar would load it.
    typed = f"127.0.0.1:{site.port}/press"
    await type_address(page, typed)
    address = page.get_by_role("textbox", name="Address")
    await expect(address).to_have_value(f"http://{typed}")
    await expect(rows.first.locator(".tab-row-title")).to_have_text("Press")
    await expect(rows.first.locator(".tab-row-address")).to_have_text(typed)
    await address_takes_the_free_width(page)
    await screens.save(page, "host-tabs")

    # A page that does not load shows the browser's error page at the address typed.
    dead = f"127.0.0.1:{closed_port()}/page"
    await type_address(page, dead)
    await expect(address).to_have_value(f"http://{dead}")
    await expect(rows.first.locator(".tab-row-address")).to_have_text(dead)
    await expect(rows.first.locator(".tab-row-title")).to_have_text(dead)  # no stale title
    await expect(page.locator(".view-notice")).to_have_count(0)
    assert "chrome-error" not in await rows.first.inner_text()
    await screens.save(page, "host-tab-load-failed")

    # The page's icon shows beside its title, as a data: image the host sent.
    await type_address(page, f"127.0.0.1:{site.port}/inbox")
    await expect(rows.first.locator(".tab-row-title")).to_have_text("Inbox")
    icon = rows.first.locator("img.tab-row-icon")
    await expect(icon).to_have_count(1)
    assert (await icon.get_attribute("src") or "").startswith("data:image/svg+xml;base64,")

    # A private sign-in opens in storage of its own, labelled as such.
    await page.get_by_role("combobox", name="Profile of the new tab").select_option(
        label="Private sign-in"
    )
    await page.get_by_role("button", name="New tab").click()
    await expect(rows).to_have_count(2)
    await expect(rows.nth(1)).to_contain_text("Private")
    await screens.save(page, "host-tabs-private-sign-in")

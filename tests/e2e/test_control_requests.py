"""Asking for control of a tab someone else holds, with two members in two browsers.

Maya takes control of a tab in the live view; Sam, watching the same tab, sees that Maya
is in control, clicks the view and is told how to steer, and asks for control. Maya sees
who asks and gives control; Sam holds the tab now and his click reaches the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_web_client import (
    CLIENT_POINT,
    FRAME_MS,
    LIVE_CANVAS,
    ON_BUTTON,
    open_host_screen,
    shows_press,
    tab_held,
)
from tests.support.sites import Site
from tests.support.web_client import (
    DESKTOP,
    NEW_TAB_SECONDS,
    Crewhost,
    HubApi,
    Screens,
    owner_peer,
    sign_in_context,
    tab_address,
    until,
)

pytestmark = pytest.mark.e2e


async def watch_tab(page: Page, address: str) -> None:
    """Open the tab of ``address`` in the live view, once frames arrive."""
    row = (
        page.get_by_role("list", name="Tabs")
        .get_by_role("button")
        .filter(has_text=tab_address(address))
    )
    await row.click()
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)


async def test_a_member_asks_the_holder_for_control_and_is_given_it(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Control")
    pages: dict[str, Page] = {}
    for name in ("Maya", "Sam"):
        email = f"{name.lower()}@example.com"
        await team.add_member(email, name)
        context = await browser.new_context(viewport=DESKTOP)
        await sign_in_context(context, crewhost, email)
        pages[name] = await context.new_page()
        await open_host_screen(pages[name], crewhost, team)
    maya, sam = pages["Maya"], pages["Sam"]

    address = site.url("/press")
    async with owner_peer(team, tmp_path) as agent:
        opened = await agent.call(
            "browser-control-v1/new_tab", {"url": address}, wait_seconds=NEW_TAB_SECONDS
        )
        await watch_tab(maya, address)
        await maya.get_by_role("button", name="Take control").click()
        await expect(maya.get_by_role("button", name="Release")).to_be_visible()
        await until(lambda: tab_held(agent, opened["id"], True))

        # Sam watches: the tab list and the view name the holder.
        await watch_tab(sam, address)
        tabs = sam.get_by_role("list", name="Tabs")
        await expect(tabs.get_by_text("Maya is in control")).to_be_visible()
        await expect(sam.locator(".view-holder")).to_have_text("Maya is in control")
        await expect(sam.get_by_role("button", name="Take control")).to_have_count(0)

        # A click while watching does nothing on the page; it says how to steer.
        point = await sam.evaluate(CLIENT_POINT, [LIVE_CANVAS, *ON_BUTTON])
        await sam.mouse.click(point["x"], point["y"])
        hint = sam.locator(".view-hint")
        await expect(hint).to_contain_text("watching. Maya is in control")
        await screens.save(sam, "host-control-watching-hint")

        await hint.get_by_role("button", name="Ask for control").click()
        await expect(hint).to_contain_text("You asked Maya for control")
        await expect(sam.get_by_role("button", name="Withdraw request")).to_be_enabled()

        # Maya sees who asks, and gives control.
        request = maya.locator(".control-request")
        await expect(request).to_contain_text("Sam asks for control of this tab.")
        await screens.save(maya, "host-control-request")
        await request.get_by_role("button", name="Give control").click()

        # Sam holds the tab now; Maya watches, and sees Sam in control.
        await expect(sam.get_by_role("button", name="Release")).to_be_visible()
        await expect(sam.locator(".view-hint")).to_have_count(0)
        await expect(maya.get_by_role("button", name="Ask for control")).to_be_visible()
        await expect(maya.locator(".view-holder")).to_have_text("Sam is in control")
        await expect(
            maya.get_by_role("list", name="Tabs").get_by_text("Sam is in control")
        ).to_be_visible()
        point = await sam.evaluate(CLIENT_POINT, [LIVE_CANVAS, *ON_BUTTON])
        await sam.mouse.click(point["x"], point["y"])
        await shows_press(sam, site)
        await screens.save(sam, "host-control-granted")

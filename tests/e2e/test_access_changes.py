"""A change of a member's access reaches their open page: a new role, a removal, a second tab."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_web_client import FRAME_MS, LIVE_CANVAS
from tests.support.web_client import DESKTOP, Crewhost, HubApi, Screens, Team, sign_in_context

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000


async def open_host(page: Page, crewhost: Crewhost, team: Team) -> None:
    """The built-in host's screen, connected, with a flag a reload would lose."""
    await page.goto(crewhost.at(f"/app/teams/{team.id}/hosts/{crewhost.host_id}"))
    await expect(page.locator("[data-connection]")).to_have_attribute(
        "data-connection", "connected", timeout=CONNECT_MS
    )
    await page.get_by_role("tab", name="Tabs", exact=True).click()
    await page.evaluate("window.e2eNotReloaded = true")


async def member_id(team: Team, email: str) -> str:
    members = (await team.owner.get(f"/v1/teams/{team.id}/members")).body["members"]
    return str(next(m["accountId"] for m in members if m["email"] == email))


async def test_a_role_change_and_a_removal_reach_the_members_open_page(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Crew Access")
    await team.add_member("ria@example.com", "Ria", role="admin")
    account = await member_id(team, "ria@example.com")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "ria@example.com")
    page = await context.new_page()
    await open_host(page, crewhost, team)
    team_pages = page.get_by_role("navigation", name="Team pages")
    role = page.locator(".team-switcher-role")
    await expect(team_pages.get_by_role("link", name="Invitations")).to_be_visible()
    await expect(role).to_have_text("Your role: Admin")
    # Ria watches a tab of her own.
    await page.get_by_role("button", name="New tab").click()
    watched = page.get_by_role("list", name="Tabs").locator('[aria-current="true"]')
    await expect(watched).to_have_count(1)
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)

    changed = await team.owner.patch(f"/v1/teams/{team.id}/members/{account}", {"role": "member"})
    assert changed.status == 200, changed.body
    await expect(role).to_have_text("Your role: Member")
    await expect(team_pages.get_by_role("link", name="Invitations")).to_have_count(0)
    # The host screen stays open and connects again, with the new role.
    await expect(page.locator("[data-connection]")).to_have_attribute(
        "data-connection", "connected", timeout=CONNECT_MS
    )
    assert await page.evaluate("window.e2eNotReloaded === true"), "the page was reloaded"
    # A member may still watch that tab: it stays chosen and its view opens again.
    await expect(watched).to_have_count(1)
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
    await screens.save(page, "access-role-changed")

    removed = await team.owner.delete(f"/v1/teams/{team.id}/members/{account}")
    assert removed.status == 204, removed.body
    await expect(
        page.get_by_role("heading", name="You were removed from Crew Access")
    ).to_be_visible()
    await expect(page.locator("#team-switcher option", has_text="Crew Access")).to_have_count(0)
    await expect(page.get_by_role("button", name="Reconnect")).to_have_count(0)
    # No server wording reaches the page, only the client's own sentences.
    await expect(page.locator("body")).not_to_contain_text("removed from the team")
    assert await page.evaluate("window.e2eNotReloaded === true"), "the page was reloaded"
    await screens.save(page, "access-removed")


async def test_a_second_tab_waits_for_the_first_and_connects_when_it_closes(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Crew Tabs")
    await team.add_member("tam@example.com", "Tam")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "tam@example.com")
    first = await context.new_page()
    await open_host(first, crewhost, team)

    second = await context.new_page()
    await second.goto(crewhost.at(f"/app/teams/{team.id}/hosts/{crewhost.host_id}"))
    status = second.locator("[data-connection]")
    await expect(status).to_have_attribute("data-connection", "otherTab")
    await expect(status).to_have_text("Waiting for the other tab")
    await expect(
        second.get_by_text(
            "Crewhost is open in another tab. This tab will connect when that one closes."
        )
    ).to_be_visible()
    await expect(second.get_by_text("Connecting…")).to_have_count(0)
    await screens.save(second, "access-other-tab")

    await first.close()
    await expect(status).to_have_attribute("data-connection", "connected", timeout=CONNECT_MS)


async def test_a_role_change_reaches_a_page_of_the_hub_alone_at_once(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    """The Members page has no host connection: the hub's event stream tells it."""
    team = await hub_api.new_team("Crew Hub Pages")
    await team.add_member("ola@example.com", "Ola", role="admin")
    account = await member_id(team, "ola@example.com")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "ola@example.com")
    page = await context.new_page()
    await page.goto(crewhost.at(f"/app/teams/{team.id}/members"))
    team_pages = page.get_by_role("navigation", name="Team pages")
    role = page.locator(".team-switcher-role")
    await expect(role).to_have_text("Your role: Admin")
    await expect(team_pages.get_by_role("link", name="Invitations")).to_be_visible()
    await page.evaluate("window.e2eNotReloaded = true")

    changed = await team.owner.patch(f"/v1/teams/{team.id}/members/{account}", {"role": "member"})
    assert changed.status == 200, changed.body
    await expect(role).to_have_text("Your role: Member")
    await expect(team_pages.get_by_role("link", name="Invitations")).to_have_count(0)
    assert await page.evaluate("window.e2eNotReloaded === true"), "the page was reloaded"
    await screens.save(page, "access-role-changed-members-page")

    # Signed out on another device: this page goes to sign-in by itself.
    other = await hub_api.sign_in("ola@example.com")
    revoked = await other.post("/v1/me/sessions/revoke-others")
    assert revoked.status == 200, revoked.body
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()

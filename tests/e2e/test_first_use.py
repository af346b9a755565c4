"""A newcomer's first minutes in the web client, in real Chromium against ``crewhost serve``.

Sign-up lands on Get started; a member sees a teammate's avatar; a used invitation says
who used it; sessions read as browser and system; Escape closes the phone menu; a sign-out
says so on the sign-in page; a profile row keeps its layout while a delete asks.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Page, expect

from server.hub.http.routing import CSRF_HEADER
from tests.e2e.test_web_client import fill_sign_up, open_host_screen, team_id_in
from tests.support.images import tiny_png
from tests.support.web_client import DESKTOP, PHONE, Crewhost, HubApi, Screens, sign_in_context

pytestmark = pytest.mark.e2e


async def test_sign_up_lands_on_get_started(
    crewhost: Crewhost, browser: Browser, screens: Screens
) -> None:
    context = await browser.new_context(viewport=DESKTOP)
    owner = await context.new_page()
    await owner.goto(crewhost.setup_link)
    await fill_sign_up(owner, "Gia Owner", "gia@example.com")
    await owner.get_by_label("Team name", exact=True).fill("First Crew")
    await owner.get_by_role("button", name="Create owner account").click()
    await expect(owner).to_have_url(re.compile(r"/app/teams/[^/]+/start$"))
    crewhost.first_owner = "gia@example.com"
    team_id = team_id_in(owner)

    await expect(owner.get_by_role("heading", name="Get started", level=1)).to_be_visible()
    connect = owner.get_by_role("link", name="Connect to the built-in host")
    await expect(connect).to_have_attribute(
        "href", f"/app/teams/{team_id}/hosts/{crewhost.host_id}"
    )
    await expect(owner.get_by_role("link", name="Invite people")).to_be_visible()
    # The key and the agent are made on the host's own tabs, linked from here.
    host_path = f"/app/teams/{team_id}/hosts/{crewhost.host_id}"
    await expect(owner.get_by_role("link", name="Add an agent")).to_have_attribute(
        "href", f"{host_path}/agents"
    )
    await expect(owner.get_by_text("Coming to the web client")).to_have_count(0)
    await screens.save(owner, "get-started-owner")
    await owner.get_by_role("link", name="Add a provider key").click()
    await expect(owner).to_have_url(crewhost.at(f"{host_path}/providers"))
    await expect(owner.get_by_role("tab", name="Providers")).to_have_attribute(
        "aria-selected", "true", timeout=30_000
    )
    await owner.go_back()

    # Whoever joins by invitation lands there too, without the owner's steps.
    created = await owner.request.post(
        crewhost.at(f"/v1/teams/{team_id}/invitations"),
        data={"role": "member"},
        headers={CSRF_HEADER: "1", "Origin": crewhost.url},
    )
    assert created.status == 201, await created.text()
    member = await (await browser.new_context(viewport=DESKTOP)).new_page()
    await member.goto((await created.json())["link"])
    await fill_sign_up(member, "Jo Joiner", "jo@example.com")
    await member.get_by_role("button", name="Create account and join").click()
    await expect(member).to_have_url(crewhost.at(f"/app/teams/{team_id}/start"))
    await expect(member.get_by_role("link", name="Connect to the built-in host")).to_be_visible()
    await expect(member.get_by_role("link", name="Invite people")).to_have_count(0)
    await expect(member.get_by_text("An owner or admin sets it")).to_be_visible()
    await expect(member.get_by_role("link", name="Chat with an agent")).to_be_visible()
    await screens.save(member, "get-started-member")

    # The owner's invitation list says who used the link, not when it would expire.
    await owner.goto(crewhost.at(f"/app/teams/{team_id}/invitations"))
    used = owner.get_by_role("listitem").filter(has_text="Used up")
    await expect(used).to_contain_text("used by Jo Joiner just now")
    await expect(used).not_to_contain_text("expires")
    await screens.save(owner, "invitations-used")


async def test_a_member_sees_a_teammates_avatar_and_why_controls_are_missing(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Faces")
    put = await team.owner.put(
        "/v1/me/avatar", data=tiny_png(), headers={"Content-Type": "image/png"}
    )
    assert put.status == 204, put.body
    await team.add_member("max@example.com", "Max Member")
    me = (await team.owner.get("/v1/me")).body
    owner_id, owner_name = me["id"], me["name"]

    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "max@example.com")
    member = await context.new_page()
    await member.goto(crewhost.at(f"/app/teams/{team.id}/members"))
    row = member.get_by_role("listitem").filter(has_text=owner_name)
    avatar = row.locator("img.avatar")
    await expect(avatar).to_have_attribute("src", f"/v1/teams/{team.id}/members/{owner_id}/avatar")
    await member.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=await avatar.element_handle()
    )
    await screens.save(member, "members-with-avatar")

    # The sole owner's role cannot change, and the page says why.
    owner_context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(owner_context, crewhost, team.owner_email)
    owner = await owner_context.new_page()
    await owner.goto(crewhost.at(f"/app/teams/{team.id}/members"))
    await expect(owner.get_by_label(f"Role of {owner_name}")).to_be_disabled()
    await expect(owner.get_by_text("A team needs an owner", exact=True)).to_be_visible()
    # Nor can they leave: the page says so instead of offering a button that would fail.
    await expect(owner.get_by_text("Make someone else an owner first.")).to_be_visible()
    await expect(owner.get_by_role("button", name="Leave team")).to_have_count(0)
    await expect(owner.get_by_label("Role of Max Member")).to_be_enabled()
    await screens.save(owner, "members-sole-owner")

    # Sessions read as a browser and a system, not a user-agent string.
    await member.goto(crewhost.at("/app/account"))
    current = member.get_by_role("listitem").filter(has_text="This session")
    await expect(current).to_contain_text(re.compile(r"Chrome \d+ on Linux"))
    await expect(current).not_to_contain_text("Mozilla/5.0")
    await screens.save(member, "account-sessions")

    # A member on the host's profiles sees why there is nothing to change.
    await open_host_screen(member, crewhost, team)
    await member.get_by_role("tab", name="Browser profiles").click()
    await expect(member.get_by_text("Only owners and admins change profiles.")).to_be_visible()
    await screens.save(member, "host-profiles-member-note")


async def test_a_profile_row_keeps_its_layout_while_a_delete_asks(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Profiles")
    context = await browser.new_context(viewport=PHONE)
    await sign_in_context(context, crewhost, team.owner_email)
    owner = await context.new_page()
    await open_host_screen(owner, crewhost, team)
    await owner.get_by_role("tab", name="Browser profiles").click()
    await owner.get_by_label("Profile name").fill("Shopping desk")
    await owner.get_by_role("button", name="Create profile").click()
    row = owner.locator("li.profile-row").filter(has_text="Shopping desk")
    await expect(row).to_be_visible()
    before = await row.bounding_box()

    await row.get_by_role("button", name="Delete").click()
    question = row.get_by_role("group", name=re.compile("Delete this profile"))
    await expect(question).to_be_visible()
    # The other actions step aside; the question and its answers fit the row's width.
    await expect(row.get_by_role("button", name="Rename")).to_be_hidden()
    after = await row.bounding_box()
    box = await question.bounding_box()
    assert before is not None
    assert after is not None
    assert box is not None
    assert after["width"] == before["width"]
    assert box["x"] >= after["x"]
    assert box["x"] + box["width"] <= after["x"] + after["width"] + 1
    await screens.save(owner, "host-profiles-delete-asks")

    await row.get_by_role("button", name="Cancel").click()
    await expect(row.get_by_role("button", name="Rename")).to_be_visible()


async def test_escape_closes_the_phone_menu_and_sign_out_says_so(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Menus")
    context = await browser.new_context(viewport=PHONE)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await page.goto(crewhost.at(f"/app/teams/{team.id}/start"))
    menu = page.get_by_role("button", name="Open menu")
    await menu.click()
    close = page.get_by_role("button", name="Close menu")
    await expect(close).to_have_attribute("aria-expanded", "true")
    await page.keyboard.press("Escape")
    await expect(menu).to_have_attribute("aria-expanded", "false")
    await expect(menu).to_be_focused()

    await menu.click()
    await signs_out(page)
    await expect(page).to_have_url(crewhost.at("/app/signin"))
    await expect(page.get_by_role("status")).to_have_text("You signed out.")
    await screens.save(page, "signin-after-sign-out")


async def signs_out(page: Page) -> None:
    await page.get_by_role("button", name="Sign out").click()

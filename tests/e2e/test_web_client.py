"""The web client at /app in real Chromium, against a real ``crewhost serve``.

Sign-up with the setup code, an invitation taken up in a second browser, what a member may
not do, a revoked session; and on the host screen (``-k host``): connecting, a tab an agent
opens, the live view, taking control and pressing a button, and browser profiles.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from peer.connection import HostConnection
from tests.support.hub_server import PASSWORD
from tests.support.sites import Site
from tests.support.web_client import (
    DESKTOP,
    NEW_TAB_SECONDS,
    PASTED_PHRASE,
    PASTED_RGB,
    PRESSED_RGB,
    ROOT,
    Crewhost,
    HubApi,
    Screens,
    Team,
    owner_peer,
    server_env,
    sign_in_context,
    tab_address,
    until,
)

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
FRAME_MS = 20_000
WHITE = (255, 255, 255)

# The live view's canvas, wherever the client puts it, once frames arrive.
LIVE_CANVAS = '[data-view-state="live"] canvas[aria-label="Live view"]'

# Where a fraction of the frame is on the canvas: the view keeps the frame's aspect ratio,
# so the frame may sit letterboxed inside the element (and inside its backing store).
FRAME_GEOMETRY = """
function frameBox(canvas, width, height) {
  const frameWidth = Number(canvas.dataset.frameWidth) || canvas.width;
  const frameHeight = Number(canvas.dataset.frameHeight) || canvas.height;
  const scale = Math.min(width / frameWidth, height / frameHeight);
  return {
    left: (width - frameWidth * scale) / 2,
    top: (height - frameHeight * scale) / 2,
    width: frameWidth * scale,
    height: frameHeight * scale,
  };
}
"""

CLIENT_POINT = (
    "([selector, fx, fy]) => {"
    + FRAME_GEOMETRY
    + """
  const canvas = document.querySelector(selector);
  const rect = canvas.getBoundingClientRect();
  const frame = frameBox(canvas, rect.width, rect.height);
  return {
    x: rect.left + frame.left + fx * frame.width,
    y: rect.top + frame.top + fy * frame.height,
  };
}"""
)

# True once the live view shows ``rgb`` (within a JPEG's tolerance) at a fraction of the frame.
SHOWS_COLOUR = (
    "([selector, fx, fy, rgb]) => {"
    + FRAME_GEOMETRY
    + """
  const canvas = document.querySelector(selector);
  if (!canvas || !canvas.width || !canvas.height) return false;
  // Copied onto a 2D canvas, so this reads pixels whatever context the view draws with.
  const scratch = document.createElement('canvas');
  scratch.width = canvas.width;
  scratch.height = canvas.height;
  const context = scratch.getContext('2d');
  context.drawImage(canvas, 0, 0);
  const frame = frameBox(canvas, canvas.width, canvas.height);
  const x = Math.floor(frame.left + fx * frame.width);
  const y = Math.floor(frame.top + fy * frame.height);
  const [r, g, b] = context.getImageData(x, y, 1, 1).data;
  return Math.abs(r - rgb[0]) < 40 && Math.abs(g - rgb[1]) < 40 && Math.abs(b - rgb[2]) < 40;
}"""
)

# True once the host's page has the live-view panel's shape (the viewport follows the panel).
FOLLOWS_PANEL = """selector => {
  const canvas = document.querySelector(selector);
  if (!canvas) return false;
  const panel = canvas.parentElement.getBoundingClientRect();
  const frame = Number(canvas.dataset.frameWidth) / Number(canvas.dataset.frameHeight);
  const shape = panel.width / panel.height;
  return Number.isFinite(frame) && frame > 0 && Math.abs(frame - shape) < 0.05 * shape;
}"""

# On the fixture page the button covers 10-50 % of the width and 10-40 % of the height.
ON_BUTTON = (0.3, 0.25)
OFF_BUTTON = (0.85, 0.85)


def team_id_in(page: Page) -> str:
    found = re.search(r"/app/teams/([^/]+)/", page.url)
    assert found, page.url
    return found.group(1)


async def fill_sign_up(page: Page, name: str, email: str) -> None:
    await page.get_by_label("Your name", exact=True).fill(name)
    await page.get_by_label("Email", exact=True).fill(email)
    await page.get_by_label("Password", exact=True).fill(PASSWORD)


async def mark_page(page: Page) -> None:
    """A flag that a reload would lose: checked later to prove the page updated in place."""
    await page.evaluate("window.e2eNotReloaded = true")


async def assert_not_reloaded(page: Page) -> None:
    assert await page.evaluate("window.e2eNotReloaded === true"), "the page was reloaded"


async def test_owner_signs_up_and_invites_a_member_who_sees_no_admin_controls(
    crewhost: Crewhost, browser: Browser, screens: Screens
) -> None:
    owner_context = await browser.new_context(viewport=DESKTOP)
    owner = await owner_context.new_page()
    await owner.goto(crewhost.setup_link)
    await expect(owner.get_by_role("heading", name="Set up Crewhost")).to_be_visible()
    # The code is read once and leaves the address bar (and so the history).
    await expect(owner).not_to_have_url(re.compile("code="))
    await screens.save(owner, "setup")
    await fill_sign_up(owner, "Olive Owner", "olive@example.com")
    await owner.get_by_label("Team name", exact=True).fill("Crew One")
    await owner.get_by_role("button", name="Create owner account").click()
    await expect(owner).to_have_url(re.compile(r"/app/teams/[^/]+/start$"))
    crewhost.first_owner = "olive@example.com"
    team_id = team_id_in(owner)
    await owner.goto(crewhost.at(f"/app/teams/{team_id}/members"))
    await expect(owner.get_by_role("region", name="Members")).to_contain_text("Olive Owner")

    await (
        owner.get_by_role("navigation", name="Team pages")
        .get_by_role("link", name="Invitations")
        .click()
    )
    await expect(owner.get_by_text("No invitations yet")).to_be_visible()
    await screens.save(owner, "invitations")
    await owner.get_by_role("button", name="Create link").click()
    link = await owner.get_by_label("Invitation link").input_value()
    assert link.startswith(crewhost.at("/app/join/")), link
    await screens.save(owner, "invitation-created")

    member_context = await browser.new_context(viewport=DESKTOP)
    member = await member_context.new_page()
    await member.goto(link)
    await expect(member.get_by_text("You are invited to")).to_be_visible()
    await expect(member.get_by_text("Crew One")).to_be_visible()
    await screens.save(member, "join")
    await fill_sign_up(member, "Mo Member", "mo@example.com")
    await member.get_by_role("button", name="Create account and join").click()
    await expect(member).to_have_url(crewhost.at(f"/app/teams/{team_id}/start"))
    await member.goto(crewhost.at(f"/app/teams/{team_id}/members"))
    members = member.get_by_role("region", name="Members")
    await expect(members).to_contain_text("Olive Owner")
    await expect(members).to_contain_text("Mo Member")
    await screens.save(member, "members-as-member")

    # The owner, on the same list, has the controls the member must not have.
    await owner.goto(crewhost.at(f"/app/teams/{team_id}/members"))
    await expect(owner.get_by_label("Role of Mo Member")).to_be_visible()
    await expect(owner.get_by_role("button", name="Remove")).to_have_count(1)
    await screens.save(owner, "members-as-owner")

    await expect(members.get_by_role("combobox")).to_have_count(0)
    await expect(members.get_by_role("button", name="Remove")).to_have_count(0)
    await expect(member.get_by_role("link", name="Invite people")).to_have_count(0)
    await expect(member.get_by_role("link", name="Invitations")).to_have_count(0)
    await member.goto(crewhost.at(f"/app/teams/{team_id}/invitations"))
    await expect(member.get_by_text("Only owners and admins")).to_be_visible()
    await expect(member.get_by_role("button", name="Create link")).to_have_count(0)
    await expect(member.get_by_label("Invitation link")).to_have_count(0)


async def sign_in_through_the_screen(page: Page, crewhost: Crewhost, email: str) -> None:
    await page.goto(crewhost.at("/app/signin"))
    await page.get_by_label("Email", exact=True).fill(email)
    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(re.compile(r"/app/teams/[^/]+/members$"))


async def test_a_revoked_session_is_signed_out(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Crew Two")
    await team.add_member("rory@example.com", "Rory")
    here = await (await browser.new_context(viewport=DESKTOP)).new_page()
    there = await (await browser.new_context(viewport=DESKTOP)).new_page()
    await here.goto(crewhost.at("/app/signin"))
    await expect(here.get_by_role("heading", name="Sign in")).to_be_visible()
    await screens.save(here, "signin")
    await sign_in_through_the_screen(here, crewhost, "rory@example.com")
    await sign_in_through_the_screen(there, crewhost, "rory@example.com")

    await here.get_by_role("link", name="Account settings").click()
    sessions = here.get_by_role("region", name="Sessions")
    await expect(sessions.get_by_role("listitem")).to_have_count(2)
    await screens.save(here, "account")
    this_tag = here.get_by_text("This session", exact=True)
    other = sessions.get_by_role("listitem").filter(has_not=this_tag)
    await other.get_by_role("button", name="Sign out").click()
    await (
        other.get_by_role("group", name="Sign this session out?")
        .get_by_role("button", name="Sign out")
        .click()
    )
    await expect(sessions.get_by_text("That session is signed out.")).to_be_visible()
    await expect(sessions.get_by_role("listitem")).to_have_count(1)

    # The other browser hears at once, through the hub's event stream, and lands on sign-in
    # without anyone touching it.
    await expect(there).to_have_url(crewhost.at("/app/signin"))
    await expect(there.get_by_role("heading", name="Sign in")).to_be_visible()


# The host screen.


# Every connection phase the page shows, in order (a poll could miss a short one).
RECORD_PHASES = """
window.e2ePhases = [];
new MutationObserver(() => {
  const shown = document.querySelector('[data-connection]');
  const phase = shown && shown.getAttribute('data-connection');
  const phases = window.e2ePhases;
  if (phase && phases[phases.length - 1] !== phase) phases.push(phase);
}).observe(document, { subtree: true, childList: true, attributes: true });
"""


async def open_host_screen(
    page: Page, crewhost: Crewhost, team: Team, section: str | None = "Tabs"
) -> None:
    """From the Hosts list to the built-in host's screen: connecting, then connected, then
    ``section`` chosen (None: the section the screen opens on, Chat)."""
    await page.add_init_script(RECORD_PHASES)
    await page.goto(crewhost.at(f"/app/teams/{team.id}/hosts"))
    row = page.get_by_role("listitem").filter(has_text="Built-in host")
    connect = row.get_by_role("link", name="Connect").or_(row.get_by_role("button", name="Connect"))
    await connect.click()
    await expect(page).to_have_url(crewhost.at(f"/app/teams/{team.id}/hosts/{crewhost.host_id}"))
    status = page.locator("[data-connection]")
    await expect(status).to_have_attribute("data-connection", "connected", timeout=CONNECT_MS)
    await expect(status).to_contain_text("Connected")
    assert await page.evaluate("window.e2ePhases") == ["connecting", "connected"]
    if section is not None:
        await page.get_by_role("tab", name=section, exact=True).click()


async def shows_colour(page: Page, at: tuple[float, float], rgb: tuple[int, int, int]) -> None:
    await page.wait_for_function(SHOWS_COLOUR, arg=[LIVE_CANVAS, *at, list(rgb)], timeout=FRAME_MS)


async def shows_press(page: Page, site: Site) -> None:
    """The live view shows the press page pressed; when it never does, the failure says
    whether the press reached the host's page (its button tells the site) or not."""
    try:
        await shows_colour(page, OFF_BUTTON, PRESSED_RGB)
    except PlaywrightTimeoutError:
        heard = any(path == "/pressed" for path, _ in site.requests)
        where = "the page was pressed; no frame showed it" if heard else "the page never was"
        # What the view told its member meanwhile (a refused input says why there).
        notices = await page.locator(".view-notice").all_text_contents()
        raise AssertionError(
            f"the live view never showed the press: {where}; the view's notices: {notices}"
        ) from None


async def follows_panel(page: Page) -> None:
    await page.wait_for_function(FOLLOWS_PANEL, arg=LIVE_CANVAS, timeout=FRAME_MS)


async def tab_held(connection: HostConnection, tab_id: str, held: bool) -> bool:
    tabs = (await connection.call("browser-control-v1/list_tabs"))["tabs"]
    return any(t["id"] == tab_id and t["heldByPerson"] is held for t in tabs)


async def test_host_member_watches_a_tab_takes_control_and_presses_a_button(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Three")
    await team.add_member("tess@example.com", "Tess")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "tess@example.com")
    page = await context.new_page()
    await page.goto(crewhost.at(f"/app/teams/{team.id}/hosts"))
    await expect(page.get_by_role("listitem").filter(has_text="Built-in host")).to_be_visible()
    await screens.save(page, "hosts")
    await open_host_screen(page, crewhost, team)
    await mark_page(page)
    await screens.save(page, "host-connected")

    address = site.url("/press")
    async with owner_peer(team, tmp_path) as agent:
        opened = await agent.call(
            "browser-control-v1/new_tab", {"url": address}, wait_seconds=NEW_TAB_SECONDS
        )
        tab = (
            page.get_by_role("list", name="Tabs")
            .get_by_role("button")
            .filter(has_text=tab_address(address))
        )
        await expect(tab).to_be_visible()
        await assert_not_reloaded(page)
        await tab.click()

        await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
        await shows_colour(page, OFF_BUTTON, WHITE)

        await page.get_by_role("button", name="Take control").click()
        await expect(page.get_by_role("button", name="Release")).to_be_visible()
        await until(lambda: tab_held(agent, opened["id"], True))
        point = await page.evaluate(CLIENT_POINT, [LIVE_CANVAS, *ON_BUTTON])
        await page.mouse.click(point["x"], point["y"])
        await shows_press(page, site)
        await screens.save(page, "host-pressed")

        await page.get_by_role("button", name="Release").click()
        await expect(page.get_by_role("button", name="Take control")).to_be_visible()
        await until(lambda: tab_held(agent, opened["id"], False))


async def test_host_page_viewport_follows_the_live_view_panel(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Five")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team)
    async with owner_peer(team, tmp_path) as agent:
        await agent.call(
            "browser-control-v1/new_tab", {"url": site.url("/press")}, wait_seconds=NEW_TAB_SECONDS
        )
        await page.get_by_role("list", name="Tabs").get_by_role("button").click()
        await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
        await follows_panel(page)
        # Each size change must reach the host's page, the way back included, more than once.
        await screens.save(page, "host-live", settle=follows_panel)
        await screens.save(page, "host-live", settle=follows_panel)


async def test_host_member_sees_a_new_browser_profile_without_reload(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Crew Four")
    await team.add_member("uma@example.com", "Uma")
    owner_context = await browser.new_context(viewport=DESKTOP)
    member_context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(owner_context, crewhost, team.owner_email)
    await sign_in_context(member_context, crewhost, "uma@example.com")
    owner, member = await owner_context.new_page(), await member_context.new_page()
    await open_host_screen(owner, crewhost, team)
    await open_host_screen(member, crewhost, team)

    def profiles_of(page: Page) -> Locator:
        heading = page.get_by_role("heading", name="Browser profiles")
        return page.locator("section", has=heading)

    for page in (owner, member):
        await page.get_by_role("tab", name="Browser profiles").click()
        await expect(profiles_of(page)).to_contain_text("No browser profiles yet")
    await mark_page(member)

    await expect(profiles_of(member)).to_be_visible()
    await expect(profiles_of(member).get_by_label("Profile name")).to_have_count(0)
    await expect(profiles_of(member).get_by_role("button", name="Create profile")).to_have_count(0)

    await profiles_of(owner).get_by_label("Profile name").fill("Research desk")
    await profiles_of(owner).get_by_role("button", name="Create profile").click()
    await expect(profiles_of(owner)).to_contain_text("Research desk")
    await expect(profiles_of(member)).to_contain_text("Research desk")
    await assert_not_reloaded(member)
    await screens.save(owner, "host-profiles-as-owner")
    await screens.save(member, "host-profiles-as-member")


async def test_host_one_live_tab_per_account_and_host_and_nothing_of_a_page_is_stored(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi
) -> None:
    team = await hub_api.new_team("Crew Six")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    first = await context.new_page()
    await open_host_screen(first, crewhost, team)

    second = await context.new_page()
    await second.goto(crewhost.at(f"/app/teams/{team.id}/hosts/{crewhost.host_id}"))
    await expect(second.get_by_text("Crewhost is open in another tab")).to_be_visible()
    await second.get_by_role("button", name="Use it here").click()
    await expect(second.locator("[data-connection]")).to_have_attribute(
        "data-connection", "connected", timeout=CONNECT_MS
    )
    await expect(first.get_by_text("This host was opened in another tab")).to_be_visible()

    keys = await second.evaluate("Object.keys(localStorage)")
    account_id = (await team.owner.get("/v1/me")).body["id"]
    assert sorted(keys) == sorted([f"crewhost.knownHosts.{account_id}", "crewhost.ui.team"])


async def test_host_a_role_change_reconnects_once_with_the_new_role(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi
) -> None:
    team = await hub_api.new_team("Crew Seven")
    await team.add_member("vic@example.com", "Vic")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "vic@example.com")
    page = await context.new_page()
    await open_host_screen(page, crewhost, team)
    await page.get_by_role("tab", name="Browser profiles").click()
    await expect(page.get_by_label("Profile name")).to_have_count(0)

    members = (await team.owner.get(f"/v1/teams/{team.id}/members")).body["members"]
    vic = next(m for m in members if m["email"] == "vic@example.com")
    changed = await team.owner.patch(
        f"/v1/teams/{team.id}/members/{vic['accountId']}", {"role": "admin"}
    )
    assert changed.status == 200, changed.body

    status = page.locator("[data-connection]")
    await expect(status).to_have_attribute("data-connection", "connected", timeout=CONNECT_MS)
    await page.get_by_role("tab", name="Browser profiles").click()
    await expect(page.get_by_label("Profile name")).to_be_visible(timeout=CONNECT_MS)
    phases = await page.evaluate("window.e2ePhases")
    assert phases[:2] == ["connecting", "connected"]
    assert phases[2:] == ["revoked", "reconnecting", "connected"], phases


async def test_host_paste_copy_and_the_hosts_context_menu(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, site: Site, tmp_path: Path
) -> None:
    team = await hub_api.new_team("Crew Eight")
    context = await browser.new_context(viewport=DESKTOP)
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=crewhost.url)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team)
    async with owner_peer(team, tmp_path) as agent:
        await agent.call(
            "browser-control-v1/new_tab", {"url": site.url("/type")}, wait_seconds=NEW_TAB_SECONDS
        )
        await page.get_by_role("list", name="Tabs").get_by_role("button").click()
        await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
        await page.get_by_role("button", name="Take control").click()
        await expect(page.get_by_role("button", name="Release")).to_be_visible()
        in_area = await page.evaluate(CLIENT_POINT, [LIVE_CANVAS, 0.3, 0.2])
        await page.mouse.click(in_area["x"], in_area["y"])

        # Paste: from this computer's clipboard into the host's page.
        await page.evaluate("text => navigator.clipboard.writeText(text)", PASTED_PHRASE)
        await page.get_by_role("button", name="Paste").click()
        await shows_colour(page, OFF_BUTTON, PASTED_RGB)

        # The host's own context menu, drawn by the client: select all in the text area.
        await page.mouse.click(in_area["x"], in_area["y"], button="right")
        menu = page.get_by_role("menu", name="Page menu")
        await expect(menu.get_by_role("menuitem", name="Paste")).to_be_visible()
        await menu.get_by_role("menuitem", name="Select all").click()
        await expect(menu).to_have_count(0)

        # Copy: the page's selection lands on this computer's clipboard.
        await page.evaluate("navigator.clipboard.writeText('')")
        await page.get_by_role("button", name="Copy").click()
        await expect(page.get_by_text("Copied to your clipboard.")).to_be_visible()
        assert await page.evaluate("navigator.clipboard.readText()") == PASTED_PHRASE


async def test_an_owner_adds_a_host_with_the_command_the_client_shows_then_removes_it(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens, tmp_path: Path
) -> None:
    team = await hub_api.new_team("Crew Nine")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await page.goto(crewhost.at(f"/app/teams/{team.id}/hosts"))
    await page.get_by_label("Host name").fill("Lab machine")
    await page.get_by_role("button", name="Create enrolment code").click()
    shown = page.get_by_label(re.compile("^Run this on the new machine"))
    await expect(shown).to_have_value(re.compile(r"^crewhost host --hub "))
    await screens.save(page, "hosts-add")
    words = shlex.split(await shown.input_value())
    assert words[:2] == ["crewhost", "host"]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *words[1:],
        "--data-dir",
        str(tmp_path / "lab"),
        cwd=ROOT,
        env=server_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        row = page.get_by_role("listitem").filter(has_text="Lab machine")

        async def listed_online() -> bool:
            await page.get_by_role("button", name="Refresh").click()
            return await row.get_by_text("Online", exact=True).count() == 1

        await until(listed_online, seconds=60)
        await expect(row.get_by_role("link", name="Connect")).to_be_visible()
        await row.get_by_role("button", name="Remove").click()
        await row.get_by_role("button", name="Remove").last.click()
        await expect(page.get_by_role("listitem").filter(has_text="Lab machine")).to_have_count(0)
    finally:
        if process.returncode is None:
            process.terminate()
        await asyncio.wait_for(process.wait(), 30)

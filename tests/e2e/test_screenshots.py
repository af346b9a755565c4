"""Every screen of the web client at 1280x800 and 390x844, compared with its reference image.

One server, one browser, one team with fixed data (names, a vault login, a profile, a
workspace file, the fake Anthropic API as its provider) and fixed fixture-site address serve
the module, so a shot changes only when the layout does. Chat is shot with each kind of
card open (approval, question, secret entry, vault request): the composer stays in sight.
``make screenshots`` writes the references anew after a deliberate change; a shot that
differs is saved beside its reference as ``*.actual.png`` (see tests/support/screenshots.py).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from tests.e2e.test_chat import fake_provider_and_agent, last_tool_result, say
from tests.e2e.test_web_client import open_host_screen
from tests.support.chromium import launch_chromium
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.loop_watch import watch_event_loop
from tests.support.screenshots import ScreenshotCheck
from tests.support.sites import Posted, Site, serving, sign_in_app
from tests.support.web_client import (
    DESKTOP,
    FAILED,
    PHONE,
    Crewhost,
    HubApi,
    Team,
    owner_peer,
    save_failed_pages,
    sign_in_context,
)

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

MEMBER = "screens-member@example.com"
TURN_MS = 30_000
# A fixed port: the site's address shows in cards and tool results, so in the shots.
SITE_PORT = 47_613
COLOURS = ["Red", "Blue"]


@dataclass
class Walk:
    """The module's server, browser, team, fixture site and fake provider, and the owner's
    page on the built-in host."""

    crewhost: Crewhost
    browser: Browser
    team: Team
    site: Site
    anthropic: FakeAnthropic
    folder: Path
    page: Page


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    """The suite's watchdog, on this module's loop (the tests run in it)."""
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def walk(crewhost: Crewhost, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Walk]:
    folder = tmp_path_factory.mktemp("screens")
    async with AsyncExitStack() as stack:
        site = await stack.enter_async_context(serving(sign_in_app(Posted()), port=SITE_PORT))
        anthropic = await stack.enter_async_context(FakeAnthropic())
        api = HubApi(crewhost)
        stack.push_async_callback(api.close)
        team = await api.new_team("Screens crew")
        await team.add_member(MEMBER, "Maya Member")
        agent = await fake_provider_and_agent(team, anthropic, folder)
        await seed(team, folder, agent["id"])
        playwright = await stack.enter_async_context(async_playwright())
        browser = await launch_chromium(playwright)
        stack.push_async_callback(browser.close)
        context = await browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
        await sign_in_context(context, crewhost, team.owner_email)
        page = await context.new_page()
        yield Walk(crewhost, browser, team, site, anthropic, folder, page)


async def seed(team: Team, folder: Path, agent_id: str) -> None:
    """What the admin screens list: a profile, a vault login and a workspace file."""
    async with owner_peer(team, folder) as owner:
        await owner.call("browser-profiles-v1/create", {"name": "Work"})
        await owner.call(
            "vault-v1/create",
            {
                "item": {
                    "kind": "login",
                    "name": "Shop",
                    "sites": ["https://shop.example"],
                    "username": "ada@example.com",
                    "password": "not-shown-anywhere-1",
                }
            },
        )
        data = b"Quarterly notes\n"
        started = await owner.call(
            "workspace-v1/upload_start",
            {"agentId": agent_id, "path": "notes.txt", "size": len(data)},
        )
        await owner.call(
            "workspace-v1/upload_chunk",
            {
                "uploadId": started["uploadId"],
                "offset": 0,
                "data": base64.b64encode(data).decode(),
            },
        )
        await owner.call("workspace-v1/upload_finish", {"uploadId": started["uploadId"]})


@pytest.fixture
def check() -> ScreenshotCheck:
    return ScreenshotCheck()


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def failed_pages(request: pytest.FixtureRequest, walk: Walk) -> AsyncIterator[None]:
    """The pages of a failed test are saved, as the suite's own browser fixture does."""
    yield
    walk.anthropic.drop_unplayed()
    if request.node.stash.get(FAILED, False):
        await save_failed_pages(walk.browser, request.node)


async def test_team_screens(walk: Walk, check: ScreenshotCheck) -> None:
    page, team = walk.page, walk.team
    base = f"/app/teams/{team.id}"
    for section, heading in (
        ("start", "Get started"),
        ("members", "Members"),
        ("invitations", "Invitations"),
        ("hosts", "Hosts"),
    ):
        await page.goto(walk.crewhost.at(f"{base}/{section}"))
        await expect(page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
        await expect(page.locator(".loading")).to_have_count(0)
        await check.matches(page, f"team-{section}")
    await page.goto(walk.crewhost.at("/app/account"))
    await expect(page.get_by_role("heading", name="Account").first).to_be_visible()
    # The sessions come in a call of their own: shot before they did, the page is shorter.
    await expect(page.get_by_role("button", name="Sign out everywhere else")).to_be_visible()
    await expect(page.locator(".loading")).to_have_count(0)
    await check.matches(page, "account")
    check.assert_matched()


async def test_host_screens(walk: Walk, check: ScreenshotCheck) -> None:
    page = walk.page
    await open_host_screen(page, walk.crewhost, walk.team, section=None)
    for tab, screen, ready in (
        ("Tabs", "tabs", "No tabs yet."),
        ("Browser profiles", "profiles", "Work"),
        ("Proxies", "proxies", "Proxies"),
        ("Agents", "agents", "Scout"),
        ("Providers", "providers", "OpenRouter"),
        ("Vault", "vault", "Shop"),
        ("Web search", "search", "Web search"),
        ("Webhooks", "webhooks", "Webhooks"),
        ("Workspace", "workspace", "notes.txt"),
        ("Notifications", "notifications", "Email server"),
    ):
        await page.get_by_role("tab", name=tab, exact=True).click()
        await expect(page.get_by_text(ready, exact=True).last).to_be_visible()
        await expect(page.locator(".loading")).to_have_count(0)
        if screen == "agents":
            # The agent's form, open.
            agent = page.locator("[data-agent]").first
            summary = agent.locator("summary").first
            await summary.click()
            # Its provider by name, and the profiles to choose from, once they are loaded.
            await expect(summary).to_contain_text("Anthropic")
            await expect(agent.get_by_label("Browser profile")).to_be_visible()
            await expect(agent.get_by_label("Provider")).to_have_value("anthropic")
        if screen == "providers":
            await ready_after_a_test(walk, page)
        if screen == "vault":
            # The form of a new login: its inputs and text areas in one style.
            await page.get_by_role("button", name="Add to the vault").click()
        await check.matches(page, f"host-{screen}")
    check.assert_matched()


async def ready_after_a_test(walk: Walk, page: Page) -> None:
    """Anthropic (the fake) is Ready only once a test it answered, and still after a reload:
    the host keeps the status."""
    row = page.locator('[data-provider="anthropic"]')
    badge = row.locator(".badge")
    await expect(badge).to_have_text("Key set, not tested")
    await row.get_by_role("button", name="Test").click()
    await expect(row.get_by_role("status")).to_have_text("Anthropic answered with this key")
    await expect(badge).to_have_text("Ready")
    await open_host_screen(page, walk.crewhost, walk.team, section="Providers")
    await expect(badge).to_have_text("Ready")
    # A keyless provider says so once, in its badge.
    openai = page.locator('[data-provider="openai"]')
    await expect(openai.locator(".badge")).to_have_text("No key is set")
    await expect(openai.get_by_text("key is set")).to_have_count(1)


async def new_chat(page: Page) -> None:
    await page.get_by_role("tab", name="Chat", exact=True).click()
    side = page.get_by_role("navigation", name="Agents and chats")
    await side.get_by_role("button", name="Scout").click()
    await expect(side.locator(".chat-thread-list")).to_have_attribute("aria-busy", "false")
    threads = await side.locator(".chat-thread").count()
    await side.locator(".chat-thread-list > button").click()
    await expect(side.locator(".chat-thread")).to_have_count(threads + 1)


def card(page: Page, kind: str) -> Locator:
    return page.locator(f'.attention-card[data-kind="{kind}"]')


def opens(call_id: str, url: str) -> StreamReply:
    return MessageEvents().tool_use(call_id, "open", {"url": url}).stop("tool_use").reply()


def on_opened_tab(call_id: str, tool: str, arguments: dict[str, object]) -> StreamReply:
    """``tool`` on the tab the call just before opened."""

    def body(request: RecordedRequest) -> bytes:
        given = {"tabId": last_tool_result(request)["tabId"], **arguments}
        return MessageEvents().tool_use(call_id, tool, given).stop("tool_use").body()

    return StreamReply(body)


def says(text: str) -> StreamReply:
    return MessageEvents().text(text).stop().reply()


async def ask(page: Page, text: str) -> None:
    """Send ``text``; the chat is titled from it in the list (as soon as the host says so)."""
    await say(page, text)
    side = page.get_by_role("navigation", name="Agents and chats")
    await expect(side.locator(".chat-thread.is-selected")).to_have_text(text)


async def composer_in_sight(page: Page) -> None:
    for name in ("Attach files", "Stop", "Send"):
        await expect(page.get_by_role("button", name=name, exact=True)).to_be_in_viewport()


async def shoot_chat(page: Page, check: ScreenshotCheck, screen: str) -> None:
    """The chat at both sizes (the viewport only: the composer must be in it)."""
    # A running call's raw arguments carry the tab's id, new each run.
    await check.matches(page, screen, full_page=False, mask=(".tool-target",))
    for size in (PHONE, DESKTOP):
        await page.set_viewport_size(size)
        await composer_in_sight(page)


async def stop_turn(page: Page) -> None:
    await page.get_by_role("button", name="Stop", exact=True).click()
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "stopped", timeout=TURN_MS)


async def test_chat_with_each_card(walk: Walk, check: ScreenshotCheck) -> None:
    page, site, anthropic = walk.page, walk.site, walk.anthropic
    await open_host_screen(page, walk.crewhost, walk.team, section=None)

    await new_chat(page)
    anthropic.script(
        opens("toolu_open", site.url("/signin")),
        on_opened_tab(
            "toolu_click",
            "click",
            {"target": {"kind": "css", "selector": "button"}},
        ),
    )
    await ask(page, "Sign in to the shop")
    await expect(card(page, "consent")).to_be_visible(timeout=TURN_MS)
    await shoot_chat(page, check, "chat-approval")
    await stop_turn(page)

    await new_chat(page)
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_ask", "ask_user", {"question": "Which colour?", "options": COLOURS})
        .stop("tool_use")
        .reply(),
    )
    await ask(page, "Pick a colour with me")
    await expect(card(page, "question")).to_be_visible(timeout=TURN_MS)
    await shoot_chat(page, check, "chat-question")
    await stop_turn(page)

    await new_chat(page)
    anthropic.script(
        opens("toolu_open2", site.url("/signin")),
        on_opened_tab(
            "toolu_secret",
            "submit_secret",
            {
                "fields": [{"target": {"kind": "css", "selector": "input[type=password]"}}],
                "purpose": "sign in to the shop",
            },
        ),
        says("Then I will wait for you."),
    )
    await ask(page, "Sign in with my password")
    await expect(card(page, "secret")).to_be_visible(timeout=TURN_MS)
    await shoot_chat(page, check, "chat-secret")
    await card(page, "secret").get_by_role("button", name="Decline").click()
    await expect(card(page, "secret")).to_have_count(0)
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)

    await new_chat(page)
    anthropic.script(
        MessageEvents()
        .tool_use(
            "toolu_vault",
            "request_vault_item",
            {"kind": "login", "reason": "to sign in to the shop", "name": "Shop account"},
        )
        .stop("tool_use")
        .reply(),
    )
    await ask(page, "Ask for a login")
    await expect(card(page, "vaultItem")).to_be_visible(timeout=TURN_MS)
    await shoot_chat(page, check, "chat-vault-request")
    await stop_turn(page)
    check.assert_matched()

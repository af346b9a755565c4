"""Secure entry walked in the web client: real ``crewhost serve``, real Chromium for the
host's tabs and for the members' web client, the fake Anthropic API scripted to call tools.

A member types a password into a secret card while watching the agent's tab; the live view
closes while the tab holds it, the fixture site receives it, and it reaches neither the
provider, nor the server's logs, nor the web client's storage. An owner saves a secret to
the vault and the agent then fills from that item (after consent), and is refused on another
site. A card filled from the vault is confirmed by the member who takes the tab over. A
declined card goes from every window that showed it.

One server, one browser, one team and one agent serve the module; each test starts its own
chats and tabs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Locator, Page, async_playwright, expect

from tests.e2e.test_chat import fake_provider_and_agent, last_tool_result, say
from tests.e2e.test_web_client import FRAME_MS, LIVE_CANVAS, open_host_screen
from tests.support.chromium import launch_chromium
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.loop_watch import watch_event_loop
from tests.support.sites import Posted, Site, serving, sign_in_app
from tests.support.waiting import eventually
from tests.support.web_client import (
    DESKTOP,
    FAILED,
    Crewhost,
    HubApi,
    Screens,
    Team,
    owner_peer,
    person_peer,
    save_failed_pages,
    sign_in_context,
)

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

MEMBER = "entry-member@example.com"
TURN_MS = 30_000
# Fresh per run, so a find anywhere is this run's leak and never an old file's.
PASSWORD = "pw-" + secrets.token_hex(12)
SAVED_PASSWORD = "saved-" + secrets.token_hex(12)
CARD = "4111111111111111"
PASSWORD_FIELD = {"target": {"kind": "css", "selector": "input[type=password]"}}
EMAIL_FIELD = {"target": {"kind": "css", "selector": "input[type=email]"}}


@dataclass
class Walk:
    """The module's server, browser, fixture sites, fake provider and team."""

    crewhost: Crewhost
    browser: Browser
    team: Team
    site: Site
    # The same sign-in on another port: another origin, for a login of the first.
    elsewhere: Site
    posted: Posted
    anthropic: FakeAnthropic
    folder: Path
    agent_id: str

    async def signed_in(self, email: str) -> BrowserContext:
        context = await self.browser.new_context(viewport=DESKTOP)
        await sign_in_context(context, self.crewhost, email)
        return context

    async def chat(self, context: BrowserContext) -> Page:
        """A new chat with the agent (its person's earlier chats are listed by it)."""
        page = await context.new_page()
        await open_host_screen(page, self.crewhost, self.team)
        await page.get_by_role("tab", name="Chat").click()
        side = page.get_by_role("navigation", name="Agents and chats")
        await side.get_by_role("button", name="Scout").click()
        starts = side.locator(".chat-thread-list > button")
        await expect(starts).to_have_text("New chat")
        # Counted once the agent's chats are listed, not while they load.
        await expect(side.locator(".chat-thread-list")).to_have_attribute("aria-busy", "false")
        threads = await side.locator(".chat-thread").count()
        await starts.click()
        await expect(side.locator(".chat-thread")).to_have_count(threads + 1)
        return page


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    """The suite's watchdog, on this module's loop (the tests run in it)."""
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def walk(crewhost: Crewhost, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Walk]:
    folder = tmp_path_factory.mktemp("secure-entry")
    posted = Posted()
    async with AsyncExitStack() as stack:
        site = await stack.enter_async_context(serving(sign_in_app(posted)))
        elsewhere = await stack.enter_async_context(serving(sign_in_app(posted)))
        anthropic = await stack.enter_async_context(FakeAnthropic())
        api = HubApi(crewhost)
        stack.push_async_callback(api.close)
        team = await api.new_team("Entry crew")
        await team.add_member(MEMBER, "Maya")
        agent = await fake_provider_and_agent(team, anthropic, folder)
        playwright = await stack.enter_async_context(async_playwright())
        browser = await launch_chromium(playwright)
        stack.push_async_callback(browser.close)
        yield Walk(crewhost, browser, team, site, elsewhere, posted, anthropic, folder, agent["id"])


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def failed_pages(request: pytest.FixtureRequest, walk: Walk) -> AsyncIterator[None]:
    """The pages of a failed test are saved, as the suite's own browser fixture does."""
    yield
    # What a failed test left scripted would answer the next test (or this one run again).
    walk.anthropic.drop_unplayed()
    if request.node.stash.get(FAILED, False):
        await save_failed_pages(walk.browser, request.node)
        await stop_turns(walk)


async def stop_turns(walk: Walk) -> None:
    """Stops the turns a failed test left running, as their people would: one waiting on a
    card would show it beside the next test's, and take that test's scripted replies."""
    for email in (walk.team.owner_email, MEMBER):
        async with person_peer(walk.team, walk.folder, email) as peer:
            listed = await peer.call("threads-v1/list", {"agentId": walk.agent_id})
            for thread in listed["threads"]:
                await peer.call("threads-v1/stop", {"threadId": thread["id"]})


def result_of(anthropic: FakeAnthropic, call_id: str) -> dict[str, Any]:
    """What the agent's latest call ``call_id`` returned, as the model was sent it."""
    for request in reversed(anthropic.requests):
        for message in request.messages():
            if message["role"] != "user" or not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    return dict(json.loads(block["content"]))
    raise AssertionError(f"no result of {call_id} was sent to the model")


def opens(call_id: str, url: str) -> StreamReply:
    return MessageEvents().tool_use(call_id, "open", {"url": url}).stop("tool_use").reply()


def asks_secret(call_id: str, fields: list[dict[str, Any]]) -> StreamReply:
    """``submit_secret`` on the tab that the call just before returned."""

    def body(request: RecordedRequest) -> bytes:
        arguments = {
            "tabId": last_tool_result(request)["tabId"],
            "fields": fields,
            "purpose": "sign in to the shop",
        }
        return MessageEvents().tool_use(call_id, "submit_secret", arguments).stop("tool_use").body()

    return StreamReply(body)


def says(text: str) -> StreamReply:
    return MessageEvents().text(text).stop().reply()


def secret_card(page: Page) -> Locator:
    return page.locator('.attention-card[data-kind="secret"]')


async def send_secret(card: Locator, values: list[str]) -> str:
    """Types ``values`` into the card's fields and sends them; what the first field holds
    just after the send (the card may go at once, so it is read in the same task)."""
    inputs = card.locator('input:not([type="checkbox"])')
    await expect(inputs).to_have_count(len(values))
    for number, value in enumerate(values):
        await inputs.nth(number).fill(value)
    emptied = await card.evaluate(
        """async (card) => {
          const input = card.querySelector('input:not([type="checkbox"])');
          card.querySelector('button[type="submit"]').click();
          await new Promise((done) => setTimeout(done, 0));
          return input.value;
        }"""
    )
    return str(emptied)


def never_holds(walk: Walk, secret: str) -> None:
    """The secret is in no request to the provider and no file the server logged to."""
    for request in walk.anthropic.requests:
        assert secret not in json.dumps(request.body)
    logs = walk.crewhost.log_file.parent
    for path in logs.glob("test_secure_entry.*"):
        assert secret.encode() not in path.read_bytes(), path


async def stored_in(page: Page) -> str:
    return str(
        await page.evaluate(
            "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])"
        )
    )


async def site_logins(walk: Walk) -> list[dict[str, Any]]:
    """The team's vault items for the sign-in site, as an owner lists them."""
    async with owner_peer(walk.team, walk.folder) as owner:
        listed = await owner.call("vault-v1/list", {})
    return [item for item in listed["items"] if item["sites"] == [walk.site.base]]


async def turn_done(page: Page, last_words: str) -> None:
    """The turn ended done with ``last_words`` (so an earlier turn's status is not taken
    for this one's)."""
    said = page.locator(".conversation-items .chat-agent-text").last
    await expect(said).to_have_text(last_words, timeout=TURN_MS)
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)


async def test_a_member_watching_the_tab_types_the_secret_into_the_card(
    walk: Walk, screens: Screens
) -> None:
    context = await walk.signed_in(MEMBER)
    page = await walk.chat(context)
    walk.anthropic.script(
        opens("toolu_open", walk.site.url("/spa")),
        asks_secret("toolu_secret", [PASSWORD_FIELD]),
        says("I am at the next step."),
    )
    await say(page, "Sign in to the shop")
    card = secret_card(page)
    await expect(card).to_contain_text(walk.site.base, timeout=TURN_MS)
    await expect(card).to_contain_text("Password")
    # A member may not keep it in the vault, and the card says why.
    save = card.get_by_role("checkbox")
    await expect(save).to_be_disabled()
    await expect(card).to_contain_text("only owners and admins save to the vault")

    # The member watches the agent's tab live; the card stays in sight above the view.
    await page.get_by_role("button", name="Watch the agent's tab live").click()
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
    await expect(card).to_be_visible()
    await screens.save(page, "secret-card-watching")
    password = card.get_by_label("Password")
    await expect(password).to_have_attribute("type", "password")
    assert await send_secret(card, [PASSWORD]) == ""

    # While the tab holds the secret the view is closed, in plain words.
    ended = page.locator(".view-overlay")
    await expect(ended).to_contain_text("The view ended.", timeout=TURN_MS)
    await expect(ended).to_contain_text("secret")
    await expect(card).to_have_count(0)
    await screens.save(page, "secret-view-closed")

    await page.get_by_role("tab", name="Chat").click()
    await turn_done(page, "I am at the next step.")
    result = last_tool_result(walk.anthropic.requests[-1])
    assert (result["status"], result["page"]) == ("entered", "kept")
    assert walk.posted.bodies[-1] == ("/api/login", PASSWORD)

    # The kept page (the sign-in's next step) stays protected: watching again is refused...
    await page.get_by_role("button", name="Watch the agent's tab live").click()
    await expect(ended).to_contain_text("secret", timeout=FRAME_MS)
    await expect(page.get_by_role("button", name="Watch again")).to_be_visible()
    # ...until the tab loads a new page.
    tab_id = result["tabId"]
    walk.anthropic.script(
        MessageEvents()
        .tool_use("toolu_go", "navigate", {"tabId": tab_id, "url": walk.site.url("/welcome")})
        .stop("tool_use")
        .reply(),
        says("On the welcome page."),
    )
    await page.get_by_role("tab", name="Chat").click()
    await say(page, "Go to the welcome page")
    await turn_done(page, "On the welcome page.")
    await page.get_by_role("button", name="Watch the agent's tab live").click()
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)

    assert PASSWORD not in await page.content()
    assert PASSWORD not in await stored_in(page)
    never_holds(walk, PASSWORD)
    await context.close()


async def test_an_owner_saves_a_secret_and_the_agent_fills_from_that_item(
    walk: Walk, screens: Screens
) -> None:
    saved_before = await site_logins(walk)
    context = await walk.signed_in(walk.team.owner_email)
    page = await walk.chat(context)
    walk.anthropic.script(
        opens("toolu_open", walk.site.url("/signin")),
        asks_secret("toolu_secret", [EMAIL_FIELD, PASSWORD_FIELD]),
        says("Signed in."),
    )
    await say(page, "Sign in to the shop")
    card = secret_card(page)
    await expect(card).to_contain_text("Password", timeout=TURN_MS)
    save = card.get_by_role("checkbox")
    await expect(save).to_be_enabled()
    await save.check()
    await screens.save(page, "secret-card-save")
    assert await send_secret(card, ["ada@example.com", SAVED_PASSWORD]) == ""
    await expect(card).to_have_count(0)
    await turn_done(page, "Signed in.")
    assert result_of(walk.anthropic, "toolu_secret")["status"] == "entered"
    assert walk.posted.bodies[-1][0] == "/signin"
    assert SAVED_PASSWORD in walk.posted.bodies[-1][1]

    # The vault holds a login for the site: its name and site, never its password.
    logins = await site_logins(walk)
    new = [item for item in logins if item["id"] not in {old["id"] for old in saved_before}]
    assert len(new) == 1, logins
    login = new[0]
    assert (login["kind"], login["passwordSet"]) == ("login", True)
    assert login["name"]
    assert SAVED_PASSWORD not in json.dumps(logins)

    # The agent fills from that item after consent, and is refused on another site.
    def fill(call_id: str, opened: str) -> StreamReply:
        def body(_request: RecordedRequest) -> bytes:
            arguments = {
                "tabId": result_of(walk.anthropic, opened)["tabId"],
                "itemId": login["id"],
                "fields": [
                    {**EMAIL_FIELD, "field": "username"},
                    {**PASSWORD_FIELD, "field": "password"},
                ],
            }
            events = MessageEvents().tool_use(call_id, "fill_from_vault", arguments)
            return events.stop("tool_use").body()

        return StreamReply(body)

    walk.anthropic.script(
        MessageEvents().tool_use("toolu_list", "list_vault_items", {}).stop("tool_use").reply(),
        opens("toolu_again", walk.site.url("/signin")),
        fill("toolu_fill", "toolu_again"),
        opens("toolu_other", walk.elsewhere.url("/signin")),
        fill("toolu_wrong", "toolu_other"),
        says("One login signed in, the other site refused."),
    )
    posts = len(walk.posted.bodies)
    await say(page, "Sign in from the vault, here and there")
    consent = page.locator('.attention-card[data-kind="consent"]')
    await expect(consent).to_contain_text("fill_from_vault", timeout=TURN_MS)
    await screens.save(page, "vault-fill-consent")
    await consent.get_by_role("button", name="Approve").click()
    await expect(consent).to_have_count(0)
    await expect(consent).to_contain_text("fill_from_vault", timeout=TURN_MS)
    await consent.get_by_role("button", name="Approve").click()
    await turn_done(page, "One login signed in, the other site refused.")

    listed_items = result_of(walk.anthropic, "toolu_list")["items"]
    assert [i["id"] for i in listed_items if i["id"] == login["id"]] == [login["id"]]
    assert SAVED_PASSWORD not in json.dumps(listed_items)
    assert result_of(walk.anthropic, "toolu_fill")["status"] == "entered"
    assert len(walk.posted.bodies) == posts + 1
    assert SAVED_PASSWORD in walk.posted.bodies[-1][1]
    refused = page.locator(".tool-card").filter(has_text="fill_from_vault").last
    await expect(refused).to_have_attribute("data-outcome", "refused")
    reason = refused.locator(".tool-detail")
    await expect(reason).to_have_text(
        f"This login is for {walk.site.base}, not {walk.elsewhere.base}"
    )
    await expect(reason).to_have_attribute("data-code", "vaultSiteMismatch")
    # The conversation followed its newest items: the refusal is in sight.
    await expect(refused).to_be_in_viewport()
    await screens.save(page, "vault-fill-refused")
    assert SAVED_PASSWORD not in await page.content()
    assert SAVED_PASSWORD not in await stored_in(page)
    never_holds(walk, SAVED_PASSWORD)
    await context.close()


async def test_a_member_takes_over_a_filled_card_and_pays(walk: Walk, screens: Screens) -> None:
    async with owner_peer(walk.team, walk.folder) as owner:
        card = await owner.call(
            "vault-v1/create",
            {"item": {"kind": "card", "name": "Team card", "number": CARD, "securityCode": "737"}},
        )

    def fill(_request: RecordedRequest) -> bytes:
        arguments = {
            "tabId": result_of(walk.anthropic, "toolu_open")["tabId"],
            "itemId": card["id"],
            "fields": [
                {"target": {"kind": "css", "selector": "input[name=cc]"}, "field": "number"},
                {"target": {"kind": "css", "selector": "input[name=csc]"}, "field": "securityCode"},
            ],
        }
        events = MessageEvents().tool_use("toolu_card", "fill_from_vault", arguments)
        return events.stop("tool_use").body()

    context = await walk.signed_in(MEMBER)
    page = await walk.chat(context)
    walk.anthropic.script(
        opens("toolu_open", walk.site.url("/checkout")),
        StreamReply(fill),
        says("A person confirms the payment."),
    )
    await say(page, "Pay with the team card")
    consent = page.locator('.attention-card[data-kind="consent"]')
    await expect(consent).to_contain_text("fill_from_vault", timeout=TURN_MS)
    await consent.get_by_role("button", name="Approve").click()
    await turn_done(page, "A person confirms the payment.")
    assert result_of(walk.anthropic, "toolu_card")["code"] == "paymentConfirmation"

    # The request names the agent; opening it watches the tab holding it, the card masked.
    request = page.get_by_role("list", name="Requests from agents").get_by_role("status")
    await expect(request).to_contain_text("Scout asks a person to take over")
    await expect(request).to_contain_text("payment")
    await screens.save(page, "card-takeover-request")
    await request.get_by_role("button", name="Open tab").click()
    canvas = page.locator(LIVE_CANVAS)
    await expect(canvas).to_be_visible(timeout=FRAME_MS)
    await expect(page.get_by_role("button", name="Release")).to_be_visible()
    selected = page.locator(".tab-row[aria-current='true']")
    await expect(selected.locator(".tab-owner")).to_have_text("Scout")  # its agent, by name
    await screens.save(page, "card-takeover-view")
    # The fixture's Pay button fills the page's lower part.
    box = await canvas.bounding_box()
    assert box is not None
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.85)
    await eventually(lambda: ("/pay", f"cc={CARD}&csc=737") in walk.posted.bodies, TURN_MS / 1000)
    # The new page ended protection: the view goes on.
    await expect(canvas).to_be_visible()
    assert CARD not in await page.content()
    assert CARD not in await stored_in(page)
    never_holds(walk, CARD)
    await context.close()


async def test_a_declined_card_goes_from_every_window(walk: Walk) -> None:
    context = await walk.signed_in(MEMBER)
    page = await walk.chat(context)
    # A second window of the same member, on another browser: one browser connects to a
    # host from one window at a time.
    second = await walk.signed_in(MEMBER)
    other = await second.new_page()
    await open_host_screen(other, walk.crewhost, walk.team)
    walk.anthropic.script(
        opens("toolu_open", walk.site.url("/spa")),
        asks_secret("toolu_secret", [PASSWORD_FIELD]),
        says("Then I will ask you what to do."),
    )
    await say(page, "Sign in, if you can")
    cards = [secret_card(page), secret_card(other)]
    for card in cards:
        await expect(card).to_contain_text("sign in to the shop", timeout=TURN_MS)
    await cards[0].get_by_role("button", name="Decline").click()
    for card in cards:
        await expect(card).to_have_count(0)
    await turn_done(page, "Then I will ask you what to do.")
    assert result_of(walk.anthropic, "toolu_secret")["status"] == "declined"
    await second.close()
    await context.close()

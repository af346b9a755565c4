"""Chat with agents in the web client, against ``crewhost serve`` and a local model provider.

A member chats with an agent that opens a fixture page, asks consent for a click (approved
in the web client), asks a question with options, and finishes; a denial; Stop while the
agent waits. An admin sets a provider key (never shown again) and creates an agent; a
member sees no admin controls, with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, FilePayload, Page, expect

from tests.e2e.test_access_changes import member_id
from tests.e2e.test_web_client import CONNECT_MS, open_host_screen
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.sites import Site
from tests.support.web_client import (
    DESKTOP,
    Crewhost,
    HubApi,
    Screens,
    Team,
    owner_peer,
    sign_in_context,
)

pytestmark = pytest.mark.e2e

MEMBER = "chat-member@example.com"
TURN_MS = 30_000
COLOURS = ["Red", "Blue"]


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


def last_tool_result(request: RecordedRequest) -> dict[str, Any]:
    """The last tool result a request carries, as the tool returned it."""
    blocks = request.messages()[-1]["content"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    return dict(json.loads(results[-1]["content"]))


def press_click(call_id: str, opened: dict[str, Any]) -> bytes:
    """The model clicks the "Press" button of the snapshot that ``open`` returned."""
    lines = [line.strip() for line in str(opened["tree"]).splitlines() if '"Press"' in line]
    assert len(lines) == 1, opened["tree"]
    target = {"kind": "ref", "ref": lines[0].split(" ", 1)[0]}
    arguments = {"tabId": opened["tabId"], "target": target}
    return MessageEvents().tool_use(call_id, "click", arguments).stop("tool_use").body()


def click_press(request: RecordedRequest) -> bytes:
    return press_click("toolu_click", last_tool_result(request))


async def fake_provider_and_agent(
    team: Team, anthropic: FakeAnthropic, folder: Path
) -> dict[str, Any]:
    """The team's Anthropic provider pointed at the fake, and an agent that opens pages
    without asking but asks before a click."""
    async with owner_peer(team, folder) as owner:
        await owner.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        await owner.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        return dict(
            await owner.call(
                "agents-v1/create",
                {"name": "Scout", "permissions": {"browser-navigation": "auto-approve"}},
            )
        )


async def chat_team(hub_api: HubApi, anthropic: FakeAnthropic, folder: Path) -> Team:
    """A team with a member, the fake provider and an agent."""
    team = await hub_api.new_team("Crew Chat")
    await team.add_member(MEMBER, "Maya")
    await fake_provider_and_agent(team, anthropic, folder)
    return team


async def open_chat(page: Page, crewhost: Crewhost, team: Team) -> None:
    # The host offers chat, so its screen opens on Chat.
    await open_host_screen(page, crewhost, team, section=None)
    await expect(page.get_by_role("tab", name="Chat")).to_have_attribute("aria-selected", "true")
    await (
        page.get_by_role("navigation", name="Agents and chats")
        .get_by_role("button", name="Scout")
        .click()
    )
    await new_chat(page)


async def new_chat(page: Page) -> None:
    """**New chat**, then wait until its empty conversation is the one shown: a message
    typed sooner goes to the chat shown before."""
    await page.get_by_role("button", name="New chat").click()
    conversation = page.locator(".conversation")
    await expect(conversation.locator(".conversation-title")).to_have_text("New chat")
    await expect(conversation.locator(".conversation-items > li")).to_have_count(0)


async def say(page: Page, text: str) -> None:
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send").click()


async def test_a_member_chats_approves_answers_denies_and_stops(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await chat_team(hub_api, anthropic, tmp_path)
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, MEMBER)
    page = await context.new_page()
    await open_chat(page, crewhost, team)

    anthropic.script(
        MessageEvents()
        .text("Opening ", "the page.")
        .tool_use("toolu_open", "open", {"url": site.url("/press")})
        .stop("tool_use")
        .reply(),
        StreamReply(click_press),
        MessageEvents()
        .tool_use("toolu_ask", "ask_user", {"question": "Which colour?", "options": COLOURS})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("All **done**, see [the page](https://example.com/).").stop().reply(),
    )
    await say(page, "Press the button")
    conversation = page.locator(".conversation-items")
    await expect(conversation.locator(".chat-user-text")).to_contain_text("Press the button")
    # The chat is titled from its first message, in the list and over the conversation.
    chats = page.get_by_role("navigation", name="Agents and chats").locator(".chat-thread")
    await expect(chats).to_have_text(["Press the button"])
    await expect(page.locator(".conversation-title")).to_have_text("Press the button")

    # The gated click waits for consent, shown as a card in the conversation.
    consent = page.locator('.attention-card[data-kind="consent"]')
    await expect(consent).to_contain_text("click", timeout=TURN_MS)
    # It names the button and the page in words; the raw call waits behind Details.
    site_name = site.url("/").split("/")[2]
    await expect(consent.locator(".attention-what")).to_have_text(
        f"Click “Press” on Press ({site_name})"
    )
    await expect(consent.locator(".attention-details pre")).not_to_be_visible()
    # The open just ended: its tab is offered live without a reload.
    await expect(page.get_by_role("button", name="Watch the agent's tab live")).to_be_visible()
    await screens.save(page, "chat-consent")
    await consent.get_by_role("button", name="Approve").click()
    await expect(consent).to_have_count(0)

    # Then a question with options: one is chosen and sent.
    question = page.locator('.attention-card[data-kind="question"]')
    await expect(question).to_contain_text("Which colour?", timeout=TURN_MS)
    await screens.save(page, "chat-question")
    await question.get_by_label("Blue").check()
    await question.get_by_role("button", name="Answer").click()
    await expect(question).to_have_count(0)

    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    cards = conversation.locator(".tool-card")
    await expect(cards).to_have_count(3)
    await expect(cards.nth(0)).to_contain_text("open")
    await expect(cards.nth(1)).to_have_attribute("data-outcome", "ok")
    agent_text = conversation.locator(".chat-agent-text").last
    await expect(agent_text.locator("strong")).to_have_text("done")
    link = agent_text.get_by_role("link", name="the page")
    await expect(link).to_have_attribute("target", "_blank")
    assert "noopener" in (await link.get_attribute("rel") or "")
    assert any(
        block.get("type") == "tool_result" and "Blue" in json.dumps(block)
        for block in anthropic.requests[-1].messages()[-1]["content"]
    )
    await expect(page.get_by_role("button", name="Watch the agent's tab live")).to_be_visible()
    await screens.save(page, "chat-done")

    # A denial ends the turn denied, and the card says why.
    anthropic.script(StreamReply(_click_same_tab(anthropic)))
    await say(page, "Press it again")
    await expect(consent).to_have_count(1, timeout=TURN_MS)
    await consent.get_by_role("button", name="Deny").click()
    await expect(status).to_have_attribute("data-turn-status", "denied", timeout=TURN_MS)
    await expect(status).to_contain_text("denied")
    await expect(cards.last).to_have_attribute("data-outcome", "refused")

    # Stop while the agent waits for an answer: the turn ends stopped.
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_wait", "ask_user", {"question": "Shall I go on?"})
        .stop("tool_use")
        .reply()
    )
    await say(page, "Ask me something")
    await expect(question).to_contain_text("Shall I go on?", timeout=TURN_MS)

    # A message sent while the agent is still at work waits in the queue; its sender
    # takes it back.
    await say(page, "One more thing")
    queue = page.get_by_role("list", name="Queued messages")
    await expect(queue).to_contain_text("One more thing")
    await queue.get_by_role("button", name="Remove").click()
    await expect(queue).to_have_count(0)

    await page.get_by_role("button", name="Stop").click()
    await expect(status).to_have_attribute("data-turn-status", "stopped", timeout=TURN_MS)
    await expect(question).to_have_count(0)
    await screens.save(page, "chat-stopped")
    # Nothing was left to start a turn on its own; the next message does, once sent.
    asked = len(anthropic.requests)
    anthropic.script(MessageEvents().text("Noted.").stop().reply())
    await say(page, "One more thing")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    assert len(anthropic.requests) == asked + 1

    # A reply that broke off is asked for again: the conversation shows only the new one.
    said = MessageEvents().text("Partial").body()
    anthropic.script(
        StreamReply(said + said, chunk_size=len(said), drop_after=1),
        MessageEvents().text("Whole answer.").stop().reply(),
    )
    await say(page, "Say it whole")
    last_text = conversation.locator(".chat-agent-text").last
    await expect(last_text).to_have_text("Whole answer.", timeout=TURN_MS)
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    await expect(conversation).not_to_contain_text("Partial")

    # A reply cut at the model's token limit ends the turn incomplete, and says so.
    anthropic.script(MessageEvents().text("The first of many").stop("max_tokens").reply())
    await say(page, "Tell me everything")
    await expect(status).to_have_attribute("data-turn-status", "incomplete", timeout=TURN_MS)
    await expect(status).to_contain_text("cut at its token limit")
    await context.close()


def _click_same_tab(anthropic: FakeAnthropic) -> Callable[[RecordedRequest], bytes]:
    """A reply that clicks the Press button again, in the tab the first turn opened."""

    def body(_request: RecordedRequest) -> bytes:
        opened = next(
            json.loads(block["content"])
            for request in anthropic.requests
            for message in request.messages()
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_open"
        )
        return press_click("toolu_again", opened)

    return body


# Notes each value the connection indicator takes, from now on, in window.connectionStates.
RECORD_CONNECTION_STATES = """() => {
    window.connectionStates = [];
    const note = () => {
        const shown = document.querySelector("[data-connection]");
        window.connectionStates.push(shown ? shown.getAttribute("data-connection") : "gone");
    };
    new MutationObserver(note).observe(document.body, {
        subtree: true, childList: true, attributes: true, attributeFilter: ["data-connection"],
    });
}"""


async def test_a_draft_survives_a_reconnect(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Drafts")
    await fake_provider_and_agent(team, anthropic, tmp_path)
    await team.add_member("ria@example.com", "Ria", role="admin")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, "ria@example.com")
    page = await context.new_page()
    await open_chat(page, crewhost, team)
    draft = page.get_by_role("textbox", name="Message")
    await draft.fill("Half a thought")

    # A role change makes the host end the connection; the client connects again. The
    # page notes every state it passes through: a reconnection can be over between two
    # looks at the attribute.
    await page.evaluate(RECORD_CONNECTION_STATES)
    account = await member_id(team, "ria@example.com")
    changed = await team.owner.patch(f"/v1/teams/{team.id}/members/{account}", {"role": "member"})
    assert changed.status == 200, changed.body
    # A function, not an expression: an expression is evaluated again at each poll, and the
    # client's CSP forbids that evaluation outside the first call (EvalError on a busy run).
    await page.wait_for_function(
        "() => window.connectionStates.some((state) => state !== 'connected')", timeout=CONNECT_MS
    )
    connection = page.locator("[data-connection]")
    await expect(connection).to_have_attribute("data-connection", "connected", timeout=CONNECT_MS)
    await expect(draft).to_have_value("Half a thought")
    assert anthropic.requests == [], "nothing was sent"
    stored = await page.evaluate("JSON.stringify(Object.entries(localStorage))")
    assert "Half a thought" not in stored, "chat content never goes to localStorage"
    await context.close()


async def test_an_admin_sets_a_key_and_creates_an_agent_and_a_member_only_reads(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Admin")
    await team.add_member(MEMBER.replace("chat-", "admin-"), "Sam")
    async with owner_peer(team, tmp_path) as owner:
        await owner.call("agents-v1/create", {"name": "Keyless"})
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team, section=None)

    # Without a key a chat fails as an error that leads to where the key is set.
    chats = page.get_by_role("navigation", name="Agents and chats")
    await chats.get_by_role("button", name="Keyless").click()
    await new_chat(page)
    await say(page, "Hello")
    failure = page.locator(".conversation-status .banner-error")
    await expect(failure).to_contain_text("no API key is set for Anthropic", timeout=TURN_MS)
    await failure.get_by_role("button", name="Set a key on the Providers tab").click()
    await expect(page.get_by_role("tab", name="Providers")).to_have_attribute(
        "aria-selected", "true"
    )
    row = page.locator('[data-provider="anthropic"]')
    secret = "sk-ant-typed-in-the-web-client-0001"
    key_input = row.get_by_label("Anthropic API key")
    await key_input.fill(secret)
    await row.get_by_role("button", name="Save key").click()
    await expect(key_input).to_have_value("")
    await expect(row).to_contain_text("Key set")
    assert secret not in await page.content()
    await screens.save(page, "admin-providers")

    await page.get_by_role("tab", name="Agents").click()
    await page.get_by_role("textbox", name="New agent's name").fill("Helper")
    await page.get_by_role("button", name="Create agent").click()
    # The row whose own heading names it: the other agents' rows offer Helper under "May ask".
    helper = page.locator(".admin-row[data-agent]").filter(
        has=page.locator(":scope > details > summary > strong", has_text="Helper")
    )
    await expect(helper).to_have_count(1)
    await screens.save(page, "admin-agents")

    # The agent's workspace: a file uploaded, listed, then deleted.
    await page.get_by_role("tab", name="Workspace").click()
    await page.locator('section[aria-label="Workspace"] input[type="file"]').set_input_files(
        files=[FilePayload(name="notes.txt", mimeType="text/plain", buffer=b"remember the milk")]
    )
    files = page.get_by_role("list", name="Files").get_by_role("listitem")
    await expect(files.filter(has_text="notes.txt")).to_contain_text("17 bytes")
    await screens.save(page, "admin-workspace")
    await files.filter(has_text="notes.txt").get_by_role("button", name="Delete").click()
    await screens.save(page, "admin-workspace-delete-question")
    await (
        page.get_by_role("group", name="Delete notes.txt?")
        .get_by_role("button", name="Delete for good")
        .click()
    )
    await expect(files).to_have_count(0)

    # Deleting the agent first says what it takes, counted by the host.
    await page.get_by_role("tab", name="Agents").click()
    await helper.locator(":scope > details > summary").click()  # the row's own, not Memories
    await helper.get_by_role("button", name="Delete…").click()
    await expect(helper.locator(".agent-deletion")).to_have_text(
        "Deleting Helper closes no open tab and deletes no chat, and forgets its memories"
        " and workspace files. This cannot be undone."
    )
    await screens.save(page, "admin-agent-delete-question")
    await helper.get_by_role("button", name="Keep it").click()
    await expect(helper.locator(".agent-deletion")).to_have_count(0)
    await context.close()

    member = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(member, crewhost, MEMBER.replace("chat-", "admin-"))
    page = await member.new_page()
    await open_host_screen(page, crewhost, team)
    await page.get_by_role("tab", name="Agents").click()
    await expect(page.get_by_text("Only admins and owners change this")).to_be_visible()
    await expect(page.get_by_role("button", name="Create agent")).to_have_count(0)
    await page.get_by_role("tab", name="Providers").click()
    await expect(page.get_by_text("Only admins and owners change this")).to_be_visible()
    await expect(page.get_by_role("button", name="Save key")).to_have_count(0)
    await screens.save(page, "member-providers")
    await member.close()


# The smallest PNG: one transparent pixel.
PIXEL_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


async def test_an_owner_always_allows_a_family_and_attaches_files(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Always")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    agent = await fake_provider_and_agent(team, anthropic, tmp_path)
    page = await context.new_page()
    await open_chat(page, crewhost, team)

    # Files in the composer: an image previews inline, a text file is a chip.
    composer = page.locator("form.composer")
    await composer.locator('input[type="file"]').set_input_files(
        files=[
            FilePayload(name="dot.png", mimeType="image/png", buffer=PIXEL_PNG),
            FilePayload(name="list.txt", mimeType="text/plain", buffer=b"milk, eggs"),
        ]
    )
    chips = composer.locator(".file-chip")
    await expect(chips).to_have_count(2)
    thumb = chips.filter(has_text="dot.png").locator("img")
    await expect(thumb).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    await expect(chips.filter(has_text="list.txt").locator("img")).to_have_count(0)

    anthropic.script(
        MessageEvents()
        .tool_use("toolu_open", "open", {"url": site.url("/press")})
        .stop("tool_use")
        .reply(),
        StreamReply(click_press),
        MessageEvents().text("Pressed.").stop().reply(),
    )
    await say(page, "Press it, with these files")
    sent = page.locator('.chat-user-text[data-delivery="sent"]')
    await expect(sent.locator(".file-chip")).to_have_count(2)
    consent = page.locator('.attention-card[data-kind="consent"]')
    always = consent.get_by_label("Let this agent click, type and choose on pages without asking")
    await always.check(timeout=TURN_MS)
    await screens.save(page, "chat-always-allow")
    await consent.get_by_role("button", name="Approve").click()
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    first = json.dumps(anthropic.requests[0].messages()[-1])
    assert "list.txt" in first

    async with owner_peer(team, tmp_path) as owner:
        changed = await owner.call("agents-v1/get", {"id": agent["id"]})
    assert changed["permissions"]["browser-input"] == "auto-approve"
    await context.close()

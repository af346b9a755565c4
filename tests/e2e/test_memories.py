"""An agent's memories in the web client, against ``crewhost serve`` and a local model
provider that records every request.

The owner chats; the agent keeps a memory with ``remember``. On a phone-sized screen
(390 px) the owner finds it in the agent's Memories section with where it came from,
edits it, and the next thread's first model request carries the edited text; pinned and
then deleted, it is gone from the next request. A member's turns never carry the owner's
private memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_chat import fake_provider_and_agent, say
from tests.e2e.test_web_client import open_host_screen
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.waiting import eventually
from tests.support.web_client import PHONE, Crewhost, HubApi, Team, person_peer, sign_in_context

pytestmark = pytest.mark.e2e

MEMBER = "memories-member@example.com"
TURN_MS = 30_000


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


async def open_new_chat(page: Page, crewhost: Crewhost, team: Team) -> None:
    """As ``open_chat``, beside earlier chats (their default title is "New chat" too)."""
    await open_host_screen(page, crewhost, team, section=None)
    await (
        page.get_by_role("navigation", name="Agents and chats")
        .get_by_role("button", name="Scout")
        .click()
    )
    await page.locator("button.btn-primary", has_text="New chat").click()


async def finished(page: Page, text: str) -> None:
    await expect(page.locator(".conversation-items")).to_contain_text(text, timeout=TURN_MS)


async def new_chat_request(
    page: Page, anthropic: FakeAnthropic, crewhost: Crewhost, team: Team
) -> str:
    """A new chat's first message; the system prompt of its first model request."""
    before = len(anthropic.requests)
    anthropic.script(MessageEvents().text("Fine.").stop().reply())
    await open_new_chat(page, crewhost, team)
    await say(page, "Plan my trip")
    await finished(page, "Fine.")
    return str(anthropic.requests[before].body["system"])


async def memories_section(page: Page, crewhost: Crewhost, team: Team) -> None:
    await open_host_screen(page, crewhost, team, section="Agents")
    row = page.locator(".admin-row[data-agent]").filter(has_text="Scout")
    await row.locator("summary").first.click()
    await row.locator(".agent-memories > summary").click()


async def test_a_memory_is_seen_edited_and_deleted_and_turns_follow(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Memories")
    await team.add_member(MEMBER, "Mo")
    agent = await fake_provider_and_agent(team, anthropic, tmp_path)
    context = await browser.new_context(viewport=PHONE)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()

    await open_new_chat(page, crewhost, team)
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_mem", "remember", {"text": "The team travels by train"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Noted.").stop().reply(),
    )
    await say(page, "We always take the train")
    await finished(page, "Noted.")

    await memories_section(page, crewhost, team)
    memory = page.locator(".memory-row").filter(has_text="The team travels by train")
    await expect(memory).to_be_visible()
    await expect(memory.locator(".memory-source")).to_contain_text(
        "kept by the agent with remember"
    )
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the Memories section is wider than the phone"
    await memory.get_by_role("button", name="Edit").click()
    await page.get_by_role("textbox", name="Memory").fill("The team travels by night train")
    await page.get_by_role("button", name="Save memory").click()
    edited = page.locator(".memory-row").filter(has_text="The team travels by night train")
    await expect(edited).to_be_visible()
    await edited.get_by_role("button", name="Pin as essential").click()
    await expect(edited.locator(".memory-pin")).to_have_text("Essential")

    system = await new_chat_request(page, anthropic, crewhost, team)
    assert "The team travels by night train" in system

    # The owner's memory came from their private chat: the member's turns never carry it.
    async with person_peer(team, tmp_path, MEMBER) as member:
        thread = await member.call("threads-v1/start", {"agentId": agent["id"], "title": "Mine"})
        before = len(anthropic.requests)
        anthropic.script(MessageEvents().text("Hello.").stop().reply())
        await member.call("threads-v1/send", {"threadId": thread["id"], "text": "Hi"})
        await eventually(lambda: len(anthropic.requests) > before, TURN_MS / 1000)
        assert "night train" not in str(anthropic.requests[before].body)
        listed = await member.call("agent-memories-v1/list", {"agentId": agent["id"]})
        assert listed["total"] == 0

    await memories_section(page, crewhost, team)
    edited = page.locator(".memory-row").filter(has_text="The team travels by night train")
    await edited.get_by_role("button", name="Delete").click()
    await expect(page.locator(".memory-row")).to_have_count(0)
    system = await new_chat_request(page, anthropic, crewhost, team)
    assert "night train" not in system
    await context.close()

"""The chat's queue in the web client, against ``crewhost serve`` and a local model provider.

While the agent waits for an answer, the member sends another message: it shows as queued
under the conversation, the member edits it, and once the answer ends the turn the edited
message starts the next one and joins the conversation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from tests.e2e.test_chat import MEMBER, TURN_MS, anthropic, chat_team, open_chat, say
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.web_client import DESKTOP, Crewhost, HubApi, Screens, sign_in_context

pytestmark = pytest.mark.e2e

__all__ = ["anthropic"]  # the fixture, shared with the chat tests


async def test_a_message_sent_during_a_turn_is_queued_edited_and_taken(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
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
        .tool_use("toolu_size", "ask_user", {"question": "Which size?"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Size M it is.").stop().reply(),
        MessageEvents().text("Navy, then.").stop().reply(),
    )

    await say(page, "Order a shirt")
    question = page.locator('.attention-card[data-kind="question"]')
    await expect(question).to_contain_text("Which size?", timeout=TURN_MS)
    # The composer stays usable while the agent waits: the message is queued.
    await say(page, "And make it blue")
    queue = page.get_by_role("list", name="Queued messages")
    await expect(queue).to_contain_text("And make it blue")
    await expect(queue).to_contain_text("queued: sent when the agent finishes")
    conversation = page.locator(".conversation-items")
    await expect(conversation).not_to_contain_text("And make it blue")
    await screens.save(page, "chat-queued")

    await queue.get_by_role("button", name="Edit").click()
    await queue.get_by_role("textbox", name="Queued message").fill("And make it navy")
    await queue.get_by_role("button", name="Save").click()
    await expect(queue).to_contain_text("And make it navy")

    await question.get_by_role("textbox", name="Your answer").fill("M")
    await question.get_by_role("button", name="Answer").click()
    await expect(conversation).to_contain_text("Navy, then.", timeout=TURN_MS)
    await expect(conversation).to_contain_text("And make it navy")
    await expect(queue).to_have_count(0)
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    last = anthropic.requests[-1].messages()[-1]["content"]
    assert last == [{"type": "text", "text": "And make it navy"}]
    await context.close()

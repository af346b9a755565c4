"""The MCP servers screen and the Access tokens page of the web client, against
``crewhost serve``, real Chromium, an MCP server the host runs over stdio and the local
model provider.

An admin adds the stdio server in the web client (its environment values never shown
again), tests it, reads its tools' hints and gives it to an agent; a member chats, the
agent calls ``mcp__notes__add_note``, the approval card names the server and the tool,
the member approves and the answer carries the tool's result. A member makes an access
token, sees its secret once with the client snippets, an outside MCP client uses it (the
audit list shows the call), and the member revokes it: the endpoint refuses it after.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_admin_screens import shows_nowhere
from tests.e2e.test_chat import MEMBER, TURN_MS, fake_provider_and_agent, open_chat, say
from tests.e2e.test_web_client import open_host_screen
from tests.hub.test_mcp_endpoint import mcp_session
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.web_client import (
    DESKTOP,
    ROOT,
    Crewhost,
    HubApi,
    Screens,
    owner_peer,
    sign_in_context,
    until,
)

pytestmark = pytest.mark.e2e

ADMIN = "mcp-admin@example.com"
LABEL = "notes-label-typed-in-the-web-client"
TOKEN_MEMBER = "token-member@example.com"


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


def tool_result_text(request: RecordedRequest) -> str:
    """The text of the last tool result a request carries."""
    blocks = request.messages()[-1]["content"]
    [result] = [b for b in blocks if b["type"] == "tool_result"][-1:]
    content = result["content"]
    if isinstance(content, str):
        return content
    return " ".join(str(block.get("text", "")) for block in content)


def answer_with_result(request: RecordedRequest) -> bytes:
    """The model's last words quote what the tool answered."""
    kept = re.search(r"kept note \d+: [a-z ]+", tool_result_text(request))
    said = kept.group(0) if kept else "no result"
    return MessageEvents().text(f"The server said: {said}.").stop().body()


async def add_notes_server(page: Page) -> None:
    """The admin adds the notes server as a command the host runs."""
    panel = page.locator('section[aria-label="MCP servers"]')
    await panel.get_by_role("button", name="Add an MCP server").click()
    form = panel.get_by_role("form", name="Add an MCP server")
    await form.get_by_label("Name", exact=True).fill("notes")
    await form.get_by_label("Command", exact=True).fill(sys.executable)
    arguments = "\n".join(["-m", "tests.support.fakes.mcp_servers", "notes"])
    await form.get_by_label("Arguments", exact=True).fill(arguments)
    await form.get_by_role("button", name="Add a variable").click()
    await form.get_by_label("Name of environment variable 1").fill("PYTHONPATH")
    await form.get_by_label("Value of environment variable 1").fill(str(ROOT))
    await form.get_by_role("button", name="Add a variable").click()
    await form.get_by_label("Name of environment variable 2").fill("NOTES_LABEL")
    await form.get_by_label("Value of environment variable 2").fill(LABEL)
    await form.get_by_role("button", name="Add server").click()
    await expect(form).to_have_count(0)


async def test_an_admin_adds_an_mcp_server_and_a_member_approves_its_tool(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Tools")
    await team.add_member(ADMIN, "Ada", role="admin")
    await team.add_member(MEMBER, "Maya")
    agent = await fake_provider_and_agent(team, anthropic, tmp_path)

    admin = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(admin, crewhost, ADMIN)
    page = await admin.new_page()
    await open_host_screen(page, crewhost, team, section="MCP servers")
    await add_notes_server(page)
    row = page.locator('[data-mcp-server="notes"]')
    await expect(row).to_contain_text("Environment: NOTES_LABEL set, PYTHONPATH set")
    await shows_nowhere(page, LABEL)

    # Test connection: the outcome in words, the tools with what the server says of them.
    await row.get_by_role("button", name="Test connection").click()
    outcome = row.locator("[data-test-outcome]")
    await expect(outcome).to_have_text(
        re.compile(r"^Connected: \d+ tools offered\.$"), timeout=TURN_MS
    )
    await expect(row.locator('[data-tool="list_notes"] .mcp-hint')).to_have_text("Read-only")
    await expect(row.locator('[data-tool="add_note"]')).to_contain_text("Keep a note.")
    # The host's status event keeps the mark live.
    await expect(row.locator("[data-status]")).to_have_attribute("data-status", "connected")

    # Scout gets the server; its calls still ask first.
    await row.get_by_role("button", name="Agents").click()
    await row.get_by_label("Scout has this server").check()
    await expect(row.get_by_label("Scout runs add_note without asking")).not_to_be_checked()
    await expect(row).to_contain_text("1 agent")
    await screens.save(page, "admin-mcp-servers")
    async with owner_peer(team, tmp_path) as owner:
        [server] = (await owner.call("mcp-servers-v1/list"))["servers"]
    assert server["agents"] == [{"agentId": agent["id"], "unaskedTools": []}]
    await shows_nowhere(page, LABEL)
    await admin.close()

    member = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(member, crewhost, MEMBER)
    chat = await member.new_page()
    await open_chat(chat, crewhost, team)
    anthropic.script(
        MessageEvents()
        .text("Noting it.")
        .tool_use("toolu_note", "mcp__notes__add_note", {"text": "buy milk"})
        .stop("tool_use")
        .reply(),
        StreamReply(answer_with_result),
    )
    await say(chat, "Note that we need milk")
    consent = chat.locator('.attention-card[data-kind="consent"]')
    await expect(consent).to_contain_text("add_note on the MCP server notes", timeout=TURN_MS)
    await expect(consent).to_contain_text("buy milk")
    await screens.save(chat, "chat-mcp-approval")
    await consent.get_by_role("button", name="Approve").click()
    status = chat.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    await expect(chat.locator(".conversation-items")).to_contain_text(
        "The server said: kept note 1: buy milk."
    )

    # A member sees the section, with the reason and no control.
    await chat.get_by_role("tab", name="MCP servers").click()
    panel = chat.locator('section[aria-label="MCP servers"]')
    await expect(panel).to_contain_text("Only admins and owners manage the team")
    await expect(panel.locator("button, input, select")).to_have_count(0)
    await member.close()


async def test_a_member_makes_a_token_sees_it_once_uses_and_revokes_it(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    screens: Screens,
) -> None:
    team = await hub_api.new_team("Crew Tokens")
    await team.add_member(TOKEN_MEMBER, "Tom")
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, TOKEN_MEMBER)
    page = await context.new_page()
    await page.goto(crewhost.at(f"/app/teams/{team.id}/members"))
    await page.get_by_role("link", name="Access tokens").first.click()
    await expect(page).to_have_url(crewhost.at(f"/app/teams/{team.id}/tokens"))

    form = page.get_by_role("form", name="Create a token")
    await form.get_by_label("Name").fill("Laptop agent")
    await form.get_by_label("Scope").select_option("browser+agents")
    await form.get_by_label("Expires after").select_option("7")
    await form.get_by_role("button", name="Create token").click()

    # The secret, once, with the snippets filled with this hub's endpoint and the secret.
    secret_field = page.get_by_label("Secret", exact=True)
    await expect(secret_field).to_have_value(re.compile(r"^crh_pat_[A-Za-z0-9]{43}$"))
    secret = await secret_field.input_value()
    endpoint = crewhost.at("/v1/mcp")
    await expect(page.get_by_label("Claude Code configuration")).to_have_text(
        f"claude mcp add --transport http crewhost {endpoint} "
        f'--header "Authorization: Bearer {secret}"'
    )
    await page.get_by_role("tab", name="VS Code").click()
    vscode = page.get_by_label("VS Code configuration")
    await expect(vscode).to_contain_text('"type": "http"')
    await expect(vscode).to_contain_text(f'"url": "{endpoint}"')
    await page.get_by_role("tab", name="Cursor").click()
    await expect(page.get_by_label("Cursor configuration")).to_contain_text('"mcpServers"')
    await screens.save(page, "access-token-created")
    await page.get_by_role("button", name="Done").click()
    await shows_nowhere(page, secret)

    row = page.locator('[data-token="Laptop agent"]')
    await expect(row).to_have_attribute("data-state", "live")
    await expect(row).to_contain_text("Browser tools and agents")
    await expect(row).to_contain_text("last used never")

    # An outside agent uses it; the audit list shows the call.
    async with mcp_session(endpoint, secret) as session:
        listed = await session.call_tool("list_tabs", {})
        assert not listed.is_error, listed
    member_api = await hub_api.sign_in(TOKEN_MEMBER)

    async def audited() -> bool:
        reply = await member_api.get(f"/v1/teams/{team.id}/access-token-uses")
        return bool(reply.body["uses"])

    await until(audited)
    await page.get_by_role("button", name="Reload").click()
    use = page.locator(".use-row").first
    await expect(use).to_contain_text("list_tabs")
    await expect(use).to_contain_text("Done")
    await expect(use).to_contain_text("Laptop agent")
    await screens.save(page, "access-tokens")

    await row.get_by_role("button", name="Revoke").click()
    await row.get_by_role("group").get_by_role("button", name="Revoke").click()
    await expect(row).to_have_attribute("data-state", "revoked")
    await expect(row.get_by_role("button", name="Revoke")).to_have_count(0)
    outside = dataclasses.replace(hub_api.client(), bearer=secret)
    refused = await outside.request(
        "POST",
        "/v1/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert refused.status == 401
    assert refused.body["error"]["code"] == "accessTokenRevoked"
    await context.close()

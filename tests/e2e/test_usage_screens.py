"""The Usage section and the Budgets editor of the web client, against ``crewhost serve``
and a local model provider.

A member chats with an agent, then opens Usage and sees the agent's row and its cost
(their own use, no Budgets); an admin sees the team's use, adds a budget for the agent in
the Budgets editor, and a turn the spent budget refuses shows the sentence that names it,
with "Open Budgets" (for the admin only) leading to the editor. Every screen is checked at
1280x800 and 390x844, where nothing scrolls sideways.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_chat import (
    TURN_MS,
    anthropic,
    fake_provider_and_agent,
    new_chat,
    open_chat,
    say,
)
from tests.e2e.test_web_client import open_host_screen
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.web_client import (
    DESKTOP,
    PHONE,
    Crewhost,
    HubApi,
    Screens,
    sign_in_context,
)

pytestmark = pytest.mark.e2e

ADMIN = "usage-admin@example.com"
MEMBER = "usage-member@example.com"
BUDGET = "Scout monthly"

__all__ = ["anthropic"]  # the fixture, shared with the chat tests


async def page_width(page: Page) -> int:
    return int(await page.evaluate("document.documentElement.scrollWidth"))


async def test_usage_shows_the_agents_cost_and_a_spent_budget_stops_the_chat(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Usage")
    await team.add_member(ADMIN, "Ada", role="admin")
    await team.add_member(MEMBER, "Maya")
    await fake_provider_and_agent(team, anthropic, tmp_path)

    # The member's turn: one model request, priced from the model's listed price.
    member_context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(member_context, crewhost, MEMBER)
    member = await member_context.new_page()
    await open_chat(member, crewhost, team)
    anthropic.script(MessageEvents().text("Hello there.").stop().reply())
    await say(member, "Say hello")
    status = member.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)

    # Usage: the member's own use, the agent's row with its cost; no Budgets for a member.
    await member.get_by_role("tab", name="Usage", exact=True).click()
    usage = member.locator('section[aria-label="Usage"]')
    await expect(usage).to_contain_text("your own")
    row = usage.locator(".usage-table tbody tr").filter(has_text="Scout")
    await expect(row).to_have_count(1)
    await expect(row.locator("td").last).to_have_text(re.compile(r"^0\.\d{4} USD$"))
    await expect(usage.locator(".usage-bar rect")).to_have_count(1)
    await expect(usage.get_by_role("tablist", name="Usage views")).to_have_count(0)
    # Tokens instead of cost, by member: the member's own name.
    await usage.get_by_role("radio", name="Tokens").click()
    await usage.get_by_role("radio", name="Member").click()
    await expect(usage.locator(".usage-table tbody tr")).to_have_count(1)
    await expect(usage.locator(".usage-table tbody th")).to_have_text("Maya")
    await screens.save(member, "usage-member")

    # On a phone the table stacks, the chart scrolls in its box, the page never sideways.
    await member.set_viewport_size(PHONE)
    await usage.get_by_role("radio", name="Agent").click()
    await expect(row.locator("td").first).to_be_visible()
    assert await page_width(member) <= PHONE["width"]
    chart = usage.locator(".usage-chart-scroll")
    assert await chart.evaluate("(box) => box.getBoundingClientRect().right") <= PHONE["width"]
    await member.set_viewport_size(DESKTOP)

    # The admin sees the team's use and adds a budget for the agent in the editor: a few
    # tokens, already spent by the member's turn.
    admin_context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(admin_context, crewhost, ADMIN)
    admin = await admin_context.new_page()
    await open_host_screen(admin, crewhost, team, section="Usage")
    admin_usage = admin.locator('section[aria-label="Usage"]')
    team_rows = admin_usage.locator(".usage-table tbody tr")
    await expect(team_rows.filter(has_text="Scout")).to_have_count(1)
    await admin_usage.get_by_role("tab", name="Budgets").click()
    form = admin_usage.get_by_role("form", name="Add a budget")
    await form.get_by_role("button", name="Add budget").click()
    await expect(form).to_contain_text("Name the budget.")
    await form.get_by_label("Name").fill(BUDGET)
    await form.get_by_label("For", exact=True).select_option("agent")
    await form.get_by_label("Which agent").select_option(label="Scout")
    await form.get_by_label("Counted in").select_option("tokens")
    await form.get_by_label("Amount").fill("10")
    await form.get_by_role("button", name="Add budget").click()
    budget = admin_usage.locator(".budget-row").filter(has_text=BUDGET)
    await expect(budget).to_contain_text("Agent Scout")
    await expect(budget.locator(".chip")).to_have_text(re.compile(r"^\d{3,} %$"))
    await expect(budget).to_contain_text("of 10 tokens used, this month")
    await screens.save(admin, "usage-budgets")

    # The admin's new turn is refused: the sentence names the budget and who can raise
    # it, and "Open Budgets" leads back to the editor.
    await admin.get_by_role("tab", name="Chat", exact=True).click()
    await (
        admin.get_by_role("navigation", name="Agents and chats")
        .get_by_role("button", name="Scout")
        .click()
    )
    await new_chat(admin)
    asked = len(anthropic.requests)
    await say(admin, "Once more")
    refused = admin.locator(".chat-failed")
    await expect(refused).to_contain_text(f"The budget “{BUDGET}” is spent")
    await expect(refused).to_contain_text("An owner or admin of the team can raise it")
    await screens.save(admin, "chat-budget-spent")
    await refused.get_by_role("button", name="Open Budgets").click()
    await expect(admin.get_by_role("tab", name="Usage", exact=True)).to_have_attribute(
        "aria-selected", "true"
    )
    await expect(admin_usage.get_by_role("tab", name="Budgets")).to_have_attribute(
        "aria-selected", "true"
    )
    await expect(budget).to_be_visible()

    # Raised a little, the budget lets the retried turn start; its first request spends
    # it, so the turn stops before asking again, and says why under the conversation.
    await budget.get_by_role("button", name="Edit").click()
    edit = budget.get_by_role("form", name=f"Edit {BUDGET}")
    await expect(edit.get_by_label("Amount")).to_have_value("10")
    await edit.get_by_label("Amount").fill("30")
    await edit.get_by_role("button", name="Save").click()
    await expect(budget).to_contain_text("of 30 tokens used, this month")
    await admin.get_by_role("tab", name="Chat", exact=True).click()
    anthropic.script(
        MessageEvents(input_tokens=200)
        .tool_use("toolu_tabs", "list_tabs", {})
        .stop("tool_use")
        .reply()
    )
    await refused.get_by_role("button", name="Retry").click()
    admin_status = admin.locator(".conversation-status")
    await expect(admin_status).to_have_attribute("data-turn-status", "budget", timeout=TURN_MS)
    await expect(admin_status).to_contain_text(f"The budget “{BUDGET}” is spent")
    assert len(anthropic.requests) == asked + 1, "the turn stopped after its first request"
    await admin_status.get_by_role("button", name="Open Budgets").click()
    await expect(admin_usage.get_by_role("tab", name="Budgets")).to_have_attribute(
        "aria-selected", "true"
    )
    asked = len(anthropic.requests)

    # The member is refused the same way, and told who can raise it, with no link.
    await member.get_by_role("tab", name="Chat", exact=True).click()
    await say(member, "And again")
    member_refused = member.locator(".chat-failed")
    await expect(member_refused).to_contain_text(f"The budget “{BUDGET}” is spent")
    await expect(member_refused.get_by_role("button", name="Open Budgets")).to_have_count(0)
    assert len(anthropic.requests) == asked, "a refused turn asks the model nothing"
    await admin_context.close()
    await member_context.close()

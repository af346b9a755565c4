"""A routine's run from start to finish in the web client, against ``crewhost serve``.

The owner creates a routine in the agent's row in Agents and runs it now; the run shows as
running in its history; the model (a local fake) opens a fixture page and asks to click
on it, so the bell shows an unread notification for the approval; its item opens the run's
thread at the card, the owner approves there, and the run's history shows it done.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from tests.e2e.test_chat import click_press, fake_provider_and_agent
from tests.e2e.test_web_client import open_host_screen
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply
from tests.support.sites import Site
from tests.support.web_client import DESKTOP, Crewhost, HubApi, Screens, sign_in_context

pytestmark = pytest.mark.e2e

TURN_MS = 30_000
ROUTINE = "Morning press"


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


async def open_routines(page: Page) -> Locator:
    """The Agents section, the agent's row, then its Routines: the routines' list."""
    await page.get_by_role("tab", name="Agents", exact=True).click()
    row = page.locator(".admin-row").filter(has_text="Scout").first
    await row.locator(":scope > details > summary").click()  # the row's own details
    routines = row.locator("details.agent-routines")
    await routines.locator(":scope > summary").click()
    return routines.locator(".routine-list")


async def test_a_routine_runs_waits_for_approval_from_the_bell_and_finishes(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Routines")
    await fake_provider_and_agent(team, anthropic, tmp_path)
    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team, section=None)
    bell = page.locator(".bell-button")
    await expect(bell).to_have_attribute("data-unread", "0")

    # The routine, made in the form: its schedule in words as it is picked.
    routines = await open_routines(page)
    await expect(routines).to_contain_text("No routines yet")
    await routines.get_by_role("button", name="New routine…").click()
    form = routines.get_by_role("form", name="New routine")
    await form.get_by_label("Name", exact=True).fill(ROUTINE)
    await form.get_by_label("Message that starts each run", exact=True).fill("Press the button")
    await form.get_by_role("combobox", name="Repeat").select_option("daily")
    await form.get_by_label("At", exact=True).fill("07:30")
    await form.get_by_label("Time zone", exact=True).fill("UTC")
    await expect(form.locator(".routine-preview .routine-schedule")).to_contain_text("7:30")
    await form.get_by_role("button", name="Create routine").click()
    await expect(form).to_have_count(0)
    row = routines.locator(".routine-row").filter(has_text=ROUTINE)
    await expect(row).to_have_count(1)
    await expect(row.locator(".routine-name .chip")).to_have_text("On")
    await screens.save(page, "routine-created")

    # Run now: the model opens the fixture page, then asks to click on it.
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_open", "open", {"url": site.url("/press")})
        .stop("tool_use")
        .reply(),
        StreamReply(click_press),
        MessageEvents().text("Pressed it.").stop().reply(),
    )
    await row.get_by_role("button", name="Run now").click()
    runs = row.get_by_role("list", name="Runs")
    run = runs.locator(".routine-run")
    await expect(run).to_have_count(1, timeout=TURN_MS)
    await expect(run.locator(".chip")).to_have_attribute("data-status", "running")
    await expect(run).to_contain_text("Run by hand")

    # The click waits for the owner: the bell says so.
    await expect(bell).to_have_attribute("data-unread", "1", timeout=TURN_MS)
    await expect(bell).to_have_accessible_name("Notifications, 1 unread")
    await screens.save(page, "routine-running-bell")
    await bell.click()
    panel = page.get_by_role("dialog", name="Notifications")
    item = panel.locator('.bell-item[data-kind="approval"]')
    await expect(item).to_have_count(1)
    await expect(item).to_contain_text("Waiting for your approval")
    await expect(item).to_contain_text("Press")
    await expect(item).to_have_class(re.compile(r"\bbell-unread\b"))
    await item.click()

    # The item opens the run's thread at the card; approving there lets the run finish.
    await expect(page.get_by_role("tab", name="Chat")).to_have_attribute("aria-selected", "true")
    await expect(bell).to_have_attribute("data-unread", "0")
    conversation = page.locator(".conversation-items")
    await expect(conversation.locator(".chat-user-text")).to_contain_text("Press the button")
    consent = page.locator('.attention-card[data-kind="consent"]')
    await expect(consent).to_contain_text("click")
    await expect(consent).to_be_in_viewport()
    await screens.save(page, "routine-approval-card")
    await consent.get_by_role("button", name="Approve").click()
    await expect(consent).to_have_count(0)
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    await expect(conversation.locator(".chat-agent-text").last).to_have_text("Pressed it.")

    # The run's history shows it done; the bell tells of the finished run.
    routines = await open_routines(page)
    row = routines.locator(".routine-row").filter(has_text=ROUTINE)
    await row.get_by_role("button", name="Runs").click()
    run = row.get_by_role("list", name="Runs").locator(".routine-run")
    await expect(run).to_have_count(1)
    await expect(run.locator(".chip")).to_have_attribute("data-status", "done", timeout=TURN_MS)
    await expect(run.locator(".chip")).to_have_text("Done")
    await screens.save(page, "routine-run-done")
    await expect(bell).to_have_attribute("data-unread", "1", timeout=TURN_MS)
    await bell.click()
    finished = panel.locator('.bell-item[data-kind="runFinished"]')
    await expect(finished).to_contain_text(f"“{ROUTINE}” finished")
    assert len(anthropic.requests) == 3
    await context.close()

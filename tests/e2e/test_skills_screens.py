"""The Skills screen of the web client, against ``crewhost serve`` and a local model provider.

The issue's walk: an owner teaches an agent a task in the live view of its tab (Teach,
a press, Done); the agent, scripted on the fake provider, proposes a draft skill of the
steps (``propose_skill``); the owner reviews it in Skills, edits it and saves it, sees
the versions and what changed, downloads its ``.zip`` and uploads it again with a file
added, gives it to the agent in Agents, and a new chat uses it: the system prompt lists
the enabled skills' names and descriptions only, and after ``load_skill`` only the chosen
skill's body reached the model.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_chat import new_chat, open_chat, say
from tests.e2e.test_web_client import (
    CLIENT_POINT,
    FRAME_MS,
    LIVE_CANVAS,
    ON_BUTTON,
    follows_panel,
    shows_press,
)
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.sites import Site
from tests.support.web_client import (
    DESKTOP,
    Crewhost,
    HubApi,
    Screens,
    owner_peer,
    sign_in_context,
)

pytestmark = pytest.mark.e2e

TURN_MS = 30_000
SKILL = "file-expenses"
DESCRIPTION = "File an expense report on the team's expenses site."
PROPOSED_BODY = "# File an expense\n\n1. Open the expenses site.\n2. Fill in the amount."
ADDED_LINE = "3. Attach the receipt before you submit."
RECEIPTS = "Receipts over 50 EUR need the manager's initials."
OTHER_BODY = "Book the cheapest refundable fare."
OTHER_MD = "---\nname: book-travel\ndescription: Book business travel.\n---\n\n" + OTHER_BODY + "\n"


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def open_skills(page: Page) -> None:
    await page.get_by_role("tab", name="Skills", exact=True).click()
    await expect(page.get_by_role("region", name="Skills")).to_be_visible()


async def test_a_draft_skill_is_reviewed_saved_enabled_and_used_in_a_new_chat(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    anthropic: FakeAnthropic,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Skills")
    async with owner_peer(team, tmp_path) as owner:
        await owner.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        await owner.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        agent = await owner.call(
            "agents-v1/create",
            {"name": "Scout", "permissions": {"browser-navigation": "auto-approve"}},
        )
        # A second skill the agent has but never loads: its body must never reach the model.
        await owner.call("skills-v1/create", {"files": {"SKILL.md": OTHER_MD}})
        await owner.call(
            "skills-v1/enable", {"name": "book-travel", "agentId": agent["id"], "enabled": True}
        )

    context = await browser.new_context(viewport=DESKTOP, accept_downloads=True)
    await sign_in_context(context, crewhost, team.owner_email)
    page = await context.new_page()
    await open_chat(page, crewhost, team)

    # The agent opens the page it will be taught on; the owner watches its tab live.
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_open", "open", {"url": site.url("/press")})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("The page is open.").stop().reply(),
    )
    await say(page, "Open the expenses site")
    status = page.locator(".conversation-status")
    await expect(status).to_have_attribute("data-turn-status", "done", timeout=TURN_MS)
    await page.get_by_role("button", name="Watch the agent's tab live").click()
    await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)

    # Teach: the tab is handed to the owner, who does the task while it is recorded.
    await page.get_by_role("button", name="Teach", exact=True).click()
    await expect(page.get_by_role("group", name="Recording a task")).to_be_visible()
    await expect(page.get_by_role("button", name="Release")).to_be_visible()
    # The recording's controls change the panel's shape: click once the frames follow it.
    await follows_panel(page)
    point = await page.evaluate(CLIENT_POINT, [LIVE_CANVAS, *ON_BUTTON])
    await page.mouse.click(point["x"], point["y"])
    await shows_press(page, site)

    # Done: the steps go to the agent, which proposes a draft skill of them.
    asked = len(anthropic.requests)
    anthropic.script(
        MessageEvents()
        .tool_use(
            "toolu_propose",
            "propose_skill",
            {"name": SKILL, "description": DESCRIPTION, "body": PROPOSED_BODY},
        )
        .stop("tool_use")
        .reply(),
        MessageEvents().text("I wrote a draft skill for you to review.").stop().reply(),
    )
    await page.get_by_role("button", name="Done, teach it").click()
    outcome = page.locator(".teach-outcome")
    await expect(outcome).to_contain_text("Scout got the 2 steps")
    await screens.save(page, "skills-teach-sent")
    await outcome.get_by_role("button", name="Open Skills").click()
    await expect(page.get_by_role("tab", name="Skills", exact=True)).to_have_attribute(
        "aria-selected", "true"
    )

    # The draft waits in Skills, marked as a draft and naming the agent that proposed it.
    row = page.locator(f'[data-skill="{SKILL}"]')
    await expect(row.locator(".badge")).to_have_text("Draft", timeout=TURN_MS)
    taught = json.dumps(anthropic.requests[asked].messages()[-1])
    assert "teaching/steps-" in taught
    assert "propose_skill" in taught
    await expect(row).to_contain_text("proposed by Scout")
    await row.locator("summary").first.click()
    editor = row.get_by_role("textbox", name="SKILL.md")
    await expect(row.get_by_label("Preview")).to_contain_text("Fill in the amount.")
    # The person edits it (the preview follows) and saves it for the team.
    text = await editor.input_value()
    assert PROPOSED_BODY in text
    await editor.fill(text.rstrip("\n") + "\n" + ADDED_LINE + "\n")
    await expect(row.get_by_label("Preview")).to_contain_text("Attach the receipt")
    await screens.save(page, "skills-draft-review")
    await row.get_by_role("button", name="Save", exact=True).click()
    await expect(row.locator(".badge")).to_have_count(0, timeout=TURN_MS)
    await expect(row).to_contain_text("No agent has it")

    # Every save is a version; what changed shows as a diff.
    versions = row.locator(".skill-versions")
    await versions.locator("summary").click()
    await expect(versions.locator("[data-version]")).to_have_count(2)
    await expect(versions.locator('[data-version="1"]')).to_contain_text("Proposed by an agent")
    await versions.locator('[data-version="2"]').get_by_role("button", name="What changed").click()
    await expect(versions.locator(".diff-add")).to_contain_text([ADDED_LINE])

    # Its .zip holds the folder in the open format, the edit included.
    async with page.expect_download() as waiting:
        await row.get_by_role("button", name="Download .zip").click()
    download = await waiting.value
    assert download.suggested_filename == f"{SKILL}.zip"
    saved_zip = tmp_path / download.suggested_filename
    await download.save_as(saved_zip)
    with zipfile.ZipFile(saved_zip) as archive:
        skill_md = archive.read(f"{SKILL}/SKILL.md")
    assert ADDED_LINE in skill_md.decode()

    # The same folder with a reference file added, uploaded over it: a new version.
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        archive.writestr(f"{SKILL}/SKILL.md", skill_md)
        archive.writestr(f"{SKILL}/reference/receipts.md", RECEIPTS)
    skills = page.get_by_role("region", name="Skills")
    await skills.get_by_label("Replace a skill of the same name").check()
    await skills.get_by_label("Skill .zip to upload").set_input_files(upload)
    await expect(skills).to_contain_text(f"{SKILL} is saved (version 3).")
    await row.get_by_role("button", name="reference/receipts.md").click()
    await expect(row.locator(".skill-file-view pre")).to_have_text(RECEIPTS)
    await expect(versions.locator('[data-version="3"]')).to_contain_text("Uploaded")

    # In Agents, the owner gives the saved skill to Scout; the skill says so.
    await page.get_by_role("tab", name="Agents", exact=True).click()
    agent_row = page.locator(f'[data-agent="{agent["id"]}"]')
    await agent_row.locator("summary").first.click()
    switches = agent_row.get_by_role("group", name="Skills")
    await expect(switches.get_by_role("switch", name="book-travel")).to_be_checked()
    await switches.get_by_role("switch", name=SKILL).check()
    await expect(switches.get_by_role("switch", name=SKILL)).to_be_checked()
    await open_skills(page)
    await expect(row).to_contain_text("Enabled for 1 agent (Scout)")

    # A new chat: the agent sees both skills' names and descriptions, loads one, and only
    # that one's body reaches the model.
    asked = len(anthropic.requests)
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_load", "load_skill", {"name": SKILL})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Filed, receipt attached.").stop().reply(),
    )
    await page.get_by_role("tab", name="Chat", exact=True).click()
    await new_chat(page)
    await say(page, "File my lunch: 12 EUR")
    await expect(page.locator(".chat-agent-text").last).to_have_text(
        "Filed, receipt attached.", timeout=TURN_MS
    )
    first, after_load = (r.body for r in anthropic.requests[asked : asked + 2])
    system = system_text(first)
    assert f"- {SKILL}: {DESCRIPTION}" in system
    assert "- book-travel: Book business travel." in system
    for body in (ADDED_LINE, "Fill in the amount", OTHER_BODY):
        assert body not in json.dumps(first)
    loaded = json.dumps(after_load["messages"][-1])
    assert "Attach the receipt before you submit." in loaded
    assert OTHER_BODY not in json.dumps(after_load)
    await context.close()

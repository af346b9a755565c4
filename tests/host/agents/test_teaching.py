"""Teach a task over a real peer: a member watching an agent's tab in real Chromium starts a
recording (the tab is handed to them), presses through a fixture form, and saves it, which
asks the agent for a skill with the numbered steps attached; only they may save or discard
it; letting go of the tab ends it; it expires; a recording of only its first page sends
nothing; and tabs that record no steps refuse to start one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from peer.connection import TeamApiCallError
from peer.live_view import LiveView, open_view
from server.common.protocol.view import Frame
from server.host.agents.providers.transcript import UserMessage
from server.host.agents.teaching import MAX_TEACH_STEPS, TEACH_SECONDS, ask_for_skill
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.live.steps import Step, read_press
from server.host.workspace.workspaces import WorkspaceRef
from tests.host.routes.test_sub_agents import calls, result_of, says
from tests.host.routes.test_threads import until
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic
from tests.support.held_tabs import (
    TYPED,
    Holding,
    holding_tabs,
    press,
    press_every_field_then_done,
)
from tests.support.hub_server import RunningHub


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Teaching is about the browser and the live view, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


@pytest.fixture
async def holding(server: RunningHub, tmp_path: Path) -> AsyncIterator[Holding]:
    async with holding_tabs(server, tmp_path) as held:
        yield held


async def agent_tab(holding: Holding, path: str = "/form") -> tuple[str, Tab]:
    made = await holding.owner.call("agents-v1/create", {"name": "Pupil"})
    agent_id = str(made["id"])
    url = holding.site.url(path) if path.startswith("/") else path
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=url, owner_agent_id=agent_id
    )
    return agent_id, tab


async def start(holding: Holding, tab: Tab) -> tuple[tuple[LiveView, Frame], str]:
    view = await open_view(holding.member, tab.id)
    frame = await view.next_frame()
    recording = await holding.member.call("browser-teach-v1/start", {"tabId": tab.id})
    held = await view.expect("held")
    assert held["byYou"] is True
    assert tab.held_by is not None
    return (view, frame), str(recording["id"])


async def refused(connection_call: object, code: str) -> None:
    with pytest.raises(TeamApiCallError) as failed:
        await connection_call  # type: ignore[misc]
    assert failed.value.code == code


async def test_saving_asks_the_agent_for_a_skill_with_the_numbered_steps(
    holding: Holding,
) -> None:
    agent_id, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view = held[0]
    await press_every_field_then_done(holding, tab.id, held)
    saved = await holding.member.call("browser-teach-v1/save", {"recordingId": recording_id})
    assert saved["sent"] is True
    thread_id = saved["threadId"]
    [message, *_] = await holding.services.threads.transcript(holding.team_id, thread_id)
    assert isinstance(message, UserMessage)
    # The message names the file where it is, in the agent's workspace: no copy attached.
    assert saved["path"] == f"teaching/steps-{recording_id}.txt"
    assert message.text == ask_for_skill(saved["path"])
    assert f"`{saved['path']}`" in message.text
    assert message.attachments == ()
    data = await holding.services.workspace.read(
        WorkspaceRef(holding.team_id, agent_id), saved["path"]
    )
    assert data.decode().splitlines() == [
        '1. opened 127.0.0.1/form "Sign in"',
        '2. pressed textbox "Email"',
        '3. pressed button "Save"',
        '4. pressed button "Done"',
    ]
    assert saved["steps"] == 4
    assert TYPED not in data.decode()
    # The tab is the agent's again, to try what it was shown.
    assert tab.held_by is None
    assert (await view.expect("held"))["byYou"] is False
    await refused(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id}),
        "teachRecordingNotFound",
    )
    view.close()


async def test_a_press_still_being_read_when_saved_is_in_the_steps(
    holding: Holding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person presses a button and says "done" at once: the press's control is still being
    read beside the input, and the saved steps wait for it rather than leave it out."""
    agent_id, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view, frame = held
    recorder = holding.services.live.steps
    reading, let_read = asyncio.Event(), asyncio.Event()

    async def slow_read(page: Page, x: float, y: float) -> Any:
        reading.set()
        await let_read.wait()
        return await read_press(page, x, y)

    monkeypatch.setattr(recorder, "_read_press", slow_read)
    await press(view, frame, holding, tab.id, "#save")
    await reading.wait()
    saving = asyncio.create_task(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id})
    )
    let_read.set()
    saved = await saving
    assert saved["steps"] == 2
    data = await holding.services.workspace.read(
        WorkspaceRef(holding.team_id, agent_id), saved["path"]
    )
    assert data.decode().splitlines()[-1] == '2. pressed button "Save"'
    view.close()


async def test_only_the_member_who_started_saves_or_discards(holding: Holding) -> None:
    agent_id, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view = held[0]
    for route in ("save", "discard"):
        await refused(
            holding.owner.call(f"browser-teach-v1/{route}", {"recordingId": recording_id}),
            "teachNotYours",
        )
    assert await holding.member.call("browser-teach-v1/discard", {"recordingId": recording_id}) == {
        "discarded": True
    }
    assert tab.held_by is None
    await refused(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id}),
        "teachRecordingNotFound",
    )
    assert await holding.owner.call("threads-v1/list", {"agentId": agent_id}) == {"threads": []}
    view.close()


async def test_letting_go_of_the_tab_ends_the_recording_with_no_steps(holding: Holding) -> None:
    _, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view = held[0]
    await press_every_field_then_done(holding, tab.id, held)
    await view.release()
    await refused(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id}),
        "teachRecordingNotFound",
    )
    view.close()


async def test_a_recording_expires(holding: Holding, clock: FakeClock) -> None:
    _, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view = held[0]
    await press_every_field_then_done(holding, tab.id, held)
    clock.advance(TEACH_SECONDS + 1)
    await refused(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id}),
        "teachRecordingExpired",
    )
    # An expired recording no longer holds the tab's place.
    again = await holding.member.call("browser-teach-v1/start", {"tabId": tab.id})
    assert again["id"] != recording_id
    view.close()


async def test_only_the_first_page_sends_nothing_and_steps_stop_at_the_limit(
    holding: Holding,
) -> None:
    agent_id, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    view = held[0]
    saved = await holding.member.call("browser-teach-v1/save", {"recordingId": recording_id})
    assert saved == {"sent": False, "threadId": None, "steps": 0, "path": None}
    assert await holding.owner.call("threads-v1/list", {"agentId": agent_id}) == {"threads": []}
    again = await holding.member.call("browser-teach-v1/start", {"tabId": tab.id})
    await refused(
        holding.member.call("browser-teach-v1/start", {"tabId": tab.id}), "teachRecordingRunning"
    )
    [account] = {tab.held_by}
    assert account is not None
    for n in range(MAX_TEACH_STEPS + 20):
        step = Step(holding.team_id, tab.id, agent_id, account, f'pressed button "{n}"', "press")
        await holding.services.teaching.step(step)
    saved = await holding.member.call("browser-teach-v1/save", {"recordingId": again["id"]})
    assert saved["steps"] == MAX_TEACH_STEPS
    view.close()


async def test_tabs_that_record_no_steps_refuse_a_recording(holding: Holding) -> None:
    plain = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form")
    )
    await refused(
        holding.member.call("browser-teach-v1/start", {"tabId": plain.id}), "teachNeedsAgentTab"
    )
    _, blank = await agent_tab(holding, "about:blank")
    await refused(
        holding.member.call("browser-teach-v1/start", {"tabId": blank.id}),
        "teachTabNotRecordable",
    )
    _, unwatched = await agent_tab(holding)
    await refused(
        holding.member.call("browser-teach-v1/start", {"tabId": unwatched.id}), "teachNotWatching"
    )


async def test_the_teaching_file_keeps_no_secret(holding: Holding) -> None:
    agent_id, tab = await agent_tab(holding)
    held, recording_id = await start(holding, tab)
    [account] = {tab.held_by}
    assert account is not None
    magic = "https://app.example.com/auth/magic/hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe"
    for line in (f'opened {magic[8:]} "password Plainsecret9"', f"pressed link {magic}"):
        step = Step(holding.team_id, tab.id, agent_id, account, line, "press")
        await holding.services.teaching.step(step)
    saved = await holding.member.call("browser-teach-v1/save", {"recordingId": recording_id})
    [message, *_] = await holding.services.threads.transcript(holding.team_id, saved["threadId"])
    assert isinstance(message, UserMessage)
    text = (
        await holding.services.workspace.read(
            WorkspaceRef(holding.team_id, agent_id), saved["path"]
        )
    ).decode()
    assert "Plainsecret9" not in text
    assert "hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe" not in text.split("\n", 2)[2]
    assert "password [redacted]" in text
    held[0].close()


async def test_a_taught_task_becomes_a_draft_skill_that_a_new_thread_uses(
    holding: Holding,
) -> None:
    """Teach a task → the agent proposes a draft → a person edits and saves it → a new
    thread lists it and loads it."""
    async with FakeAnthropic() as fake:
        await holding.owner.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await holding.owner.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        agent_id, tab = await agent_tab(holding)
        held, recording_id = await start(holding, tab)
        await press_every_field_then_done(holding, tab.id, held)
        path = f"teaching/steps-{recording_id}.txt"
        proposal = {
            "name": "sign-in-form",
            "description": "Fill the sign-in form and finish it. Use when asked to sign in.",
            "body": "1. Open the sign-in form.\n2. Press Save, then Done.",
        }
        fake.script(
            calls(("toolu_r", "workspace_read", {"path": path})),
            calls(("toolu_p", "propose_skill", proposal)),
            says("I proposed the skill sign-in-form for your review."),
        )
        saved = await holding.member.call("browser-teach-v1/save", {"recordingId": recording_id})
        await until(holding.member, saved["threadId"], "turn-finished")
        held[0].close()
        assert "propose_skill" in json.dumps(fake.requests[0].messages())
        assert 'pressed button "Done"' in str(result_of(fake, 1, "toolu_r"))
        assert result_of(fake, 2, "toolu_p")["state"] == "draft"

        [draft] = (await holding.owner.call("skills-v1/list", {}))["skills"]
        assert (draft["name"], draft["state"], draft["proposedByAgent"]) == (
            "sign-in-form",
            "draft",
            agent_id,
        )
        assert draft["proposedInThread"] == saved["threadId"]
        await holding.owner.call(
            "skills-v1/enable", {"name": "sign-in-form", "agentId": agent_id, "enabled": True}
        )
        got = await holding.owner.call("skills-v1/get", {"name": "sign-in-form"})
        edited = got["skillMd"] + "3. Check the page says Saved.\n"
        await holding.owner.call(
            "skills-v1/update", {"name": "sign-in-form", "files": {"SKILL.md": edited}}
        )
        # Still a draft: a thread started now would not list it.
        assert await holding.owner.call("skills-v1/agent_skills", {"agentId": agent_id}) == {
            "agentId": agent_id,
            "skills": [],
        }
        await holding.owner.call("skills-v1/save_draft", {"name": "sign-in-form"})

        thread = await holding.owner.call(
            "threads-v1/start", {"agentId": agent_id, "title": "Sign in", "shared": False}
        )
        fake.script(
            calls(("toolu_l", "load_skill", {"name": "sign-in-form"})),
            says("Signed in, as the skill says."),
        )
        await holding.owner.call("threads-v1/send", {"threadId": thread["id"], "text": "Sign in"})
        await until(holding.owner, thread["id"], "turn-finished")
        listing = fake.requests[3].body
        assert f"- sign-in-form: {proposal['description']}" in json.dumps(listing["system"])
        assert "Press Save" not in json.dumps(listing)
        loaded = result_of(fake, 4, "toolu_l")
        assert loaded["instructions"] == (
            "1. Open the sign-in form.\n2. Press Save, then Done.\n3. Check the page says Saved.\n"
        )

"""Teach a task over a real peer: a member watching an agent's tab in real Chromium starts a
recording (the tab is handed to them), presses through a fixture form, and saves it, which
asks the agent for a skill with the numbered steps attached; only they may save or discard
it; letting go of the tab ends it; it expires; a recording of only its first page sends
nothing; and tabs that record no steps refuse to start one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.connection import TeamApiCallError
from peer.live_view import LiveView, open_view
from server.common.protocol.view import Frame
from server.host.agents.providers.transcript import UserMessage
from server.host.agents.teaching import MAX_TEACH_STEPS, TEACH_SECONDS, ask_for_skill
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.live.steps import Step
from server.host.workspace.workspaces import WorkspaceRef
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.held_tabs import TYPED, Holding, holding_tabs, press_every_field_then_done
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
    assert saved["steps"] == 4
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
    assert TYPED not in data.decode()
    await refused(
        holding.member.call("browser-teach-v1/save", {"recordingId": recording_id}),
        "teachRecordingNotFound",
    )
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

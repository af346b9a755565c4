"""The host's browser starts at a turn's first tab or page tool, not at the turn's start:
on a host whose Chromium is missing, an agent's turns that never touch a page run as on
any host, and a page tool there fails alone, saying the browser is missing. The tabs a
host kept across a restart are listed, asleep, without its browser too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.connection import TeamApiCallError
from server.host.browser.partitions import Partition
from server.host.browser.state import SavedTab, read_state, write_state
from tests.host.routes.conftest import Team
from tests.host.routes.test_sub_agents import calls, result_of, says, setup
from tests.host.routes.test_threads import until
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import FakeAnthropic
from tests.support.hub_server import RunningHub, hub_settings, running_hub


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """The suite's hub and built-in host, with no Chromium where the host looks for one."""
    settings = hub_settings(tmp_path, database, **{"host.chromium": str(tmp_path / "none")})
    async with running_hub(settings, database, clock=clock) as running:
        yield running


async def test_turns_without_a_page_run_and_a_page_tool_says_the_browser_is_missing(
    team: Team, server: RunningHub
) -> None:
    browser = server.builtin.services.browser
    async with FakeAnthropic() as fake:
        _, thread_id = await setup(team, fake)
        fake.script(
            calls(("toolu_w", "workspace_write", {"path": "plan.md", "content": "1. tea"})),
            says("The plan is written."),
            calls(("toolu_l", "list_tabs", {})),
            says("I have no browser on this host."),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Plan it"})
        first = await until(team.admin, thread_id, "turn-finished")
        assert first["status"] == "done"
        assert result_of(fake, 1, "toolu_w")["path"] == "plan.md"
        assert not browser.engine_as_is.running

        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Your tabs?"})
        second = await until(team.admin, thread_id, "turn-finished")
        assert second["status"] == "done"
        assert result_of(fake, 3, "toolu_l")["error"]["code"] == "browserMissing"
        assert not browser.engine_as_is.running
        assert fake.unplayed == 0


async def test_the_tabs_a_host_kept_are_listed_asleep_without_its_browser(
    team: Team, server: RunningHub
) -> None:
    browser = server.builtin.services.browser
    kept = SavedTab(
        "0c7d3f5e-3a8e-4a43-9e4e-6f7f3b1b2c11",
        Partition.shared(),
        "https://reports.example/q3",
        None,
        None,
        "Quarterly report",
    )
    # What the host wrote before it stopped: the tab comes back as the team's, asleep.
    write_state(browser.engine_as_is.team_folder(team.team_id), [kept])

    listed = (await team.member.call("browser-control-v1/list_tabs"))["tabs"]
    assert [(t["id"], t["url"], t["title"], t["loaded"]) for t in listed] == [
        (kept.id, kept.url, kept.title, False)
    ]
    assert not browser.engine_as_is.running  # no Chromium started to list them

    # Loading the page is what needs the browser, and this host has none.
    with pytest.raises(TeamApiCallError) as caught:
        await team.member.call("browser-control-v1/reload", {"tabId": kept.id})
    assert caught.value.code == "browserMissing"
    assert [t["id"] for t in (await team.admin.call("browser-control-v1/list_tabs"))["tabs"]] == [
        kept.id
    ]


async def test_a_deleted_profiles_tabs_listed_asleep_are_gone_with_it(
    team: Team, server: RunningHub
) -> None:
    browser = server.builtin.services.browser
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Billing"})
    folder = browser.engine_as_is.team_folder(team.team_id)
    kept = SavedTab(
        "5b0f2a4c-8d1e-4f6a-b3c2-7e9d0a1b2c3d",
        Partition.profile(profile["id"]),
        "https://billing.example/",
        None,
        None,
        "Invoices",
    )
    write_state(folder, [kept])
    listed = (await team.admin.call("browser-control-v1/list_tabs"))["tabs"]
    assert [t["id"] for t in listed] == [kept.id]

    await team.admin.call("browser-profiles-v1/delete", {"id": profile["id"]})
    assert (await team.admin.call("browser-control-v1/list_tabs"))["tabs"] == []
    assert read_state(folder) == []  # a restart brings it back no more
    assert not browser.engine_as_is.running

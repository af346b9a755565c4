"""The host's browser starts at a turn's first tab or page tool, not at the turn's start:
on a host whose Chromium is missing, an agent's turns that never touch a page run as on
any host, and a page tool there fails alone, saying the browser is missing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

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

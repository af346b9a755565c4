"""``crewhost-peer chat`` as a real process says when its turn waits for one of the team's
places (``host.team_running_turns``) and when it runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.host.routes.test_delegation import stalled
from tests.peer.test_chat_cli import (  # noqa: F401 - fixtures
    agent_ready,
    anthropic_fake,
    cli_ok,
    database,
)
from tests.peer.test_cli import peer_cli
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.waiting import eventually


@pytest.fixture
async def server(
    tmp_path: Path,
    database: ScratchDatabase,  # noqa: F811 - the fixture imported above
    clock: FakeClock,
) -> AsyncIterator[RunningHub]:
    """A hub whose host runs one turn of a team at a time."""
    settings = hub_settings(tmp_path, database, **{"host.team_running_turns": 1})
    async with running_hub(settings, database, clock=clock) as running:
        yield running


async def test_a_turn_that_waits_for_a_place_says_so_then_runs(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    scout = await agent_ready(server, tmp_path, anthropic)
    anthropic.script(stalled("Looking"), MessageEvents().text("Mine is done.").stop().reply())
    started = await cli_ok(tmp_path, "call", "threads-v1/start", json.dumps({"agentId": scout}))
    busy = {"threadId": json.loads(started)["id"]}
    await cli_ok(tmp_path, "call", "threads-v1/send", json.dumps({**busy, "text": "Look long"}))
    # The busy turn holds the stalled reply: its request reached the provider (a turn is
    # running before its request goes out, and one stopped then would leave the stall to
    # the chat's turn).
    await eventually(lambda: anthropic.unplayed == 1, 30)

    chat = asyncio.ensure_future(peer_cli(tmp_path, "chat", "Scout", "Then this"))
    metrics = server.builtin.services.metrics
    await eventually(lambda: metrics.turns_waiting() > 0, 30)  # the team's one place
    await cli_ok(tmp_path, "call", "threads-v1/stop", json.dumps(busy))
    code, out, err = await asyncio.wait_for(chat, 60)

    assert (code, out) == (
        0,
        "(waiting: the team runs as many turns as the host allows)\n"
        "(running)\n"
        "Mine is done.\n"
        "turn done\n",
    ), err

"""How many turns a team runs at once (``host.team_running_turns``), with members on real
peers and the fake provider, on both databases: a turn past the team's places waits and
says so (``turn-waiting``, ``runningTurnWaiting``), another team's turn runs meanwhile, a
waiting turn can be stopped without taking a place, the next turn of the team runs when
one ends (``turn-running``), and an agent asked by another runs on its caller's place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.host.routes.conftest import Team
from tests.host.routes.test_delegation import agents, ask, asking, may_ask, member_thread, stalled
from tests.host.routes.test_sub_agents import says
from tests.host.routes.test_threads import until
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic
from tests.support.fakes.server import StreamReply
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """A hub whose host runs one turn of a team at a time."""
    settings = hub_settings(tmp_path, database, **{"host.team_running_turns": 1})
    async with running_hub(settings, database, clock=clock) as running:
        yield running


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in the metrics")


async def test_a_turn_past_the_teams_places_waits_while_another_team_runs(
    team: Team, server: RunningHub, tmp_path: Path
) -> None:
    async with FakeAnthropic() as fake:
        (scout,) = await agents(team, fake, {"name": "Scout"})
        busy = await member_thread(team, scout)
        later = await member_thread(team, scout)
        dropped = await member_thread(team, scout)
        # The first turn holds the team's one place (its reply stays open); then the other
        # team's turn, then the turn that waited.
        fake.script(stalled("Looking"), says("Theirs is done."), says("Mine is done."))
        await ask(team, busy, "Look for a long time")
        await until(team.member, busy, "turn-text")

        await ask(team, later, "Then this")
        waiting = await until(team.member, later, "turn-waiting")
        assert waiting["ahead"] == 0
        read = await team.member.call("threads-v1/get", {"threadId": later})
        assert read["runningTurnId"] == waiting["turnId"]
        assert read["runningTurnWaiting"] is True
        await ask(team, dropped, "And this")
        assert (await until(team.member, dropped, "turn-waiting"))["ahead"] == 1
        metrics = server.builtin.services.metrics.registry_text().decode()
        assert metric(metrics, "crewhost_turns_waiting") == 2
        assert metric(metrics, "crewhost_turns_waited_total") == 2

        # Another team's turn does not wait for this team's places.
        await server.create_owner("other@example.com", "Team B")
        outsider = await peer_member(server, "other@example.com", tmp_path)
        other = await outsider.connect(server.builtin.services.host_id)
        await other.call("providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url})
        await other.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        theirs = await other.call("agents-v1/create", {"name": "Theirs"})
        their_thread = await other.call("threads-v1/start", {"agentId": theirs["id"], "title": "B"})
        await other.call("threads-v1/send", {"threadId": their_thread["id"], "text": "Go"})
        finished = await until(other, their_thread["id"], "turn-finished")
        assert finished["status"] == "done"
        await other.close()
        await outsider.hub.close()

        # A waiting turn stopped ends stopped, and never asked the model.
        assert await team.member.call("threads-v1/stop", {"threadId": dropped})
        assert (await until(team.member, dropped, "turn-finished"))["status"] == "stopped"
        assert len(fake.requests) == 2

        # The first turn ends: the one that waited gets the place and runs to its end.
        assert await team.member.call("threads-v1/stop", {"threadId": busy})
        await until(team.member, later, "turn-running")
        assert (await until(team.member, later, "turn-finished"))["status"] == "done"
        read = await team.member.call("threads-v1/get", {"threadId": later})
        assert read["runningTurnWaiting"] is False
        assert [t["status"] for t in read["turns"]] == ["done"]
        assert len(fake.requests) == 3
        assert "Then this" in str(fake.requests[2].messages())
        metrics = server.builtin.services.metrics.registry_text().decode()
        assert metric(metrics, "crewhost_turns_waiting") == 0


async def test_an_asked_agent_runs_on_its_callers_place(team: Team) -> None:
    async with FakeAnthropic() as fake:
        lead, pricer = await agents(team, fake, {"name": "Lead"}, {"name": "Pricer"})
        await may_ask(team, lead, pricer)
        thread_id = await member_thread(team, lead)
        replies: list[StreamReply] = [
            asking("toolu_a", "pricer", "What does green tea cost?"),
            says("3 EUR."),
            says("Green tea costs 3 EUR."),
        ]
        fake.script(*replies)
        await ask(team, thread_id, "Find the price of green tea")
        # With one place for the team, the asked agent's turn would wait for its caller's
        # end, and the caller for its answer: it runs on the caller's place instead.
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"
        assert len(fake.requests) == 3

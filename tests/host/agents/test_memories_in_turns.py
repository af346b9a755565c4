"""An agent's memories in its turns, end to end: a real host, members on real WebRTC peers
and the team's provider pointed at a local fake of the Anthropic API, which records each
request. A memory kept in one thread is in the system prompt of the next thread's first
request; a memory kept in a member's private thread reaches only that member's private
threads.

One hub and host serve the module; each test makes its own agent, so tests share nothing
they look at. Memory reviews wait an hour (the test hub's setting): only ``remember``
keeps memories here.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from peer.connection import HostConnection
from server.host.container import HostServices
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop
from tests.support.peers import peer_member, wait_linked

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANTHROPIC_KEY = "sk-ant-memories-" + secrets.token_hex(16)


@dataclass
class MemoryHost:
    """The module's host, its team, its owner and two members on real peers."""

    server: RunningHub
    team_id: str
    owner: HostConnection
    ada: HostConnection
    bo: HostConnection
    anthropic: FakeAnthropic

    @property
    def services(self) -> HostServices:
        return self.server.builtin.services


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[MemoryHost]:
    folder = tmp_path_factory.mktemp("memories")
    async with (
        scratch_database("sqlite", folder) as database,
        FakeAnthropic(api_key=ANTHROPIC_KEY) as anthropic,
        running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
    ):
        owner_account = await server.sign_up_owner()
        team_id = await server.first_team_id(owner_account)
        for email in ("ada@example.com", "bo@example.com"):
            await server.invite(owner_account, team_id, email, "member")
        host_id = await wait_linked(server)
        people = [
            await peer_member(server, email, folder)
            for email in ("owner@example.com", "ada@example.com", "bo@example.com")
        ]
        owner, ada, bo = [await p.connect(host_id) for p in people]
        await owner.call("providers-v1/set_key", {"provider": "anthropic", "key": ANTHROPIC_KEY})
        await owner.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        yield MemoryHost(server, team_id, owner, ada, bo, anthropic)
        for connection in (owner, ada, bo):
            await connection.close()
        for p in people:
            await p.hub.close()


@pytest.fixture(autouse=True)
def fakes_played_out(host: MemoryHost) -> Iterator[None]:
    """Each test uses exactly the replies it scripted, and leaves none for the next."""
    yield
    left = host.anthropic.unplayed
    host.anthropic.drop_unplayed()
    assert left == 0, "scripted replies were left unplayed"


async def make_agent(host: MemoryHost) -> str:
    return str((await host.owner.call("agents-v1/create", {"name": "Keeper"}))["id"])


async def turn(
    host: MemoryHost,
    connection: HostConnection,
    agent_id: str,
    *replies: MessageEvents,
    shared: bool = False,
) -> dict[str, Any]:
    """One turn in a new thread of ``connection``'s; the body of its first model request."""
    thread = await connection.call(
        "threads-v1/start", {"agentId": agent_id, "title": "Work", "shared": shared}
    )
    host.anthropic.script(*(reply.reply() for reply in replies))
    before = len(host.anthropic.requests)
    await connection.call("threads-v1/send", {"threadId": thread["id"], "text": "Go on"})
    await host.services.threads.wait_idle(str(thread["id"]))
    body = host.anthropic.requests[before].body
    assert isinstance(body, dict)
    return body


def remembers(text: str) -> list[MessageEvents]:
    """A turn that keeps ``text`` with ``remember`` and says so."""
    return [
        MessageEvents().tool_use("toolu_mem", "remember", {"text": text}).stop("tool_use"),
        MessageEvents().text("Noted.").stop(),
    ]


def says_ok() -> MessageEvents:
    return MessageEvents().text("OK.").stop()


async def test_a_memory_kept_in_one_thread_is_in_the_next_threads_first_request(
    host: MemoryHost,
) -> None:
    agent_id = await make_agent(host)
    first = await turn(host, host.owner, agent_id, *remembers("The team books trains"), shared=True)
    assert "The team books trains" not in str(first["system"])
    later = await turn(host, host.ada, agent_id, says_ok())
    assert "The team books trains" in str(later["system"])
    [memory] = await host.services.memories.list_memories(host.team_id, agent_id)
    assert memory.member_id is None
    assert memory.uses == 1
    assert memory.source == "remember"
    assert memory.source_turn_id is not None
    assert len(memory.source_threads) == 1


async def test_a_private_threads_memory_reaches_only_its_members_private_threads(
    host: MemoryHost,
) -> None:
    agent_id = await make_agent(host)
    await turn(host, host.ada, agent_id, *remembers("Ada sits by the aisle"))
    [memory] = await host.services.memories.list_memories(host.team_id, agent_id)
    assert memory.member_id is not None
    for connection, shared in ((host.bo, False), (host.owner, False), (host.ada, True)):
        body = await turn(host, connection, agent_id, says_ok(), shared=shared)
        assert "Ada sits by the aisle" not in str(body), (connection, shared)
    again = await turn(host, host.ada, agent_id, says_ok())
    assert "Ada sits by the aisle" in str(again["system"])

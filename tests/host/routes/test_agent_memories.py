"""An agent's memories end to end: a real host, members on real WebRTC peers and the
team's provider pointed at a local fake of the Anthropic API, which records each request.
A memory kept in one thread is in the system prompt of the next thread's first request; a
memory kept in a member's private thread reaches only that member's private threads;
``agent-memories-v1`` lists, searches, edits, pins and deletes them within each role's
reach, and ``crewhost-peer memories`` does the same from a shell.

One hub and host serve the module; each test makes its own agent, so tests share nothing
they look at. Memory reviews wait an hour (the test hub's setting): only ``remember``
keeps memories here.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from peer.connection import HostConnection, TeamApiCallError
from server.host.container import HostServices
from server.host.services.memories import MAX_MEMORY_CHARS
from tests.peer.test_cli import login, peer_cli
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
        await owner.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        await owner.call("providers-v1/set_key", {"provider": "anthropic", "key": ANTHROPIC_KEY})
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
    await host.services.memories.uses_counted()
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


async def refused(call: Any, code: str) -> None:
    with pytest.raises(TeamApiCallError) as failed:
        await call
    assert failed.value.code == code


async def memories_changed(connection: HostConnection, agent_id: str) -> None:
    """Until ``connection`` hears that the agent's memories changed."""
    async with asyncio.timeout(30):
        while True:
            event = await connection.events.get()
            if event["event"] == "agent-memories-changed" and event["data"]["agentId"] == agent_id:
                return


async def test_a_search_finds_words_beyond_ascii_in_any_case(host: MemoryHost) -> None:
    agent_id = await make_agent(host)
    kept = await host.services.memories.add_memory(host.team_id, agent_id, "Ärger at Straße", None)
    for text in ("ärger", "ÄRGER", "straße"):
        found = await host.owner.call("agent-memories-v1/list", {"agentId": agent_id, "text": text})
        assert [m["text"] for m in found["memories"]] == ["Ärger at Straße"], text
    # A NUL, which one database would store and the other refuse, is refused before either.
    edit = {"agentId": agent_id, "memoryId": kept.id, "text": "Ärger\x00"}
    await refused(host.owner.call("agent-memories-v1/edit", edit), "invalidArgument")


async def test_people_list_search_edit_pin_and_delete_memories(host: MemoryHost) -> None:
    agent_id = await make_agent(host)
    keep = host.services.memories.add_memory
    await keep(host.team_id, agent_id, "Fares are on the second tab", "rail.example.com")
    await keep(host.team_id, agent_id, "The team books trains", None)
    secretive = await keep(host.team_id, agent_id, "Use the corporate card", None)
    owner = host.owner
    page = await owner.call("agent-memories-v1/list", {"agentId": agent_id, "limit": 2})
    assert page["total"] == 3
    assert [m["text"] for m in page["memories"]] == [
        "Use the corporate card",
        "The team books trains",
    ]
    rest = await owner.call("agent-memories-v1/list", {"agentId": agent_id, "offset": 2})
    assert [m["text"] for m in rest["memories"]] == ["Fares are on the second tab"]
    by_site = await owner.call(
        "agent-memories-v1/list", {"agentId": agent_id, "site": "https://www.rail.example.com/"}
    )
    assert [m["site"] for m in by_site["memories"]] == ["rail.example.com"]
    found = await owner.call("agent-memories-v1/list", {"agentId": agent_id, "text": "TRAINS"})
    assert [m["text"] for m in found["memories"]] == ["The team books trains"]

    ref = {"agentId": agent_id, "memoryId": secretive.id}
    edited = await owner.call(
        "agent-memories-v1/edit",
        {**ref, "text": "Use the card; its pin: 4455", "site": "Shop.example.com"},
    )
    await memories_changed(host.ada, agent_id)
    assert (edited["text"], edited["site"]) == (
        "Use the card; its pin: [redacted]",
        "shop.example.com",
    )
    assert edited["updatedBy"] is not None
    await refused(
        owner.call("agent-memories-v1/edit", {**ref, "text": "x", "site": "no"}), "invalidSite"
    )
    await refused(
        owner.call("agent-memories-v1/edit", {**ref, "text": " ", "site": None}), "invalidArgument"
    )
    pinned = await owner.call("agent-memories-v1/pin", {**ref, "pinned": True})
    assert pinned["pinned"] is True
    first = await owner.call("agent-memories-v1/list", {"agentId": agent_id, "limit": 1})
    assert first["memories"][0]["id"] == secretive.id
    assert (await owner.call("agent-memories-v1/get", ref))["source"]["kind"] == "remember"

    await owner.call("agent-memories-v1/delete", ref)
    await refused(owner.call("agent-memories-v1/get", ref), "memoryNotFound")
    await refused(host.ada.call("agent-memories-v1/delete_all", {"agentId": agent_id}), "forbidden")
    done = await owner.call("agent-memories-v1/delete_all", {"agentId": agent_id})
    assert done == {"deleted": 2}
    assert (await owner.call("agent-memories-v1/list", {"agentId": agent_id}))["total"] == 0
    await refused(owner.call("agent-memories-v1/list", {"agentId": "0" * 32}), "agentNotFound")


async def test_a_memory_stays_within_its_cap_after_its_secrets_are_blanked(
    host: MemoryHost,
) -> None:
    agent_id = await make_agent(host)
    # Each "pin:1" is blanked as "pin:[redacted]": the text grows past the cap it met.
    text = ("pin:1 " * 400)[:MAX_MEMORY_CHARS]
    kept = await host.services.memories.add_memory(host.team_id, agent_id, text, None)
    assert len(kept.text) == MAX_MEMORY_CHARS
    edited = await host.owner.call(
        "agent-memories-v1/edit",
        {"agentId": agent_id, "memoryId": kept.id, "text": text, "site": None},
    )
    assert edited["text"].startswith("pin:[redacted] pin:[redacted]")
    assert len(edited["text"]) == MAX_MEMORY_CHARS


async def test_an_edited_memory_is_what_the_next_turn_carries_and_a_deleted_one_is_gone(
    host: MemoryHost,
) -> None:
    agent_id = await make_agent(host)
    await turn(host, host.owner, agent_id, *remembers("Lunch is at noon"), shared=True)
    [memory] = (await host.owner.call("agent-memories-v1/list", {"agentId": agent_id}))["memories"]
    ref = {"agentId": agent_id, "memoryId": memory["id"]}
    await host.owner.call(
        "agent-memories-v1/edit", {**ref, "text": "Lunch is at one", "site": None}
    )
    carried = await turn(host, host.ada, agent_id, says_ok())
    assert "Lunch is at one" in str(carried["system"])
    assert "noon" not in str(carried["system"])
    await host.owner.call("agent-memories-v1/delete", ref)
    gone = await turn(host, host.ada, agent_id, says_ok())
    assert "Lunch is at" not in str(gone["system"])


async def test_a_member_reaches_their_own_memories_and_those_of_threads_they_read(
    host: MemoryHost,
) -> None:
    agent_id = await make_agent(host)
    await turn(host, host.ada, agent_id, *remembers("Ada sits by the aisle"))
    await turn(host, host.ada, agent_id, *remembers("Reports go out on Fridays"), shared=True)
    await host.services.memories.add_memory(host.team_id, agent_id, "From browsing", None)
    mine = {
        m["text"]: m
        for m in (await host.ada.call("agent-memories-v1/list", {"agentId": agent_id}))["memories"]
    }
    assert set(mine) == {"Ada sits by the aisle", "Reports go out on Fridays"}
    assert mine["Ada sits by the aisle"]["scope"] == "member"
    theirs = await host.bo.call("agent-memories-v1/list", {"agentId": agent_id})
    assert [m["text"] for m in theirs["memories"]] == ["Reports go out on Fridays"]
    private = {"agentId": agent_id, "memoryId": mine["Ada sits by the aisle"]["id"]}
    await refused(host.bo.call("agent-memories-v1/get", private), "memoryNotFound")
    await refused(
        host.bo.call("agent-memories-v1/edit", {**private, "text": "x", "site": None}),
        "memoryNotFound",
    )
    await refused(host.bo.call("agent-memories-v1/delete", private), "memoryNotFound")
    pinned = await host.ada.call("agent-memories-v1/pin", {**private, "pinned": True})
    assert pinned["pinned"] is True
    everything = await host.owner.call("agent-memories-v1/list", {"agentId": agent_id})
    assert everything["total"] == 3


async def test_the_peer_cli_lists_edits_and_deletes_memories(
    host: MemoryHost, tmp_path: Path
) -> None:
    agent_id = await make_agent(host)
    memory = await host.services.memories.add_memory(
        host.team_id, agent_id, "Invoices are due on the 5th", "billing.example.com"
    )
    assert (await login(tmp_path, host.server))[0] == 0
    code, out, err = await peer_cli(tmp_path, "memories", "list", agent_id)
    assert (code, err) == (0, "")
    assert memory.id in out
    assert "billing.example.com" in out
    assert out.endswith("1 of 1 memories\n")
    code, out, err = await peer_cli(
        tmp_path, "memories", "edit", agent_id, memory.id, "--text", "Due on the 6th", "--pin"
    )
    assert (code, err) == (0, "")
    assert "Due on the 6th" in out
    kept = await host.owner.call(
        "agent-memories-v1/get", {"agentId": agent_id, "memoryId": memory.id}
    )
    assert (kept["text"], kept["site"], kept["pinned"]) == (
        "Due on the 6th",
        "billing.example.com",
        True,
    )
    code, out, _ = await peer_cli(tmp_path, "memories", "delete", agent_id, memory.id)
    assert (code, out) == (0, "deleted 1\n")
    code, _, err = await peer_cli(tmp_path, "memories", "delete", agent_id, memory.id)
    assert code == 1
    assert "(memoryNotFound)" in err

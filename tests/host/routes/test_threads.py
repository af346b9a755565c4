"""threads-v1 (and attention-v1 around a turn) over real peers: starting, listing, reading
and sharing threads, bad input, and what a member who does not see a thread, or a member
of another team, can do with it and its turn: nothing, and they hear nothing of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from peer.connection import HostConnection
from server.common.errors import NotFound
from server.db.tables import agent_memories, queued_messages, thread_messages, turns
from tests.host.routes.conftest import Team, refused
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member

EVENT_SECONDS = 30.0


@pytest.fixture
async def anthropic(team: Team) -> AsyncIterator[FakeAnthropic]:
    """The team's Anthropic provider, served by a local fake."""
    async with FakeAnthropic() as fake:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        yield fake


@pytest.fixture
async def outsider(server: RunningHub, team: Team, tmp_path: Path) -> AsyncIterator[HostConnection]:
    """The owner of another team, on the same host."""
    await server.create_owner("other@example.com", "Team B")
    member = await peer_member(server, "other@example.com", tmp_path)
    connection = await member.connect(server.builtin.services.host_id)
    yield connection
    await connection.close()
    await member.hub.close()


async def thread_events(connection: HostConnection, thread_id: str) -> list[dict[str, Any]]:
    """The events of ``thread_id`` the peer received and has not read.

    A call is answered after every event the host sent before it: the channel is ordered.
    """
    await connection.call("host-v1/whoami")
    events = []
    while not connection.events.empty():
        event = connection.events.get_nowait()
        if event["data"].get("threadId") == thread_id:
            events.append(event)
    return events


async def until(connection: HostConnection, thread_id: str, name: str) -> dict[str, Any]:
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await connection.events.get()
            if event["event"] == name and event["data"].get("threadId") == thread_id:
                return dict(event["data"])


async def test_start_list_read_and_share(team: Team) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    started = await team.member.call(
        "threads-v1/start", {"agentId": agent["id"], "title": "  Prices "}
    )
    assert (started["title"], started["shared"], started["agentId"]) == (
        "Prices",
        False,
        agent["id"],
    )
    thread_ref = {"threadId": started["id"]}
    listed = await team.member.call("threads-v1/list", {"agentId": agent["id"]})
    assert [t["id"] for t in listed["threads"]] == [started["id"]]
    contents = await team.member.call("threads-v1/get", thread_ref)
    assert (contents["messages"], contents["turns"], contents["runningTurnId"]) == ([], [], None)

    # Private: not even the owner of the team lists or reads it, nor may share it.
    assert (await team.admin.call("threads-v1/list", {"agentId": agent["id"]}))["threads"] == []
    assert await refused(team.admin, "threads-v1/get", thread_ref) == "threadNotFound"
    share = {**thread_ref, "shared": True}
    assert await refused(team.admin, "threads-v1/share", share) == "threadNotFound"
    assert await thread_events(team.admin, started["id"]) == []

    assert (await team.member.call("threads-v1/share", share))["shared"] is True
    changed = await thread_events(team.admin, started["id"])
    assert [e["event"] for e in changed] == ["threads-changed"]
    assert (await team.admin.call("threads-v1/get", thread_ref))["thread"]["shared"] is True
    # Shared, it is still its starter's to take back.
    assert await refused(team.admin, "threads-v1/share", {**share, "shared": False}) == (
        "threadNotFound"
    )
    await team.member.call("threads-v1/share", {**share, "shared": False})
    assert await refused(team.admin, "threads-v1/get", thread_ref) == "threadNotFound"


async def test_a_thread_is_titled_from_its_first_message_and_renamed_by_its_starter(
    team: Team,
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.member.call("threads-v1/start", {"agentId": agent["id"]})
    thread_ref = {"threadId": thread["id"]}
    first = "Find the three cheapest flights from Lisbon to Oslo next weekend, please"
    await team.member.call("threads-v1/send", {**thread_ref, "text": first})
    await until(team.member, thread["id"], "turn-finished")
    listed = await team.member.call("threads-v1/list", {"agentId": agent["id"]})
    assert [t["title"] for t in listed["threads"]] == [
        "Find the three cheapest flights from Lisbon to Oslo next…"
    ]
    # A later message keeps the title.
    await team.member.call("threads-v1/send", {**thread_ref, "text": "And back?"})
    await until(team.member, thread["id"], "turn-finished")
    contents = await team.member.call("threads-v1/get", thread_ref)
    assert contents["thread"]["title"].startswith("Find the three")

    renamed = await team.member.call("threads-v1/rename", {**thread_ref, "title": " Oslo "})
    assert renamed["title"] == "Oslo"
    assert (await team.member.call("threads-v1/get", thread_ref))["thread"]["title"] == "Oslo"
    # Shared, it is still only its starter's to rename.
    await team.member.call("threads-v1/share", {**thread_ref, "shared": True})
    rename = {**thread_ref, "title": "Mine now"}
    assert await refused(team.admin, "threads-v1/rename", rename) == "threadNotFound"
    assert await refused(team.member, "threads-v1/rename", {**thread_ref, "title": " "}) == (
        "invalidArgument"
    )
    assert (await team.admin.call("threads-v1/get", thread_ref))["thread"]["title"] == "Oslo"


BAD_INPUT: list[tuple[str, dict[str, Any], str]] = [
    ("threads-v1/start", {"agentId": "0" * 32}, "agentNotFound"),
    ("threads-v1/start", {"agentId": "not-an-id"}, "invalidArgument"),
    ("threads-v1/start", {"agentId": "{agent}", "title": "a\nb"}, "invalidArgument"),
    ("threads-v1/start", {"agentId": "{agent}", "title": "x" * 201}, "invalidArgument"),
    ("threads-v1/start", {"agentId": "{agent}", "extra": 1}, "invalidArgument"),
    ("threads-v1/list", {"agentId": "0" * 32}, "agentNotFound"),
    ("threads-v1/get", {"threadId": "0" * 32}, "threadNotFound"),
    ("threads-v1/get", {"threadId": "../x"}, "invalidArgument"),
    ("threads-v1/send", {"threadId": "{thread}", "text": "   "}, "invalidArgument"),
    ("threads-v1/send", {"threadId": "{thread}", "text": "x" * 32_001}, "invalidArgument"),
    ("threads-v1/send", {"threadId": "{thread}"}, "invalidArgument"),
    ("threads-v1/send", {"threadId": "0" * 32, "text": "hi"}, "threadNotFound"),
    ("threads-v1/stop", {"threadId": "0" * 32}, "threadNotFound"),
    ("threads-v1/rename", {"threadId": "0" * 32, "title": "x"}, "threadNotFound"),
    ("threads-v1/rename", {"threadId": "{thread}", "title": "x" * 201}, "invalidArgument"),
    ("attention-v1/answer", {"id": "0" * 32, "approve": True}, "attentionNotFound"),
    ("attention-v1/answer", {"id": "0" * 32, "approve": "yes"}, "invalidArgument"),
]


async def test_bad_input_is_refused_and_nothing_runs(team: Team) -> None:
    # One team for every case: a refusal changes nothing the next case could see.
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.member.call("threads-v1/start", {"agentId": agent["id"]})
    for route, args, code in BAD_INPUT:
        filled = {
            k: (v.format(agent=agent["id"], thread=thread["id"]) if isinstance(v, str) else v)
            for k, v in args.items()
        }
        assert await refused(team.member, route, filled) == code, (route, args)
    contents = await team.member.call("threads-v1/get", {"threadId": thread["id"]})
    assert (contents["messages"], contents["turns"]) == ([], [])
    listed = await team.member.call("threads-v1/list", {"agentId": agent["id"]})
    assert [t["id"] for t in listed["threads"]] == [thread["id"]]


async def test_who_does_not_see_a_thread_can_do_nothing_with_its_turn(
    team: Team, anthropic: FakeAnthropic, outsider: HostConnection
) -> None:
    """The owner's private thread, its turn waiting for consent: the team's member and
    another team's owner can neither read, send, stop nor answer, and hear nothing."""
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"]})
    thread_id = thread["id"]
    anthropic.script(
        MessageEvents()
        .text("Clicking.")
        .tool_use(
            "toolu_1", "click", {"tabId": "tab-1", "target": {"kind": "css", "selector": "b"}}
        )
        .stop("tool_use")
        .reply()
    )
    sent = await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Go"})
    asked = await until(team.admin, thread_id, "attention-requested")
    again = {"threadId": thread_id, "text": "And again"}
    queued = await team.admin.call("threads-v1/send", again)
    assert (queued["turnId"], queued["queued"]["text"]) == (None, "And again")
    queued_ref = {"threadId": thread_id, "id": queued["queued"]["id"]}

    for stranger in (team.member, outsider):
        thread_ref = {"threadId": thread_id}
        assert await refused(stranger, "threads-v1/get", thread_ref) == "threadNotFound"
        assert await refused(stranger, "threads-v1/send", again) == "threadNotFound"
        assert await refused(stranger, "threads-v1/mark-read", thread_ref) == "threadNotFound"
        for route, extra in (
            ("threads-v1/queue-edit", {"text": "Mine now"}),
            ("threads-v1/queue-steer", {}),
            ("threads-v1/queue-cancel", {}),
        ):
            assert await refused(stranger, route, {**queued_ref, **extra}) == "threadNotFound"
        assert await refused(stranger, "threads-v1/stop", thread_ref) == "threadNotFound"
        assert await refused(stranger, "threads-v1/share", {**thread_ref, "shared": True}) == (
            "threadNotFound"
        )
        assert (await stranger.call("attention-v1/list"))["requests"] == []
        for approve in (True, False):
            answer = {"id": asked["id"], "approve": approve}
            assert await refused(stranger, "attention-v1/answer", answer) == "attentionNotFound"
    assert await refused(outsider, "threads-v1/list", {"agentId": agent["id"]}) == ("agentNotFound")
    listed = await team.member.call("threads-v1/list", {"agentId": agent["id"]})
    assert listed["threads"] == []

    # The question still waits for the one who sees it.
    [pending] = (await team.admin.call("attention-v1/list"))["requests"]
    assert pending["id"] == asked["id"]
    await team.admin.call("threads-v1/queue-cancel", queued_ref)
    await team.admin.call("attention-v1/answer", {"id": asked["id"], "approve": False})
    finished = await until(team.admin, thread_id, "turn-finished")
    assert (finished["turnId"], finished["status"]) == (sent["turnId"], "denied")
    assert await thread_events(team.member, thread_id) == []
    assert await thread_events(outsider, thread_id) == []


async def test_sharing_a_waiting_turn_lets_the_team_answer(
    team: Team, anthropic: FakeAnthropic
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"]})
    thread_id = thread["id"]
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_1", "navigate", {"tabId": "tab-1", "url": "https://example.com"})
        .stop("tool_use")
        .reply()
    )
    await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Go"})
    asked = await until(team.admin, thread_id, "attention-requested")
    answer = {"id": asked["id"], "approve": False}
    assert await refused(team.member, "attention-v1/answer", answer) == "attentionNotFound"

    await team.admin.call("threads-v1/share", {"threadId": thread_id, "shared": True})
    [pending] = (await team.member.call("attention-v1/list"))["requests"]
    assert pending["id"] == asked["id"]
    await team.member.call("attention-v1/answer", answer)
    finished = await until(team.member, thread_id, "turn-finished")
    assert (finished["status"], finished["reason"]) == ("denied", "a member denied navigate")


async def test_deleting_an_agent_stops_its_turns_and_nothing_of_theirs_is_written_after(
    server: RunningHub, team: Team, anthropic: FakeAnthropic
) -> None:
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_q", "ask_user", {"question": "Which colour?"})
        .stop("tool_use")
        .reply(),
        MessageEvents()
        .tool_use("toolu_r", "remember", {"text": "The team likes blue"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Noted.").stop().reply(),
    )
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call(
        "threads-v1/start", {"agentId": agent["id"], "title": "Colours", "shared": True}
    )
    ref = {"threadId": thread["id"]}
    await team.admin.call("threads-v1/send", {**ref, "text": "Pick one"})
    asked = await until(team.admin, thread["id"], "attention-requested")
    await team.member.call("threads-v1/send", {**ref, "text": "Then remember it"})

    assert await team.admin.call("agents-v1/delete", {"id": agent["id"]}) == {"deleted": True}
    finished = await until(team.admin, thread["id"], "turn-finished")
    assert (finished["status"], finished["reason"]) == ("stopped", "its agent was deleted")
    assert await refused(
        team.admin, "attention-v1/reply", {"id": asked["id"], "answer": "blue"}
    ) in {"attentionNotFound", "attentionAnswered"}
    assert await refused(team.admin, "threads-v1/stop", ref) == "threadNotFound"
    # No turn of the deleted agent asked the model again or wrote anything.
    assert len(anthropic.requests) == 1
    services = server.builtin.services
    async with services.db.read() as conn:
        for table in (agent_memories, thread_messages, turns, queued_messages):
            column = table.c.agent_id if table is agent_memories else table.c.thread_id
            key = agent["id"] if table is agent_memories else thread["id"]
            rows = (await conn.execute(sa.select(sa.func.count()).where(column == key))).one()
            assert rows[0] == 0, table.name


async def test_who_wrote_each_message_of_a_shared_thread_is_shown(
    team: Team, anthropic: FakeAnthropic
) -> None:
    """Another member sees a message start its turn as it is sent, and reads later who
    wrote each message."""
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"], "shared": True})
    ref = {"threadId": thread["id"]}
    await team.member.call("threads-v1/get", ref)  # the member follows it
    anthropic.script(MessageEvents().text("Noted.").stop().reply())
    await team.admin.call("threads-v1/send", {**ref, "text": "Book the 9:10"})
    started = await until(team.member, thread["id"], "turn-started")
    assert started["userMessage"] == {
        "accountId": thread["createdBy"],
        "text": "Book the 9:10",
        "attachments": [],
    }
    await until(team.member, thread["id"], "turn-finished")
    read = await team.member.call("threads-v1/get", ref)
    [asked] = [m for m in read["messages"] if m["role"] == "user"]
    assert asked["accountId"] == thread["createdBy"]


async def test_no_turn_starts_for_an_agent_while_its_deletion_runs(
    server: RunningHub, team: Team, anthropic: FakeAnthropic
) -> None:
    """Between the deletion's first step (its turns stop) and its last (the agent's row
    goes) no message, routine or other agent starts a turn of it; one that failed to
    delete stays usable."""
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"], "shared": True})
    ref = {"threadId": thread["id"]}
    threads = server.builtin.services.threads
    await threads.agent_deleted(team.team_id, agent["id"])  # the deletion has begun
    assert await refused(team.member, "threads-v1/send", {**ref, "text": "Hi"}) == "agentNotFound"
    assert await refused(team.admin, "threads-v1/start", {"agentId": agent["id"]}) == (
        "agentNotFound"
    )
    with pytest.raises(NotFound):
        await threads.start_asked(
            team.team_id, agent["id"], account_id=thread["createdBy"], text="Hi", title="Asked"
        )
    assert len(anthropic.requests) == 0
    threads.agent_gone(team.team_id, agent["id"])  # it failed: the agent stays
    anthropic.script(MessageEvents().text("Hello.").stop().reply())
    await team.member.call("threads-v1/send", {**ref, "text": "Hi"})
    finished = await until(team.member, thread["id"], "turn-finished")
    assert finished["status"] == "done"


async def test_the_question_before_deleting_an_agent_counts_every_thread_and_running_turn(
    team: Team, anthropic: FakeAnthropic, outsider: HostConnection
) -> None:
    """A member's private thread counts too; a turn waiting for consent is under way."""
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    ref = {"id": agent["id"]}
    assert await team.admin.call("agents-v1/deletion", ref) == {"threads": 0, "runningTurns": 0}
    await team.member.call("threads-v1/start", {"agentId": agent["id"]})
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"]})
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_1", "navigate", {"tabId": "tab-1", "url": "https://example.com"})
        .stop("tool_use")
        .reply()
    )
    await team.admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Go"})
    asked = await until(team.admin, thread["id"], "attention-requested")
    assert await team.admin.call("agents-v1/deletion", ref) == {"threads": 2, "runningTurns": 1}
    assert await refused(team.member, "agents-v1/deletion", ref) == "forbidden"
    assert await refused(outsider, "agents-v1/deletion", ref) == "agentNotFound"
    await team.admin.call("attention-v1/answer", {"id": asked["id"], "approve": False})
    await until(team.admin, thread["id"], "turn-finished")
    assert await team.admin.call("agents-v1/deletion", ref) == {"threads": 2, "runningTurns": 0}

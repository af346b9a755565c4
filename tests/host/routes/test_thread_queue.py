"""The queue of a thread over real peers: a message sent while a turn runs waits, its
sender edits, steers or cancels it, and the turn's end takes it; read cursors give each
member's unread counts."""

from __future__ import annotations

from typing import Any

from peer.connection import HostConnection
from server.host.rtc.revocations import MemberRemoved
from tests.host.routes.conftest import Team, refused
from tests.host.routes.test_threads import anthropic, thread_events, until
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub

__all__ = ["anthropic"]  # the fixture, shared with the thread tests


def asks(call_id: str = "toolu_q") -> Any:
    """A reply whose only call asks the members a question: the turn waits for them."""
    return (
        MessageEvents()
        .tool_use(call_id, "ask_user", {"question": "Which size?"})
        .stop("tool_use")
        .reply()
    )


def says(text: str) -> Any:
    return MessageEvents().text(text).stop().reply()


async def waiting_thread(team: Team, anthropic: FakeAnthropic, *, shared: bool) -> dict[str, Any]:
    """The admin's thread whose turn waits on a question; the question's event."""
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call(
        "threads-v1/start", {"agentId": agent["id"], "title": "Shirts", "shared": shared}
    )
    sent = await team.admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Order"})
    asked = await until(team.admin, thread["id"], "attention-requested")
    return {"agent": agent["id"], "thread": thread["id"], "turn": sent["turnId"], "asked": asked}


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        if message["role"] != "user":
            continue
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        texts += [b if isinstance(b, str) else b.get("text", "") for b in blocks]
    return [t for t in texts if t]


async def send(connection: HostConnection, thread_id: str, text: str) -> dict[str, Any]:
    return dict(await connection.call("threads-v1/send", {"threadId": thread_id, "text": text}))


async def test_a_message_sent_during_a_turn_waits_and_starts_the_next_turn(
    team: Team, anthropic: FakeAnthropic
) -> None:
    anthropic.script(asks(), says("Size M it is."), says("Blue, then."))
    waiting = await waiting_thread(team, anthropic, shared=True)
    thread_id = waiting["thread"]

    sent = await send(team.admin, thread_id, "And make it blue")
    assert sent["turnId"] is None
    queued = sent["queued"]
    assert (queued["text"], queued["steer"], queued["accountId"]) == (
        "And make it blue",
        False,
        (await team.admin.call("host-v1/whoami"))["accountId"],
    )
    added = await until(team.member, thread_id, "queued-message-added")
    assert added["queued"]["id"] == queued["id"]
    ref = {"threadId": thread_id, "id": queued["id"]}
    edited = await team.admin.call("threads-v1/queue-edit", {**ref, "text": "And make it navy"})
    assert edited["queued"]["text"] == "And make it navy"
    updated = await until(team.member, thread_id, "queued-message-updated")
    assert updated["queued"]["text"] == "And make it navy"
    # The team sees the queue of a shared thread; only its sender changes a message.
    contents = await team.member.call("threads-v1/get", {"threadId": thread_id})
    assert [q["text"] for q in contents["queued"]] == ["And make it navy"]
    for route, extra in (
        ("threads-v1/queue-edit", {"text": "Red"}),
        ("threads-v1/queue-steer", {}),
        ("threads-v1/queue-cancel", {}),
    ):
        assert await refused(team.member, route, {**ref, **extra}) == "queuedMessageNotFound"

    await team.admin.call("attention-v1/reply", {"id": waiting["asked"]["id"], "answer": "M"})
    first = await until(team.member, thread_id, "turn-finished")
    assert (first["turnId"], first["status"]) == (waiting["turn"], "done")
    taken = await until(team.member, thread_id, "queued-message-taken")
    assert (taken["id"], taken["steered"]) == (queued["id"], False)
    started = await until(team.member, thread_id, "turn-started")
    assert started["turnId"] == taken["turnId"]
    second = await until(team.member, thread_id, "turn-finished")
    assert (second["turnId"], second["status"]) == (taken["turnId"], "done")

    # The next turn read the edited message after the first turn's reply.
    assert user_texts(anthropic.requests[-1].messages())[-1] == "And make it navy"
    contents = await team.admin.call("threads-v1/get", {"threadId": thread_id})
    assert contents["queued"] == []
    assert [t["status"] for t in contents["turns"]] == ["done", "done"]
    assert await refused(team.admin, "threads-v1/queue-cancel", ref) == "queuedMessageNotFound"


async def test_a_message_queued_by_another_member_is_their_turn_and_their_spending(
    team: Team, anthropic: FakeAnthropic
) -> None:
    anthropic.script(asks(), says("Size L it is."), says("Green, then."))
    waiting = await waiting_thread(team, anthropic, shared=True)
    thread_id = waiting["thread"]
    queued = (await send(team.member, thread_id, "And make it green"))["queued"]

    await team.admin.call("attention-v1/reply", {"id": waiting["asked"]["id"], "answer": "L"})
    taken = await until(team.member, thread_id, "queued-message-taken")
    assert taken["id"] == queued["id"]
    finished = await until(team.member, thread_id, "turn-finished")
    while finished["turnId"] != taken["turnId"]:
        finished = await until(team.member, thread_id, "turn-finished")
    assert finished["status"] == "done"

    # The admin's turn is the admin's; the member's queued message made the member's.
    ids = {
        who: (await connection.call("host-v1/whoami"))["accountId"]
        for who, connection in (("admin", team.admin), ("member", team.member))
    }
    rows = (await team.admin.call("usage-v1/summary", {"by": ["member"]}))["rows"]
    requests = {r["key"]["member"]: int(r["requests"]) for r in rows}
    assert requests == {ids["admin"]: 2, ids["member"]: 1}
    own = (await team.member.call("usage-v1/summary", {"by": []}))["rows"]
    assert [int(r["requests"]) for r in own] == [1]


async def test_a_cancelled_message_starts_no_turn(team: Team, anthropic: FakeAnthropic) -> None:
    anthropic.script(asks(), says("Size S it is."))
    waiting = await waiting_thread(team, anthropic, shared=False)
    thread_id = waiting["thread"]
    first = (await send(team.admin, thread_id, "One"))["queued"]
    second = (await send(team.admin, thread_id, "Two"))["queued"]
    await team.admin.call("threads-v1/queue-cancel", {"threadId": thread_id, "id": first["id"]})
    await team.admin.call("threads-v1/queue-cancel", {"threadId": thread_id, "id": second["id"]})
    names = [e["event"] for e in await thread_events(team.admin, thread_id)]
    assert names.count("queued-message-cancelled") == 2

    await team.admin.call("attention-v1/reply", {"id": waiting["asked"]["id"], "answer": "S"})
    await until(team.admin, thread_id, "turn-finished")
    await team.admin.call("host-v1/whoami")  # any next turn would have started by now
    contents = await team.admin.call("threads-v1/get", {"threadId": thread_id})
    assert (contents["queued"], len(contents["turns"])) == ([], 1)
    assert contents["runningTurnId"] is None


async def test_a_steered_message_reaches_the_running_turn_at_its_next_request(
    team: Team, anthropic: FakeAnthropic
) -> None:
    anthropic.script(asks(), says("Size L, in green."))
    waiting = await waiting_thread(team, anthropic, shared=False)
    thread_id = waiting["thread"]
    queued = (await send(team.admin, thread_id, "Make it green"))["queued"]
    ref = {"threadId": thread_id, "id": queued["id"]}
    steered = await team.admin.call("threads-v1/queue-steer", ref)
    assert steered["queued"]["steer"] is True

    await team.admin.call("attention-v1/reply", {"id": waiting["asked"]["id"], "answer": "L"})
    taken = await until(team.admin, thread_id, "queued-message-taken")
    assert (taken["id"], taken["turnId"], taken["steered"]) == (
        queued["id"],
        waiting["turn"],
        True,
    )
    finished = await until(team.admin, thread_id, "turn-finished")
    assert (finished["turnId"], finished["status"]) == (waiting["turn"], "done")

    # The model read the answer to its question, then the member's words (one user turn
    # on Anthropic's wire).
    [*_, last] = anthropic.requests[-1].messages()
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"] == "Make it green"
    contents = await team.admin.call("threads-v1/get", {"threadId": thread_id})
    assert [m["role"] for m in contents["messages"]] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert contents["messages"][3]["text"] == "Make it green"
    assert (contents["queued"], len(contents["turns"])) == ([], 1)


async def test_unread_counts_follow_each_members_read_cursor(
    team: Team, anthropic: FakeAnthropic
) -> None:
    anthropic.script(says("Hello."), says("Again."))
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call(
        "threads-v1/start", {"agentId": agent["id"], "title": "Hi", "shared": True}
    )
    thread_id, listing = thread["id"], {"agentId": agent["id"]}

    async def unread(connection: HostConnection) -> int:
        listed = await connection.call("threads-v1/list", listing)
        [only] = listed["threads"]
        return int(only["unread"])

    assert (await unread(team.admin), await unread(team.member)) == (0, 0)
    for text in ("Hi", "Hi again"):
        await send(team.admin, thread_id, text)
        await until(team.admin, thread_id, "turn-finished")
    assert await unread(team.member) == 2
    await team.admin.call("threads-v1/mark-read", {"threadId": thread_id})
    assert (await unread(team.admin), await unread(team.member)) == (0, 2)
    # Reading the thread is reading it.
    await team.member.call("threads-v1/get", {"threadId": thread_id})
    assert await unread(team.member) == 0


async def test_a_removed_members_queued_messages_go_and_start_nothing(
    team: Team, anthropic: FakeAnthropic, server: RunningHub
) -> None:
    anthropic.script(asks())
    waiting = await waiting_thread(team, anthropic, shared=True)
    thread_id = waiting["thread"]
    queued = (await send(team.member, thread_id, "Order ten more"))["queued"]
    member_id = (await team.member.call("host-v1/whoami"))["accountId"]
    # The hub says the member left the team (as a revocation, or a link's members check).
    await server.builtin.services.signals.deliver(MemberRemoved(team.team_id, member_id))
    cancelled = await until(team.admin, thread_id, "queued-message-cancelled")
    assert cancelled["id"] == queued["id"]
    contents = await team.admin.call("threads-v1/get", {"threadId": thread_id})
    assert contents["queued"] == []


async def test_a_queue_waits_until_the_host_knows_who_left_while_its_link_was_down(
    team: Team, anthropic: FakeAnthropic, server: RunningHub
) -> None:
    anthropic.script(asks(), says("Size M it is."), says("Blue, then."))
    waiting = await waiting_thread(team, anthropic, shared=True)
    thread_id = waiting["thread"]
    await send(team.member, thread_id, "And make it blue")
    # A link begins: until the hub has said who left meanwhile, no queued message starts.
    removals = server.builtin.services.removals
    removals.expect(60)
    await team.admin.call("attention-v1/reply", {"id": waiting["asked"]["id"], "answer": "M"})
    assert (await until(team.admin, thread_id, "turn-finished"))["status"] == "done"
    contents = await team.admin.call("threads-v1/get", {"threadId": thread_id})
    assert (contents["runningTurnId"], len(contents["queued"])) == (None, 1)
    removals.heard()
    taken = await until(team.admin, thread_id, "queued-message-taken")
    assert taken["id"] == contents["queued"][0]["id"]
    assert (await until(team.admin, thread_id, "turn-finished"))["status"] == "done"

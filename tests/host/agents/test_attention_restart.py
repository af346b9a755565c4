"""A turn waiting for consent survives a restart: a host that stops puts it aside, and its
next start takes it up, waiting for the same request. Any other wait (a question) ends
``interrupted`` with its turn, and a start after a crash ends what the crash left under way
the same way. Each run is a real hub and host on the same database, once on SQLite and once
on PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from server.db.tables import attention_requests, threads, turns
from server.host.agents.work_signals import AttentionWaiting
from tests.host.routes.conftest import refused
from tests.host.routes.test_threads import until
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked

CLICK = {"tabId": "tab-1", "target": {"kind": "css", "selector": "#buy"}}


async def connect(server: RunningHub, email: str, folder: Path) -> Any:
    host_id = await wait_linked(server)
    member = await peer_member(server, email, folder)
    return member, await member.connect(host_id)


async def admin_with_anthropic(server: RunningHub, fake: FakeAnthropic, folder: Path) -> Any:
    member, admin = await connect(server, "owner@example.com", folder)
    await admin.call("providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url})
    await admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
    return member, admin


async def test_a_turn_waiting_for_consent_is_taken_up_after_a_restart(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> None:
    settings = hub_settings(tmp_path, database)
    waiting: list[AttentionWaiting] = []
    async with FakeAnthropic() as fake:
        fake.script(
            MessageEvents()
            .text("Buying.")
            .tool_use("toolu_1", "click", CLICK)
            .stop("tool_use")
            .reply()
        )
        async with running_hub(settings, database, clock=clock) as server:
            owner = await server.sign_up_owner()
            team_id = await server.first_team_id(owner)
            await server.invite(owner, team_id, "member@example.com", "member")
            server.builtin.services.signals.subscribe(AttentionWaiting, waiting.append)
            member, admin = await admin_with_anthropic(server, fake, tmp_path)
            agent = await admin.call("agents-v1/create", {"name": "Scout"})
            thread = await admin.call("threads-v1/start", {"agentId": agent["id"]})
            thread_id = thread["id"]
            sent = await admin.call("threads-v1/send", {"threadId": thread_id, "text": "Buy"})
            asked = await until(admin, thread_id, "attention-requested")
            queued = await admin.call("threads-v1/send", {"threadId": thread_id, "text": "Then"})
            assert queued["turnId"] is None
            owner_id = (await admin.call("host-v1/whoami"))["accountId"]
            [before] = await listed_requests(admin)
            await admin.close()
            await member.hub.close()

        # Raised once, addressed to the thread's starter, in the words of the card.
        [signal] = waiting
        assert (signal.request_id, signal.thread_id, signal.kind) == (
            asked["id"],
            thread_id,
            "consent",
        )
        assert (signal.addressed_to, signal.whole_team) == ((owner_id,), False)
        assert signal.description == asked["description"]
        assert asked["summary"].startswith("click {")  # the raw call, never in the signal
        assert "{" not in signal.description

        fake.script(
            MessageEvents().text("The button was gone.").stop().reply(),
            MessageEvents().text("Then, as asked.").stop().reply(),
        )
        async with running_hub(settings, database, clock=clock) as server:
            server.builtin.services.signals.subscribe(AttentionWaiting, waiting.append)
            member, admin = await connect(server, "owner@example.com", tmp_path)
            # The turn waits where it was, for the same request, until the same time.
            contents = await admin.call("threads-v1/get", {"threadId": thread_id})
            assert contents["runningTurnId"] == sent["turnId"]
            assert [t["status"] for t in contents["turns"]] == ["running"]
            assert [q["text"] for q in contents["queued"]] == ["Then"]
            assert await requests_once_asked(admin) == [before]
            assert before["id"] == asked["id"]
            await admin.close()
            await member.hub.close()
        # Put aside again by the next stop, and taken up again.
        async with running_hub(settings, database, clock=clock) as server:
            server.builtin.services.signals.subscribe(AttentionWaiting, waiting.append)
            member, admin = await connect(server, "owner@example.com", tmp_path)
            assert await requests_once_asked(admin) == [before]
            # A member who could never answer it learns nothing of it.
            bo, bo_connection = await connect(server, "member@example.com", tmp_path)
            answer = {"id": asked["id"], "approve": True, "argumentsHash": before["argumentsHash"]}
            assert await refused(bo_connection, "attention-v1/answer", answer) == (
                "attentionNotFound"
            )
            assert (await admin.call("attention-v1/answer", answer))["approved"] is True
            finished = await until(admin, thread_id, "turn-finished")
            assert (finished["turnId"], finished["status"]) == (sent["turnId"], "done")
            # The queued message starts the thread's next turn.
            taken = await until(admin, thread_id, "queued-message-taken")
            assert taken["id"] == queued["queued"]["id"]
            assert (await until(admin, thread_id, "turn-finished"))["status"] == "done"
            for connection, peer in ((admin, member), (bo_connection, bo)):
                await connection.close()
                await peer.hub.close()
        # Nobody was notified twice.
        assert [w.request_id for w in waiting] == [asked["id"]]

    # The approved click ran (on a tab that is gone) and the model read what it did, in
    # that turn and in the next, from the stored transcript.
    taken_up = fake.requests[1].messages()
    assert [b["text"] for b in taken_up[0]["content"] if b["type"] == "text"] == ["Buy"]
    assert fake.requests[2].messages()[-1]["content"][-1]["text"] == "Then"
    for request in fake.requests[1:]:
        [result] = [
            block
            for message in request.messages()
            if isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
        ]
        assert "not run" not in str(result["content"])
        assert "tab" in str(result["content"]).lower()
    row = await stored_request(database, asked["id"])
    assert (row.status, row.team_id, row.answered_by) == ("answered", team_id, owner_id)


async def test_a_consent_that_expired_while_the_host_was_down_is_a_denial(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> None:
    settings = hub_settings(tmp_path, database)
    async with FakeAnthropic() as fake:
        fake.script(MessageEvents().tool_use("toolu_1", "click", CLICK).stop("tool_use").reply())
        async with running_hub(settings, database, clock=clock) as server:
            await server.sign_up_owner()
            member, admin = await admin_with_anthropic(server, fake, tmp_path)
            agent = await admin.call("agents-v1/create", {"name": "Scout"})
            thread = await admin.call("threads-v1/start", {"agentId": agent["id"]})
            await admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Buy"})
            asked = await until(admin, thread["id"], "attention-requested")
            await admin.close()
            await member.hub.close()
        clock.advance(asked["expiresAt"] - clock.now() + 1)
        fake.script(MessageEvents().text("Understood.").stop().reply())
        async with running_hub(settings, database, clock=clock) as server:
            member, admin = await connect(server, "owner@example.com", tmp_path)
            turn = await turn_when_ended(admin, thread["id"])
            assert turn["status"] == "denied"
            answer = {"id": asked["id"], "approve": True}
            assert await refused(admin, "attention-v1/answer", answer) == "attentionNotFound"
            await admin.close()
            await member.hub.close()
    assert len(fake.requests) == 1  # the denial ends the turn: the model is not asked again
    assert (await stored_request(database, asked["id"])).status == "expired"


async def test_a_restart_ends_a_turn_waiting_for_an_answer_interrupted(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> None:
    settings = hub_settings(tmp_path, database)
    question = {"question": "Which colour?", "options": ["Red", "Blue"]}
    async with FakeAnthropic() as fake:
        fake.script(
            MessageEvents().tool_use("toolu_1", "ask_user", question).stop("tool_use").reply()
        )
        async with running_hub(settings, database, clock=clock) as server:
            await server.sign_up_owner()
            member, admin = await admin_with_anthropic(server, fake, tmp_path)
            agent = await admin.call("agents-v1/create", {"name": "Scout"})
            thread = await admin.call("threads-v1/start", {"agentId": agent["id"]})
            sent = await admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Paint"})
            asked = await until(admin, thread["id"], "attention-requested")
            await admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Then"})
            await admin.close()
            await member.hub.close()
        fake.script(MessageEvents().text("Then, as asked.").stop().reply())
        async with running_hub(settings, database, clock=clock) as server:
            member, admin = await connect(server, "owner@example.com", tmp_path)
            # The message queued behind the interrupted turn starts the next by itself.
            contents = await thread_with_turns_ended(admin, thread["id"], 2)
            first, then = contents["turns"]
            assert (first["id"], first["status"]) == (sent["turnId"], "interrupted")
            assert "host stopped" in first["reason"]
            assert then["status"] == "done"
            assert contents["queued"] == []
            assert fake.requests[-1].messages()[-1]["content"][-1]["text"] == "Then"
            assert await listed_requests(admin) == []
            reply = {"id": asked["id"], "answer": "Red"}
            assert await refused(admin, "attention-v1/reply", reply) == "attentionInterrupted"
            await admin.close()
            await member.hub.close()
    assert (await stored_request(database, asked["id"])).status == "interrupted"


async def listed_requests(connection: Any) -> list[dict[str, Any]]:
    return list((await connection.call("attention-v1/list"))["requests"])


async def requests_once_asked(connection: Any) -> list[dict[str, Any]]:
    """The requests listed once the turn taken up has reached its call again."""
    async with asyncio.timeout(20):
        while not (requests := await listed_requests(connection)):  # noqa: ASYNC110 - a list to poll
            await asyncio.sleep(0.05)
    return requests


async def thread_with_turns_ended(connection: Any, thread_id: str, turns: int) -> dict[str, Any]:
    """The thread once it holds ``turns`` turns and none runs."""
    async with asyncio.timeout(20):
        while True:
            contents = await connection.call("threads-v1/get", {"threadId": thread_id})
            if contents["runningTurnId"] is None and len(contents["turns"]) >= turns:
                return dict(contents)
            await asyncio.sleep(0.05)


async def turn_when_ended(connection: Any, thread_id: str) -> dict[str, Any]:
    """The thread's one turn, once it has ended (it may have before this reads it)."""
    contents = await connection.call("threads-v1/get", {"threadId": thread_id})
    if contents["runningTurnId"] is not None:
        await until(connection, thread_id, "turn-finished")
        contents = await connection.call("threads-v1/get", {"threadId": thread_id})
    [turn] = contents["turns"]
    return dict(turn)


async def stored_request(database: ScratchDatabase, request_id: str) -> Any:
    db = database.open()
    try:
        async with db.read() as conn:
            return (
                await conn.execute(
                    sa.select(attention_requests).where(attention_requests.c.id == request_id)
                )
            ).one()
    finally:
        await db.close()


async def test_what_a_crash_left_under_way_ends_interrupted_at_start(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> None:
    settings = hub_settings(tmp_path, database)
    async with running_hub(settings, database, clock=clock) as server:
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        member, admin = await connect(server, "owner@example.com", tmp_path)
        agent = await admin.call("agents-v1/create", {"name": "Scout"})
        thread = await admin.call("threads-v1/start", {"agentId": agent["id"]})
        await admin.close()
        await member.hub.close()
    # What a host that crashed mid-turn leaves: a running turn and a waiting request.
    db = database.open()
    try:
        async with db.write() as conn:
            await conn.execute(
                turns.insert().values(
                    id="a" * 32,
                    team_id=team_id,
                    thread_id=thread["id"],
                    status="running",
                    tool_calls=0,
                    input_tokens=0,
                    output_tokens=0,
                    started_at=clock.now(),
                )
            )
            await conn.execute(
                attention_requests.insert().values(
                    id="b" * 32,
                    team_id=team_id,
                    thread_id=thread["id"],
                    agent_id=agent["id"],
                    kind="consent",
                    tool="click",
                    description="Click “Buy” on Shop (shop.test)",
                    whole_team=False,
                    created_at=clock.now(),
                    expires_at=clock.now() + 300,
                    status="waiting",
                )
            )
    finally:
        await db.close()

    async with running_hub(settings, database, clock=clock) as server:
        member, admin = await connect(server, "owner@example.com", tmp_path)
        contents = await admin.call("threads-v1/get", {"threadId": thread["id"]})
        assert [t["status"] for t in contents["turns"]] == ["interrupted"]
        answer = {"id": "b" * 32, "approve": True}
        assert await refused(admin, "attention-v1/answer", answer) == "attentionInterrupted"
        await admin.close()
        await member.hub.close()
    db = database.open()
    try:
        async with db.read() as conn:
            shown = await conn.execute(sa.select(threads.c.id).where(threads.c.team_id == team_id))
            assert [r.id for r in shown] == [thread["id"]]
    finally:
        await db.close()

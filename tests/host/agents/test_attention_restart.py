"""Requests survive as records, not as waits: a host that stops while a turn waits for an
answer ends the turn and the request ``interrupted``, and one that starts after a crash ends
what the crash left under way the same way. Each run is a real hub and host on the same
database, once on SQLite and once on PostgreSQL."""

from __future__ import annotations

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


async def test_a_restart_ends_a_waiting_turn_and_its_request_interrupted(
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
            member, admin = await connect(server, "owner@example.com", tmp_path)
            await admin.call(
                "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
            )
            await admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
            agent = await admin.call("agents-v1/create", {"name": "Scout"})
            thread = await admin.call("threads-v1/start", {"agentId": agent["id"]})
            thread_id = thread["id"]
            sent = await admin.call("threads-v1/send", {"threadId": thread_id, "text": "Buy"})
            asked = await until(admin, thread_id, "attention-requested")
            queued = await admin.call("threads-v1/send", {"threadId": thread_id, "text": "Then"})
            assert queued["turnId"] is None
            owner_id = (await admin.call("host-v1/whoami"))["accountId"]
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

        async with running_hub(settings, database, clock=clock) as server:
            member, admin = await connect(server, "owner@example.com", tmp_path)
            contents = await admin.call("threads-v1/get", {"threadId": thread_id})
            [turn] = contents["turns"]
            assert (turn["id"], turn["status"]) == (sent["turnId"], "interrupted")
            assert "host stopped" in turn["reason"]
            assert contents["runningTurnId"] is None
            assert (await admin.call("attention-v1/list"))["requests"] == []
            answer = {"id": asked["id"], "approve": True}
            assert await refused(admin, "attention-v1/answer", answer) == "attentionInterrupted"
            # A member who could never answer it learns nothing of it.
            bo, bo_connection = await connect(server, "member@example.com", tmp_path)
            assert await refused(bo_connection, "attention-v1/answer", answer) == (
                "attentionNotFound"
            )
            # The message queued before the restart is kept; the next message joins it, and
            # the oldest starts the thread's next turn.
            assert [q["text"] for q in contents["queued"]] == ["Then"]
            fake.script(
                MessageEvents().text("Then, as asked.").stop().reply(),
                MessageEvents().text("Starting over.").stop().reply(),
            )
            again = await admin.call("threads-v1/send", {"threadId": thread_id, "text": "Again"})
            assert again["turnId"] is None
            taken = await until(admin, thread_id, "queued-message-taken")
            assert taken["id"] == queued["queued"]["id"]
            for _ in range(2):
                finished = await until(admin, thread_id, "turn-finished")
                assert finished["status"] == "done"
            texts = [m["text"] for m in fake.requests[-1].messages()[-1]["content"]]
            assert texts == ["Again"]
            for connection, peer in ((admin, member), (bo_connection, bo)):
                await connection.close()
                await peer.hub.close()

    db = database.open()
    try:
        async with db.read() as conn:
            row = (
                await conn.execute(
                    sa.select(attention_requests).where(attention_requests.c.id == asked["id"])
                )
            ).one()
    finally:
        await db.close()
    assert (row.status, row.team_id, row.description) == (
        "interrupted",
        team_id,
        asked["description"],
    )


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

"""``crewhost-peer notifications`` as a real process: the caller's list, newest first, and
``--unread`` after one is marked read."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.common.roles import Role
from server.host.agents.work_signals import AttentionWaiting, RunFinished
from server.host.services.workspace import Member
from tests.peer.test_cli import login, peer_cli
from tests.support.clock import FakeClock
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked

pytestmark = pytest.mark.sqlite_only


async def test_lists_the_callers_notifications(
    server: RunningHub, tmp_path: Path, clock: FakeClock
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    account_id = str((await owner.get("/v1/me")).body["id"])
    await login(tmp_path, server)
    await wait_linked(server)
    signals = server.builtin.services.signals
    signals.publish(
        RunFinished(
            team_id=team_id,
            agent_id="c" * 32,
            routine_id="f" * 32,
            routine_name="Morning report",
            run_id="9" * 32,
            thread_id=None,
            status="done",
            audience=(account_id,),
        )
    )
    await signals.close()
    clock.advance(1)  # newer, on the host clock (the hub shares it: a minute would be offline)
    signals.publish(
        AttentionWaiting(
            team_id=team_id,
            agent_id="c" * 32,
            thread_id="d" * 32,
            request_id="e" * 32,
            kind="question",
            description="Which size: S or M?",
            addressed_to=(account_id,),
            expires_at=0.0,
        )
    )
    await signals.close()
    code, out, err = await peer_cli(tmp_path, "notifications")
    assert code == 0, err
    header, question, run, unread = out.splitlines()
    assert header.split() == ["TIME", "KIND", "STATE", "NOTIFICATION"]
    assert question.split()[2:5] == ["question", "unread", "A"]
    assert question.endswith("A question for you: Which size: S or M?")
    assert run.split()[2:4] == ["runFinished", "unread"]
    assert "“Morning report” finished" in run
    assert unread == "2 unread"

    notifications, owner_member = (
        server.builtin.services.notifications,
        Member(team_id, account_id, Role.OWNER),
    )
    newest = (await notifications.list_notifications(owner_member, before=None)).notifications[0]
    await notifications.mark_read(owner_member, newest.id)
    code, out, _ = await peer_cli(tmp_path, "notifications", "--unread")
    assert code == 0
    _, only, unread = out.splitlines()
    assert "Morning report" in only
    assert unread == "1 unread"

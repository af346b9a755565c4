"""notifications-v1 and mail-server-v1 over real peers: each member reads and marks only
their own, hears of a new one at once, and only owners set the mail server, whose password
never comes back."""

from __future__ import annotations

import asyncio
from typing import Any

from peer.connection import HostConnection
from server.host.agents.work_signals import AttentionWaiting, RunFinished
from tests.host.routes.conftest import Roles, Team, refused
from tests.support.fakes.smtp import FakeSmtpServer
from tests.support.hub_server import RunningHub

AGENT, THREAD = "c" * 32, "d" * 32
EVENT_SECONDS = 10.0


async def account_of(connection: HostConnection) -> str:
    return str((await connection.call("host-v1/whoami"))["accountId"])


async def publish(server: RunningHub, signal: object) -> None:
    signals = server.builtin.services.signals
    signals.publish(signal)
    await signals.close()  # the subscribers have run


def waiting(team_id: str, *accounts: str) -> AttentionWaiting:
    return AttentionWaiting(
        team_id=team_id,
        agent_id=AGENT,
        thread_id=THREAD,
        request_id="e" * 32,
        kind="consent",
        description="Click “Pay now” on Shop (shop.test)",
        addressed_to=accounts,
        expires_at=0.0,
    )


async def next_event(connection: HostConnection, name: str) -> dict[str, Any]:
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await connection.events.get()
            if event["event"] == name:
                return dict(event["data"])


async def test_a_member_hears_of_reads_and_marks_their_own(server: RunningHub, team: Team) -> None:
    member = await account_of(team.member)
    await publish(server, waiting(team.team_id, member))
    event = await next_event(team.member, "notification-created")
    assert (event["kind"], event["threadId"], event["unread"]) == ("approval", THREAD, 1)
    page = await team.member.call("notifications-v1/list")
    [item] = page["notifications"]
    assert item["id"] == event["id"]
    assert item["body"] == "Click “Pay now” on Shop (shop.test)"
    assert item["readAt"] is None
    assert page["unread"] == 1
    # The owner sees none of it, and cannot mark it.
    assert (await team.admin.call("notifications-v1/list"))["notifications"] == []
    assert await refused(team.admin, "notifications-v1/mark_read", {"id": item["id"]}) == (
        "notificationNotFound"
    )
    assert await team.member.call("notifications-v1/mark_read", {"id": item["id"]}) == {"unread": 0}
    assert (await next_event(team.member, "notifications-read"))["unread"] == 0
    assert (await team.member.call("notifications-v1/list", {"unreadOnly": True}))[
        "notifications"
    ] == []


async def test_mark_all_read_and_runs_finishing(server: RunningHub, team: Team) -> None:
    member, owner = await account_of(team.member), await account_of(team.admin)
    run = RunFinished(
        team_id=team.team_id,
        agent_id=AGENT,
        routine_id="f" * 32,
        routine_name="Morning report",
        run_id="9" * 32,
        thread_id=None,
        status="error",
        audience=(member, owner),
        reason="The page did not load.",
    )
    await publish(server, run)
    await publish(server, waiting(team.team_id, member))
    listed = await team.member.call("notifications-v1/list")
    assert [n["kind"] for n in listed["notifications"]] == ["approval", "runFailed"]
    assert await team.member.call("notifications-v1/mark_all_read") == {"marked": 2}
    assert (await team.member.call("notifications-v1/list"))["unread"] == 0
    assert (await team.admin.call("notifications-v1/list"))["unread"] == 1


async def test_preferences_are_each_members_own(team: Team) -> None:
    defaults = await team.member.call("notifications-v1/get_preferences")
    assert defaults == {
        "email": None,
        "approval": "immediately",
        "question": "immediately",
        "runFinished": "off",
        "runFailed": "immediately",
    }
    chosen = defaults | {"email": "member@example.com", "runFinished": "digest"}
    assert await team.member.call("notifications-v1/set_preferences", chosen) == chosen
    assert await team.admin.call("notifications-v1/get_preferences") == defaults
    bad = chosen | {"email": "nobody"}
    assert await refused(team.member, "notifications-v1/set_preferences", bad) == (
        "invalidArgument"
    )
    bad = chosen | {"approval": "weekly"}
    assert await refused(team.member, "notifications-v1/set_preferences", bad) == (
        "invalidArgument"
    )
    assert await team.member.call("notifications-v1/get_preferences") == chosen


async def test_only_owners_set_the_mail_server_and_the_password_never_returns(
    roles: Roles,
) -> None:
    password = "route-smtp-secret-9"
    async with FakeSmtpServer(login=("mailer", password)) as smtp:
        args = {
            "host": "127.0.0.1",
            "port": smtp.port,
            "tlsMode": "none",
            "password": password,
            "username": "mailer",
            "fromAddress": "crew@example.com",
        }
        for caller in (roles.admin, roles.member):
            assert await refused(caller, "mail-server-v1/set", args) == "forbidden"
            assert await refused(caller, "mail-server-v1/get", {}) == "forbidden"
            assert await refused(caller, "mail-server-v1/send_test", {"to": "a@b.cd"}) == (
                "forbidden"
            )
        assert await refused(roles.owner, "mail-server-v1/send_test", {"to": "a@b.cd"}) == (
            "mailNotSet"
        )
        shown = await roles.owner.call("mail-server-v1/set", args)
        assert shown["server"]["passwordSet"] is True
        assert password not in str(shown)
        assert password not in str(await roles.owner.call("mail-server-v1/get"))
        sent = await roles.owner.call("mail-server-v1/send_test", {"to": "owner@example.com"})
        assert sent == {"sent": True}
        [mail] = await smtp.wait_for(1)
        assert mail.recipients == ["owner@example.com"]
        assert mail.subject == "Crewhost test mail"
        assert smtp.logins == ["mailer"]
        bad = args | {"tlsMode": "ssl"}
        assert await refused(roles.owner, "mail-server-v1/set", bad) == "invalidArgument"
        assert (await roles.owner.call("mail-server-v1/get"))["server"]["tlsMode"] == "none"
        assert await roles.owner.call("mail-server-v1/delete") == {"server": None}
        assert await refused(roles.owner, "mail-server-v1/send_test", {"to": "a@b.cd"}) == (
            "mailNotSet"
        )


async def routines_of(team: Team, agent_id: str) -> list[dict[str, Any]]:
    return list((await team.admin.call("routines-v1/list", {"agentId": agent_id}))["routines"])


async def test_a_member_removed_from_the_team_hears_of_it_no_more(
    server: RunningHub, team: Team
) -> None:
    member = await account_of(team.member)
    await team.member.call(
        "notifications-v1/set_preferences",
        {
            "email": "member@example.com",
            "approval": "immediately",
            "question": "digest",
            "runFinished": "immediately",
            "runFailed": "immediately",
        },
    )
    await publish(server, waiting(team.team_id, member))
    assert (await team.member.call("notifications-v1/list", {}))["unread"] == 1
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    routine = await team.admin.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": "Daily",
            "message": "Report.",
            "schedule": {"kind": "every", "everySeconds": 3600},
            "audience": "members",
            "audienceMembers": [member],
            "approvers": [member],
        },
    )

    owner = await server.sign_in("owner@example.com")
    removed = await owner.delete(f"/v1/teams/{team.team_id}/members/{member}")
    assert removed.status == 204
    async with asyncio.timeout(EVENT_SECONDS):
        await team.member.closed.wait()  # the host heard of the removal
    notifications = server.builtin.services.notifications

    async def preferences() -> Any:
        async with server.builtin.services.db.read() as conn:
            return await notifications._prefs.get_preferences(conn, team.team_id, member)

    # Its subscribers (the routines', then the notifications') run as the link reads the
    # removal, beside the end of the member's peers.
    async with asyncio.timeout(EVENT_SECONDS):
        while await preferences() is not None:  # noqa: ASYNC110 - rows to poll
            await asyncio.sleep(0.02)
    [kept] = await routines_of(team, agent["id"])
    assert (kept["id"], kept["audienceMembers"], kept["approvers"]) == (routine["id"], [], [])
    async with server.builtin.services.db.read() as conn:
        assert await notifications._items.count_unread(conn, team.team_id, member) == 0

"""routines-v1 over real peers: create, preview, list, update, delete, roles, bad input, and
a run through a local fake of Anthropic's API that ends done and records its thread."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from peer.connection import HostConnection, TeamApiCallError
from server.db.tables import routines as routines_table
from tests.host.routes.conftest import Team, refused
from tests.support.clock import FakeClock
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub

EVENT_SECONDS = 30.0
WEEKDAYS = {"kind": "cron", "cron": "0 9 * * 1-5", "timeZone": "Europe/London"}


@pytest.fixture
async def anthropic(team: Team) -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        yield fake


async def until(connection: HostConnection, name: str, run_id: str) -> dict[str, Any]:
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await connection.events.get()
            if event["event"] == name and event["data"].get("runId") == run_id:
                return dict(event["data"])


async def test_create_preview_list_update_and_delete(team: Team) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    preview = await team.member.call("routines-v1/preview", WEEKDAYS)
    assert preview["words"] == "Weekdays at 09:00, Europe/London"
    assert len(preview["nextTimes"]) == 3
    assert all(t.endswith("09:00") for t in preview["nextTimesLocal"])
    assert preview["nextTimesLocal"][0][:3] in {"Mon", "Tue", "Wed", "Thu", "Fri"}

    made = await team.member.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": " Orders ",
            "message": "Count orders.",
            "schedule": WEEKDAYS,
        },
    )
    assert (made["name"], made["threadPolicy"], made["overlap"], made["missed"]) == (
        "Orders",
        "new",
        "skip",
        "once",
    )
    assert made["nextFireAt"] == preview["nextTimes"][0]
    assert made["schedule"]["words"] == preview["words"]

    # The admin sees it; the owner's own private routine is not the member's to see.
    listed = await team.admin.call("routines-v1/list", {"agentId": agent["id"]})
    assert [r["id"] for r in listed["routines"]] == [made["id"]]
    own = await team.admin.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": "Admin's",
            "message": "Hi.",
            "schedule": {"kind": "every", "everySeconds": 3600},
        },
    )
    assert own["schedule"]["words"] == "Every hour"
    mine = await team.member.call("routines-v1/list", {"agentId": agent["id"]})
    assert [r["id"] for r in mine["routines"]] == [made["id"]]
    assert await refused(team.member, "routines-v1/get", {"routineId": own["id"]}) == (
        "routineNotFound"
    )
    assert await refused(team.member, "routines-v1/run", {"routineId": own["id"]}) == (
        "routineNotFound"
    )

    changed = await team.admin.call(
        "routines-v1/update",
        {
            "routineId": made["id"],
            "name": "Orders",
            "message": "Count orders.",
            "schedule": WEEKDAYS,
            "enabled": False,
        },
    )
    assert (changed["enabled"], changed["nextFireAt"]) == (False, None)
    assert (await team.member.call("routines-v1/delete", {"routineId": made["id"]}))["deleted"]
    assert await refused(team.member, "routines-v1/get", {"routineId": made["id"]}) == (
        "routineNotFound"
    )


async def test_bad_schedules_are_refused_with_their_codes_and_nothing_is_saved(
    team: Team,
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"kind": "cron", "cron": "0 25 * * *", "timeZone": "UTC"}, "invalidSchedule", "cron"),
        (
            {"kind": "cron", "cron": "0 9 * * *", "timeZone": "Mars/Olympus"},
            "invalidSchedule",
            "timeZone",
        ),
        ({"kind": "cron", "cron": "0 9 30 2 *", "timeZone": "UTC"}, "invalidSchedule", "cron"),
        ({"kind": "cron", "timeZone": "UTC"}, "invalidSchedule", "cron"),
        ({"kind": "once"}, "invalidSchedule", "at"),
        (
            {"kind": "cron", "cron": "*/10 * * * * *", "timeZone": "UTC"},
            "scheduleTooFrequent",
            "cron",
        ),
        ({"kind": "every", "everySeconds": 30}, "scheduleTooFrequent", "everySeconds"),
    ]
    for schedule, code, field in cases:
        create: dict[str, Any] = {"agentId": agent["id"], "name": "R", "message": "Go."}
        create["schedule"] = schedule
        for route, args in (("routines-v1/preview", schedule), ("routines-v1/create", create)):
            with pytest.raises(TeamApiCallError) as caught:
                await team.member.call(route, args)
            assert (caught.value.code, route) == (code, route), schedule
            assert caught.value.message.startswith(f"field '{field}': "), schedule
    listed = await team.member.call("routines-v1/list", {"agentId": agent["id"]})
    assert listed["routines"] == []
    unknown = {"agentId": "f" * 32, "name": "R", "message": "Go.", "schedule": WEEKDAYS}
    assert await refused(team.member, "routines-v1/create", unknown) == "agentNotFound"


async def test_a_run_now_ends_done_with_its_thread(team: Team, anthropic: FakeAnthropic) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    routine = await team.member.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": "Orders",
            "message": "Count today's orders.",
            "schedule": WEEKDAYS,
        },
    )
    anthropic.script(MessageEvents().text("There were 12 orders.").stop("end_turn").reply())
    run = await team.member.call("routines-v1/run", {"routineId": routine["id"]})
    assert (run["status"], run["trigger"]) == ("running", "manual")
    started = await until(team.member, "routine-run-started", run["id"])
    finished = await until(team.member, "routine-run-finished", run["id"])
    assert (finished["status"], finished["reason"]) == ("done", None)
    assert finished["threadId"] == started["threadId"]

    [recorded] = (await team.member.call("routines-v1/history", {"routineId": routine["id"]}))[
        "runs"
    ]
    assert (recorded["status"], recorded["threadId"]) == ("done", started["threadId"])
    assert recorded["endedAt"] >= recorded["startedAt"]
    # The run's thread is the member's, with the routine's message and the agent's reply.
    thread = await team.member.call("threads-v1/get", {"threadId": started["threadId"]})
    # Titled with the time it ran in the routine's own zone, as its schedule is read.
    # (the title is made just before the run's start is stored: the same minute, or the one
    # before it when a minute turned between them)
    london = ZoneInfo("Europe/London")
    assert thread["thread"]["title"] in {
        f"Orders · {datetime.fromtimestamp(recorded['startedAt'] - back, london):%a %-d %b %H:%M}"
        for back in (0, 60)
    }
    texts = [m.get("text") for m in thread["messages"]]
    assert texts == ["Count today's orders.", "There were 12 orders."]
    assert [t["status"] for t in thread["turns"]] == ["done"]
    # The admin, not in its audience, heard nothing of it but may read its history.
    history = await team.admin.call("routines-v1/history", {"routineId": routine["id"]})
    assert [r["id"] for r in history["runs"]] == [run["id"]]


async def test_a_run_a_spent_budget_refuses_leaves_no_thread_behind(
    team: Team, anthropic: FakeAnthropic
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    routine = await team.member.call(
        "routines-v1/create",
        {"agentId": agent["id"], "name": "Orders", "message": "Count.", "schedule": WEEKDAYS},
    )
    anthropic.script(MessageEvents().text("12 orders.").stop("end_turn").reply())
    first = await team.member.call("routines-v1/run", {"routineId": routine["id"]})
    assert (await until(team.member, "routine-run-finished", first["id"]))["status"] == "done"
    budget = await team.admin.call(
        "budgets-v1/create",
        {
            "name": "Reporter's tokens",
            "scope": "agent",
            "targetId": agent["id"],
            "unit": "tokens",
            "amount": "1000000",
        },
    )
    [listed] = (await team.admin.call("budgets-v1/list"))["budgets"]
    assert int(listed["used"]) > 0
    await team.admin.call(
        "budgets-v1/update",
        {
            "id": budget["id"],
            "name": "Reporter's tokens",
            "scope": "agent",
            "targetId": agent["id"],
            "unit": "tokens",
            "amount": listed["used"],
        },
    )
    threads = await team.member.call("threads-v1/list", {"agentId": agent["id"]})
    run = await team.member.call("routines-v1/run", {"routineId": routine["id"]})
    finished = await until(team.member, "routine-run-finished", run["id"])
    assert finished["status"] == "budget"
    assert "Reporter's tokens" in finished["reason"]
    assert finished["threadId"] is None
    # The refused run made no thread: the member's list is as it was.
    assert await team.member.call("threads-v1/list", {"agentId": agent["id"]}) == threads


async def test_an_unattended_gated_call_waits_for_an_approver_and_is_not_approved(
    team: Team, anthropic: FakeAnthropic
) -> None:
    """The member's routine names the admin as approver: the admin, who does not see the
    member's private thread, gets the request; denied, the run ends denied."""
    agent = await team.admin.call("agents-v1/create", {"name": "Clicker"})
    admin_id = (await team.admin.call("host-v1/whoami"))["accountId"]
    routine = await team.member.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": "Click",
            "message": "Press the button.",
            "schedule": WEEKDAYS,
            "approvers": [admin_id],
        },
    )
    anthropic.script(
        MessageEvents()
        .tool_use(
            "toolu_1", "click", {"tabId": "tab-1", "target": {"kind": "css", "selector": "b"}}
        )
        .stop("tool_use")
        .reply()
    )
    run = await team.member.call("routines-v1/run", {"routineId": routine["id"]})
    started = await until(team.member, "routine-run-started", run["id"])
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await team.admin.events.get()
            if event["event"] == "attention-requested":
                asked = event["data"]
                break
    assert (asked["kind"], asked["threadId"], asked["tool"]) == (
        "consent",
        started["threadId"],
        "click",
    )
    [waiting] = (await team.admin.call("attention-v1/list"))["requests"]
    assert waiting["id"] == asked["id"]
    [history] = (await team.member.call("routines-v1/history", {"routineId": routine["id"]}))[
        "runs"
    ]
    assert history["status"] == "running"
    await team.admin.call("attention-v1/answer", {"id": asked["id"], "approve": False})
    finished = await until(team.member, "routine-run-finished", run["id"])
    assert finished["status"] == "denied"


async def test_the_host_fires_a_due_routine_on_its_schedule(
    team: Team, server: RunningHub, clock: FakeClock
) -> None:
    """The built-in host's scheduler, started with the host, fires a routine once its time
    comes on the host's clock (no provider key: the turn, and so the run, ends error)."""
    agent = await team.admin.call("agents-v1/create", {"name": "Hourly"})
    routine = await team.member.call(
        "routines-v1/create",
        {
            "agentId": agent["id"],
            "name": "Hourly",
            "message": "Check.",
            "schedule": {"kind": "every", "everySeconds": 3600},
        },
    )
    clock.advance(routine["nextFireAt"] - clock.now() + 1)
    # The loop sleeps on the real clock; a moved fake clock wakes it as a change would.
    server.builtin.services.routines.schedule_changed.set()
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await team.member.events.get()
            if event["event"] == "routine-run-started":
                started = event["data"]
                break
    assert (started["routineId"], started["trigger"]) == (routine["id"], "schedule")
    finished = await until(team.member, "routine-run-finished", started["runId"])
    assert finished["status"] == "error"
    [run] = (await team.member.call("routines-v1/history", {"routineId": routine["id"]}))["runs"]
    assert (run["trigger"], run["dueAt"]) == ("schedule", routine["nextFireAt"])
    after = await team.member.call("routines-v1/get", {"routineId": routine["id"]})
    assert after["nextFireAt"] == routine["nextFireAt"] + 3600


async def test_a_routine_whose_stored_zone_no_longer_reads_is_still_listed(
    team: Team, server: RunningHub
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Reporter"})
    made = await team.member.call(
        "routines-v1/create",
        {"agentId": agent["id"], "name": "Orders", "message": "Count.", "schedule": WEEKDAYS},
    )
    schedule = {"kind": "cron", "cron": "0 9 * * 1-5", "time_zone": "Gone/Zone"}
    async with server.builtin.services.db.write() as conn:
        await conn.execute(
            routines_table.update()
            .where(routines_table.c.id == made["id"])
            .values(schedule=json.dumps(schedule))
        )
    listed = await team.member.call("routines-v1/list", {"agentId": agent["id"]})
    [shown] = listed["routines"]
    assert (shown["id"], shown["schedule"]["nextTimes"]) == (made["id"], [])

"""Delegation between agents (``list_agents``, ``ask_agent``) against the fake provider, with
members on real peers, on both databases: whom an agent may ask, the asked agent's answer
reaching the asking one, the threads linked both ways, the asked agent's approvals going to
the asking thread's member, the time limit, the depth cap, cycles, other teams, and a stop
that ends both turns."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from peer.connection import HostConnection
from tests.host.routes.conftest import Team, refused
from tests.host.routes.test_routines import WEEKDAYS
from tests.host.routes.test_sub_agents import calls, result_of, says
from tests.host.routes.test_threads import EVENT_SECONDS, until
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member
from tests.support.waiting import eventually


async def agents(team: Team, fake: FakeAnthropic, *specs: dict[str, Any]) -> list[str]:
    """The team's provider pointed at the fake, and one agent per spec; their ids."""
    await team.admin.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
    )
    await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
    return [str((await team.admin.call("agents-v1/create", spec))["id"]) for spec in specs]


async def may_ask(team: Team, agent_id: str, *others: str) -> None:
    await team.admin.call("agents-v1/update", {"id": agent_id, "mayAsk": list(others)})


async def member_thread(team: Team, agent_id: str) -> str:
    """A private thread of the (plain) member with the agent."""
    thread = await team.member.call("threads-v1/start", {"agentId": agent_id, "title": "Work"})
    return str(thread["id"])


async def ask(team: Team, thread_id: str, text: str) -> None:
    await team.member.call("threads-v1/send", {"threadId": thread_id, "text": text})


def asking(call_id: str, agent: str, task: str, **more: Any) -> StreamReply:
    return calls((call_id, "ask_agent", {"agent": agent, "task": task, **more}))


def stalled(text: str) -> StreamReply:
    """A reply that says ``text`` and then holds its stream open (until the fake closes)."""
    body = MessageEvents().text(text).stop().body()
    first = MessageEvents().text(text).body()
    return StreamReply(body, chunk_size=len(first), stall_after=1)


async def test_may_ask_is_checked_kept_and_dropped_with_the_agent(
    team: Team, server: RunningHub, tmp_path: Path
) -> None:
    lead = await team.admin.call("agents-v1/create", {"name": "Lead"})
    pricer = await team.admin.call("agents-v1/create", {"name": "Pricer"})
    assert lead["mayAsk"] == []  # nobody by default
    made = await team.admin.call(
        "agents-v1/create", {"name": "Boss", "mayAsk": [lead["id"], pricer["id"]]}
    )
    assert made["mayAsk"] == [lead["id"], pricer["id"]]
    updated = await team.admin.call(
        "agents-v1/update", {"id": lead["id"], "mayAsk": [pricer["id"], pricer["id"]]}
    )
    assert updated["mayAsk"] == [pricer["id"]]

    await server.create_owner("other@example.com", "Team B")
    outsider = await peer_member(server, "other@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    theirs = await connection.call("agents-v1/create", {"name": "Theirs"})
    for wrong in ([lead["id"]], ["f" * 32], [theirs["id"]]):
        update = {"id": lead["id"], "mayAsk": wrong}
        assert await refused(team.admin, "agents-v1/update", update) == "agentMayAskInvalid"
    assert await refused(team.member, "agents-v1/update", {"id": lead["id"], "mayAsk": []}) == (
        "forbidden"
    )
    assert await refused(
        team.admin, "agents-v1/create", {"name": "X", "mayAsk": [theirs["id"]]}
    ) == ("agentMayAskInvalid")
    await connection.close()
    await outsider.hub.close()
    # Nothing refused was saved.
    assert (await team.member.call("agents-v1/get", {"id": lead["id"]}))["mayAsk"] == [pricer["id"]]
    assert [a["name"] for a in (await team.admin.call("agents-v1/list"))["agents"]] == [
        "Lead",
        "Pricer",
        "Boss",
    ]

    await team.admin.call("agents-v1/delete", {"id": pricer["id"]})
    assert (await team.admin.call("agents-v1/get", {"id": lead["id"]}))["mayAsk"] == []
    assert (await team.admin.call("agents-v1/get", {"id": made["id"]}))["mayAsk"] == [lead["id"]]


async def test_an_agent_asks_another_and_answers_with_its_answer(team: Team) -> None:
    async with FakeAnthropic() as fake:
        lead, pricer = await agents(
            team,
            fake,
            {"name": "Lead"},
            {"name": "Pricer", "instructions": "Finds the prices of teas.\nAlways in EUR."},
        )
        await may_ask(team, lead, pricer)
        thread_id = await member_thread(team, lead)
        fake.script(
            calls(("toolu_l", "list_agents", {})),
            asking("toolu_a", "pricer", "What does green tea cost?"),
            calls(
                (
                    "toolu_w",
                    "workspace_write",
                    {"scope": "team", "path": "reports/tea.md", "content": "Green: 3 EUR"},
                )
            ),
            says("Green tea costs 3 EUR; details in reports/tea.md (not in missing.md)."),
            says("The pricer says green tea costs 3 EUR."),
        )
        await ask(team, thread_id, "Find the price of green tea")
        started = await until(team.member, thread_id, "delegation-started")
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"

        listed = result_of(fake, 1, "toolu_l")
        assert listed == {
            "agents": [{"id": pricer, "name": "Pricer", "purpose": "Finds the prices of teas."}]
        }
        # The asked agent's own turn: its instructions, the task as its first message.
        asked = fake.requests[2]
        assert "Always in EUR." in json.dumps(asked.body["system"])
        assert [m["role"] for m in asked.messages()] == ["user"]
        assert "What does green tea cost?" in json.dumps(asked.messages())
        # Its answer reached the asking agent's model.
        report = result_of(fake, 4, "toolu_a")
        assert report["status"] == "done"
        assert report["answer"] == (
            "Green tea costs 3 EUR; details in reports/tea.md (not in missing.md)."
        )
        assert report["files"] == ["reports/tea.md"]
        assert report["agent"] == "Pricer"
        child = report["threadId"]

    assert (started["childThreadId"], started["agentId"]) == (child, pricer)
    assert started["callId"].endswith(".2")
    # Linked both ways, and the member's as the asking thread is.
    read = await team.member.call("threads-v1/get", {"threadId": child})
    assert (read["thread"]["parentThreadId"], read["thread"]["parentAgentId"]) == (
        thread_id,
        lead,
    )
    assert read["thread"]["shared"] is False
    assert [t["status"] for t in read["turns"]] == ["done"]
    parent = await team.member.call("threads-v1/get", {"threadId": thread_id})
    assert [(d["threadId"], d["agentId"]) for d in parent["delegations"]] == [(child, pricer)]
    assert parent["thread"]["parentThreadId"] is None
    listed_threads = await team.member.call("threads-v1/list", {"agentId": pricer})
    assert [t["parentThreadId"] for t in listed_threads["threads"]] == [thread_id]
    # The asking thread is private to its member: so is the one it started.
    assert await refused(team.admin, "threads-v1/get", {"threadId": child}) == "threadNotFound"


async def test_the_asked_agents_spending_is_the_asking_turns_member(team: Team) -> None:
    """What the asked agent spends counts to the member who started the asking turn: in
    the team's usage by member, in the member's own, and so against their budget."""
    async with FakeAnthropic() as fake:
        lead, pricer = await agents(team, fake, {"name": "Lead"}, {"name": "Pricer"})
        await may_ask(team, lead, pricer)
        thread_id = await member_thread(team, lead)
        fake.script(
            asking("toolu_a", "pricer", "What does green tea cost?"),
            says("3 EUR."),
            says("The pricer says 3 EUR."),
        )
        await ask(team, thread_id, "Find the price of green tea")
        assert (await until(team.member, thread_id, "turn-finished"))["status"] == "done"
    member_id = (await team.member.call("host-v1/whoami"))["accountId"]
    rows = (await team.admin.call("usage-v1/summary", {"by": ["agent", "member"]}))["rows"]
    assert {(r["key"]["agent"], r["key"]["member"]) for r in rows} == {
        (lead, member_id),
        (pricer, member_id),
    }
    own = (await team.member.call("usage-v1/summary", {"by": ["agent"]}))["rows"]
    assert {r["key"]["agent"] for r in own} == {lead, pricer}

    # A member budget the two turns spent refuses the member's next ask of the pricer.
    spent = sum(int(r["inputTokens"]) + int(r["outputTokens"]) for r in rows)
    budget = await team.admin.call(
        "budgets-v1/create",
        {
            "name": "The member's tokens",
            "scope": "member",
            "targetId": member_id,
            "unit": "tokens",
            "amount": str(spent),
        },
    )
    [listed] = (await team.admin.call("budgets-v1/list"))["budgets"]
    assert (listed["id"], int(listed["used"])) == (budget["id"], spent)
    refusal = await refused(
        team.member, "threads-v1/send", {"threadId": thread_id, "text": "Again"}
    )
    assert refusal == "budgetExceeded"


async def approve_when_asked(connection: HostConnection, thread_id: str) -> dict[str, Any]:
    request = await until(connection, thread_id, "attention-requested")
    listed = await connection.call("attention-v1/list")
    shown = [r for r in listed["requests"] if r["id"] == request["id"]]
    assert len(shown) == 1, listed
    await connection.call(
        "attention-v1/answer",
        {"id": request["id"], "approve": True, "argumentsHash": shown[0]["argumentsHash"]},
    )
    return request


async def test_the_asked_agents_gated_call_waits_for_the_asking_threads_member(
    team: Team,
) -> None:
    async with FakeAnthropic() as fake:
        lead, clicker = await agents(team, fake, {"name": "Lead"}, {"name": "Clicker"})
        await may_ask(team, lead, clicker)
        thread_id = await member_thread(team, lead)
        click = {"tabId": "no-such-tab", "target": {"kind": "css", "selector": "button"}}
        fake.script(
            asking("toolu_a", clicker, "Click the button"),
            calls(("toolu_c", "click", click)),
            says("I clicked what I could."),
            says("Clicker is done."),
        )
        await ask(team, thread_id, "Get the button clicked")
        started = await until(team.member, thread_id, "delegation-started")
        child = started["childThreadId"]
        request = await approve_when_asked(team.member, child)
        assert request["tool"] == "click"
        # Only the asking thread's member was asked: the owner sees no such request.
        owners = await team.admin.call("attention-v1/list")
        assert request["id"] not in {r["id"] for r in owners["requests"]}
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"
        # Approved, the call ran (and found no tab); the asked agent went on.
        ran = result_of(fake, 2, "toolu_c")
        assert ran["error"]["code"] == "tabNotFound"
        assert result_of(fake, 3, "toolu_a")["answer"] == "I clicked what I could."


async def test_an_answer_not_in_time_stops_the_asked_turn(team: Team) -> None:
    async with FakeAnthropic() as fake:
        lead, slow = await agents(team, fake, {"name": "Lead"}, {"name": "Slow"})
        await may_ask(team, lead, slow)
        thread_id = await member_thread(team, lead)
        fake.script(
            asking("toolu_a", "Slow", "Take your time", timeoutSeconds=1),
            stalled("Still reading"),
            says("Slow did not answer in time."),
        )
        await ask(team, thread_id, "Ask Slow")
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"
        report = result_of(fake, 2, "toolu_a")
    assert report["status"] == "timeout"
    assert report["error"]["code"] == "delegationTimedOut"
    child = await team.member.call("threads-v1/get", {"threadId": report["threadId"]})
    assert [(t["status"], t["reason"]) for t in child["turns"]] == [
        ("stopped", "the agent that asked stopped waiting (its time limit)")
    ]


async def test_a_chain_of_asks_holds_three_agents(team: Team) -> None:
    async with FakeAnthropic() as fake:
        a, b, c, d = await agents(
            team, fake, {"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D"}
        )
        await may_ask(team, a, b)
        await may_ask(team, b, c)
        await may_ask(team, c, d)
        thread_id = await member_thread(team, a)
        fake.script(
            asking("toolu_ab", "B", "Task for B"),
            asking("toolu_bc", "C", "Task for C"),
            asking("toolu_cd", "D", "Task for D"),
            says("C: I had to do it myself."),
            says("B: C did it."),
            says("A: all done."),
        )
        await ask(team, thread_id, "Start the chain")
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"
        refusal = result_of(fake, 3, "toolu_cd")
        assert result_of(fake, 5, "toolu_ab")["answer"] == "B: C did it."
    assert refusal["error"]["code"] == "delegationTooDeep"
    # D was never asked: no thread of its.
    assert (await team.member.call("threads-v1/list", {"agentId": d}))["threads"] == []


async def test_a_cycle_of_asks_is_refused(team: Team) -> None:
    async with FakeAnthropic() as fake:
        a, b = await agents(team, fake, {"name": "A"}, {"name": "B"})
        await may_ask(team, a, b)
        await may_ask(team, b, a)
        thread_id = await member_thread(team, a)
        fake.script(
            asking("toolu_ab", "B", "Task for B"),
            asking("toolu_ba", "A", "Back to you"),
            says("B: done alone."),
            says("A: done."),
        )
        await ask(team, thread_id, "Go")
        await until(team.member, thread_id, "turn-finished")
        refusal = result_of(fake, 2, "toolu_ba")
        assert result_of(fake, 3, "toolu_ab")["status"] == "done"
    assert refusal["error"]["code"] == "delegationCycle"
    threads_of_a = await team.member.call("threads-v1/list", {"agentId": a})
    assert [t["id"] for t in threads_of_a["threads"]] == [thread_id]


async def test_only_the_chosen_agents_of_the_team_are_listed_or_reached(
    team: Team, server: RunningHub, tmp_path: Path
) -> None:
    await server.create_owner("other@example.com", "Team B")
    outsider = await peer_member(server, "other@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    theirs = await connection.call("agents-v1/create", {"name": "Theirs"})
    await connection.close()
    await outsider.hub.close()
    async with FakeAnthropic() as fake:
        lead, listed, unlisted = await agents(
            team, fake, {"name": "Lead"}, {"name": "Listed"}, {"name": "Unlisted"}
        )
        await may_ask(team, lead, listed)
        thread_id = await member_thread(team, lead)
        fake.script(
            calls(
                ("toolu_l", "list_agents", {}),
                ("toolu_u", "ask_agent", {"agent": "Unlisted", "task": "x"}),
                ("toolu_i", "ask_agent", {"agent": unlisted, "task": "x"}),
                ("toolu_t", "ask_agent", {"agent": theirs["id"], "task": "x"}),
                ("toolu_n", "ask_agent", {"agent": "Theirs", "task": "x"}),
            ),
            says("I may ask only Listed."),
        )
        await ask(team, thread_id, "Who can you ask?")
        await until(team.member, thread_id, "turn-finished")
        assert [a["name"] for a in result_of(fake, 1, "toolu_l")["agents"]] == ["Listed"]
        codes = [result_of(fake, 1, f"toolu_{c}")["error"]["code"] for c in "uitn"]
    assert codes == ["agentNotAskable"] * 4
    for agent_id in (listed, unlisted):
        assert (await team.member.call("threads-v1/list", {"agentId": agent_id}))["threads"] == []


async def test_stopping_the_asking_turn_stops_the_asked_one(team: Team) -> None:
    async with FakeAnthropic() as fake:
        lead, slow = await agents(team, fake, {"name": "Lead"}, {"name": "Slow"})
        await may_ask(team, lead, slow)
        thread_id = await member_thread(team, lead)
        fake.script(asking("toolu_a", "Slow", "Take your time"), stalled("Still reading"))
        await ask(team, thread_id, "Ask Slow")
        started = await until(team.member, thread_id, "delegation-started")
        await eventually(lambda: len(fake.requests) == 2)
        stopped = await team.member.call("threads-v1/stop", {"threadId": thread_id})
        assert stopped == {"stopped": True}
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "stopped"
        child = await team.member.call("threads-v1/get", {"threadId": started["childThreadId"]})
    assert child["runningTurnId"] is None
    assert [(t["status"], t["reason"]) for t in child["turns"]] == [
        ("stopped", "the agent that asked stopped")
    ]


async def test_a_routines_approvers_answer_the_asked_agents_requests(team: Team) -> None:
    """The member's routine names the admin as approver: the asked agent's gated call, in a
    thread private to the member like the run's, goes to the admin, who lets it run."""
    async with FakeAnthropic() as fake:
        lead, clicker = await agents(team, fake, {"name": "Lead"}, {"name": "Clicker"})
        await may_ask(team, lead, clicker)
        admin_id = (await team.admin.call("host-v1/whoami"))["accountId"]
        routine = await team.member.call(
            "routines-v1/create",
            {
                "agentId": lead,
                "name": "Daily click",
                "message": "Get the button clicked.",
                "schedule": WEEKDAYS,
                "approvers": [admin_id],
            },
        )
        click = {"tabId": "no-such-tab", "target": {"kind": "css", "selector": "button"}}
        fake.script(
            asking("toolu_a", "Clicker", "Click the button"),
            calls(("toolu_c", "click", click)),
            says("Clicked as far as I could."),
            says("Clicker is done."),
        )
        run = await team.member.call("routines-v1/run", {"routineId": routine["id"]})
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                event = await team.admin.events.get()
                if event["event"] == "attention-requested":
                    asked = event["data"]
                    break
        assert (asked["kind"], asked["tool"], asked["agentId"]) == ("consent", "click", clicker)
        child = await team.member.call("threads-v1/get", {"threadId": asked["threadId"]})
        assert child["thread"]["parentAgentId"] == lead
        # The member sees the thread but is not the routine's approver.
        answer = {"id": asked["id"], "approve": True}
        assert await refused(team.member, "attention-v1/answer", answer) == "attentionNotFound"
        await team.admin.call("attention-v1/answer", answer)
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                event = await team.member.events.get()
                if event["event"] == "routine-run-finished" and event["data"]["runId"] == run["id"]:
                    finished = event["data"]
                    break
        assert finished["status"] == "done"
        assert result_of(fake, 3, "toolu_a")["answer"] == "Clicked as far as I could."

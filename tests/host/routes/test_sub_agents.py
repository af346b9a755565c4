"""Sub-agents (the ``agent`` tool) against the fake provider, with members on real peers:
each type's tools, an independent conversation on the parent's provider and key, no
asking and no recursion, a budget shared with the parent turn, ``sub-agent`` events in
the parent's thread, consent through the same registry, and a stop that ends both."""

from __future__ import annotations

import json
from typing import Any

from tests.host.routes.conftest import Team, refused
from tests.host.routes.test_threads import until
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply


def calls(*tool_uses: tuple[str, str, dict[str, Any]]) -> StreamReply:
    """One reply that makes the given tool calls."""
    events = MessageEvents()
    for call_id, name, arguments in tool_uses:
        events = events.tool_use(call_id, name, arguments)
    return events.stop("tool_use").reply()


def says(text: str) -> StreamReply:
    return MessageEvents().text(text).stop().reply()


async def setup(team: Team, fake: FakeAnthropic, **agent: Any) -> tuple[str, str]:
    await team.admin.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
    )
    await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
    created = await team.admin.call("agents-v1/create", {"name": "Lead", **agent})
    thread = await team.admin.call(
        "threads-v1/start", {"agentId": created["id"], "title": "Research", "shared": True}
    )
    return str(created["id"]), str(thread["id"])


def offered(fake: FakeAnthropic, index: int) -> set[str]:
    return {tool["name"] for tool in fake.requests[index].body["tools"]}


def result_of(fake: FakeAnthropic, index: int, call_id: str) -> Any:
    """The result of ``call_id`` as request ``index`` carried it back to the model."""
    for message in fake.requests[index].messages():
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and block["tool_use_id"] == call_id:
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                try:
                    return json.loads(text)
                except json.JSONDecodeError:
                    return text
    raise AssertionError(f"no result for {call_id}")


async def sub_agent_events(team: Team, thread_id: str) -> list[dict[str, Any]]:
    """The sub-agent events of the thread the member heard, up to the turn's end."""
    seen = []
    while True:
        event = await team.member.events.get()
        if event["data"].get("threadId") != thread_id:
            continue
        if event["event"] == "sub-agent":
            seen.append(event["data"])
        if event["event"] == "turn-finished":
            return seen


async def test_a_researcher_reads_only_and_reports_back(team: Team) -> None:
    async with FakeAnthropic() as fake:
        _, thread_id = await setup(team, fake)
        task = {
            "prompt": "Find the price of tea",
            "description": "Price check",
            "type": "researcher",
        }
        fake.script(
            calls(("toolu_a", "agent", task)),
            calls(
                ("toolu_s1", "click", {"tabId": "t", "target": {"kind": "css", "selector": "b"}})
            ),
            says("Tea costs 3 EUR."),
            says("The sub-agent found it: 3 EUR."),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Tea price?"})
        seen = await sub_agent_events(team, thread_id)
        # The sub-agent's own conversation: only its prompt, on the parent's key.
        sub = fake.requests[1]
        assert sub.headers["x-api-key"] == API_KEY
        assert [m["role"] for m in sub.messages()] == ["user"]
        assert "Find the price of tea" in json.dumps(sub.messages())
        tools = offered(fake, 1)
        assert {"snapshot", "get_tab_content", "list_tabs"} <= tools
        assert tools.isdisjoint({"click", "type", "navigate", "open", "ask_user", "agent"})
        assert "not one of the tools" in str(result_of(fake, 2, "toolu_s1"))
        report = result_of(fake, 3, "toolu_a")
        assert (report["status"], report["report"], report["toolCalls"]) == (
            "done",
            "Tea costs 3 EUR.",
            1,
        )
        phases = [(e["phase"], e.get("tool"), e.get("outcome")) for e in seen]
        assert phases == [
            ("started", None, None),
            ("tool-finished", "click", "refused"),
            ("text", None, None),
            ("finished", None, None),
        ]
        assert {(e["description"], e["type"], e["subAgentId"]) for e in seen} == {
            ("Price check", "researcher", report["subAgentId"])
        }
        assert seen[-1]["status"] == "done"


async def test_no_asking_and_no_recursion_in_a_general_sub_agent(team: Team) -> None:
    async with FakeAnthropic() as fake:
        _, thread_id = await setup(team, fake)
        fake.script(
            calls(("toolu_a", "agent", {"prompt": "Plan it"})),
            calls(
                ("toolu_q", "ask_user", {"question": "Which?"}),
                ("toolu_r", "agent", {"prompt": "Again"}),
                ("toolu_w", "workspace_write", {"path": "plan.md", "content": "1. tea"}),
            ),
            says("Planned."),
            says("Done."),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Plan"})
        await until(team.admin, thread_id, "turn-finished")
        tools = offered(fake, 1)
        assert tools.isdisjoint({"ask_user", "agent"})
        assert {"workspace_write", "create_task", "snapshot", "click"} <= tools
        for call_id in ("toolu_q", "toolu_r"):
            assert "not one of the tools" in str(result_of(fake, 2, call_id))
        assert result_of(fake, 2, "toolu_w")["created"] is True
        assert result_of(fake, 3, "toolu_a")["toolCalls"] == 3


async def test_the_budget_is_the_parent_turns(team: Team) -> None:
    async with FakeAnthropic() as fake:
        _, thread_id = await setup(team, fake, maxToolCalls=4)
        listing = {"path": ""}
        fake.script(
            calls(("toolu_a", "agent", {"prompt": "List files", "type": "researcher"})),
            calls(*[(f"toolu_s{n}", "workspace_list", listing) for n in range(5)]),
            calls(("toolu_after", "workspace_list", listing)),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Go"})
        finished = await until(team.admin, thread_id, "turn-finished")
        # Three calls were left for the sub-agent; with the agent call the turn used all four.
        report = result_of(fake, 2, "toolu_a")
        assert (report["status"], report["toolCalls"]) == ("capped", 3)
        assert (finished["status"], finished["toolCalls"]) == ("capped", 4)
        assert fake.unplayed == 0


async def test_its_gated_call_asks_the_same_members_and_a_stop_ends_both(team: Team) -> None:
    async with FakeAnthropic() as fake:
        _, thread_id = await setup(team, fake)
        navigate = {"tabId": "tab-1", "url": "https://example.com"}
        fake.script(
            calls(("toolu_a", "agent", {"prompt": "Open it", "type": "page_operator"})),
            calls(("toolu_n", "navigate", navigate)),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread_id, "text": "Go"})
        asked = await until(team.member, thread_id, "attention-requested")
        assert (asked["kind"], asked["tool"]) == ("consent", "navigate")
        assert await team.member.call("threads-v1/stop", {"threadId": thread_id})
        resolved = await until(team.member, thread_id, "attention-resolved")
        assert resolved["outcome"] == "cancelled"
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "stopped"
        answer = {"id": asked["id"], "approve": True}
        assert await refused(team.member, "attention-v1/answer", answer) == "attentionNotFound"
        assert len(fake.requests) == 2

"""Task lists over real peers: who sees the thread hears ``tasks-changed`` with the whole
list, who does not hears nothing, and another thread of the same agent has its own list."""

from __future__ import annotations

import json
from typing import Any

from tests.host.routes.conftest import Team
from tests.host.routes.test_sub_agents import calls, result_of, says, setup
from tests.host.routes.test_threads import thread_events, until
from tests.support.fakes.anthropic import FakeAnthropic


async def test_each_thread_keeps_its_list_and_tells_who_sees_it(team: Team) -> None:
    async with FakeAnthropic() as fake:
        agent_id, shared_id = await setup(team, fake)
        private = await team.admin.call("threads-v1/start", {"agentId": agent_id, "title": "B"})
        fake.script(
            calls(
                ("toolu_c", "create_task", {"subject": "Find tea", "description": "3 shops"}),
                ("toolu_u", "update_task", {"taskId": "1", "status": "in_progress"}),
            ),
            says("Working."),
            calls(("toolu_l", "list_tasks", {})),
            says("Nothing here."),
        )
        await team.admin.call("threads-v1/send", {"threadId": shared_id, "text": "Go"})
        await until(team.admin, shared_id, "turn-finished")
        changes: list[dict[str, Any]] = [
            e["data"]
            for e in await thread_events(team.member, shared_id)
            if e["event"] == "tasks-changed"
        ]
        assert [[(t["id"], t["status"]) for t in c["tasks"]] for c in changes] == [
            [("1", "pending")],
            [("1", "in_progress")],
        ]
        assert changes[0]["tasks"][0]["description"] == "3 shops"
        # A member who comes later reads the list with the thread.
        contents = await team.member.call("threads-v1/get", {"threadId": shared_id})
        assert contents["tasks"] == changes[-1]["tasks"]

        await team.admin.call("threads-v1/send", {"threadId": private["id"], "text": "Go"})
        await until(team.admin, private["id"], "turn-finished")
        assert result_of(fake, 3, "toolu_l") == {"tasks": []}
        heard = await thread_events(team.member, private["id"])
        assert heard == []
        mine = await team.admin.call("threads-v1/get", {"threadId": private["id"]})
        assert mine["tasks"] == []
        assert "Find tea" not in json.dumps(fake.requests[2].body)

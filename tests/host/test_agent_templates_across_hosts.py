"""The split topology: two hubs on one PostgreSQL, two hosts, two teams. Team A's owner,
on hub A, exports an agent from the built-in host (a key pasted into a skill refuses the
export, naming where); team B's owner, on hub B, imports the file into team B's own host,
with the preview's mapping, and the agent works there with its skill and routine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.agent_templates import choices_of, export_template, upload_template
from peer.connection import TeamApiCallError
from tests.support.databases import ScratchDatabase, scratch_postgres_database
from tests.support.enrolled_hosts import linked_host
from tests.support.hub_server import hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked

SKILL_MD = "---\nname: expenses\ndescription: File an expense report.\n---\n\n# Steps\n"
LEAKY_MD = SKILL_MD + "Sign in with the key " + "xoxb-" + "1234567890-abcdefghijKLMNOP\n"


@pytest.fixture
async def shared_url() -> AsyncIterator[str]:
    async with scratch_postgres_database() as url:
        yield url


async def test_an_agent_moves_between_teams_on_two_hosts_through_two_hubs(
    tmp_path: Path, shared_url: str
) -> None:
    database = ScratchDatabase(shared_url, None)
    async with (
        running_hub(hub_settings(tmp_path / "a", database), database) as hub_a,
        running_hub(hub_settings(tmp_path / "b", database), database, with_host=False) as hub_b,
    ):
        await hub_a.sign_up_owner()
        host_a = await wait_linked(hub_a)
        owner_b = await hub_b.create_owner("other@example.com", "Team B")
        team_b = await hub_b.first_team_id(owner_b)
        async with linked_host(hub_b, owner_b, team_b, tmp_path / "host-b") as second:
            host_b = second.services.host_id
            assert host_b != host_a
            ours = await peer_member(hub_a, "owner@example.com", tmp_path)
            theirs = await peer_member(hub_b, "other@example.com", tmp_path)
            on_a = await ours.connect(host_a)
            on_b = await theirs.connect(host_b)
            try:
                await on_a.call("skills-v1/create", {"files": {"SKILL.md": LEAKY_MD}})
                agent = await on_a.call(
                    "agents-v1/create", {"name": "Clerk", "instructions": "File expenses.\n"}
                )
                await on_a.call(
                    "skills-v1/enable",
                    {"name": "expenses", "agentId": agent["id"], "enabled": True},
                )
                await on_a.call(
                    "routines-v1/create",
                    {
                        "agentId": agent["id"],
                        "name": "Daily",
                        "message": "File today's receipts.",
                        "schedule": {"kind": "every", "everySeconds": 86_400},
                    },
                )
                with pytest.raises(TeamApiCallError) as caught:
                    await export_template(on_a, agent["id"])
                assert caught.value.code == "agentTemplateSecretFound"
                assert "skills/expenses/SKILL.md line 7 (Slack token)" in caught.value.message
                await on_a.call(
                    "skills-v1/update", {"name": "expenses", "files": {"SKILL.md": SKILL_MD}}
                )

                _, data = await export_template(on_a, agent["id"])
                upload_id = await upload_template(on_b, data)
                preview = await on_b.call("agent-templates-v1/preview", {"uploadId": upload_id})
                assert preview["skills"] == [{"name": "expenses", "status": "new"}]
                done = await on_b.call(
                    "agent-templates-v1/import", {"uploadId": upload_id, **choices_of(preview)}
                )
                copy = await on_b.call("agents-v1/get", {"id": done["agentId"]})
                assert copy["instructions"] == "File expenses.\n"
                skills = await on_b.call("skills-v1/agent_skills", {"agentId": copy["id"]})
                assert [s["name"] for s in skills["skills"]] == ["expenses"]
                routines = await on_b.call("routines-v1/list", {"agentId": copy["id"]})
                assert [r["name"] for r in routines["routines"]] == ["Daily"]
                # One database, two teams: neither reaches the other's agent.
                for connection, other in ((on_a, copy["id"]), (on_b, agent["id"])):
                    with pytest.raises(TeamApiCallError) as caught:
                        await connection.call("agents-v1/get", {"id": other})
                    assert caught.value.code == "agentNotFound"
            finally:
                await on_a.close()
                await on_b.close()
                await ours.hub.close()
                await theirs.hub.close()

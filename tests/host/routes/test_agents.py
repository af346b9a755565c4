"""agents-v1 over real peers: create, update, duplicate, delete (one sweep), roles, bad input,
events and tenant isolation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.host.agents.permissions import FAMILIES, FAMILY_OF_TOOL
from server.host.browser.partitions import Partition
from server.host.tools.catalog import CATALOG
from tests.host.routes.conftest import Team, refused
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member


def test_every_gated_tool_has_a_family() -> None:
    gated = {tool.name for tool in CATALOG.values() if tool.gated}
    assert gated == set(FAMILY_OF_TOOL)


async def test_create_list_update_duplicate(team: Team) -> None:
    made = await team.admin.call(
        "agents-v1/create",
        {
            "name": "  Scout ",
            "instructions": "Find prices.",
            "permissions": {"browser-navigation": "auto-approve"},
        },
    )
    assert made["name"] == "Scout"
    assert (made["provider"], made["model"], made["maxToolCalls"]) == ("anthropic", None, None)
    assert made["permissions"] == {"browser-navigation": "auto-approve"}

    listed = await team.member.call("agents-v1/list")
    assert [a["name"] for a in listed["agents"]] == ["Scout"]
    assert listed["toolFamilies"] == list(FAMILIES)
    assert listed["familyOfTool"]["click"] == "browser-input"
    assert set(listed["familyOfTool"].values()) == set(FAMILIES)

    updated = await team.admin.call(
        "agents-v1/update",
        {"id": made["id"], "provider": "openai", "model": "gpt-4.1-mini", "maxToolCalls": 5},
    )
    assert (updated["provider"], updated["model"], updated["maxToolCalls"]) == (
        "openai",
        "gpt-4.1-mini",
        5,
    )
    assert updated["instructions"] == "Find prices."  # left out: kept
    back = await team.admin.call("agents-v1/update", {"id": made["id"], "model": None})
    assert (back["model"], back["maxToolCalls"]) == (None, 5)  # null: the default again

    copy = await team.admin.call("agents-v1/duplicate", {"id": made["id"]})
    assert copy["id"] != made["id"]
    assert copy["name"] == "Scout (copy)"
    assert (copy["provider"], copy["permissions"]) == ("openai", made["permissions"])


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": ""}, "invalidArgument"),
        ({"name": "x" * 101}, "invalidArgument"),
        ({"name": "new\nline"}, "invalidArgument"),
        ({"name": "ok", "instructions": "x" * 20_001}, "invalidArgument"),
        ({"name": "ok", "provider": "Not A Provider"}, "invalidArgument"),
        ({"name": "ok", "permissions": {"browser-input": "always"}}, "invalidArgument"),
        ({"name": "ok", "permissions": {"rocket-launch": "ask"}}, "invalidArgument"),
        ({"name": "ok", "maxToolCalls": 0}, "invalidArgument"),
        ({"name": "ok", "maxToolCalls": "5"}, "invalidArgument"),
        ({"name": "ok", "extra": 1}, "invalidArgument"),
    ],
)
async def test_bad_input_is_refused_and_nothing_is_made(
    team: Team, args: dict[str, object], code: str
) -> None:
    assert await refused(team.admin, "agents-v1/create", args) == code
    assert (await team.admin.call("agents-v1/list"))["agents"] == []


async def test_members_read_and_admins_change(team: Team) -> None:
    made = await team.admin.call("agents-v1/create", {"name": "Scout"})
    assert (await team.member.call("agents-v1/get", {"id": made["id"]}))["name"] == "Scout"
    for route, args in (
        ("agents-v1/create", {"name": "Mine"}),
        ("agents-v1/update", {"id": made["id"], "name": "Mine"}),
        ("agents-v1/duplicate", {"id": made["id"]}),
        ("agents-v1/delete", {"id": made["id"]}),
    ):
        assert await refused(team.member, route, args) == "forbidden"
    assert [a["name"] for a in (await team.member.call("agents-v1/list"))["agents"]] == ["Scout"]


async def test_every_change_is_announced_to_the_team(team: Team) -> None:
    made = await team.admin.call("agents-v1/create", {"name": "Scout"})
    await team.admin.call("agents-v1/update", {"id": made["id"], "name": "Ranger"})
    await team.admin.call("agents-v1/delete", {"id": made["id"]})
    events = [await asyncio.wait_for(team.member.events.get(), 5) for _ in range(3)]
    assert [e["event"] for e in events] == ["agents-changed"] * 3


async def test_delete_closes_tabs_clears_the_partition_and_forgets_memories(
    server: RunningHub, team: Team
) -> None:
    services = server.builtin.services
    made = await team.admin.call("agents-v1/create", {"name": "Scout"})
    agent_id = made["id"]
    await team.admin.call("browser-profiles-v1/assign", {"agentId": agent_id, "profile": "agent"})
    engine = await services.browser.engine()
    tab = await engine.open_tab(
        team.team_id, Partition.for_agent(agent_id), owner_agent_id=agent_id
    )
    await services.memories.add_memory(team.team_id, agent_id, "The login is on the left", None)
    folder = engine.team_folder(team.team_id) / Partition.for_agent(agent_id).folder

    assert await team.admin.call("agents-v1/delete", {"id": agent_id}) == {"deleted": True}
    assert tab.id not in [t.id for t in engine.list_tabs(team.team_id)]
    assert not folder.exists()
    assert await services.memories.list_memories(team.team_id, agent_id) == []
    assert await refused(team.admin, "agents-v1/get", {"id": agent_id}) == "agentNotFound"


async def test_another_team_sees_and_touches_nothing(
    server: RunningHub, team: Team, tmp_path: Path
) -> None:
    made = await team.admin.call("agents-v1/create", {"name": "Scout"})
    await server.create_owner("other@example.com", "Team B")
    outsider = await peer_member(server, "other@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    assert (await connection.call("agents-v1/list"))["agents"] == []
    for route, args in (
        ("agents-v1/get", {"id": made["id"]}),
        ("agents-v1/update", {"id": made["id"], "name": "Stolen"}),
        ("agents-v1/duplicate", {"id": made["id"]}),
        ("agents-v1/delete", {"id": made["id"]}),
    ):
        assert await refused(connection, route, args) == "agentNotFound"
    assert (await team.admin.call("agents-v1/get", {"id": made["id"]}))["name"] == "Scout"
    await connection.close()
    await outsider.hub.close()


async def test_an_agent_names_a_provider_its_team_has(
    server: RunningHub, team: Team, tmp_path: Path
) -> None:
    gateway = await team.admin.call(
        "providers-v1/create_custom", {"name": "Gateway", "baseUrl": "http://gw.test/v1"}
    )
    made = await team.admin.call("agents-v1/create", {"name": "Scout", "provider": gateway["id"]})
    assert made["provider"] == gateway["id"]
    for args in ({"provider": "mistral"}, {"provider": "custom-" + "0" * 32}):
        assert await refused(team.admin, "agents-v1/create", {"name": "x", **args}) == (
            "providerNotFound"
        )
        update = {"id": made["id"], "name": "Renamed", **args}
        assert await refused(team.admin, "agents-v1/update", update) == "providerNotFound"
    # Another team's custom provider is as unknown as a missing one.
    await server.create_owner("other@example.com", "Team B")
    outsider = await peer_member(server, "other@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    theirs = await connection.call(
        "providers-v1/create_custom", {"name": "Theirs", "baseUrl": "http://theirs.test/v1"}
    )
    update = {"id": made["id"], "provider": theirs["id"]}
    assert await refused(team.admin, "agents-v1/update", update) == "providerNotFound"
    await connection.close()
    await outsider.hub.close()

    kept = await team.admin.call("agents-v1/get", {"id": made["id"]})
    assert (kept["name"], kept["provider"]) == ("Scout", gateway["id"])
    assert [a["name"] for a in (await team.admin.call("agents-v1/list"))["agents"]] == ["Scout"]
    moved = await team.admin.call("agents-v1/update", {"id": made["id"], "provider": "openai"})
    assert moved["provider"] == "openai"

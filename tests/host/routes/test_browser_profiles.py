"""browser-profiles-v1 over real peers: CRUD, limits, roles, events and tenant isolation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.common.tokens import new_id
from server.host.services.profiles import MAX_PROFILES, PROFILE_HUES
from server.host.storage.agents import AgentBrowserChoice, AgentRepository
from server.host.storage.profiles import BrowserProfileRepository
from tests.host.routes.conftest import Team, refused
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member


async def test_create_list_update_delete(team: Team) -> None:
    made = await team.admin.call("browser-profiles-v1/create", {"name": "  Work  "})
    assert made["name"] == "Work"
    assert made["id"].startswith("profile-")
    assert made["hue"] == PROFILE_HUES[0]
    second = await team.admin.call("browser-profiles-v1/create", {"name": "Personal"})
    assert second["hue"] == PROFILE_HUES[1]  # the hue fewest profiles use

    listed = await team.member.call("browser-profiles-v1/list")
    assert [p["name"] for p in listed["profiles"]] == ["Work", "Personal"]

    renamed = await team.admin.call(
        "browser-profiles-v1/update", {"id": made["id"], "name": "Office", "hue": PROFILE_HUES[5]}
    )
    assert (renamed["name"], renamed["hue"]) == ("Office", PROFILE_HUES[5])
    assert await team.admin.call("browser-profiles-v1/delete", {"id": made["id"]}) == {
        "deleted": True
    }
    listed = await team.admin.call("browser-profiles-v1/list")
    assert [p["name"] for p in listed["profiles"]] == ["Personal"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": ""}, "invalidArgument"),
        ({"name": "x" * 61}, "invalidArgument"),
        ({"name": "tab\there"}, "invalidArgument"),
        ({}, "invalidArgument"),
        ({"name": "ok", "extra": 1}, "invalidArgument"),
    ],
)
async def test_bad_names_are_refused(team: Team, args: dict[str, object], code: str) -> None:
    assert await refused(team.admin, "browser-profiles-v1/create", args) == code
    assert (await team.admin.call("browser-profiles-v1/list"))["profiles"] == []


async def test_names_are_unique_per_team_and_hues_come_from_the_palette(team: Team) -> None:
    made = await team.admin.call("browser-profiles-v1/create", {"name": "Work"})
    assert await refused(team.admin, "browser-profiles-v1/create", {"name": "work"}) == (
        "browserProfileNameTaken"
    )
    other = await team.admin.call("browser-profiles-v1/create", {"name": "Home"})
    update = {"id": other["id"], "name": "WORK"}
    assert (
        await refused(team.admin, "browser-profiles-v1/update", update) == "browserProfileNameTaken"
    )
    bad_hue = {"id": made["id"], "hue": 5}
    assert await refused(team.admin, "browser-profiles-v1/update", bad_hue) == "invalidArgument"
    missing = {"id": "profile-" + "0" * 32}
    assert (
        await refused(team.admin, "browser-profiles-v1/delete", missing) == "browserProfileNotFound"
    )


async def test_at_most_a_hundred_profiles(team: Team) -> None:
    for n in range(MAX_PROFILES):
        await team.admin.call("browser-profiles-v1/create", {"name": f"P{n}"})
    assert await refused(team.admin, "browser-profiles-v1/create", {"name": "one more"}) == (
        "browserProfileLimit"
    )


async def test_members_read_but_do_not_change(team: Team) -> None:
    made = await team.admin.call("browser-profiles-v1/create", {"name": "Work"})
    for route, args in (
        ("browser-profiles-v1/create", {"name": "Mine"}),
        ("browser-profiles-v1/update", {"id": made["id"], "name": "Mine"}),
        ("browser-profiles-v1/clear", {"id": made["id"]}),
        ("browser-profiles-v1/delete", {"id": made["id"]}),
        ("browser-profiles-v1/assign", {"agentId": "a" * 32, "profile": "shared"}),
    ):
        assert await refused(team.member, route, args) == "forbidden", route
    assert len((await team.member.call("browser-profiles-v1/list"))["profiles"]) == 1


async def test_every_change_is_announced_to_the_team(team: Team) -> None:
    made = await team.admin.call("browser-profiles-v1/create", {"name": "Work"})
    await team.admin.call("browser-profiles-v1/update", {"id": made["id"], "name": "Office"})
    events = [await asyncio.wait_for(team.member.events.get(), 5) for _ in range(2)]
    assert [e["event"] for e in events] == ["browser-profiles-changed"] * 2


async def test_another_team_sees_and_touches_nothing(
    server: RunningHub, team: Team, tmp_path: Path
) -> None:
    made = await team.admin.call("browser-profiles-v1/create", {"name": "Work"})
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    assert (await connection.call("browser-profiles-v1/list"))["profiles"] == []
    for route in ("browser-profiles-v1/update", "browser-profiles-v1/delete"):
        args = (
            {"id": made["id"], "name": "Stolen"} if route.endswith("update") else {"id": made["id"]}
        )
        assert await refused(connection, route, args) == "browserProfileNotFound"
    assert team.member.events.empty() or (await team.member.events.get())["event"]
    assert (await team.admin.call("browser-profiles-v1/list"))["profiles"][0]["name"] == "Work"
    await connection.close()
    await outsider.hub.close()


async def test_assign_and_delete_move_agents_and_a_missing_profile_is_an_error(
    server: RunningHub, team: Team
) -> None:
    services = server.builtin.services
    agent_id = new_id()
    async with services.db.write() as conn:
        await AgentRepository().add_agent(
            conn, AgentBrowserChoice(agent_id, team.team_id, "Scout", False, None), 1.0
        )
    assert (await services.profiles.partition_for_agent(team.team_id, agent_id)).kind == "shared"
    made = await team.admin.call("browser-profiles-v1/create", {"name": "Work"})
    chosen = await team.admin.call(
        "browser-profiles-v1/assign", {"agentId": agent_id, "profile": made["id"]}
    )
    assert chosen == {
        "agentId": agent_id,
        "ownBrowserSession": True,
        "browserProfileId": made["id"],
    }
    partition = await services.profiles.partition_for_agent(team.team_id, agent_id)
    assert (partition.kind, partition.key) == ("profile", made["id"])

    await team.admin.call("browser-profiles-v1/assign", {"agentId": agent_id, "profile": "agent"})
    assert (await services.profiles.partition_for_agent(team.team_id, agent_id)).kind == "agent"

    await team.admin.call(
        "browser-profiles-v1/assign", {"agentId": agent_id, "profile": made["id"]}
    )
    await team.admin.call("browser-profiles-v1/delete", {"id": made["id"]})
    assert (await services.profiles.partition_for_agent(team.team_id, agent_id)).kind == "shared"

    # A profile row gone behind the service's back: never Shared, always an error.
    second = await team.admin.call("browser-profiles-v1/create", {"name": "Gone"})
    await team.admin.call(
        "browser-profiles-v1/assign", {"agentId": agent_id, "profile": second["id"]}
    )
    async with services.db.write() as conn:
        await BrowserProfileRepository().remove_profile(conn, team.team_id, second["id"])
    with pytest.raises(Exception, match="no longer exists") as caught:
        await services.profiles.partition_for_agent(team.team_id, agent_id)
    assert getattr(caught.value, "code", None) == "browserProfileMissing"

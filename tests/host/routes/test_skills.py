"""``skills-v1`` over real peers: members read, owners and admins write; another team sees
and touches nothing; every save a version with a diff and a revert; and progressive
disclosure against the fake provider: the system prompt lists only the enabled skills'
names and descriptions, and only the skill the model loads reaches it whole."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from peer.connection import HostConnection
from peer.skills import pull_archive, push_archive
from tests.host.routes.conftest import Roles, Team, refused
from tests.host.routes.test_sub_agents import calls, result_of, says
from tests.host.routes.test_threads import until
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member

EXPENSES_BODY = "# Filing an expense\n1. Open the expense tool.\n2. Type the amount."
TRAVEL_BODY = "# Booking travel\n1. Compare three fares before booking."


def skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


EXPENSES = {"SKILL.md": skill_md("expenses", "File an expense report.", EXPENSES_BODY)}
TRAVEL = {
    "SKILL.md": skill_md("travel", "Book business travel.", TRAVEL_BODY),
    "fares.md": "Trains under four hours; flights otherwise.\n",
}


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def skill_events(connection: HostConnection) -> list[tuple[str, str]]:
    """The skills-changed events the peer received and has not read (calls are ordered
    after the events sent before them)."""
    await connection.call("host-v1/whoami")
    seen = []
    while not connection.events.empty():
        event = connection.events.get_nowait()
        if event["event"] == "skills-changed":
            seen.append((event["data"]["name"], event["data"]["change"]))
    return seen


async def test_members_read_and_only_owners_and_admins_write(roles: Roles) -> None:
    for writer in (roles.owner, roles.admin):
        made = await writer.call(
            "skills-v1/create",
            {"files": {"SKILL.md": skill_md(f"by-{await role_of(writer)}", "A skill.", "Do.")}},
        )
        assert made["state"] == "saved"
    agent = await roles.admin.call("agents-v1/create", {"name": "Clerk"})
    listed = await roles.member.call("skills-v1/list", {})
    assert [s["name"] for s in listed["skills"]] == ["by-admin", "by-owner"]
    got = await roles.member.call("skills-v1/get", {"name": "by-admin"})
    assert got["skillMd"].startswith("---\nname: by-admin")
    assert await pull_archive(roles.member, "by-admin")
    await roles.member.call("skills-v1/versions", {"name": "by-admin"})
    await roles.member.call("skills-v1/agent_skills", {"agentId": agent["id"]})
    name = {"name": "by-admin"}
    for route, args in (
        ("skills-v1/create", {"files": EXPENSES}),
        ("skills-v1/update", {**name, "files": EXPENSES}),
        ("skills-v1/delete", name),
        ("skills-v1/revert", {**name, "version": 1}),
        ("skills-v1/upload_start", {"size": 10}),
        ("skills-v1/save_draft", name),
        ("skills-v1/discard_draft", name),
        ("skills-v1/enable", {**name, "agentId": agent["id"], "enabled": True}),
    ):
        assert await refused(roles.member, route, args) == "forbidden", route
    assert [s["name"] for s in (await roles.member.call("skills-v1/list", {}))["skills"]] == [
        "by-admin",
        "by-owner",
    ]


async def role_of(connection: HostConnection) -> str:
    return str((await connection.call("host-v1/whoami"))["role"])


@pytest.fixture
async def outsider(server: RunningHub, team: Team, tmp_path: Path) -> AsyncIterator[HostConnection]:
    """The owner of another team, on the same host."""
    await server.create_owner("other@example.com", "Team B")
    member = await peer_member(server, "other@example.com", tmp_path)
    connection = await member.connect(server.builtin.services.host_id)
    yield connection
    await connection.close()
    await member.hub.close()


async def test_another_team_sees_and_touches_nothing(team: Team, outsider: HostConnection) -> None:
    await team.admin.call("skills-v1/create", {"files": EXPENSES})
    agent = await team.admin.call("agents-v1/create", {"name": "Clerk"})
    await team.admin.call(
        "skills-v1/enable", {"name": "expenses", "agentId": agent["id"], "enabled": True}
    )
    assert await outsider.call("skills-v1/list", {}) == {"skills": []}
    name = {"name": "expenses"}
    for route, args in (
        ("skills-v1/get", name),
        ("skills-v1/read_file", {**name, "path": "SKILL.md"}),
        ("skills-v1/versions", name),
        ("skills-v1/diff", {**name, "old": 1, "new": 1}),
        ("skills-v1/download", name),
        ("skills-v1/update", {**name, "files": EXPENSES}),
        ("skills-v1/revert", {**name, "version": 1}),
        ("skills-v1/delete", name),
    ):
        assert await refused(outsider, route, args) == "skillNotFound", route
    assert await refused(outsider, "skills-v1/agent_skills", {"agentId": agent["id"]}) == (
        "agentNotFound"
    )
    assert await refused(
        outsider, "skills-v1/enable", {**name, "agentId": agent["id"], "enabled": False}
    ) == ("agentNotFound")
    # Its own skill of the same name is its own.
    await outsider.call("skills-v1/create", {"files": EXPENSES})
    await outsider.call("skills-v1/delete", name)
    assert (await team.member.call("skills-v1/get", name))["version"] == 1
    assert await skill_events(outsider) == [("expenses", "created"), ("expenses", "deleted")]


async def test_versions_diff_revert_and_a_zip_round_trip(team: Team) -> None:
    await team.admin.call("skills-v1/create", {"files": TRAVEL})
    await team.admin.call(
        "skills-v1/update",
        {
            "name": "travel",
            "files": {"SKILL.md": skill_md("travel", "Book travel.", TRAVEL_BODY + "\n2. Book.")},
            "remove": ["fares.md"],
        },
    )
    diff = await team.member.call("skills-v1/diff", {"name": "travel", "old": 1, "new": 2})
    assert [(c["path"], c["status"]) for c in diff["changes"]] == [
        ("SKILL.md", "changed"),
        ("fares.md", "removed"),
    ]
    assert "+2. Book.\n" in diff["changes"][0]["diff"]
    reverted = await team.admin.call("skills-v1/revert", {"name": "travel", "version": 1})
    assert (reverted["version"], reverted["description"]) == (3, "Book business travel.")
    versions = await team.member.call("skills-v1/versions", {"name": "travel"})
    assert [(v["version"], v["change"]) for v in versions["versions"]] == [
        (3, "reverted"),
        (2, "edited"),
        (1, "created"),
    ]
    fares = await team.member.call("skills-v1/read_file", {"name": "travel", "path": "fares.md"})
    assert fares["text"] == TRAVEL["fares.md"]
    # Out as a .zip in the common layout, and back in as a new version of it.
    data = await pull_archive(team.member, "travel")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == ["travel/SKILL.md", "travel/fares.md"]
    assert await refused(
        team.admin,
        "skills-v1/upload_finish",
        {"uploadId": (await team.admin.call("skills-v1/upload_start", {"size": 3}))["uploadId"]},
    ) == ("skillUploadInvalid")
    back = await push_archive(team.admin, data, replace=True)
    assert back["version"] == 4
    assert await skill_events(team.member) == [
        ("travel", "created"),
        ("travel", "edited"),
        ("travel", "reverted"),
        ("travel", "uploaded"),
    ]
    # A refused archive writes nothing.
    bad = io.BytesIO()
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("travel/SKILL.md", TRAVEL["SKILL.md"])
        archive.writestr("/etc/cron.d/x", "x")
    started = await team.admin.call("skills-v1/upload_start", {"size": len(bad.getvalue())})
    await team.admin.call(
        "skills-v1/upload_chunk",
        {
            "uploadId": started["uploadId"],
            "offset": 0,
            "data": base64.b64encode(bad.getvalue()).decode(),
        },
    )
    finish = {"uploadId": started["uploadId"], "replace": True}
    assert await refused(team.admin, "skills-v1/upload_finish", finish) == "skillArchiveRefused"
    assert (await team.member.call("skills-v1/get", {"name": "travel"}))["version"] == 4


async def test_only_the_loaded_skill_reaches_the_model(team: Team) -> None:
    async with FakeAnthropic() as fake:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        agent = await team.admin.call("agents-v1/create", {"name": "Clerk"})
        for files in (EXPENSES, TRAVEL):
            await team.admin.call("skills-v1/create", {"files": files})
        unused = skill_md("unused", "Never given to the agent.", "Secret sauce.")
        await team.admin.call("skills-v1/create", {"files": {"SKILL.md": unused}})
        for name in ("expenses", "travel"):
            await team.admin.call(
                "skills-v1/enable", {"name": name, "agentId": agent["id"], "enabled": True}
            )
        thread = await team.admin.call(
            "threads-v1/start", {"agentId": agent["id"], "title": "Lunch", "shared": True}
        )
        fake.script(
            calls(("toolu_1", "load_skill", {"name": "expenses"})),
            calls(
                ("toolu_2", "read_skill_file", {"name": "travel", "path": "fares.md"}),
                ("toolu_3", "load_skill", {"name": "unused"}),
            ),
            says("Filed."),
        )
        await team.admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Lunch 12 EUR"})
        await until(team.admin, thread["id"], "turn-finished")
        first = fake.requests[0].body
        system = system_text(first)
        assert "- expenses: File an expense report." in system
        assert "- travel: Book business travel." in system
        assert "unused" not in system
        for body in (EXPENSES_BODY, TRAVEL_BODY, "Open the expense tool"):
            assert body not in json.dumps(first)
        assert {"load_skill", "read_skill_file", "propose_skill"} <= {
            t["name"] for t in first["tools"]
        }
        loaded = result_of(fake, 1, "toolu_1")
        assert loaded["instructions"] == EXPENSES_BODY + "\n"
        assert loaded["files"] == []
        # Only the chosen skill's body: the other enabled skill's never reached the model.
        assert TRAVEL_BODY not in json.dumps(fake.requests[1].body)
        assert result_of(fake, 2, "toolu_2")["text"] == TRAVEL["fares.md"]
        assert result_of(fake, 2, "toolu_3")["error"]["code"] == "skillNotFound"
        assert "Secret sauce" not in json.dumps(fake.requests[2].body)

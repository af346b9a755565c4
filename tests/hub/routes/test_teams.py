"""Teams and members: create, list, rename, roles, removal, leaving, and the owner rules."""

from __future__ import annotations

import pytest

from server.common.errors import Forbidden
from server.common.roles import Role
from tests.support.hub_server import ApiClient, RunningHub
from tests.support.images import tiny_png


async def _team_with(server: RunningHub) -> tuple[ApiClient, str, ApiClient, ApiClient]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    member = await server.invite(owner, team_id, "member@example.com", "member")
    return owner, team_id, admin, member


async def test_create_list_and_rename_teams(server: RunningHub) -> None:
    owner = await server.sign_up_owner(team="First")
    created = await owner.post("/v1/teams", {"name": "  Second  "})
    assert created.status == 201
    assert (created.body["name"], created.body["role"]) == ("Second", "owner")
    listed = await owner.get("/v1/teams")
    assert [t["name"] for t in listed.body["teams"]] == ["First", "Second"]

    renamed = await owner.patch(f"/v1/teams/{created.body['id']}", {"name": "Second Team"})
    assert (renamed.status, renamed.body["name"]) == (200, "Second Team")
    got = await owner.get(f"/v1/teams/{created.body['id']}")
    assert got.body["name"] == "Second Team"


async def test_members_are_listed_with_roles(server: RunningHub) -> None:
    _, team_id, _, member = await _team_with(server)
    listed = await member.get(f"/v1/teams/{team_id}/members")
    assert [(m["email"], m["role"]) for m in listed.body["members"]] == [
        ("owner@example.com", "owner"),
        ("admin@example.com", "admin"),
        ("member@example.com", "member"),
    ]
    assert all("password" not in str(m).lower() for m in listed.body["members"])


async def test_admin_changes_and_removes_members_but_not_owners(server: RunningHub) -> None:
    owner, team_id, admin, member = await _team_with(server)
    promoted = await admin.patch(
        f"/v1/teams/{team_id}/members/{member.account_id}", {"role": "admin"}
    )
    assert (promoted.status, promoted.body["role"]) == (200, "admin")

    to_owner = await admin.patch(
        f"/v1/teams/{team_id}/members/{member.account_id}", {"role": "owner"}
    )
    assert (to_owner.status, to_owner.code) == (403, "ownerOnly")
    demote_owner = await admin.patch(
        f"/v1/teams/{team_id}/members/{owner.account_id}", {"role": "member"}
    )
    assert (demote_owner.status, demote_owner.code) == (403, "ownerOnly")
    remove_owner = await admin.delete(f"/v1/teams/{team_id}/members/{owner.account_id}")
    assert (remove_owner.status, remove_owner.code) == (403, "ownerOnly")

    removed = await admin.delete(f"/v1/teams/{team_id}/members/{member.account_id}")
    assert removed.status == 204
    gone = await member.get(f"/v1/teams/{team_id}")
    assert (gone.status, gone.code) == (404, "teamNotFound")


async def test_the_last_owner_can_neither_leave_nor_be_demoted(server: RunningHub) -> None:
    owner, team_id, admin, _ = await _team_with(server)
    leave = await owner.post(f"/v1/teams/{team_id}/leave")
    assert (leave.status, leave.code) == (409, "lastOwner")
    demote = await owner.patch(f"/v1/teams/{team_id}/members/{owner.account_id}", {"role": "admin"})
    assert (demote.status, demote.code) == (409, "lastOwner")
    remove_self = await owner.delete(f"/v1/teams/{team_id}/members/{owner.account_id}")
    assert (remove_self.status, remove_self.code) == (409, "lastOwner")

    # With a second owner, the first may step down and then leave.
    await owner.patch(f"/v1/teams/{team_id}/members/{admin.account_id}", {"role": "owner"})
    stepped_down = await owner.patch(
        f"/v1/teams/{team_id}/members/{owner.account_id}", {"role": "member"}
    )
    assert (stepped_down.status, stepped_down.body["role"]) == (200, "member")
    assert (await owner.post(f"/v1/teams/{team_id}/leave")).status == 204
    assert [t["name"] for t in (await owner.get("/v1/teams")).body["teams"]] == []
    last = await admin.post(f"/v1/teams/{team_id}/leave")
    assert (last.status, last.code) == (409, "lastOwner")


async def test_a_member_leaves(server: RunningHub) -> None:
    _, team_id, _, member = await _team_with(server)
    assert (await member.post(f"/v1/teams/{team_id}/leave")).status == 204
    assert (await member.get("/v1/teams")).body == {"teams": []}


async def test_role_changes_apply_on_the_next_request(server: RunningHub) -> None:
    owner, team_id, _, member = await _team_with(server)
    refused = await member.get(f"/v1/teams/{team_id}/invitations")
    assert refused.status == 403
    await owner.patch(f"/v1/teams/{team_id}/members/{member.account_id}", {"role": "admin"})
    assert (await member.get(f"/v1/teams/{team_id}/invitations")).status == 200


async def test_a_change_that_waited_is_judged_by_the_actors_role_then(server: RunningHub) -> None:
    """An admin's request that passed its check while an owner removed or demoted them (it
    waited for the team's lock) changes nothing: the service reads the actor's role again."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    member = await server.invite(owner, team_id, "member@example.com", "member")
    assert admin.account_id is not None
    assert member.account_id is not None
    teams = server.hub.teams
    path = f"/v1/teams/{team_id}/members/{admin.account_id}"
    assert (await owner.patch(path, {"role": "member"})).status == 200
    for waited in (
        teams.change_role(team_id, admin.account_id, member.account_id, Role.ADMIN),
        teams.remove_member(team_id, admin.account_id, member.account_id),
    ):
        with pytest.raises(Forbidden):
            await waited
    assert (await owner.delete(path)).status == 204
    with pytest.raises(Forbidden):
        await teams.remove_member(team_id, admin.account_id, member.account_id)
    roles = {
        m["accountId"]: m["role"]
        for m in (await owner.get(f"/v1/teams/{team_id}/members")).body["members"]
    }
    assert roles[member.account_id] == "member"


async def test_changing_an_unknown_member_is_not_found(server: RunningHub) -> None:
    owner, team_id, _, _ = await _team_with(server)
    stranger = await server.create_owner("stranger@example.com", "Elsewhere")
    reply = await owner.patch(
        f"/v1/teams/{team_id}/members/{stranger.account_id}", {"role": "admin"}
    )
    assert (reply.status, reply.code) == (404, "memberNotFound")


async def test_teammates_see_each_others_avatars_and_no_one_elses(server: RunningHub) -> None:
    owner, team_id, _, member = await _team_with(server)
    png = tiny_png()
    put = await owner.put("/v1/me/avatar", data=png, headers={"Content-Type": "image/png"})
    assert put.status == 204

    got = await member.get(f"/v1/teams/{team_id}/members/{owner.account_id}/avatar")
    assert (got.status, got.raw, got.headers["Content-Type"]) == (200, png, "image/png")
    assert "sandbox" in got.headers["Content-Security-Policy"]
    listed = await member.get(f"/v1/teams/{team_id}/members")
    has_avatar = {m["email"]: m["hasAvatar"] for m in listed.body["members"]}
    assert has_avatar == {
        "owner@example.com": True,
        "admin@example.com": False,
        "member@example.com": False,
    }
    none_yet = await member.get(f"/v1/teams/{team_id}/members/{member.account_id}/avatar")
    assert (none_yet.status, none_yet.code) == (404, "avatarNotFound")

    # Someone in another team only: not through this team, and not through theirs either.
    stranger = await server.create_owner("stranger@example.com", "Elsewhere")
    other_team = await server.first_team_id(stranger)
    await stranger.put("/v1/me/avatar", data=png, headers={"Content-Type": "image/png"})
    via_ours = await member.get(f"/v1/teams/{team_id}/members/{stranger.account_id}/avatar")
    assert (via_ours.status, via_ours.code) == (404, "avatarNotFound")
    via_theirs = await member.get(f"/v1/teams/{other_team}/members/{stranger.account_id}/avatar")
    assert via_theirs.status == 404
    stranger_asks = await stranger.get(f"/v1/teams/{team_id}/members/{owner.account_id}/avatar")
    assert stranger_asks.status == 404
    assert stranger_asks.raw != png

    # A removed member's avatar is gone from the team at once.
    await member.put("/v1/me/avatar", data=png, headers={"Content-Type": "image/png"})
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")).status == 204
    gone = await owner.get(f"/v1/teams/{team_id}/members/{member.account_id}/avatar")
    assert (gone.status, gone.code) == (404, "avatarNotFound")

"""Invitations: create, list, revoke, preview, accept, expiry and use limits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.common.roles import Role
from server.hub.services.teams import MAX_TEAMS_PER_ACCOUNT
from server.hub.storage.teams import TeamRepository
from tests.support.clock import FakeClock
from tests.support.hub_server import PASSWORD, ApiClient, RunningHub


async def test_create_list_and_revoke(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    created = await owner.post(
        f"/v1/teams/{team_id}/invitations",
        {"role": "admin", "expiresInSeconds": 3600, "maxUses": 3},
    )
    assert created.status == 201
    code = created.body["code"]
    assert created.body["link"] == f"{server.url}/app/join/{code}"
    invitation = created.body["invitation"]
    assert (invitation["role"], invitation["maxUses"], invitation["usable"]) == ("admin", 3, True)

    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    assert [i["id"] for i in listed.body["invitations"]] == [invitation["id"]]
    assert code not in listed.raw.decode()  # codes are shown once, at creation

    assert (await owner.delete(f"/v1/teams/{team_id}/invitations/{invitation['id']}")).status == 204
    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    assert listed.body["invitations"][0]["revoked"] is True
    preview = await server.client().post("/v1/invitations/preview", {"code": code})
    assert (preview.status, preview.code) == (404, "invitationInvalid")


async def test_preview_and_accept_by_a_signed_in_account(server: RunningHub) -> None:
    owner = await server.sign_up_owner(team="Team A")
    team_id = await server.first_team_id(owner)
    other = await server.create_owner("b@example.com", "Team B")
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "member"})).body["code"]

    preview = await other.post("/v1/invitations/preview", {"code": code})
    assert preview.status == 200
    assert (preview.body["teamName"], preview.body["role"]) == ("Team A", "member")

    accepted = await other.post("/v1/invitations/accept", {"code": code})
    assert (accepted.status, accepted.body["name"], accepted.body["role"]) == (
        201,
        "Team A",
        "member",
    )
    names = sorted(t["name"] for t in (await other.get("/v1/teams")).body["teams"])
    assert names == ["Team A", "Team B"]

    again = await other.post("/v1/invitations/accept", {"code": code})
    assert (again.status, again.code) == (404, "invitationInvalid")  # one use only


async def test_a_member_cannot_join_twice(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {"maxUses": 5})).body["code"]
    reply = await owner.post("/v1/invitations/accept", {"code": code})
    assert (reply.status, reply.code) == (409, "alreadyMember")


async def test_accepting_one_code_at_once_joins_once(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    # A few rounds: without the team's lock, the race shows in most rounds on PostgreSQL.
    for n in range(4):
        other = await server.create_owner(f"b{n}@example.com", f"Team B{n}")
        created = await owner.post(f"/v1/teams/{team_id}/invitations", {"maxUses": 5})
        replies = await asyncio.gather(
            *(other.post("/v1/invitations/accept", {"code": created.body["code"]}) for _ in "abc")
        )
        assert sorted((r.status, r.code) for r in replies) == [
            (201, None),
            (409, "alreadyMember"),
            (409, "alreadyMember"),
        ]
        listed = await owner.get(f"/v1/teams/{team_id}/invitations")
        invitation = next(
            i for i in listed.body["invitations"] if i["id"] == created.body["invitation"]["id"]
        )
        assert invitation["uses"] == 1
        assert [u["accountId"] for u in invitation["usedBy"]] == [other.account_id]
        assert (await members(owner, team_id))[f"b{n}@example.com"] == "member"


async def test_an_invitation_expires(server: RunningHub, clock: FakeClock) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    created = await owner.post(f"/v1/teams/{team_id}/invitations", {"expiresInSeconds": 60})
    clock.advance(61)
    preview = await server.client().post("/v1/invitations/preview", {"code": created.body["code"]})
    assert (preview.status, preview.code) == (404, "invitationInvalid")
    assert "expired" in preview.body["error"]["message"]
    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    assert listed.body["invitations"][0]["usable"] is False


async def test_use_limit(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {"maxUses": 2})).body["code"]
    for n in range(2):
        joined = await server.client().post(
            "/v1/accounts",
            {
                "email": f"m{n}@example.com",
                "name": "M",
                "password": PASSWORD,
                "invitationCode": code,
            },
        )
        assert joined.status == 201
    third = await server.client().post(
        "/v1/accounts",
        {"email": "m3@example.com", "name": "M", "password": PASSWORD, "invitationCode": code},
    )
    assert (third.status, third.code) == (404, "invitationInvalid")
    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    used_by = listed.body["invitations"][0]["usedBy"]
    assert [u["name"] for u in used_by] == ["M", "M"]
    assert all(isinstance(u["usedAt"], float) and u["accountId"] for u in used_by)
    # The refused sign-up left no account behind.
    assert (
        await server.client().post(
            "/v1/sessions", {"email": "m3@example.com", "password": PASSWORD}
        )
    ).status == 401


async def test_an_admin_cannot_invite_an_owner(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    reply = await admin.post(f"/v1/teams/{team_id}/invitations", {"role": "owner"})
    assert (reply.status, reply.code) == (403, "ownerOnly")
    assert (await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "owner"})).status == 201


async def test_an_unknown_code_is_refused(server: RunningHub) -> None:
    await server.sign_up_owner()
    reply = await server.client().post("/v1/invitations/preview", {"code": "guess"})
    assert (reply.status, reply.code) == (404, "invitationInvalid")


async def test_revoking_another_teams_invitation_is_not_found(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    other = await server.create_owner("b@example.com", "Team B")
    other_team = await server.first_team_id(other)
    theirs = await other.post(f"/v1/teams/{other_team}/invitations", {})
    reply = await owner.delete(f"/v1/teams/{team_id}/invitations/{theirs.body['invitation']['id']}")
    assert (reply.status, reply.code) == (404, "notFound")
    listed = await other.get(f"/v1/teams/{other_team}/invitations")
    assert listed.body["invitations"][0]["revoked"] is False


# -- an invitation lives only as long as its creator may grant it -----------------------------


async def new_code(creator: ApiClient, team_id: str, role: str) -> str:
    created = await creator.post(f"/v1/teams/{team_id}/invitations", {"role": role, "maxUses": 5})
    assert created.status == 201, created.body
    return str(created.body["code"])


async def sign_up_with(server: RunningHub, code: str, email: str) -> tuple[int, Any]:
    """A new account joining with ``code``; a refusal must leave no account behind."""
    joined = await server.client().post(
        "/v1/accounts",
        {"email": email, "name": "New", "password": PASSWORD, "invitationCode": code},
    )
    if joined.status != 201:
        signin = await server.client().post("/v1/sessions", {"email": email, "password": PASSWORD})
        assert signin.status == 401, "a refused sign-up left an account behind"
    return joined.status, joined.code


async def members(owner: ApiClient, team_id: str) -> dict[str, str]:
    reply = await owner.get(f"/v1/teams/{team_id}/members")
    return {m["email"]: m["role"] for m in reply.body["members"]}


@pytest.mark.parametrize("how", ["demoted", "removed", "left"])
async def test_losing_the_admin_role_revokes_ones_invitations(server: RunningHub, how: str) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    admin_code = await new_code(admin, team_id, "admin")
    member_code = await new_code(admin, team_id, "member")
    assert await sign_up_with(server, admin_code, "first@example.com") == (201, None)

    path = f"/v1/teams/{team_id}/members/{admin.account_id}"
    if how == "demoted":
        assert (await owner.patch(path, {"role": "member"})).status == 200
    elif how == "removed":
        assert (await owner.delete(path)).status == 204
    else:
        assert (await admin.post(f"/v1/teams/{team_id}/leave")).status == 204

    for code in (admin_code, member_code):
        assert await sign_up_with(server, code, "late@example.com") == (404, "invitationInvalid")
        preview = await server.client().post("/v1/invitations/preview", {"code": code})
        assert (preview.status, preview.code) == (404, "invitationInvalid")
    listed = (await owner.get(f"/v1/teams/{team_id}/invitations")).body["invitations"]
    theirs = [(i["revoked"], i["usable"]) for i in listed if i["createdBy"] == admin.account_id]
    assert theirs == [(True, False)] * 2
    expected = {"owner@example.com": "owner", "first@example.com": "admin"}
    if how == "demoted":
        expected["admin@example.com"] = "member"
    else:
        # The ex-admin cannot come back through their own invitation.
        again = await admin.post("/v1/invitations/accept", {"code": admin_code})
        assert (again.status, again.code) == (404, "invitationInvalid")
    assert await members(owner, team_id) == expected


async def test_an_owner_made_admin_keeps_admin_invitations_only(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    second = await server.invite(owner, team_id, "second@example.com", "owner")
    owner_code = await new_code(second, team_id, "owner")
    admin_code = await new_code(second, team_id, "admin")

    path = f"/v1/teams/{team_id}/members/{second.account_id}"
    assert (await owner.patch(path, {"role": "admin"})).status == 200

    assert await sign_up_with(server, owner_code, "o@example.com") == (404, "invitationInvalid")
    assert await sign_up_with(server, admin_code, "a@example.com") == (201, None)
    assert (await members(owner, team_id))["a@example.com"] == "admin"


async def test_an_owner_who_stays_owner_keeps_their_invitations(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    code = await new_code(owner, team_id, "admin")
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    # Someone else's role changes and departures leave the owner's invitation alone.
    path = f"/v1/teams/{team_id}/members/{admin.account_id}"
    assert (await owner.patch(path, {"role": "member"})).status == 200
    assert (await owner.delete(path)).status == 204
    same_role = {"role": "owner"}
    assert (
        await owner.patch(f"/v1/teams/{team_id}/members/{owner.account_id}", same_role)
    ).status == 200

    assert await sign_up_with(server, code, "one@example.com") == (201, None)
    assert await sign_up_with(server, code, "two@example.com") == (201, None)
    assert (await members(owner, team_id))["two@example.com"] == "admin"


async def test_acceptance_checks_the_creators_role_now(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    code = await new_code(admin, team_id, "admin")
    stranger = await server.create_owner("b@example.com", "Team B")
    # A role lost without revoking the invitations (as before this check existed).
    assert admin.account_id is not None
    async with server.hub.db.write() as conn:
        await TeamRepository().update_role(conn, team_id, admin.account_id, Role.MEMBER)
    server.hub.teams.forget_cached(None)

    assert await sign_up_with(server, code, "late@example.com") == (404, "invitationInvalid")
    accepted = await stranger.post("/v1/invitations/accept", {"code": code})
    assert (accepted.status, accepted.code) == (404, "invitationInvalid")
    assert "revoked" in accepted.body["error"]["message"]
    assert "b@example.com" not in await members(owner, team_id)
    listed = (await owner.get(f"/v1/teams/{team_id}/invitations")).body["invitations"]
    assert [i["uses"] for i in listed if i["createdBy"] == admin.account_id] == [0]


async def test_accepting_cannot_take_an_account_past_its_team_limit(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    other = await server.create_owner("busy@example.com", "Busy")
    assert other.account_id is not None
    for number in range(MAX_TEAMS_PER_ACCOUNT - 1):
        await server.hub.teams.create_team(other.account_id, f"Team {number}")
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "member"})).body["code"]

    refused = await other.post("/v1/invitations/accept", {"code": code})
    assert (refused.status, refused.code) == (409, "tooManyTeams")
    assert len((await other.get("/v1/teams")).body["teams"]) == MAX_TEAMS_PER_ACCOUNT
    # Nothing of the invitation was spent.
    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    assert listed.body["invitations"][0]["uses"] == 0

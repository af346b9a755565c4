"""Invitations: create, list, revoke, preview, accept, expiry and use limits."""

from __future__ import annotations

from tests.support.clock import FakeClock
from tests.support.hub_server import PASSWORD, RunningHub


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

"""Personal access tokens through the hub's API: a member creates one and sees its secret
once, lists and revokes their own; another member neither sees nor revokes it; owners and
admins list and revoke the team's; the audit lists follow the same lines."""

from __future__ import annotations

from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked


async def test_a_member_creates_lists_and_revokes_their_own(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    other = await server.invite(owner, team_id, "other@example.com", "member")
    base = f"/v1/teams/{team_id}/access-tokens"

    created = await member.post(
        base, {"name": " laptop agent ", "hostId": host_id, "scope": "browser", "expiresInDays": 7}
    )
    assert created.status == 201, created.body
    secret, token = created.body["secret"], created.body["token"]
    assert secret.startswith("crh_pat_")
    assert (token["name"], token["scope"], token["live"], token["revoked"]) == (
        "laptop agent",
        "browser",
        True,
        False,
    )
    assert token["expiresAt"] - token["createdAt"] == 7 * 86400

    listed = await member.get(base)
    assert [t["id"] for t in listed.body["tokens"]] == [token["id"]]
    assert secret not in listed.raw.decode()  # shown once, at creation
    assert (await other.get(base)).body["tokens"] == []
    assert (await member.get(base + "/all")).code == "forbidden"
    every = await owner.get(base + "/all")
    assert [t["accountId"] for t in every.body["tokens"]] == [member.account_id]

    refused = await other.delete(f"{base}/{token['id']}")
    assert (refused.status, refused.code) == (404, "accessTokenNotFound")
    assert (await member.delete(f"{base}/{token['id']}")).status == 204
    [revoked] = (await member.get(base)).body["tokens"]
    assert (revoked["revoked"], revoked["live"]) == (True, False)
    again = await member.delete(f"{base}/{token['id']}")
    assert again.status == 204  # revoking twice changes nothing


async def test_an_admin_revokes_a_members_token(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    base = f"/v1/teams/{team_id}/access-tokens"
    created = await member.post(base, {"name": "ci", "hostId": host_id, "scope": "browser+agents"})
    token_id = created.body["token"]["id"]
    assert (await owner.delete(f"{base}/{token_id}")).status == 204
    assert (await member.get(base)).body["tokens"][0]["revoked"] is True
    uses = f"/v1/teams/{team_id}/access-token-uses"
    assert (await member.get(uses)).body["uses"] == []
    assert (await member.get(uses + "/all")).code == "forbidden"
    assert (await owner.get(uses + "/all")).body["uses"] == []


async def test_bad_input_is_refused_and_nothing_is_kept(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    base = f"/v1/teams/{team_id}/access-tokens"
    for body, code in (
        ({"name": "x", "hostId": "f" * 32}, "hostNotFound"),
        ({"name": "x", "hostId": host_id, "scope": "everything"}, "invalidArgument"),
        ({"name": "x", "hostId": host_id, "expiresInDays": 0}, "invalidArgument"),
        ({"name": "", "hostId": host_id}, "invalidArgument"),
        ({"name": "x\u0007", "hostId": host_id}, "invalidArgument"),
    ):
        reply = await owner.post(base, body)
        assert reply.code == code, (body, reply.body)
    assert (await owner.get(base)).body["tokens"] == []

"""Personal access tokens through the hub's API: a member creates one and sees its secret
once, lists and revokes their own; another member neither sees nor revokes it; owners and
admins list and revoke the team's; the audit lists follow the same lines. A member who
leaves or is removed loses their tokens in that team for good, not only while away."""

from __future__ import annotations

from typing import Literal

import pytest

from server.common.errors import Forbidden
from tests.support.hub_server import ApiClient, RunningHub
from tests.support.peers import wait_linked

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


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


async def test_a_token_asked_for_as_its_member_was_removed_is_not_made(
    server: RunningHub,
) -> None:
    """A request that passed its checks and waited while the member was removed makes no
    token: the service checks the membership in the transaction that would keep it."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    assert member.account_id is not None
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")).status == 204
    with pytest.raises(Forbidden):
        await server.hub.access_tokens.create(
            team_id,
            member.account_id,
            name="ci",
            host_id=host_id,
            scope="browser",
            expires_in_days=7,
        )
    listed = (await owner.get(f"/v1/teams/{team_id}/access-tokens/all")).body["tokens"]
    assert listed == []


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


async def _join(inviter: ApiClient, team_id: str, joiner: ApiClient, role: str) -> None:
    """An account that exists already joins a team with an invitation of ``inviter``'s."""
    invitation = await inviter.post(f"/v1/teams/{team_id}/invitations", {"role": role})
    assert invitation.status == 201, invitation.body
    accepted = await joiner.post("/v1/invitations/accept", {"code": invitation.body["code"]})
    assert accepted.status == 201, accepted.body


async def _token(client: ApiClient, team_id: str, host_id: str) -> tuple[str, str]:
    """A year-long ``browser+agents`` token of the client's: its id and its secret."""
    body = {"name": "ci", "hostId": host_id, "scope": "browser+agents", "expiresInDays": 365}
    created = await client.post(f"/v1/teams/{team_id}/access-tokens", body)
    assert created.status == 201, created.body
    return created.body["token"]["id"], created.body["secret"]


async def _reaches_the_host(bearer: ApiClient) -> bool:
    """Whether the hub let the bearer's MCP request through: the host answers a ping out
    of any session with MCP's own "missing session" error."""
    reply = await bearer.post("/v1/mcp", PING)
    return reply.status == 400 and reply.body["error"]["code"] == -32600


@pytest.mark.parametrize("going", ["removed", "left"])
async def test_a_member_who_goes_loses_their_tokens_in_that_team_for_good(
    server: RunningHub, going: Literal["removed", "left"]
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    other_owner = await server.create_owner("other@example.com", "Team B")
    other_team_id = await server.first_team_id(other_owner)
    await _join(other_owner, other_team_id, admin, "member")
    kept_id, kept_secret = await _token(admin, other_team_id, host_id)
    old_id, old_secret = await _token(admin, team_id, host_id)
    bearer = server.client(bearer=old_secret)
    # Used once, so the hub holds the checked token when its member goes.
    assert await _reaches_the_host(bearer)

    if going == "removed":
        gone = await owner.delete(f"/v1/teams/{team_id}/members/{admin.account_id}")
    else:
        gone = await admin.post(f"/v1/teams/{team_id}/leave")
    assert gone.status == 204, gone.body
    [listed] = (await owner.get(f"/v1/teams/{team_id}/access-tokens/all")).body["tokens"]
    assert (listed["id"], listed["revoked"], listed["live"]) == (old_id, True, False)

    # Months later they are invited back, as a plain member: the old token stays ended.
    await _join(owner, team_id, admin, "member")
    refused = await bearer.post("/v1/mcp", PING)
    assert (refused.status, refused.code) == (401, "accessTokenRevoked")
    [mine] = (await admin.get(f"/v1/teams/{team_id}/access-tokens")).body["tokens"]
    assert (mine["id"], mine["revoked"], mine["live"]) == (old_id, True, False)

    # The same account's token in another team is untouched.
    [kept] = (await admin.get(f"/v1/teams/{other_team_id}/access-tokens")).body["tokens"]
    assert (kept["id"], kept["revoked"], kept["live"]) == (kept_id, False, True)
    assert await _reaches_the_host(server.client(bearer=kept_secret))

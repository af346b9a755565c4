"""Host enrolment codes: they work only while the owner who made them still may make them."""

from __future__ import annotations

from server.common.keys import SigningKey
from server.common.roles import Role
from server.hub.storage.teams import TeamRepository
from tests.support.hub_server import ApiClient, RunningHub


async def _second_owner_code(server: RunningHub) -> tuple[ApiClient, str, ApiClient, str]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    second = await server.invite(owner, team_id, "two@example.com", "owner")
    made = await second.post(f"/v1/teams/{team_id}/hosts/enrolments", {"name": "Lab"})
    assert made.status == 201, made.body
    return owner, team_id, second, str(made.body["code"])


async def _enrol(server: RunningHub, code: str) -> tuple[int, str | None]:
    reply = await server.client().post(
        "/v1/hosts/enrol", {"code": code, "publicKey": SigningKey.generate().public_key}
    )
    return reply.status, reply.code


async def test_a_removed_owners_code_is_dead_even_if_they_rejoin(server: RunningHub) -> None:
    owner, team_id, second, code = await _second_owner_code(server)
    removed = await owner.delete(f"/v1/teams/{team_id}/members/{second.account_id}")
    assert removed.status == 204
    assert await _enrol(server, code) == (401, "enrolmentInvalid")

    # Back as an owner, the old code stays gone: removal dropped it.
    invitation = await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "owner"})
    accepted = await second.post("/v1/invitations/accept", {"code": invitation.body["code"]})
    assert accepted.status in (200, 201), accepted.body
    assert await _enrol(server, code) == (401, "enrolmentInvalid")
    hosts = await owner.get(f"/v1/teams/{team_id}/hosts")
    assert [h["builtin"] for h in hosts.body["hosts"]] == [True]


async def test_a_demoted_owners_code_is_dead_even_if_promoted_again(server: RunningHub) -> None:
    owner, team_id, second, code = await _second_owner_code(server)
    member = f"/v1/teams/{team_id}/members/{second.account_id}"
    assert (await owner.patch(member, {"role": "admin"})).status == 200
    assert await _enrol(server, code) == (401, "enrolmentInvalid")
    assert (await owner.patch(member, {"role": "owner"})).status == 200
    assert await _enrol(server, code) == (401, "enrolmentInvalid")


async def test_a_code_made_before_a_demotion_was_dropped_is_refused_when_spent(
    server: RunningHub,
) -> None:
    """The role is checked when the code is spent, not only dropped on a change."""
    _, team_id, second, code = await _second_owner_code(server)
    assert second.account_id is not None
    # A demotion written without the service (as an older hub or an operator might).
    async with server.hub.db.write() as conn:
        await TeamRepository().update_role(conn, team_id, second.account_id, Role.ADMIN)
    assert await _enrol(server, code) == (401, "enrolmentInvalid")

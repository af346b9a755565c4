"""Every team route against every kind of caller: the least role is enforced before the handler.

The matrix is built from the route table itself, so a new team route without a
sample request here fails ``test_every_team_route_has_a_sample``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aiortc import RTCPeerConnection

from server.common.keys import SigningKey
from server.common.roles import Role
from server.common.sdp import sdp_fingerprint
from server.hub.app import all_routes
from tests.support.enrolled_hosts import enrol_host
from tests.support.hub_server import ApiClient, RunningHub
from tests.support.images import tiny_png
from tests.support.peers import wait_linked
from tests.support.snapshots import database_snapshot

pytestmark = pytest.mark.sqlite_only

ACTORS = ("owner", "admin", "member", "other_team", "signed_out")


@dataclass
class World:
    server: RunningHub
    team_id: str
    clients: dict[str, ApiClient]
    target_id: str
    invitation_id: str
    enrolled_host_id: str
    # Who makes the request: a connect sample carries a ticket of that actor's own.
    actor: str = "owner"
    # The owner's personal access token (a member may revoke only their own).
    access_token_id: str = ""

    @property
    def builtin_host_id(self) -> str:
        return self.server.builtin.services.host_id


Sample = Callable[[World], Awaitable[tuple[str, Any]]]


async def _plain(world: World, path: str, body: Any = None) -> tuple[str, Any]:
    return path.format(team_id=world.team_id), body


async def _offer_fingerprint() -> tuple[str, str]:
    connection = RTCPeerConnection()
    connection.createDataChannel("team-api")
    await connection.setLocalDescription(await connection.createOffer())
    sdp = connection.localDescription.sdp
    await connection.close()
    return sdp, sdp_fingerprint(sdp)


async def _ticket(world: World) -> tuple[str, Any]:
    _, fingerprint = await _offer_fingerprint()
    path = f"/v1/teams/{{team_id}}/hosts/{world.builtin_host_id}/tickets"
    return await _plain(world, path, {"fingerprint": fingerprint})


async def _connect(world: World) -> tuple[str, Any]:
    # A real offer and a real ticket (the actor's own when it may have one; else the
    # owner's), so that the guard alone decides.
    sdp, fingerprint = await _offer_fingerprint()
    base = f"/v1/teams/{world.team_id}/hosts/{world.builtin_host_id}"
    holder = world.actor if world.actor in ("owner", "admin", "member") else "owner"
    grant = await world.clients[holder].post(f"{base}/tickets", {"fingerprint": fingerprint})
    return f"{base}/connect", {"ticket": grant.body["ticket"], "sdp": sdp}


SAMPLES: dict[str, tuple[Sample, int]] = {
    "get_team": (lambda w: _plain(w, "/v1/teams/{team_id}"), 200),
    "rename_team": (lambda w: _plain(w, "/v1/teams/{team_id}", {"name": "Renamed"}), 200),
    "list_members": (lambda w: _plain(w, "/v1/teams/{team_id}/members"), 200),
    "get_member_avatar": (
        lambda w: _plain(w, f"/v1/teams/{{team_id}}/members/{w.target_id}/avatar"),
        200,
    ),
    "change_role": (
        lambda w: _plain(w, f"/v1/teams/{{team_id}}/members/{w.target_id}", {"role": "admin"}),
        200,
    ),
    "remove_member": (lambda w: _plain(w, f"/v1/teams/{{team_id}}/members/{w.target_id}"), 204),
    "leave_team": (lambda w: _plain(w, "/v1/teams/{team_id}/leave"), 204),
    "create_invitation": (
        lambda w: _plain(w, "/v1/teams/{team_id}/invitations", {"role": "member"}),
        201,
    ),
    "list_invitations": (lambda w: _plain(w, "/v1/teams/{team_id}/invitations"), 200),
    "revoke_invitation": (
        lambda w: _plain(w, f"/v1/teams/{{team_id}}/invitations/{w.invitation_id}"),
        204,
    ),
    "list_hosts": (lambda w: _plain(w, "/v1/teams/{team_id}/hosts"), 200),
    "create_enrolment": (
        lambda w: _plain(w, "/v1/teams/{team_id}/hosts/enrolments", {"name": "Lab"}),
        201,
    ),
    "remove_host": (lambda w: _plain(w, f"/v1/teams/{{team_id}}/hosts/{w.enrolled_host_id}"), 204),
    "issue_ticket": (_ticket, 201),
    "connect_to_host": (_connect, 200),
    "create_access_token": (
        lambda w: _plain(
            w, "/v1/teams/{team_id}/access-tokens", {"name": "ci", "hostId": w.builtin_host_id}
        ),
        201,
    ),
    "list_access_tokens": (lambda w: _plain(w, "/v1/teams/{team_id}/access-tokens"), 200),
    "list_team_access_tokens": (lambda w: _plain(w, "/v1/teams/{team_id}/access-tokens/all"), 200),
    "revoke_access_token": (
        lambda w: _plain(w, f"/v1/teams/{{team_id}}/access-tokens/{w.access_token_id}"),
        204,
    ),
    "list_access_token_uses": (lambda w: _plain(w, "/v1/teams/{team_id}/access-token-uses"), 200),
    "list_team_access_token_uses": (
        lambda w: _plain(w, "/v1/teams/{team_id}/access-token-uses/all"),
        200,
    ),
}
# The one owner of a team cannot leave it; a member revokes no token but their own.
EXCEPTIONS = {("leave_team", "owner"): 409, ("revoke_access_token", "member"): 404}

TEAM_ROUTES = [route for route in all_routes() if isinstance(route.access, Role)]


def expected_status(route_name: str, least: Role, actor: str) -> int:
    if actor == "signed_out":
        return 401
    if actor == "other_team":
        return 404
    if not Role(actor).at_least(least):
        return 403
    return EXCEPTIONS.get((route_name, actor), SAMPLES[route_name][1])


async def build_world(server: RunningHub) -> World:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    admin = await server.invite(owner, team_id, "admin@example.com", "admin")
    member = await server.invite(owner, team_id, "member@example.com", "member")
    target = await server.invite(owner, team_id, "target@example.com", "member")
    await target.put("/v1/me/avatar", data=tiny_png(), headers={"Content-Type": "image/png"})
    other = await server.create_owner("b-owner@example.com", "Team B")
    invitation = await owner.post(f"/v1/teams/{team_id}/invitations", {})
    enrolled_host_id = await enrol_host(server, owner, team_id, SigningKey.generate())
    builtin_host_id = await wait_linked(server)
    token = await owner.post(
        f"/v1/teams/{team_id}/access-tokens", {"name": "laptop", "hostId": builtin_host_id}
    )
    assert target.account_id is not None
    return World(
        server,
        team_id,
        {
            "owner": owner,
            "admin": admin,
            "member": member,
            "other_team": other,
            "signed_out": server.client(),
        },
        target.account_id,
        invitation.body["invitation"]["id"],
        enrolled_host_id,
        access_token_id=token.body["token"]["id"],
    )


def test_every_team_route_has_a_sample() -> None:
    assert {route.name for route in TEAM_ROUTES} == set(SAMPLES)


ALLOWED = [
    pytest.param(route, actor, id=f"{route.name}-{actor}")
    for route in TEAM_ROUTES
    for actor in ACTORS
    if isinstance(route.access, Role) and expected_status(route.name, route.access, actor) < 400
]


@pytest.mark.parametrize(("route", "actor"), ALLOWED)
async def test_role_matrix_lets_the_least_role_and_above_in(
    server: RunningHub, route: Any, actor: str
) -> None:
    world = await build_world(server)
    world.actor = actor
    path, body = await SAMPLES[route.name][0](world)

    reply = await world.clients[actor].request(route.method, path, body)

    assert reply.status == expected_status(route.name, route.access, actor), reply.body


@pytest.mark.parametrize("route", TEAM_ROUTES, ids=lambda r: r.name)
async def test_role_matrix_refuses_everyone_else_and_writes_nothing(
    server: RunningHub, route: Any
) -> None:
    """Every refused caller in turn against one world: a refusal writes nothing, so the
    next caller meets the same database."""
    world = await build_world(server)
    before = await database_snapshot(server.hub.db)
    for actor in ACTORS:
        expected = expected_status(route.name, route.access, actor)
        if expected < 400:
            continue
        world.actor = actor
        path, body = await SAMPLES[route.name][0](world)

        reply = await world.clients[actor].request(route.method, path, body)

        assert (reply.status, reply.code is not None) == (expected, True), (actor, reply.body)
        assert await database_snapshot(server.hub.db) == before, actor


async def test_a_member_of_another_team_reads_and_writes_nothing(server: RunningHub) -> None:
    world = await build_world(server)
    outsider = world.clients["other_team"]
    before = await database_snapshot(server.hub.db)
    for route in TEAM_ROUTES:
        path, body = await SAMPLES[route.name][0](world)
        reply = await outsider.request(route.method, path, body)
        assert (reply.status, reply.code) == (404, "teamNotFound"), route.name
        assert world.team_id not in reply.raw.decode()
    assert await database_snapshot(server.hub.db) == before
    teams = await outsider.get("/v1/teams")
    assert [t["name"] for t in teams.body["teams"]] == ["Team B"]


@pytest.mark.parametrize(
    "route", [r for r in all_routes() if r.access == "account"], ids=lambda r: r.name
)
async def test_account_routes_need_a_session(server: RunningHub, route: Any) -> None:
    path = route.path.format(session_id="0" * 32)
    reply = await server.client().request(route.method, path, {} if route.body else None)
    assert (reply.status, reply.code) == (401, "unauthenticated")

"""Live connections end when access ends, and host routes keep their least roles."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from peer.connection import HostConnection, TeamApiCallError
from tests.support.hub_server import ApiClient, RunningHub
from tests.support.peers import Member, peer_member, wait_linked

# The bound for a revocation to reach the peer.
REVOCATION_SECONDS = 1.0


async def team_with_member(server: RunningHub, tmp_path: Path) -> tuple[ApiClient, Member, str]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", "member")
    host_id = await wait_linked(server)
    return owner, await peer_member(server, "member@example.com", tmp_path), host_id


async def assert_dropped(connection: HostConnection, code: str) -> None:
    """The connection ended, and its last event said why with ``code``."""
    await asyncio.wait_for(connection.closed.wait(), REVOCATION_SECONDS)
    revoked = connection.events.get_nowait()
    assert revoked["event"] == "revoked"
    assert revoked["data"]["code"] == code
    with pytest.raises(ConnectionError):
        await connection.call("capabilities")


async def test_member_and_admin_routes_follow_the_role(server: RunningHub, tmp_path: Path) -> None:
    owner, member, host_id = await team_with_member(server, tmp_path)
    connection = await member.connect(host_id)
    assert (await connection.call("host-v1/whoami"))["role"] == "member"
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call("host-v1/peers/list")
    assert caught.value.code == "forbidden"

    await owner.patch(f"/v1/teams/{member.team_id}/members/{member.account_id}", {"role": "admin"})
    await assert_dropped(connection, "roleChanged")
    promoted = await member.connect(host_id)
    assert (await promoted.call("host-v1/whoami"))["role"] == "admin"
    peers = await promoted.call("host-v1/peers/list")
    assert [p["accountId"] for p in peers["peers"]] == [member.account_id]
    await promoted.close()
    await member.hub.close()


async def test_removal_drops_the_connection(server: RunningHub, tmp_path: Path) -> None:
    owner, member, host_id = await team_with_member(server, tmp_path)
    connection = await member.connect(host_id)
    reply = await owner.delete(f"/v1/teams/{member.team_id}/members/{member.account_id}")
    assert reply.status == 204
    await assert_dropped(connection, "removedFromTeam")
    assert server.builtin.services.peers.peers() == []
    await member.hub.close()


async def test_sign_out_drops_the_connection(server: RunningHub, tmp_path: Path) -> None:
    _, member, host_id = await team_with_member(server, tmp_path)
    owners = await peer_member(server, "owner@example.com", tmp_path)
    kept = await owners.connect(host_id)
    connection = await member.connect(host_id)
    await member.hub.sign_out()
    await assert_dropped(connection, "sessionEnded")
    # Only that session's connection ended.
    assert (await kept.call("capabilities"))["hostId"] == host_id
    await kept.close()
    await owners.hub.close()
    await member.hub.close()


async def test_revoking_a_session_drops_its_connection(server: RunningHub, tmp_path: Path) -> None:
    _, member, host_id = await team_with_member(server, tmp_path)
    connection = await member.connect(host_id)
    browser = await server.sign_in("member@example.com")
    reply = await browser.post("/v1/me/sessions/revoke-others")
    assert reply.body == {"revoked": 2}  # the sign-up session and the peer's
    await assert_dropped(connection, "sessionEnded")
    await member.hub.close()

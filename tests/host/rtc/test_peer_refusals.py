"""Every way into a host without a good ticket is refused, with the matching code, and no peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiortc import RTCPeerConnection

from peer.connection import connect_to_host
from peer.hub_client import HubClient, HubError
from peer.known_hosts import HostKeyChanged
from server.common.errors import CrewhostError
from server.common.keys import SigningKey
from server.common.sdp import sdp_fingerprint
from tests.support.clock import FakeClock
from tests.support.enrolled_hosts import linked_host
from tests.support.hub_server import RunningHub
from tests.support.peers import Member, peer_member, wait_linked


async def new_offer() -> tuple[RTCPeerConnection, str]:
    connection = RTCPeerConnection()
    connection.createDataChannel("team-api")
    await connection.setLocalDescription(await connection.createOffer())
    return connection, connection.localDescription.sdp


@pytest.fixture
async def member(server: RunningHub, tmp_path: Path) -> AsyncIterator[Member]:
    await server.sign_up_owner()
    await wait_linked(server)
    signed_in = await peer_member(server, "owner@example.com", tmp_path)
    yield signed_in
    await signed_in.hub.close()


async def refused(member: Member, host_id: str, ticket: str, sdp: str) -> str:
    with pytest.raises(HubError) as caught:
        await member.hub.connect(member.team_id, host_id, ticket, sdp)
    assert caught.value.status == 403
    return caught.value.code


async def test_a_forged_signature_is_refused(server: RunningHub, member: Member) -> None:
    host_id = server.builtin.services.host_id
    connection, sdp = await new_offer()
    grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    payload, _, signature = grant.ticket.partition(".")
    forged = f"{payload}.{SigningKey.generate().sign(b'something else')}"
    assert await refused(member, host_id, forged, sdp) == "ticketInvalid"
    # The same claims signed by a key that is not the hub's.
    assert await refused(member, host_id, f"{payload}.{signature[:-4]}AAAA", sdp) == "ticketInvalid"
    assert server.builtin.services.peers.peers() == []
    await connection.close()


async def test_an_expired_ticket_is_refused(
    server: RunningHub, member: Member, clock: FakeClock
) -> None:
    host_id = server.builtin.services.host_id
    connection, sdp = await new_offer()
    grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    clock.advance(61)
    assert await refused(member, host_id, grant.ticket, sdp) == "ticketExpired"
    assert server.builtin.services.peers.peers() == []
    await connection.close()


async def test_a_ticket_works_once(server: RunningHub, member: Member) -> None:
    host_id = server.builtin.services.host_id
    connection, sdp = await new_offer()
    grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    await member.hub.connect(member.team_id, host_id, grant.ticket, sdp)
    assert await refused(member, host_id, grant.ticket, sdp) == "ticketReplayed"
    assert len(server.builtin.services.peers.peers()) == 1
    await connection.close()


async def test_a_stolen_ticket_fails_on_another_connection(
    server: RunningHub, member: Member
) -> None:
    host_id = server.builtin.services.host_id
    victim, victim_sdp = await new_offer()
    grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(victim_sdp))
    thief, thief_sdp = await new_offer()
    assert await refused(member, host_id, grant.ticket, thief_sdp) == "fingerprintMismatch"
    assert server.builtin.services.peers.peers() == []
    await victim.close()
    await thief.close()


async def test_a_ticket_for_another_host_is_refused(
    server: RunningHub, member: Member, tmp_path: Path
) -> None:
    owner = server.client()
    await owner.post(
        "/v1/sessions", {"email": "owner@example.com", "password": "correct horse battery"}
    )
    async with linked_host(server, owner, member.team_id, tmp_path) as running:
        other = running.services
        connection, sdp = await new_offer()
        builtin_id = server.builtin.services.host_id
        grant = await member.hub.ticket(member.team_id, builtin_id, sdp_fingerprint(sdp))
        # The hub relays a ticket only to the host it names...
        assert await refused(member, other.host_id, grant.ticket, sdp) == "ticketNotYours"
        # ...and a host refuses one for another host even when it gets there.
        with pytest.raises(CrewhostError) as caught:
            await server.hub.links.relay_offer(other.host_id, grant.ticket, sdp)
        assert caught.value.code == "ticketWrongHost"
        assert other.peers.peers() == []
        await connection.close()


async def test_a_changed_host_key_is_refused_loudly(server: RunningHub, member: Member) -> None:
    host_id = server.builtin.services.host_id
    member.known_hosts.check(member.account_id, host_id, SigningKey.generate().public_key)
    with pytest.raises(HostKeyChanged, match="changed"):
        await member.connect(host_id)


async def test_the_pinned_key_lets_the_next_connection_in(
    server: RunningHub, member: Member
) -> None:
    host_id = server.builtin.services.host_id
    first = await member.connect(host_id)
    await first.close()
    second = await member.connect(host_id)
    assert (await second.call("capabilities"))["hostId"] == host_id
    await second.close()


async def test_a_signed_out_session_gets_no_ticket(server: RunningHub, member: Member) -> None:
    host_id = server.builtin.services.host_id
    connection, sdp = await new_offer()
    token = member.hub.token
    await member.hub.sign_out()
    signed_out = HubClient(server.url, token=token)
    with pytest.raises(HubError) as caught:
        await signed_out.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    assert (caught.value.status, caught.value.code) == (401, "sessionExpired")
    await signed_out.close()
    await connection.close()


async def test_a_member_of_another_team_gets_no_ticket(
    server: RunningHub, member: Member, tmp_path: Path
) -> None:
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    host_id = server.builtin.services.host_id
    connection, sdp = await new_offer()
    with pytest.raises(HubError) as caught:
        await outsider.hub.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    await connection.close()
    assert (caught.value.status, caught.value.code) == (404, "teamNotFound")
    with pytest.raises(HubError) as caught:
        await connect_to_host(
            outsider.hub, member.team_id, host_id, outsider.known_hosts, outsider.account_id
        )
    assert caught.value.code == "teamNotFound"
    assert server.builtin.services.peers.peers() == []
    await outsider.hub.close()

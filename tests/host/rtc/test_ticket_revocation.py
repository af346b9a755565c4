"""A ticket fetched before access ended cannot be used after, by the hub's relay or the host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiortc import RTCPeerConnection

from peer.connection import TeamApiCallError
from peer.hub_client import HubError
from server.common.errors import CrewhostError
from server.common.protocol.link import LinkRevoke
from server.common.protocol.signaling import TicketGrant
from server.common.protocol.team_api import TEAM_API_LABEL
from server.common.sdp import sdp_fingerprint
from server.host.agents.routines import CREATOR_GONE
from tests.support.clock import FakeClock
from tests.support.enrolled_hosts import linked_host
from tests.support.hub_server import RunningHub
from tests.support.peers import Member, peer_member, wait_linked
from tests.support.waiting import eventually


@asynccontextmanager
async def ticket_in_hand(member: Member, host_id: str) -> AsyncIterator[tuple[str, str]]:
    """An offer and the ticket the hub gave for it, not yet used: (ticket, offer SDP)."""
    connection = RTCPeerConnection()
    connection.createDataChannel(TEAM_API_LABEL)
    await connection.setLocalDescription(await connection.createOffer())
    sdp = connection.localDescription.sdp
    grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(sdp))
    try:
        yield grant.ticket, sdp
    finally:
        await connection.close()


async def refused_by_host(server: RunningHub, host_id: str, ticket: str, sdp: str) -> str:
    """Send the offer straight down the host's link, past the hub's own checks."""
    with pytest.raises(CrewhostError) as caught:
        await server.hub.links.relay_offer(host_id, ticket, sdp)
    return caught.value.code


async def refused_by_hub(member: Member, host_id: str, ticket: str, sdp: str) -> HubError:
    with pytest.raises(HubError) as caught:
        await member.hub.connect(member.team_id, host_id, ticket, sdp)
    return caught.value


async def team_with(server: RunningHub, tmp_path: Path, role: str) -> tuple[Member, str]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", role)
    host_id = await wait_linked(server)
    return await peer_member(server, "member@example.com", tmp_path), host_id


async def test_a_ticket_from_before_a_removal_is_refused(
    server: RunningHub, tmp_path: Path
) -> None:
    member, host_id = await team_with(server, tmp_path, "member")
    owner = await server.sign_in("owner@example.com")
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        removed = await owner.delete(f"/v1/teams/{member.team_id}/members/{member.account_id}")
        assert removed.status == 204
        assert (await refused_by_hub(member, host_id, ticket, sdp)).status in (403, 404)
        assert await refused_by_host(server, host_id, ticket, sdp) == "ticketRevoked"
    assert server.builtin.services.peers.peers() == []
    await member.hub.close()


async def test_a_ticket_from_before_a_demotion_is_refused_and_a_new_one_works(
    server: RunningHub, tmp_path: Path
) -> None:
    member, host_id = await team_with(server, tmp_path, "admin")
    owner = await server.sign_in("owner@example.com")
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        demoted = await owner.patch(
            f"/v1/teams/{member.team_id}/members/{member.account_id}", {"role": "member"}
        )
        assert demoted.status == 200, demoted.body
        assert (await refused_by_hub(member, host_id, ticket, sdp)).code == "ticketRevoked"
        assert await refused_by_host(server, host_id, ticket, sdp) == "ticketRevoked"
    connection = await member.connect(host_id)
    assert (await connection.call("host-v1/whoami"))["role"] == "member"
    await connection.close()
    await member.hub.close()


async def test_a_ticket_from_before_sign_out_is_refused(server: RunningHub, tmp_path: Path) -> None:
    member, host_id = await team_with(server, tmp_path, "member")
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        await member.hub.sign_out()
        assert await refused_by_host(server, host_id, ticket, sdp) == "ticketRevoked"
    await member.hub.close()


async def test_a_ticket_from_a_revoked_session_is_refused(
    server: RunningHub, tmp_path: Path
) -> None:
    member, host_id = await team_with(server, tmp_path, "member")
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        browser = await server.sign_in("member@example.com")
        reply = await browser.post("/v1/me/sessions/revoke-others")
        assert reply.body == {"revoked": 2}
        assert (await refused_by_hub(member, host_id, ticket, sdp)).status == 401
        assert await refused_by_host(server, host_id, ticket, sdp) == "ticketRevoked"
    await member.hub.close()


async def test_the_hub_relays_only_the_callers_own_ticket(
    server: RunningHub, tmp_path: Path
) -> None:
    member, host_id = await team_with(server, tmp_path, "member")
    await server.create_owner("other@example.com", "Team B")
    other = await peer_member(server, "other@example.com", tmp_path)
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        # Through a team of the other account's own, with the member's ticket.
        with pytest.raises(HubError) as caught:
            await other.hub.connect(other.team_id, host_id, ticket, sdp)
        assert caught.value.code == "ticketNotYours"
        # The same account through another session of its own.
        second = await peer_member(server, "member@example.com", tmp_path)
        assert (await refused_by_hub(second, host_id, ticket, sdp)).code == "ticketNotYours"
        await second.hub.close()
        # Its own session, team and host: let in.
        answer = await member.hub.connect(member.team_id, host_id, ticket, sdp)
        assert answer.host_key == server.builtin.services.identity.public_key
    await other.hub.close()
    await member.hub.close()


async def test_a_peer_admitted_while_a_revocation_arrives_is_closed(
    server: RunningHub, tmp_path: Path
) -> None:
    member, host_id = await team_with(server, tmp_path, "member")
    peers = server.builtin.services.peers
    async with ticket_in_hand(member, host_id) as (ticket, sdp):
        admitting = asyncio.ensure_future(peers.accept(ticket, sdp, "r" * 32))
        await asyncio.sleep(0)  # accept runs to its first wait: the offer is being applied
        assert len(peers.peers()) == 1
        assert not admitting.done()
        # The revocation the link delivers, arriving right then.
        removal = LinkRevoke(
            team_id=member.team_id,
            account_id=member.account_id,
            code="removedFromTeam",
            reason="removed from the team",
            revoked_at=server.hub.clock.now(),
        )
        assert await peers.revoke(removal) == 1
        with pytest.raises(CrewhostError) as caught:
            await admitting
        assert caught.value.code == "ticketRevoked"
    assert peers.peers() == []
    await member.hub.close()


async def test_a_ticket_from_before_a_host_removal_is_refused(
    server: RunningHub, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    async with linked_host(server, owner, team_id, tmp_path) as lab:
        services = lab.services
        member = await peer_member(server, "owner@example.com", tmp_path)
        async with ticket_in_hand(member, services.host_id) as (ticket, sdp):
            reply = await owner.delete(f"/v1/teams/{team_id}/hosts/{services.host_id}")
            assert reply.status == 204
            await asyncio.wait_for(lab.link.unlinked.wait(), 10)
            await eventually(lambda: len(services.peers.revocations) == 1)
            with pytest.raises(CrewhostError) as caught:
                await services.peers.accept(ticket, sdp, "r" * 32)
            assert caught.value.code == "ticketRevoked"
        await member.hub.close()


async def test_a_peer_asks_once_more_when_the_hosts_link_began_after_its_ticket(
    server: RunningHub, clock: FakeClock, tmp_path: Path
) -> None:
    """The host relinked (a restart, a hub restart) between a peer's ticket and its offer:
    the host refuses the older ticket, and the peer library fetches one new ticket and
    connects with the same offer."""
    member, host_id = await team_with(server, tmp_path, "member")
    link = server.builtin.link
    issue = member.hub.ticket
    tickets: list[str] = []

    async def ticket_then_relink(team_id: str, host_id: str, fingerprint: str) -> TicketGrant:
        grant = await issue(team_id, host_id, fingerprint)
        tickets.append(grant.ticket)
        if len(tickets) == 1:
            clock.advance(1)
            await server.hub.links._links[host_id].socket.close()
            await asyncio.wait_for(link.unlinked.wait(), 10)
            await asyncio.wait_for(link.linked.wait(), 10)
        return grant

    member.hub.ticket = ticket_then_relink  # type: ignore[method-assign]
    connection = await member.connect(host_id)
    try:
        assert len(tickets) == 2
        assert (await connection.call("host-v1/whoami"))["role"] == "member"
    finally:
        await connection.close()
        await member.hub.close()


async def _link_held_down(server: RunningHub, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Ends the built-in host's link and holds the next one until the event is set."""
    links = server.hub.links
    let_link, authenticate = asyncio.Event(), links._authenticate

    async def held(socket: Any) -> Any:
        await let_link.wait()
        return await authenticate(socket)

    monkeypatch.setattr(links, "_authenticate", held)
    host_id = server.builtin.services.host_id
    link = server.builtin.link
    await links._links[host_id].socket.close()
    await asyncio.wait_for(link.unlinked.wait(), 10)
    await eventually(lambda: host_id not in links._links)
    return let_link


async def _relinked(server: RunningHub, let_link: asyncio.Event) -> None:
    let_link.set()
    await asyncio.wait_for(server.builtin.link.linked.wait(), 10)
    # The hub's word on who left came, well before the host would stop waiting for it.
    await asyncio.wait_for(server.builtin.services.removals.wait(), 5)


async def test_access_that_ended_while_the_link_was_down_ends_its_peers_as_it_relinks(
    server: RunningHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removal, a demotion and a sign-out made while the host's link was down reach no
    host; as the link begins again, the host lists its peers and the hub revokes those."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    for email, role in (
        ("removed@example.com", "member"),
        ("demoted@example.com", "admin"),
        ("signed-out@example.com", "member"),
        ("kept@example.com", "member"),
    ):
        await server.invite(owner, team_id, email, role)
    host_id = await wait_linked(server)
    members = {
        email.split("@")[0]: await peer_member(server, email, tmp_path)
        for email in (
            "removed@example.com",
            "demoted@example.com",
            "signed-out@example.com",
            "kept@example.com",
        )
    }
    connections = {name: await m.connect(host_id) for name, m in members.items()}

    # The hub takes the host's next link only when let: until then the link is down.
    let_link = await _link_held_down(server, monkeypatch)

    removed = members["removed"]
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{removed.account_id}")).status == 204
    demoted = members["demoted"]
    changed = await owner.patch(
        f"/v1/teams/{team_id}/members/{demoted.account_id}", {"role": "member"}
    )
    assert changed.status == 200, changed.body
    await members["signed-out"].hub.sign_out()
    assert not any(c.closed.is_set() for c in connections.values())

    let_link.set()
    async with asyncio.timeout(10):
        for name in ("removed", "demoted", "signed-out"):
            await connections[name].closed.wait()
    assert (await connections["kept"].call("host-v1/whoami"))["role"] == "member"
    assert [p.account_id for p in server.builtin.services.peers.peers()] == [
        members["kept"].account_id
    ]
    await connections["kept"].close()
    for member in members.values():
        await member.hub.close()


@pytest.mark.parametrize("came_back", [False, True], ids=["removed", "removed-and-back"])
async def test_a_member_removed_while_the_link_was_down_loses_the_hosts_data_as_it_relinks(
    server: RunningHub,
    clock: FakeClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    came_back: bool,
) -> None:
    """A member who left while the host's link was down, with no peer on it, is still
    named by the host's data (a routine they made, one they approve, their email choices):
    as the link begins again the host lists them, and the hub answers their removal. So it
    does for one who was invited back meanwhile: what the host keeps of them is their
    former membership's, and what they make in the new one stays through the next link."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "gone@example.com", "member")
    host_id = await wait_linked(server)
    admin_peer = await peer_member(server, "owner@example.com", tmp_path)
    admin = await admin_peer.connect(host_id)
    gone = await peer_member(server, "gone@example.com", tmp_path)
    connection = await gone.connect(host_id)
    agent = await admin.call("agents-v1/create", {"name": "Scout"})
    hourly = {"kind": "every", "everySeconds": 3600}
    made = {"agentId": agent["id"], "name": "Theirs", "message": "Hi.", "schedule": hourly}
    theirs = await connection.call("routines-v1/create", made)
    approved = made | {"name": "Approved by them", "approvers": [gone.account_id]}
    ours = await admin.call("routines-v1/create", approved)
    chosen = await connection.call("notifications-v1/get_preferences")
    await connection.call(
        "notifications-v1/set_preferences", chosen | {"email": "gone@example.com"}
    )
    await connection.close()
    await gone.hub.close()

    let_link = await _link_held_down(server, monkeypatch)
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{gone.account_id}")).status == 204
    if came_back:
        clock.advance(60)
        invited = await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "member"})
        again = await server.sign_in("gone@example.com")
        accepted = await again.post("/v1/invitations/accept", {"code": invited.body["code"]})
        assert accepted.status == 201, accepted.body
    await _relinked(server, let_link)

    async def routine(routine_id: str) -> Any:
        return await admin.call("routines-v1/get", {"routineId": routine_id})

    async with asyncio.timeout(10):
        while (await routine(theirs["id"]))["enabled"]:  # noqa: ASYNC110 - a routine to poll
            await asyncio.sleep(0.05)
    assert (await routine(ours["id"]))["approvers"] == []
    # It ran as them: it is never turned on, nor run, again.
    update = {"routineId": theirs["id"], "enabled": True} | {
        k: v for k, v in made.items() if k != "agentId"
    }
    with pytest.raises(TeamApiCallError) as refused:
        await admin.call("routines-v1/update", update)
    assert refused.value.code == "routineCreatorGone"
    run = await admin.call("routines-v1/run", {"routineId": theirs["id"]})
    assert (run["status"], run["reason"]) == ("skipped", CREATOR_GONE)
    services = server.builtin.services
    assert (team_id, gone.account_id) not in await services.notifications.named_members()
    assert set(await services.routines.named_members()) == {(team_id, admin_peer.account_id)}

    if came_back:
        # Back in the team, they make a routine and are made an approver again: the next
        # link leaves both be.
        back = await peer_member(server, "gone@example.com", tmp_path)
        connection = await back.connect(host_id)
        clock.advance(60)
        new = await connection.call("routines-v1/create", made | {"name": "Theirs again"})
        await admin.call(
            "routines-v1/update",
            {"routineId": ours["id"], "approvers": [gone.account_id]}
            | {k: v for k, v in approved.items() if k not in ("agentId", "approvers")},
        )
        await connection.close()
        await back.hub.close()
        await _relinked(server, await _link_held_down(server, monkeypatch))
        assert (await routine(new["id"]))["enabled"]
        assert (await routine(ours["id"]))["approvers"] == [gone.account_id]
    await admin.close()
    await admin_peer.hub.close()

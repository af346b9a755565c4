"""A host is online while the hub holding its link renews the lease, and not after."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from aiortc import RTCPeerConnection

from peer.hub_client import HubError
from server.common.keys import SigningKey
from server.common.sdp import sdp_fingerprint
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.enrolled_hosts import enrol_host
from tests.support.hub_server import hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked


async def test_hosts_go_offline_when_their_hub_stops_renewing(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    clock = FakeClock()
    settings = hub_settings(tmp_path, database, **{"hub.link_lease_seconds": 30})
    async with running_hub(settings, database, clock=clock) as server:
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        host_id = await wait_linked(server)

        async def online() -> bool:
            hosts = (await owner.get(f"/v1/teams/{team_id}/hosts")).body["hosts"]
            return bool(next(h["online"] for h in hosts if h["id"] == host_id))

        assert await online()
        clock.advance(20)
        await server.hub.links.renew()  # the hub's periodic renewal, run now
        clock.advance(20)
        assert await online()  # 40 s after linking, 20 s after the renewal
        # A hub that crashed renews nothing: its hosts are offline once the lease runs out.
        clock.advance(11)
        assert not await online()
        await server.hub.links.renew()
        assert await online()


async def test_a_hub_alone_starts_with_no_host_online_from_its_last_run(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    clock = FakeClock()
    settings = hub_settings(tmp_path, database)
    async with running_hub(settings, database, clock=clock) as server:
        host_id = await wait_linked(server)
        alone = server.hub.db.is_sqlite
    async with running_hub(settings, database, clock=clock, with_host=False) as server:
        # What a hub killed while the host was linked leaves in the database.
        await server.hub.hosts.add_link(host_id, server.hub.links.instance_id)
    async with running_hub(settings, database, clock=clock, with_host=False) as server:
        host = await server.hub.hosts.get_host_for_link(host_id)
        assert host is not None
        # With many hub instances (PostgreSQL), another one may hold the link: it stays
        # online for its lease.
        assert server.hub.hosts.is_online(host) is not alone


async def test_a_host_listed_offline_is_refused_at_once(
    tmp_path: Path, database: ScratchDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with running_hub(hub_settings(tmp_path, database), database) as server:
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        # Enrolled, never linked: listed offline.
        host_id = await enrol_host(server, owner, team_id, SigningKey.generate())
        hosts = (await owner.get(f"/v1/teams/{team_id}/hosts")).body["hosts"]
        assert not next(h["online"] for h in hosts if h["id"] == host_id)
        sdp, fingerprint = await _offer()
        base = f"/v1/teams/{team_id}/hosts/{host_id}"

        ticket = await owner.post(f"{base}/tickets", {"fingerprint": fingerprint})
        assert (ticket.status, ticket.code) == (503, "hostOffline"), ticket.body

        # A ticket issued while the host was listed online, then the host went.
        await server.hub.hosts.add_link(host_id, "elsewhere")
        granted = await owner.post(f"{base}/tickets", {"fingerprint": fingerprint})
        assert granted.status == 201, granted.body
        await server.hub.hosts.remove_link(host_id, "elsewhere")
        connect = await owner.post(
            f"{base}/connect", {"ticket": granted.body["ticket"], "sdp": sdp}
        )
        assert (connect.status, connect.code) == (503, "hostOffline"), connect.body
        # Answered from the hub's list: no offer went out to wait for a link that is not there.
        assert "relaying an offer" not in [r.getMessage() for r in caplog.records]

        # The peer library (and so crewhost-peer) hears the same code at once.
        member = await peer_member(server, "owner@example.com", tmp_path)
        try:
            with pytest.raises(HubError) as refused:
                await member.connect(host_id)
            assert refused.value.code == "hostOffline"
        finally:
            await member.hub.close()


async def _offer() -> tuple[str, str]:
    connection = RTCPeerConnection()
    connection.createDataChannel("team-api")
    await connection.setLocalDescription(await connection.createOffer())
    sdp = connection.localDescription.sdp
    await connection.close()
    return sdp, sdp_fingerprint(sdp)

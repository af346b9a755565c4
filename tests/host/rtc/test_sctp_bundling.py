"""The host bundles SCTP for its peers unless ``rtc.sctp_bundling`` is off, and either way
a bundling peer library and the host understand each other."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiortc import RTCPeerConnection
from aiortc.rtcsctptransport import RTCSctpTransport

from peer.connection import HostConnection
from server.common.sctp_bundling import BundlingSctpTransport
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked

# The data channels' transport, the same over either database.
pytestmark = pytest.mark.sqlite_only


def host_side(server: RunningHub) -> RTCPeerConnection:
    [peer] = server.builtin.services.peers._peers.values()
    return peer.connection


def sctp_of(connection: RTCPeerConnection) -> RTCSctpTransport:
    transport = connection.sctp
    assert transport is not None
    return transport


async def calls_work(host: HostConnection) -> None:
    for _ in range(5):
        assert (await host.call("capabilities"))["protocol"] == 1


async def test_both_ends_bundle_by_default(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    host = await member.connect(host_id)
    try:
        assert isinstance(sctp_of(host.connection), BundlingSctpTransport)
        assert isinstance(sctp_of(host_side(server)), BundlingSctpTransport)
        await calls_work(host)
    finally:
        await host.close()
        await member.hub.close()


async def test_with_bundling_off_the_host_is_plain_aiortc_and_a_bundling_peer_still_works(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(tmp_path, database, **{"rtc.sctp_bundling": False})
    async with running_hub(settings, database) as server:
        await server.sign_up_owner()
        host_id = await wait_linked(server)
        member = await peer_member(server, "owner@example.com", tmp_path)
        host = await member.connect(host_id)
        try:
            assert isinstance(sctp_of(host.connection), BundlingSctpTransport)
            assert type(sctp_of(host_side(server))) is RTCSctpTransport
            await calls_work(host)
        finally:
            await host.close()
            await member.hub.close()

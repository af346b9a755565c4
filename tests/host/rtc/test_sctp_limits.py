"""The inbound message cap: a peer that sends more than it is disconnected, alone."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from aiortc.rtcsctptransport import USERDATA_MAX_LENGTH

from server.host.rtc.sctp_limits import FRAGMENT_OVERHEAD
from tests.support.hub_server import RunningHub
from tests.support.peers import ignore_max_message_size, peer_member, wait_linked
from tests.support.waiting import eventually

# The data channels' transport, the same over either database.
pytestmark = pytest.mark.sqlite_only

EIGHT_MIB = 8 * 1024 * 1024


async def test_a_peer_sending_past_the_cap_is_dropped_before_8_mib_and_others_carry_on(
    server: RunningHub, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="server.host.rtc.sctp_limits")
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    peers = server.builtin.services.peers
    hostile = await member.connect(host_id)
    [hostile_peer] = peers.peers()
    bystander = await member.connect(host_id)
    ignore_max_message_size(hostile)

    hostile.send_raw(b"x" * EIGHT_MIB)

    await asyncio.wait_for(hostile.closed.wait(), 30)
    await eventually(lambda: len(peers.peers()) == 1)
    [record] = [r for r in caplog.records if r.name == "server.host.rtc.sctp_limits"]
    cap = server.builtin.services.settings.rtc.max_message_bytes
    # The record's extra fields.
    extra = vars(record)
    assert extra["peer_id"] == hostile_peer.peer_id
    # It stopped within one fragment of the cap, far short of the 8 MiB sent.
    assert cap < extra["held_bytes"] <= cap + USERDATA_MAX_LENGTH + FRAGMENT_OVERHEAD
    assert extra["held_bytes"] < EIGHT_MIB // 2
    assert [p.peer_id for p in peers.peers()] != [hostile_peer.peer_id]
    assert (await bystander.call("capabilities"))["protocol"] == 1
    await hostile.close()
    await bystander.close()
    await member.hub.close()

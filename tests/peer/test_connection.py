"""A real peer connects to the built-in host over loopback and calls the Team API."""

from __future__ import annotations

from pathlib import Path

from server.common.protocol.capabilities import LIVE_VIEW_CAPABILITIES
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member, wait_linked


async def test_a_member_connects_and_asks_for_capabilities(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    try:
        connection = await member.connect(host_id)
        result = await connection.call("capabilities")
        assert result["protocol"] == 1
        assert set(result["capabilities"]) >= {
            "host-v1",
            "browser-control-v1",
            "browser-profiles-v1",
            "agents-v1",
            "threads-v1",
            "attention-v1",
            "providers-v1",
            "web-search-v1",
            *LIVE_VIEW_CAPABILITIES,
        }
        assert await connection.capabilities() == frozenset(result["capabilities"])
        assert result["hostId"] == host_id
        whoami = await connection.call("host-v1/whoami")
        assert (whoami["accountId"], whoami["role"]) == (member.account_id, "owner")
        await connection.close()
    finally:
        await member.hub.close()

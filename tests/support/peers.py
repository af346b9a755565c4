"""Real aiortc peers of a test hub: a signed-in member and its connection to the built-in host."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from peer.connection import HostConnection, connect_to_host
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from tests.support.hub_server import PASSWORD, RunningHub


@dataclass
class Member:
    hub: HubClient
    account_id: str
    team_id: str
    known_hosts: KnownHosts

    async def connect(self, host_id: str) -> HostConnection:
        return await connect_to_host(
            self.hub, self.team_id, host_id, self.known_hosts, self.account_id
        )


async def peer_member(
    server: RunningHub, email: str, folder: Path, team_id: str | None = None
) -> Member:
    """Sign ``email`` in through the peer library (bearer token)."""
    hub = HubClient(server.url)
    account = await hub.sign_in(email, PASSWORD)
    teams = await hub.teams()
    chosen = team_id or teams[0]["id"]
    return Member(
        hub, account["id"], chosen, KnownHosts(folder / f"{account['id']}-known-hosts.json")
    )


async def wait_linked(server: RunningHub) -> str:
    """The built-in host's id, once its link to the hub is up."""
    await asyncio.wait_for(server.builtin.link.linked.wait(), 10)
    return server.builtin.services.host_id


def ignore_max_message_size(connection: HostConnection) -> None:
    """Let the peer send messages larger than the host's SDP allows, as a hostile peer would."""
    sctp = connection.connection.sctp
    assert sctp is not None
    sctp._remote_max_message_size = 0  # aiortc's sender checks this; 0 means no limit


async def owner_peer(server: RunningHub, folder: Path) -> tuple[str, Member]:
    """The built-in host's id and the hub's first owner, signed up and signed in as a peer."""
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    return host_id, await peer_member(server, "owner@example.com", folder)

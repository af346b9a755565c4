"""A member sharing their computer, in a process of its own (real aiortc to the host).

``python -m tests.support.egress_member HUB EMAIL PASSWORD HOST_ID FOLDER PORT`` signs in,
connects to the host and shares egress with a policy that allows exactly
``127.0.0.1:PORT`` (the test's fixture site) besides public addresses; it prints
``sharing <proxy id>`` and shares until its standard input closes; then it stops
sharing, or with a seventh argument ``disconnect`` just closes its connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import sys
from pathlib import Path

from peer.connection import connect_to_host
from peer.egress import share_egress
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from server.common.public_addresses import PublicOnlyPolicy


async def main(
    hub_url: str, email: str, password: str, host_id: str, folder: str, port: int, disconnect: bool
) -> None:
    hub = HubClient(hub_url)
    account = await hub.sign_in(email, password)
    team_id = (await hub.teams())[0]["id"]
    known = KnownHosts(Path(folder) / f"{account['id']}-egress-known-hosts.json")
    connection = await connect_to_host(hub, team_id, host_id, known, account["id"])
    policy = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.IPv4Address("127.0.0.1"), port)})
    )
    share = await share_egress(connection, label="test laptop", policy=policy)
    print(f"sharing {share.proxy['id']}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    if not disconnect:
        await share.stop()
    await connection.close()
    await hub.close()


if __name__ == "__main__":
    hub_url, email, password, host_id, folder, port = sys.argv[1:7]
    disconnect = sys.argv[7:] == ["disconnect"]
    asyncio.run(main(hub_url, email, password, host_id, folder, int(port), disconnect))

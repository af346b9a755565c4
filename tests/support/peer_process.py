"""A member's peer in a process of its own, for tests that kill it without a goodbye.

``python -m tests.support.peer_process HUB_URL EMAIL PASSWORD HOST_ID FOLDER`` signs in,
connects to the host, makes one Team API call, prints ``connected`` and then waits
to be killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from peer.connection import connect_to_host
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts

READY = "connected"


async def main(hub_url: str, email: str, password: str, host_id: str, folder: str) -> None:
    hub = HubClient(hub_url)
    account = await hub.sign_in(email, password)
    team_id = str((await hub.teams())[0]["id"])
    known_hosts = KnownHosts(Path(folder) / "known-hosts.json")
    connection = await connect_to_host(hub, team_id, host_id, known_hosts, str(account["id"]))
    await connection.call("capabilities", {})
    print(READY, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))

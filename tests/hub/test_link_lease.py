"""A host is online while the hub holding its link renews the lease, and not after."""

from __future__ import annotations

from pathlib import Path

from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import hub_settings, running_hub
from tests.support.peers import wait_linked


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

"""The host's services, built once at start."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.common.clock import Clock, SystemClock
from server.common.keys import SigningKey
from server.config import Settings
from server.host.api import system
from server.host.rtc.peers import PeerManager
from server.host.rtc.team_api import TeamApi

ROUTE_TABLES = (system.routes,)


@dataclass
class HostServices:
    """Every service of one host. ``host_id`` is known once the hub has registered it."""

    settings: Settings
    clock: Clock
    identity: SigningKey
    team_api: TeamApi
    peers: PeerManager = field(init=False)
    host_id: str = ""

    @classmethod
    def build(
        cls, settings: Settings, identity: SigningKey, *, clock: Clock | None = None
    ) -> HostServices:
        clock = clock or SystemClock()
        services = cls(settings, clock, identity, TeamApi(list(ROUTE_TABLES)))
        services.peers = PeerManager(
            identity, settings.rtc, clock, services.team_api, lambda: services
        )
        return services

    async def close(self) -> None:
        await self.peers.close_all()

"""The host's services, built once at start."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.common.clock import Clock, SystemClock
from server.common.keys import SigningKey
from server.config import Settings
from server.db.engine import Database
from server.host.browser.runtime import BrowserRuntime
from server.host.live.views import LiveViews
from server.host.routes import browser_control, browser_profiles, system
from server.host.routes.browser_control import TABS_CHANGED
from server.host.rtc.peers import PeerManager
from server.host.rtc.protocol_document import build_host_protocol
from server.host.rtc.team_api import TeamApi
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService
from server.host.services.tabs import TabService

ROUTE_TABLES = (system.routes, browser_profiles.routes, browser_control.routes)


def host_protocol_document() -> dict[str, Any]:
    """The host protocol of every route this host serves (see ``protocol_document``)."""
    return build_host_protocol([route for table in ROUTE_TABLES for route in table.routes])


@dataclass
class HostServices:
    """Every service of one host. ``host_id`` is known once the hub has registered it."""

    settings: Settings
    clock: Clock
    identity: SigningKey
    db: Database
    team_api: TeamApi
    browser: BrowserRuntime
    peers: PeerManager = field(init=False)
    profiles: BrowserProfileService = field(init=False)
    tabs: TabService = field(init=False)
    memories: MemoryService = field(init=False)
    live: LiveViews = field(init=False)
    host_id: str = ""

    @classmethod
    def build(
        cls,
        settings: Settings,
        identity: SigningKey,
        db: Database,
        *,
        clock: Clock | None = None,
    ) -> HostServices:
        """The services; ``db`` is the hub's for the built-in host, the host's own otherwise."""
        clock = clock or SystemClock()
        browser = BrowserRuntime(settings.host, settings.data_dir, clock, db)
        services = cls(settings, clock, identity, db, TeamApi(list(ROUTE_TABLES)), browser)
        services.peers = PeerManager(
            identity, settings.rtc, clock, services.team_api, lambda: services
        )
        services.profiles = BrowserProfileService(db, clock, browser, services.peers.announce)
        services.tabs = TabService(browser, services.profiles)
        services.memories = MemoryService(db, clock)
        services.live = LiveViews(browser, settings.host)
        browser.observe_tabs(lambda team_id: services.peers.announce(team_id, TABS_CHANGED, {}))
        browser.observe_pages(services.live.page_attached)
        return services

    async def close(self) -> None:
        await self.live.close_all()
        await self.peers.close_all()
        await self.browser.close()

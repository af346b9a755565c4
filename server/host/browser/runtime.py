"""The host's browser: the engine, started on first use, and its idle sweep.

Most hosts spend their first minutes without a browser call, and a member
administering profiles needs none: Chromium starts when a tab is first needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

from server.common.browser_address_policy import AddressPolicy, IPAddress
from server.common.clock import Clock
from server.config import HostSettings
from server.db.engine import Database
from server.host.browser.engine import BrowserEngine
from server.host.browser.lifetime import IdlePolicy, system_memory_low
from server.host.browser.partitions import Partition
from server.host.browser.proxied import ProxiedPartitions, ProxyPlans
from server.host.browser.tabs import Tab
from server.host.proxies.exits import Exit
from server.host.proxies.judge import ProxyAddressJudge
from server.host.proxies.launcher import ProxyLauncher
from server.host.proxies.marks import ProxyMarks
from server.host.signals import Signals
from server.host.storage.profiles import BrowserProfileRepository

log = logging.getLogger(__name__)


class BrowserRuntime:
    """Owns the engine's start, stop and sweep; profiles and tools reach it through here."""

    def __init__(
        self,
        settings: HostSettings,
        data_dir: Path,
        clock: Clock,
        db: Database,
        *,
        own_addresses: frozenset[IPAddress] = frozenset(),
        proxy_judge: ProxyAddressJudge | None = None,
        computer_exit: Callable[[str, str], Exit] | None = None,
        signals: Signals | None = None,
    ) -> None:
        self._settings = settings
        self._db = db
        # Kept in step by the profile service; the engine asks while restoring tabs.
        self._profile_repo = BrowserProfileRepository()
        self._profiles: set[tuple[str, str]] = set()
        signals = signals or Signals()
        self.proxy_marks = ProxyMarks(signals)
        self.proxied = ProxiedPartitions(
            ProxyLauncher(self.proxy_marks, computer_exit=computer_exit, judge=proxy_judge),
            self.proxy_marks,
        )
        self._engine = BrowserEngine(
            data_dir,
            chromium=settings.chromium,
            clock=clock,
            locale=settings.browser_locale,
            deadline=settings.browser_tab_deadline,
            idle_policy=IdlePolicy(
                settings.browser_idle_unload,
                settings.browser_idle_unload_low_memory,
                settings.browser_loaded_idle_tabs,
                settings.browser_lru_idle,
            ),
            memory_low=lambda: system_memory_low(settings.browser_low_memory_bytes),
            profile_exists=lambda team_id, profile_id: (team_id, profile_id) in self._profiles,
            address_policy=AddressPolicy.from_entries(
                settings.browser_allowed_hosts,
                refuse_private=settings.browser_refuse_private,
                own_addresses=own_addresses,
            ),
            proxied=self.proxied,
            signals=signals,
            cpu_nice=settings.browser_cpu_nice,
        )
        self._start_lock = asyncio.Lock()
        self._restored = False  # the saved tabs, restored without starting Chromium
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def engine_as_is(self) -> BrowserEngine:
        """The engine, running or not: a turn's tools hold it until one needs a page."""
        return self._engine

    async def engine(self) -> BrowserEngine:
        """The running engine, started (and its saved tabs restored) on first call."""
        async with self._start_lock:
            if not self._engine.running:
                await self._read_profiles()
                await self._engine.__aenter__()
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
                log.info("browser started")
        return self._engine

    async def restored(self) -> BrowserEngine:
        """The engine with every team's saved tabs back (asleep), started or not: listing
        the tabs a host kept across a restart starts no Chromium."""
        async with self._start_lock:
            if not self._engine.running and not self._restored:
                await self._read_profiles()
                await self._engine.restore_saved_tabs()
                self._restored = True
        return self._engine

    async def _read_profiles(self) -> None:
        async with self._db.read() as conn:
            self._profiles = await self._profile_repo.list_profile_keys_of_every_team(conn)

    def list_tabs(self, team_id: str) -> list[Tab]:
        """The team's tabs as they are now, without starting the browser (none before it
        started or ``restored``)."""
        return self._engine.list_tabs(team_id)

    def tab_states(self) -> dict[str, int]:
        """Tabs by state (held, loaded, asleep), without starting the browser."""
        return self._engine.tab_states()

    def use_proxies(self, plans: ProxyPlans) -> None:
        """``plans(team_id, profile_id)`` gives the proxy a named profile launches behind."""
        self.proxied.plans = plans

    def profile_added(self, team_id: str, profile_id: str) -> None:
        self._profiles.add((team_id, profile_id))

    def profile_removed(self, team_id: str, profile_id: str) -> None:
        self._profiles.discard((team_id, profile_id))

    async def close_partition(self, team_id: str, partition: Partition) -> None:
        await self._engine.close_partition(team_id, partition)

    async def clear_partition(self, team_id: str, partition: Partition) -> None:
        await self._engine.clear_partition(team_id, partition)

    async def close_agent_tabs(self, team_id: str, agent_id: str) -> None:
        await self._engine.close_agent_tabs(team_id, agent_id)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._settings.browser_sweep_seconds)
            try:
                await self._engine.tick()
            except Exception:
                log.exception("idle sweep failed")

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        if self._engine.running:
            await self._engine.__aexit__(None, None, None)

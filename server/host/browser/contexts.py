"""The browser contexts: one Chromium, and a Playwright context per team and partition.

Private partitions are contexts of the one Chromium and end with their last tab; each
persistent partition is its own Chromium over its folder, started on first use and
stopped once none of its tabs has been loaded or getting its page for a minute (its data
stays on disk): an agent that opens and closes a tab each turn keeps its browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from server.common.clock import Clock
from server.common.errors import NotFound, Unavailable
from server.host.browser.address_guard import AddressGuard
from server.host.browser.cpu_weight import keep_from_raising, lower_chromium
from server.host.browser.identity import BrowserIdentity
from server.host.browser.partitions import Partition
from server.host.browser.proxied import ProxiedPartitions
from server.host.browser.tab_registry import TabRegistry
from server.host.browser.team_folders import TeamFolders
from server.host.chromium import (
    CLOSED_NETWORK_FLAGS,
    WEBRTC_FLAGS,
    find_chromium,
    is_headless_shell,
)

log = logging.getLogger(__name__)

_Key = tuple[str, Partition]

# How long a persistent partition's browser runs on with no tab of it loaded: long enough
# that an agent's next turn, or a person's next tab, finds it still running.
IDLE_BROWSER_SECONDS = 60.0


class ContextPool:
    """Starts Chromium and keeps each team's partitions' contexts, created on first use."""

    def __init__(
        self,
        folders: TeamFolders,
        tabs: TabRegistry,
        guard: AddressGuard,
        clock: Clock,
        *,
        chromium: str | None,
        locale: str,
        profile_exists: Callable[[str, str], bool],
        proxied: ProxiedPartitions,
        cpu_nice: int = 0,
    ) -> None:
        self.proxied = proxied
        self._cpu_nice = cpu_nice
        self._folders = folders
        self._tabs = tabs
        self._guard = guard
        self._clock = clock
        self._configured_chromium = chromium
        self._locale = locale
        self._profile_exists = profile_exists
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._executable: Path | None = None
        self._shell = False
        self._identity: BrowserIdentity | None = None
        self._contexts: dict[_Key, BrowserContext] = {}
        # One lock per partition: starting one partition's browser never holds up another's tabs.
        self._locks: dict[_Key, asyncio.Lock] = {}
        # Partitions a tab is being given a page in: not idle, though no tab there is loaded yet.
        self._loading: Counter[_Key] = Counter()
        # When each running persistent partition was last seen in use (a tab loaded or
        # getting its page).
        self._last_used: dict[_Key, float] = {}

    # -- start and stop -----------------------------------------------------------------

    def locate_chromium(self) -> None:
        """Finds the Chromium to run; ``browserMissing`` when there is none."""
        found = find_chromium(self._configured_chromium)
        if found is None:
            raise Unavailable(
                "no Chromium found: install Debian's chromium package or set CREWHOST_CHROMIUM",
                code="browserMissing",
            )
        self._executable = found
        self._shell = is_headless_shell(found)

    async def start(self) -> None:
        """Starts Playwright and the Chromium of the private partitions."""
        if self._executable is None:
            self.locate_chromium()
        # Every partition without a proxy of its own leaves through the filtering proxy,
        # which dials only the address it judged (the full browser's PAC script is a
        # second guard in front of it).
        await self._guard.start_proxy()
        if self._cpu_nice:
            # Playwright's driver, and the Chromiums it starts, are started from here.
            keep_from_raising()
        self._playwright = await async_playwright().start()
        self._browser = await self._launch()
        if not self._shell and await _says_headless_shell(self._browser):
            # A headless shell under another name would ignore the PAC script and with it
            # the filtering proxy it names: it runs again with the proxy alone, and so
            # does every partition's Chromium.
            log.warning(
                "%s is Chromium's headless shell; it runs with the filtering proxy alone",
                self._executable,
            )
            await self._browser.close()
            self._shell = True
            self._browser = await self._launch()
        self._identity = BrowserIdentity(self._browser.version, self._locale)

    async def _launch(self) -> Browser:
        assert self._playwright is not None
        browser = await self._playwright.chromium.launch(
            executable_path=self._executable, headless=True, args=self._args()
        )
        await self._lower()
        return browser

    async def _lower(self) -> None:
        """Chromium's CPU weight below the host's (see ``cpu_weight``)."""
        if self._cpu_nice:
            lowered = await asyncio.to_thread(lower_chromium, self._cpu_nice)
            log.debug("Chromium below the host by %d: %s", self._cpu_nice, lowered)

    async def stop(self) -> None:
        """Closes every context (a persistent one flushes its profile), then Chromium."""
        for context in list(self._contexts.values()):
            with contextlib.suppress(PlaywrightError):
                await context.close()
        self._contexts.clear()
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError):
                await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()
        self._browser = self._playwright = None
        await self.proxied.stop_all()

    @property
    def running(self) -> bool:
        return self._browser is not None

    @property
    def identity(self) -> BrowserIdentity:
        if self._identity is None:
            raise Unavailable("the browser engine is not running", code="browserStopped")
        return self._identity

    @property
    def takes_pac_script(self) -> bool:
        """Whether the Chromium found keeps to a PAC script (the headless shell does not)."""
        return not self._shell

    def load_error(self, url: str, reported: str) -> str:
        """Chromium's name for a failed load, with the address guard's cause when its
        filtering proxy could not connect (see ``AddressGuard.load_error``)."""
        return self._guard.load_error(url, reported)

    def _args(self) -> list[str]:
        return self._base_args() + self._guard.chromium_args(pac=self.takes_pac_script)

    @staticmethod
    def _base_args() -> list[str]:
        """Every Chromium's flags, proxied or not (the address guard's come on top)."""
        args = [*CLOSED_NETWORK_FLAGS, *WEBRTC_FLAGS]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root
        return args

    # -- contexts -----------------------------------------------------------------------

    def check_profile(self, team_id: str, partition: Partition) -> None:
        """Refuses a named profile that was deleted (``browserProfileMissing``)."""
        if partition.kind == "profile" and not self._profile_exists(team_id, partition.key):
            raise NotFound("this browser profile no longer exists", code="browserProfileMissing")

    async def context(self, team_id: str, partition: Partition) -> BrowserContext:
        """The partition's context, created on first use."""
        key = (team_id, partition)
        context = self._contexts.get(key)
        if context is not None:
            return context
        async with self._lock(key):
            context = self._contexts.get(key)
            if context is not None:
                return context
            if self._playwright is None or self._browser is None or self._executable is None:
                raise Unavailable("the browser engine is not running", code="browserStopped")
            options = self.identity.context_options()
            if partition.persistent:
                folder = self._folders.of(team_id) / partition.folder
                await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
                launched = await self.proxied.launch(team_id, partition)
                launch: dict[str, Any] = {"args": self._args()}
                if launched is not None:
                    # Its proxy is its only way out, in place of the address guard's
                    # (see browser.proxied).
                    launch = {
                        "args": self._base_args(),
                        "proxy": launched.setting.playwright(),
                    }
                try:
                    context = await self._playwright.chromium.launch_persistent_context(
                        folder,
                        executable_path=self._executable,
                        headless=True,
                        **launch,
                        **options,
                    )
                except BaseException:
                    await self.proxied.stopped(team_id, partition)
                    raise
                await self._lower()
                # The blank page a persistent launch opens is no tab of ours.
                for page in list(context.pages):
                    await page.close()
            else:
                context = await self._browser.new_context(**options)
            self._contexts[key] = context
            return context

    @contextlib.asynccontextmanager
    async def loading(self, team_id: str, partition: Partition) -> AsyncIterator[BrowserContext]:
        """The partition's context, kept running while a tab gets its page there: until the
        page is the tab's, the tab is not loaded, and ``close_idle`` would close it."""
        key = (team_id, partition)
        self._loading[key] += 1
        try:
            yield await self.context(team_id, partition)
        finally:
            self._loading[key] -= 1
            if not self._loading[key]:
                del self._loading[key]
            if partition.persistent:
                self._last_used[key] = self._clock.now()

    def open_partitions(self, team_id: str) -> list[Partition]:
        """The team's partitions whose browser context is running now."""
        return [partition for (team, partition) in self._contexts if team == team_id]

    async def drop_private(self, team_id: str, partition: Partition) -> None:
        """A private partition's storage goes with its last tab."""
        if partition.persistent or self._tabs.uses(team_id, partition):
            return
        await _close(self._contexts.pop((team_id, partition), None))

    async def close(self, team_id: str, partition: Partition) -> None:
        """Closes the partition's context, if it runs (its tabs are closed already)."""
        async with self._lock((team_id, partition)):
            context = self._contexts.pop((team_id, partition), None)
            self._last_used.pop((team_id, partition), None)
            await _close(context)
            await self.proxied.stopped(team_id, partition)
        if context is not None and partition.persistent:
            await self._lower()  # one browser fewer: the others' share goes back up

    async def clear(self, team_id: str, partition: Partition) -> None:
        """Removes a closed persistent partition's cookies, storage and cache from disk."""
        if partition.persistent:
            folder = self._folders.of(team_id) / partition.folder
            await asyncio.to_thread(shutil.rmtree, folder, True)

    async def close_idle(self) -> None:
        """A persistent partition with no tab loaded or loading for ``IDLE_BROWSER_SECONDS``
        stops its browser; its data stays on disk."""
        now = self._clock.now()
        idle = []
        for key in self._contexts:
            if not key[1].persistent:
                continue  # a private partition ends with its last tab
            if self._in_use(key):
                self._last_used[key] = now
            elif now - self._last_used.setdefault(key, now) >= IDLE_BROWSER_SECONDS:
                idle.append(key)
        for key in idle:
            async with self._lock(key):
                if self._in_use(key):
                    continue  # a tab loaded (or began to) while this waited
                context = self._contexts.pop(key, None)
                self._last_used.pop(key, None)
            if context is not None:
                await _close(context)
                await self.proxied.stopped(*key)
                await self._lower()
                log.info("closed an idle browser partition")

    def _in_use(self, key: _Key) -> bool:
        return key in self._loading or self._tabs.uses(*key, loaded=True)

    def _lock(self, key: _Key) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())


async def _says_headless_shell(browser: Browser) -> bool:
    """Whether a running Chromium names itself the headless shell (``HeadlessChrome/…``;
    the full browser, headless or not, says ``Chrome/…``)."""
    session = await browser.new_browser_cdp_session()
    try:
        version = await session.send("Browser.getVersion")
    finally:
        await session.detach()
    return str(version.get("product", "")).startswith("HeadlessChrome/")


async def _close(context: BrowserContext | None) -> None:
    if context is not None:
        with contextlib.suppress(PlaywrightError):
            await context.close()

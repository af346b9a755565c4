"""A team's tabs kept in its folder, so a restart brings each back asleep in its partition.

Only tabs of persistent partitions are kept: a private partition's storage is gone
with its last tab, and so is the tab. The file format is in ``state``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from server.common.clock import Clock
from server.common.tasks import BackgroundTasks
from server.host.browser.partitions import Partition
from server.host.browser.protection import kept_address
from server.host.browser.state import STATE_FILE, SavedTab, read_state, write_state
from server.host.browser.tab_registry import TabRegistry
from server.host.browser.tabs import Tab
from server.host.browser.team_folders import TeamFolders

log = logging.getLogger(__name__)


class SavedTabs:
    """Writes each team's tab state file after a change and restores the tabs from it.

    A call that changed the tabs answers first and the file is written just after it
    (``save_soon``): changes that come while a write is due share that write, which reads
    the tabs as they are when it runs, so the newest state is always the one on disk.
    """

    def __init__(
        self,
        folders: TeamFolders,
        tabs: TabRegistry,
        clock: Clock,
        profile_exists: Callable[[str, str], bool],
    ) -> None:
        self._folders = folders
        self._tabs = tabs
        self._clock = clock
        self._profile_exists = profile_exists
        self._lock = asyncio.Lock()
        self._due: set[str] = set()
        self._writes = BackgroundTasks("browser state writer")

    def save_soon(self, team_id: str) -> None:
        """The team's file is written in the background, just after the caller goes on
        (one write for the changes that come while it is due)."""
        if team_id in self._due:
            return
        self._due.add(team_id)

        async def write() -> None:
            self._due.discard(team_id)  # a change from now on needs a write of its own
            try:
                await self.save(team_id)
            except OSError:
                log.exception("could not write the browser state file")

        self._writes.start(write())

    async def flush(self) -> None:
        """Waits for the writes that are due or under way."""
        await self._writes.drain()

    async def save(self, team_id: str) -> None:
        saved = [
            SavedTab(
                t.id, t.partition, kept_address(t), t.owner_agent_id, t.owner_thread_id, t.title
            )
            for t in self._tabs.of_team(team_id)
            if t.partition.persistent
        ]
        async with self._lock:
            await asyncio.to_thread(write_state, self._folders.of(team_id), saved)

    async def save_all(self) -> None:
        await self.flush()
        for team_id in self._tabs.teams():
            await self.save(team_id)

    async def restore_all(self) -> None:
        """Every team's saved tabs, as the engine starts."""
        for team_id in await asyncio.to_thread(self._saved_teams):
            await self.restore(team_id)

    def _saved_teams(self) -> list[str]:
        return self._folders.teams_with(STATE_FILE)

    async def restore(self, team_id: str) -> list[Tab]:
        """The team's saved tabs, asleep in their own partitions; bad entries are dropped."""
        restored: list[Tab] = []
        for saved in await asyncio.to_thread(read_state, self._folders.of(team_id)):
            if self._tabs.has_id(saved.id):
                continue
            if saved.partition.kind == "profile" and not self._profile_exists(
                team_id, saved.partition.key
            ):
                log.info("dropped a saved tab of a deleted browser profile")
                continue
            tab = Tab(
                id=saved.id,
                team_id=team_id,
                partition=saved.partition,
                owner_agent_id=saved.owner_agent_id,
                owner_thread_id=saved.owner_thread_id,
                opener_tab_id=None,
                url=saved.url,
                last_used=self._clock.now(),
            )
            # Asleep, the tab lists the title its page had; the page reports anew once woken.
            self._tabs.record_title(tab, saved.title)
            restored.append(tab)
        self._tabs.add(*restored)
        await self.save(team_id)
        return restored

    async def forget_partition(self, team_id: str, partition: Partition) -> None:
        """Drops the partition's saved tabs (the engine is stopped: nothing is open)."""
        await asyncio.to_thread(_forget_saved, self._folders.of(team_id), partition)

    async def forget_agent(self, team_id: str, agent_id: str) -> None:
        """Drops the saved tabs an agent owns (the engine is stopped: nothing is open)."""
        await asyncio.to_thread(_forget_saved_of_agent, self._folders.of(team_id), agent_id)


def _forget_saved(team_folder: Path, partition: Partition) -> None:
    saved = read_state(team_folder)
    kept = [t for t in saved if t.partition != partition]
    if len(kept) != len(saved):
        write_state(team_folder, kept)


def _forget_saved_of_agent(team_folder: Path, agent_id: str) -> None:
    saved = read_state(team_folder)
    kept = [t for t in saved if t.owner_agent_id != agent_id]
    if len(kept) != len(saved):
        write_state(team_folder, kept)

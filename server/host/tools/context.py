"""Makes the agent tools' context of a turn: built once in the container from the host's
services, asked by the thread service at the start of each turn."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from server.common.protocol.events import HostEvent
from server.config import HostSettings
from server.host.browser.callers import Caller
from server.host.browser.runtime import BrowserRuntime
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService
from server.host.services.proxies import ProxyService
from server.host.services.tasks import ThreadTasks
from server.host.services.vault import VaultService
from server.host.services.web_search import WebSearchService
from server.host.services.workspace import WorkspaceService
from server.host.tools.base import (
    AskForSecret,
    AskPerson,
    SecureEntryDesk,
    SpawnSubAgent,
    Summarize,
    ToolContext,
    ToolSettings,
)
from server.host.web.fetcher import WebFetcher


@dataclass(frozen=True)
class ToolContextFactory:
    """The host's side of every tool context: the browser, the services the tools reach,
    and the people secure entry asks (``ask_for_secret``, the attention registry's)."""

    browser: BrowserRuntime
    settings: HostSettings
    memories: MemoryService
    profiles: BrowserProfileService
    proxies: ProxyService
    workspace: WorkspaceService
    web: WebFetcher
    web_search: WebSearchService
    vault: VaultService
    announce: Callable[[str, HostEvent], None]
    ask_for_secret: AskForSecret

    async def for_turn(
        self,
        team_id: str,
        caller: Caller,
        *,
        visible_to: Callable[[str], bool] | None = None,
        memory_member: str | None = None,
        turn_id: str | None = None,
        summarize: Summarize | None = None,
        ask_person: AskPerson | None = None,
        tasks: ThreadTasks | None = None,
        spawn_sub_agent: SpawnSubAgent | None = None,
    ) -> ToolContext:
        """The tools' view of this host for one turn of ``caller``: ``visible_to`` says who
        sees the turn's thread (the people secure entry may ask), ``memory_member`` whose
        private thread it is; the rest is the turn's own (its model, its people, its task
        list, its sub-agents)."""
        return ToolContext(
            engine=await self.browser.engine(),
            team_id=team_id,
            caller=caller,
            memories=self.memories,
            memory_member=memory_member,
            turn_id=turn_id,
            settings=ToolSettings.from_settings(self.settings),
            partition_for_agent=self.profiles.partition_for_agent,
            announce=self.announce,
            web=self.web,
            fetch_proxy=functools.partial(self._fetch_proxy, team_id, caller),
            search=functools.partial(self.web_search.search, team_id),
            summarize=summarize,
            workspace=self.workspace,
            ask_person=ask_person,
            tasks=tasks,
            spawn_sub_agent=spawn_sub_agent,
            secure_entry=SecureEntryDesk(
                ask_person=self.ask_for_secret, vault=self.vault, visible_to=visible_to
            ),
        )

    @contextlib.asynccontextmanager
    async def _fetch_proxy(self, team_id: str, caller: Caller) -> AsyncIterator[str | None]:
        """The proxy of the agent's browser profile, as an http:// address for as long as
        the block runs (a relay for SOCKS5 and a member's computer); None: Automatic."""
        if caller.agent_id is None:
            yield None
            return
        partition = await self.profiles.partition_for_agent(team_id, caller.agent_id)
        plan = (
            await self.proxies.plan_for(team_id, partition.key)
            if partition.kind == "profile"
            else None
        )
        if plan is None:
            yield None
            return
        launched = await self.browser.proxied.launcher.start_http(plan)
        try:
            yield launched.setting.url()
        finally:
            await launched.stop()

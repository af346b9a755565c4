"""Agents: list, create, update, duplicate and delete a team's agents.

Deleting an agent is one sweep: its tabs close, its own partition is cleared,
and its memories and threads go.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol.events import AgentsChanged, HostEvent
from server.db.engine import Database
from server.host.services.browsing_steps import BrowsingStepService
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService, duplicate_choice
from server.host.services.providers import ProviderService
from server.host.services.tasks import TaskService
from server.host.services.workspace import WorkspaceService
from server.host.signals import Signals
from server.host.storage.agents import Agent, AgentRepository
from server.host.storage.threads import ThreadRepository

MAX_AGENTS = 200
BUILTIN_PROVIDERS = ("anthropic", "openai", "openrouter")


@dataclass(frozen=True, slots=True)
class AgentDeleted:
    """The team's agent ``agent_id`` is being deleted."""

    team_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class AgentGone:
    """The deletion of the team's agent ``agent_id`` is over: it is gone, or the deletion
    failed and it stays."""

    team_id: str
    agent_id: str


class AgentService:
    """The agents of a host's teams, in the host's database."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        profiles: BrowserProfileService,
        memories: MemoryService,
        providers: ProviderService,
        announce: Callable[[str, HostEvent], None],
        workspace: WorkspaceService,
        tasks: TaskService,
        browsing_steps: BrowsingStepService,
        *,
        signals: Signals | None = None,
    ) -> None:
        self._db = db
        self._browsing_steps = browsing_steps
        # Hears ``AgentDeleted`` (its memory review stops).
        self._signals = signals or Signals()
        self._workspace = workspace
        self._task_lists = tasks
        self._clock = clock
        self._profiles = profiles
        self._memories = memories
        self._providers = providers
        self._announce = announce
        self._agents = AgentRepository()
        self._threads = ThreadRepository()

    async def list_agents(self, team_id: str) -> list[Agent]:
        async with self._db.read() as conn:
            return await self._agents.list_agents(conn, team_id)

    async def get_agent(self, team_id: str, agent_id: str) -> Agent:
        async with self._db.read() as conn:
            agent = await self._agents.get_full_agent(conn, team_id, agent_id)
        if agent is None:
            raise NotFound("no such agent", code="agentNotFound")
        return agent

    async def create_agent(
        self,
        team_id: str,
        *,
        name: str,
        instructions: str,
        provider: str,
        model: str | None,
        permissions: dict[str, str],
        max_tool_calls: int | None,
        may_ask: Sequence[str] = (),
    ) -> Agent:
        """A new agent; ``providerNotFound`` unless the team has ``provider``."""
        await self._providers.require_provider(team_id, provider)
        now = self._clock.now()
        agent_id = uuid.uuid4().hex
        agent = Agent(
            id=agent_id,
            team_id=team_id,
            name=name,
            instructions=instructions,
            provider=provider,
            model=model,
            permissions=permissions,
            max_tool_calls=max_tool_calls,
            own_browser_session=False,
            browser_profile_id=None,
            created_at=now,
            updated_at=now,
        )
        async with self._db.write() as conn:
            await self._check_room(conn, team_id)
            agent = replace(agent, may_ask=await self._askable(conn, team_id, agent_id, may_ask))
            await self._agents.add_full_agent(conn, agent)
        self._announce(team_id, AgentsChanged())
        return agent

    async def update_agent(
        self,
        team_id: str,
        agent_id: str,
        *,
        name: str | None = None,
        instructions: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        clear_model: bool = False,
        permissions: dict[str, str] | None = None,
        max_tool_calls: int | None = None,
        clear_max_tool_calls: bool = False,
        may_ask: Sequence[str] | None = None,
    ) -> Agent:
        if provider is not None:
            await self._providers.require_provider(team_id, provider)
        async with self._db.write() as conn:
            agent = await self._agents.get_full_agent(conn, team_id, agent_id)
            if agent is None:
                raise NotFound("no such agent", code="agentNotFound")
            if may_ask is not None:
                chosen = await self._askable(conn, team_id, agent_id, may_ask)
                agent = replace(agent, may_ask=chosen)
            updated = replace(
                agent,
                name=agent.name if name is None else name,
                instructions=agent.instructions if instructions is None else instructions,
                provider=agent.provider if provider is None else provider,
                model=None if clear_model else (agent.model if model is None else model),
                permissions=agent.permissions if permissions is None else permissions,
                max_tool_calls=None
                if clear_max_tool_calls
                else (agent.max_tool_calls if max_tool_calls is None else max_tool_calls),
                updated_at=self._clock.now(),
            )
            await self._agents.update_agent(conn, updated)
        self._announce(team_id, AgentsChanged())
        return updated

    async def duplicate_agent(self, team_id: str, agent_id: str) -> Agent:
        """A copy with the same settings; it keeps a named profile, else starts in Shared."""
        now = self._clock.now()
        async with self._db.write() as conn:
            source = await self._agents.get_full_agent(conn, team_id, agent_id)
            if source is None:
                raise NotFound("no such agent", code="agentNotFound")
            await self._check_room(conn, team_id)
            own, profile_id = duplicate_choice(source.browser_choice)
            copy = replace(
                source,
                id=uuid.uuid4().hex,
                name=f"{source.name} (copy)"[:100],
                own_browser_session=own,
                browser_profile_id=profile_id,
                created_at=now,
                updated_at=now,
            )
            await self._agents.add_full_agent(conn, copy)
        self._announce(team_id, AgentsChanged())
        return copy

    async def delete_agent(self, team_id: str, agent_id: str) -> None:
        """Close its tabs, clear its own partition, forget its memories, recorded browsing
        steps, workspace, threads and their task lists."""
        await self.get_agent(team_id, agent_id)
        # Its turns stop and its reviews end before what they would write to goes, and
        # none starts again until it is gone.
        try:
            await self._signals.deliver(AgentDeleted(team_id, agent_id))
            await self._profiles.agent_deleted(team_id, agent_id)
            await self._memories.remove_agent_memories(team_id, agent_id)
            await self._browsing_steps.remove_agent_steps(team_id, agent_id)
            await self._workspace.remove_agent_workspace(team_id, agent_id)
            async with self._db.write() as conn:
                thread_ids = await self._threads.list_thread_ids_of_agent(conn, team_id, agent_id)
                await self._threads.remove_threads_of_agent(conn, team_id, agent_id)
                await self._agents.remove_agent(conn, team_id, agent_id)
                # Nobody may ask it any more.
                for other in await self._agents.list_agents(conn, team_id):
                    if agent_id in other.may_ask:
                        kept = tuple(a for a in other.may_ask if a != agent_id)
                        await self._agents.update_agent(conn, replace(other, may_ask=kept))
        finally:
            await self._signals.deliver(AgentGone(team_id, agent_id))
        self._task_lists.forget_threads(team_id, thread_ids)
        self._announce(team_id, AgentsChanged())

    async def _askable(
        self, conn: AsyncConnection, team_id: str, agent_id: str, may_ask: Sequence[str]
    ) -> tuple[str, ...]:
        """``may_ask`` once checked: other agents of the same team, each once, in order."""
        chosen = tuple(dict.fromkeys(may_ask))
        if agent_id in chosen:
            raise InvalidArgument(
                "an agent may not ask itself", code="agentMayAskInvalid", field="mayAsk"
            )
        team = {a.id for a in await self._agents.list_agents(conn, team_id)}
        unknown = [a for a in chosen if a not in team]
        if unknown:
            raise InvalidArgument(
                f"no agent of this team has the id {unknown[0]!r}",
                code="agentMayAskInvalid",
                field="mayAsk",
            )
        return chosen

    async def _check_room(self, conn: AsyncConnection, team_id: str) -> None:
        if await self._agents.count_agents(conn, team_id) >= MAX_AGENTS:
            raise Conflict(f"a team may have at most {MAX_AGENTS} agents", code="agentLimit")

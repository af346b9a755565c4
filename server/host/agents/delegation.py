"""Delegation: an agent of a team hands a task to another one (``ask_agent``).

The asked agent works in a new thread of its own, started for the people of the asking
thread (its starter, shared as it is) and linked to it both ways: the new thread names the
one that asked (``parent_thread_id``), and the asking thread is told of it
(``delegation-started``) and lists it when read. The asked turn runs with its own tools and
permissions; its approvals and questions go to whoever answers the asking turn's (a
routine's approvers, else the people who see the thread). The asking turn waits for it
with a time limit, and stopping the asking turn stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from typing import Protocol

from server.common.protocol import events
from server.host.services.agents import AgentService
from server.host.services.workspace import WorkspaceService
from server.host.storage.agents import Agent
from server.host.storage.threads import Thread, Turn
from server.host.tools.context import AskableAgent, DelegationReport, DelegationRequest
from server.host.workspace.workspaces import WorkspaceRef

# What a path an answer names looks like: folders and a name with an extension.
_PATH = re.compile(r"[\w.\-]+(?:/[\w.\-]+)*\.[A-Za-z0-9]{1,10}")
# The most paths of an answer looked up in the workspace.
MAX_NAMED_FILES = 20
STOPPED_WITH_CALLER = "the agent that asked stopped"
STOPPED_AT_TIME_LIMIT = "the agent that asked stopped waiting (its time limit)"


class AskingThreads(Protocol):
    """What delegation needs of the thread service."""

    async def start_asked(
        self,
        team_id: str,
        agent_id: str,
        *,
        account_id: str,
        text: str,
        title: str,
        shared: bool = False,
        asked_by: Thread | None = None,
    ) -> Turn: ...

    async def ended_turn(self, team_id: str, thread_id: str, turn_id: str) -> Turn | None: ...

    async def words(self, team_id: str, thread_id: str) -> list[str]: ...

    async def stop_turn(self, team_id: str, thread_id: str, reason: str) -> bool: ...

    async def asking_chain(self, thread: Thread) -> list[str]: ...

    def emit(self, thread: Thread, event: events.HostEvent) -> None: ...


def purpose_of(agent: Agent) -> str:
    """What an agent is for, as another agent reads it: its instructions' first line."""
    lines = [line.strip() for line in agent.instructions.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


class TurnDelegation:
    """One turn's delegation: the agents it may ask, and asking one of them."""

    def __init__(
        self,
        threads: AskingThreads,
        agents: AgentService,
        workspace: WorkspaceService,
        *,
        agent: Agent,
        thread: Callable[[], Thread],
        turn_id: str,
    ) -> None:
        self._threads = threads
        self._agents = agents
        self._workspace = workspace
        self._agent = agent
        # Read at each ask: sharing the asking thread, or taking it back, applies.
        self._thread = thread
        self._turn_id = turn_id

    async def askable(self) -> list[AskableAgent]:
        if not self._agent.may_ask:
            return []
        team = {a.id: a for a in await self._agents.list_agents(self._agent.team_id)}
        return [
            AskableAgent(a.id, a.name, purpose_of(a))
            for a in (team.get(agent_id) for agent_id in self._agent.may_ask)
            if a is not None and a.id != self._agent.id
        ]

    async def chain(self) -> list[str]:
        return await self._threads.asking_chain(self._thread())

    async def ask(self, request: DelegationRequest) -> DelegationReport:
        asking = self._thread()
        callee = await self._agents.get_agent(asking.team_id, request.agent_id)
        text = f"{self._agent.name}, another agent of your team, asks you:\n\n{request.task}"
        title = f"Asked by {self._agent.name}: {request.task}"
        turn = await self._threads.start_asked(
            asking.team_id,
            callee.id,
            account_id=asking.created_by,
            text=text,
            title=title,
            shared=asking.shared,
            asked_by=asking,
        )
        child_id = turn.thread_id
        self._threads.emit(
            asking,
            events.DelegationStarted(
                thread_id=asking.id,
                turn_id=self._turn_id,
                call_id=request.call_id,
                child_thread_id=child_id,
                agent_id=callee.id,
            ),
        )
        status: str = "timeout"
        reason: str | None = STOPPED_AT_TIME_LIMIT
        try:
            async with asyncio.timeout(request.seconds):
                ended = await self._threads.ended_turn(asking.team_id, child_id, turn.id)
            status = ended.status if ended is not None else "error"
            reason = ended.reason if ended is not None else "the thread is gone"
        except TimeoutError:
            await self._threads.stop_turn(asking.team_id, child_id, STOPPED_AT_TIME_LIMIT)
        except asyncio.CancelledError:
            # The asking turn stopped: so does the one it waits for.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(
                    self._threads.stop_turn(asking.team_id, child_id, STOPPED_WITH_CALLER)
                )
            raise
        words = await self._threads.words(asking.team_id, child_id)
        answer = words[-1] if words else ""
        return DelegationReport(
            child_id, status, reason, answer, await self._named_files(asking.team_id, answer)
        )

    async def _named_files(self, team_id: str, answer: str) -> list[str]:
        """The paths the answer names that are files of the team's shared workspace."""
        ref = WorkspaceRef(team_id, None)
        named = list(dict.fromkeys(m.group(0).strip(".") for m in _PATH.finditer(answer)))
        found = []
        for path in named[:MAX_NAMED_FILES]:
            if await self._workspace.size_of(ref, path) is not None:
                found.append(path)
        return found

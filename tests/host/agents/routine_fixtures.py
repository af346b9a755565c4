"""A routine service over a real database, whose turns a test ends by hand."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from server.common.errors import Conflict, NotFound
from server.common.protocol.events import HostEvent
from server.common.roles import Role
from server.db.engine import Database
from server.host.agents.routine_scheduler import RoutineScheduler
from server.host.agents.routines import RoutineService
from server.host.agents.work_signals import RoutineDue, RunFinished
from server.host.rtc.revocations import RemovalsHeard
from server.host.services.workspace import Member
from server.host.signals import Signals
from server.host.storage.agents import Agent
from server.host.storage.threads import Turn
from server.host.tools.context import Unattended
from tests.support.clock import FakeClock

TEAM = "t" * 32
AGENT = "a" * 32
OWNER = Member(TEAM, "o" * 32, Role.OWNER)
ALICE = Member(TEAM, "1" * 32, Role.MEMBER)
BOB = Member(TEAM, "2" * 32, Role.MEMBER)


@dataclass
class StartedTurn:
    turn: Turn
    text: str
    title: str
    account_id: str
    shared: bool
    ended: asyncio.Future[str]


@dataclass
class TurnsByHand:
    """Starts turns that end when the test says how (``end``); one turn per thread."""

    started: list[StartedTurn] = field(default_factory=list)
    busy_threads: set[str] = field(default_factory=set)
    # Set: every turn ends at once with this status.
    auto_end: str | None = None
    # Set: every start is refused so (a spent budget's ``budgetExceeded``).
    refusal: Conflict | None = None
    # Turns a former life put aside that this start took up, by id: each ends as its
    # future says.
    taken_up: dict[str, asyncio.Future[str]] = field(default_factory=dict)

    async def start_unattended(
        self,
        team_id: str,
        agent_id: str,
        *,
        account_id: str,
        text: str,
        title: str,
        shared: bool,
        thread_id: str | None = None,
        unattended: Unattended | None = None,
    ) -> Turn:
        if agent_id != AGENT:
            raise NotFound("no such agent", code="agentNotFound")
        if self.refusal is not None:
            raise self.refusal
        thread_id = thread_id or uuid.uuid4().hex
        if thread_id in self.busy_threads:
            raise Conflict("the agent is still answering", code="turnRunning")
        self.busy_threads.add(thread_id)
        turn = Turn(uuid.uuid4().hex, team_id, thread_id, "running", None, 0, 0, 0, 0.0, None)
        ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        if self.auto_end is not None:
            ended.set_result(self.auto_end)
        self.started.append(StartedTurn(turn, text, title, account_id, shared, ended))
        return turn

    async def ended_turn(self, team_id: str, thread_id: str, turn_id: str) -> Turn | None:
        if turn_id in self.taken_up:
            status = await self.taken_up[turn_id]
            return Turn(turn_id, team_id, thread_id, status, None, 0, 0, 0, 0.0, 1.0)
        started = next(s for s in self.started if s.turn.id == turn_id)
        status = await started.ended
        self.busy_threads.discard(thread_id)
        t = started.turn
        return Turn(t.id, team_id, thread_id, status, None, 0, 0, 0, 0.0, 1.0)

    def resumes(self, turn_id: str) -> bool:
        return turn_id in self.taken_up

    def end(self, index: int, status: str = "done") -> None:
        self.started[index].ended.set_result(status)


@dataclass
class Routines:
    service: RoutineService
    scheduler: RoutineScheduler
    turns: TurnsByHand
    clock: FakeClock
    announced: list[tuple[HostEvent, set[str]]]
    due: list[RoutineDue]
    finished: list[RunFinished]


async def get_agent(team_id: str, agent_id: str) -> Agent:
    if (team_id, agent_id) != (TEAM, AGENT):
        raise NotFound("no such agent", code="agentNotFound")
    return Agent(AGENT, TEAM, "Reporter", "", "anthropic", None, {}, None, False, None, 0.0, None)


@asynccontextmanager
async def routines_over(
    db: Database,
    clock: FakeClock,
    turns: TurnsByHand | None = None,
    removals: RemovalsHeard | None = None,
) -> AsyncIterator[Routines]:
    """A routine service and scheduler over ``db`` (a host's life: several over one db
    are restarts). The scheduler's loop is not started: tests call ``tick``."""
    turns = turns or TurnsByHand()
    signals = Signals()
    announced: list[tuple[HostEvent, set[str]]] = []
    everyone = {OWNER.account_id, ALICE.account_id, BOB.account_id}

    def announce(team_id: str, event: HostEvent, only: object) -> None:
        assert team_id == TEAM
        announced.append((event, {a for a in everyone if only(a)}))  # type: ignore[operator]

    service = RoutineService(db, clock, get_agent, turns, announce, signals, removals=removals)
    due: list[RoutineDue] = []
    finished: list[RunFinished] = []
    signals.subscribe(RoutineDue, due.append)
    signals.subscribe(RunFinished, finished.append)
    scheduler = RoutineScheduler(service, clock)
    try:
        yield Routines(service, scheduler, turns, clock, announced, due, finished)
    finally:
        await scheduler.close()
        await service.close()
        await signals.close()

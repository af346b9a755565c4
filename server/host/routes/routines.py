"""``routines-v1``: an agent's routines, their runs, and run now.

Owners and admins reach every routine; a member creates routines and changes, runs and
deletes their own, and reads the runs of those whose audience names them (the service
decides, see ``server/host/agents/routines.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfoNotFoundError

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.ids import AccountId, AgentId, RoutineId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel, no_control_characters
from server.host.agents.routine_schedules import Schedule, ScheduleKind, schedule_of
from server.host.agents.routines import HISTORY_LIMIT, RoutineSpec
from server.host.agents.threads import MAX_MESSAGE_CHARS
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.routines import Routine, RoutineRun

routes = HostRouteTable("routines-v1")

RoutineName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    AfterValidator(no_control_characters),
]
MessageText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MESSAGE_CHARS)
]
Accounts = Annotated[list[AccountId], Field(max_length=100)]
NEXT_TIMES = 3


class ScheduleArgs(InboundModel):
    """``cron`` with ``timeZone``; ``everySeconds`` (60 or more); or ``at``."""

    kind: ScheduleKind
    cron: Annotated[str, StringConstraints(max_length=200)] | None = None
    time_zone: Annotated[str, StringConstraints(max_length=64)] | None = None
    every_seconds: Annotated[WireInt, Field(le=366 * 86_400)] | None = None
    at: Annotated[float, Field(ge=0, le=1e11)] | None = None


class RoutineArgs(InboundModel):
    name: RoutineName
    message: MessageText
    schedule: ScheduleArgs
    thread_policy: Literal["new", "continue"] = "new"
    audience: Literal["creator", "members", "team"] = "creator"
    audience_members: Accounts = Field(default_factory=list)
    approvers: Accounts = Field(default_factory=list)
    approval_seconds: Annotated[WireInt, Field(ge=60, le=7 * 86_400)] = 86_400
    overlap: Literal["skip", "queue"] = "skip"
    missed: Literal["once", "skip"] = "once"
    enabled: bool = True


class CreateRoutine(RoutineArgs):
    agent_id: AgentId


class UpdateRoutine(RoutineArgs):
    routine_id: RoutineId


class RoutineRef(InboundModel):
    routine_id: RoutineId


class AgentRoutines(InboundModel):
    agent_id: AgentId


class HistoryArgs(InboundModel):
    routine_id: RoutineId
    limit: Annotated[WireInt, Field(ge=1, le=HISTORY_LIMIT)] = 50


class ScheduleView(WireModel):
    kind: str
    cron: str | None
    time_zone: str | None
    every_seconds: int | None
    at: float | None
    words: str = Field(description='The schedule for a person: "Weekdays at 09:00, Europe/London".')
    next_times: list[float] = Field(description="The next three fire times (host clock).")
    next_times_local: list[str] = Field(
        description='The same in the schedule\'s zone, for a person: "Mon 7 Dec 09:00".'
    )


class RoutineView(WireModel):
    id: str
    agent_id: str
    created_by: str
    name: str
    message: str
    schedule: ScheduleView
    thread_policy: str
    thread_id: str | None = Field(description="The continuing thread, once a run made it.")
    audience: str
    audience_members: list[str]
    approvers: list[str]
    approval_seconds: int
    overlap: str
    missed: str
    enabled: bool
    next_fire_at: float | None
    created_at: float
    updated_at: float


class RoutineList(WireModel):
    routines: list[RoutineView]


class RunView(WireModel):
    id: str
    routine_id: str
    trigger: str = Field(description="schedule, manual or webhook")
    status: str = Field(
        description="queued, running, done, error, capped, denied, stopped, budget, "
        "skipped or interrupted"
    )
    reason: str | None
    due_at: float | None
    created_at: float
    started_at: float | None
    ended_at: float | None
    started_by: str | None
    thread_id: str | None


class RunList(WireModel):
    runs: list[RunView]


class RoutineDeleted(WireModel):
    deleted: bool


def _schedule_view(schedule: Schedule, now: float) -> ScheduleView:
    try:
        times = schedule.next_times(now, NEXT_TIMES)
    except (ZoneInfoNotFoundError, ValueError, OverflowError):
        # A stored schedule this host cannot read (a zone it no longer has, a time past
        # its clock): the routine is shown, to be set again.
        times = []
    return ScheduleView(
        kind=schedule.kind,
        cron=schedule.cron,
        time_zone=schedule.time_zone,
        every_seconds=schedule.every_seconds,
        at=schedule.at,
        words=schedule.words(),
        next_times=times,
        next_times_local=[schedule.local_time(t) for t in times],
    )


def _view(routine: Routine, now: float) -> RoutineView:
    return RoutineView(
        id=routine.id,
        agent_id=routine.agent_id,
        created_by=routine.created_by,
        name=routine.name,
        message=routine.message,
        schedule=_schedule_view(Schedule.from_json(routine.schedule), now),
        thread_policy=routine.thread_policy,
        thread_id=routine.thread_id,
        audience=routine.audience,
        audience_members=list(routine.audience_members),
        approvers=list(routine.approvers),
        approval_seconds=routine.approval_seconds,
        overlap=routine.overlap,
        missed=routine.missed,
        enabled=routine.enabled,
        next_fire_at=routine.next_fire_at,
        created_at=routine.created_at,
        updated_at=routine.updated_at,
    )


def _run(run: RoutineRun) -> RunView:
    return RunView(
        id=run.id,
        routine_id=run.routine_id,
        trigger=run.trigger,
        status=run.status,
        reason=run.reason,
        due_at=run.due_at,
        created_at=run.created_at,
        started_at=run.started_at,
        ended_at=run.ended_at,
        started_by=run.started_by,
        thread_id=run.thread_id,
    )


def _spec(args: RoutineArgs, now: float) -> RoutineSpec:
    return RoutineSpec(
        name=args.name,
        message=args.message,
        schedule=schedule_of(args.schedule, now),
        thread_policy=args.thread_policy,
        audience=args.audience,
        audience_members=tuple(args.audience_members),
        approvers=tuple(args.approvers),
        approval_seconds=args.approval_seconds,
        overlap=args.overlap,
        missed=args.missed,
        enabled=args.enabled,
    )


@routes.route("routines-v1/list", args=AgentRoutines, least_role=Role.MEMBER)
async def list_routines(call: HostCall, args: AgentRoutines) -> RoutineList:
    """The agent's routines this member sees, oldest first."""
    found = await call.host.routines.list_routines(call.member, args.agent_id)
    now = call.host.clock.now()
    return RoutineList(routines=[_view(r, now) for r in found])


@routes.route("routines-v1/get", args=RoutineRef, least_role=Role.MEMBER)
async def get_routine(call: HostCall, args: RoutineRef) -> RoutineView:
    """One routine, with its schedule in words and its next three times."""
    routine = await call.host.routines.get_routine(call.member, args.routine_id)
    return _view(routine, call.host.clock.now())


@routes.route("routines-v1/preview", args=ScheduleArgs, least_role=Role.MEMBER)
async def preview_schedule(call: HostCall, args: ScheduleArgs) -> ScheduleView:
    """A schedule not yet saved, checked, in words and with its next three times."""
    now = call.host.clock.now()
    return _schedule_view(schedule_of(args, now), now)


@routes.route("routines-v1/create", args=CreateRoutine, least_role=Role.MEMBER)
async def create_routine(call: HostCall, args: CreateRoutine) -> RoutineView:
    """Create a routine for an agent; its creator is the caller."""
    now = call.host.clock.now()
    routine = await call.host.routines.create_routine(call.member, args.agent_id, _spec(args, now))
    return _view(routine, now)


@routes.route("routines-v1/update", args=UpdateRoutine, least_role=Role.MEMBER)
async def update_routine(call: HostCall, args: UpdateRoutine) -> RoutineView:
    """Change every setting of a routine (its creator, or an admin)."""
    now = call.host.clock.now()
    routine = await call.host.routines.update_routine(
        call.member, args.routine_id, _spec(args, now)
    )
    return _view(routine, now)


@routes.route("routines-v1/delete", args=RoutineRef, least_role=Role.MEMBER)
async def delete_routine(call: HostCall, args: RoutineRef) -> RoutineDeleted:
    """Delete a routine and its run history (its creator, or an admin)."""
    await call.host.routines.delete_routine(call.member, args.routine_id)
    return RoutineDeleted(deleted=True)


@routes.route("routines-v1/run", args=RoutineRef, least_role=Role.MEMBER)
async def run_routine(call: HostCall, args: RoutineRef) -> RunView:
    """Run a routine now; its overlap policy applies (the run may wait or be skipped)."""
    return _run(await call.host.routines.run_now(call.member, args.routine_id))


@routes.route("routines-v1/history", args=HistoryArgs, least_role=Role.MEMBER)
async def routine_history(call: HostCall, args: HistoryArgs) -> RunList:
    """The routine's runs, newest first."""
    runs = await call.host.routines.history(call.member, args.routine_id, args.limit)
    return RunList(runs=[_run(r) for r in runs])

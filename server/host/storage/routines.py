"""Routines and their runs; every query within one team but the scheduler's due list."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import routine_runs, routines

# A run's status before it ends.
UNFINISHED = ("queued", "running")


@dataclass(frozen=True, slots=True)
class Routine:
    """A routine of an agent; ``schedule`` is the JSON ``routine_schedules.Schedule`` reads."""

    id: str
    team_id: str
    agent_id: str
    created_by: str
    name: str
    message: str
    schedule: dict[str, Any]
    thread_policy: str
    thread_id: str | None
    audience: str
    audience_members: tuple[str, ...]
    approvers: tuple[str, ...]
    approval_seconds: int
    overlap: str
    missed: str
    enabled: bool
    next_fire_at: float | None
    created_at: float
    updated_at: float
    # When its creator left the team (None: a member still): it never runs again.
    creator_left_at: float | None = None

    def sees_runs(self, account_id: str) -> bool:
        """Whether a member is in the audience of its runs."""
        if self.audience == "team" or account_id == self.created_by:
            return True
        return self.audience == "members" and account_id in self.audience_members

    def audience_of(self) -> tuple[str, ...]:
        """The accounts its runs' audience names (for the team: its creator, the rest of
        the team being every member)."""
        if self.audience == "members":
            return tuple(dict.fromkeys((self.created_by, *self.audience_members)))
        return (self.created_by,)

    def approvers_or_creator(self) -> tuple[str, ...]:
        return self.approvers or (self.created_by,)


@dataclass(frozen=True, slots=True)
class RoutineRun:
    id: str
    team_id: str
    routine_id: str
    agent_id: str
    trigger: str
    status: str
    reason: str | None
    due_at: float | None
    created_at: float
    started_at: float | None
    ended_at: float | None
    started_by: str | None
    thread_id: str | None
    turn_id: str | None
    delivery_id: str | None
    body: str | None


_ROUTINE = tuple(routines.c)
_RUN = tuple(routine_runs.c)


def _routine(row: Any) -> Routine:
    values = dict(row._mapping)
    values["schedule"] = json.loads(values["schedule"])
    values["audience_members"] = tuple(json.loads(values["audience_members"]))
    values["approvers"] = tuple(json.loads(values["approvers"]))
    return Routine(**values)


def _routine_row(routine: Routine) -> dict[str, Any]:
    return {
        "id": routine.id,
        "team_id": routine.team_id,
        "agent_id": routine.agent_id,
        "created_by": routine.created_by,
        "name": routine.name,
        "message": routine.message,
        "schedule": json.dumps(routine.schedule),
        "thread_policy": routine.thread_policy,
        "thread_id": routine.thread_id,
        "audience": routine.audience,
        "audience_members": json.dumps(list(routine.audience_members)),
        "approvers": json.dumps(list(routine.approvers)),
        "approval_seconds": routine.approval_seconds,
        "overlap": routine.overlap,
        "missed": routine.missed,
        "enabled": routine.enabled,
        "next_fire_at": routine.next_fire_at,
        "created_at": routine.created_at,
        "creator_left_at": routine.creator_left_at,
        "updated_at": routine.updated_at,
    }


def _run(row: Any) -> RoutineRun:
    return RoutineRun(**row._mapping)


def _run_row(run: RoutineRun) -> dict[str, Any]:
    return {c.name: getattr(run, c.name) for c in routine_runs.c}


class RoutineRepository:
    """Reads and writes of ``routines`` and ``routine_runs``."""

    # -- routines -----------------------------------------------------------------------

    async def add_routine(self, conn: AsyncConnection, routine: Routine) -> None:
        await conn.execute(routines.insert().values(**_routine_row(routine)))

    async def get_routine(
        self, conn: AsyncConnection, team_id: str, routine_id: str
    ) -> Routine | None:
        result = await conn.execute(
            sa.select(*_ROUTINE).where(routines.c.team_id == team_id, routines.c.id == routine_id)
        )
        row = result.first()
        return None if row is None else _routine(row)

    async def list_routines(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[Routine]:
        result = await conn.execute(
            sa.select(*_ROUTINE)
            .where(routines.c.team_id == team_id, routines.c.agent_id == agent_id)
            .order_by(routines.c.created_at, routines.c.id)
        )
        return [_routine(row) for row in result]

    async def list_team_routines(self, conn: AsyncConnection, team_id: str) -> list[Routine]:
        result = await conn.execute(
            sa.select(*_ROUTINE)
            .where(routines.c.team_id == team_id)
            .order_by(routines.c.created_at, routines.c.id)
        )
        return [_routine(row) for row in result]

    async def list_named_members(self, conn: AsyncConnection) -> dict[tuple[str, str], float]:
        """(team, account) of every member a routine names, in every team: its creator (but
        one who left), since it was made, its approvers and its audience, since its last
        change (the host's link asks the hub which of them left)."""
        result = await conn.execute(
            sa.select(
                routines.c.team_id,
                routines.c.created_by,
                routines.c.approvers,
                routines.c.audience_members,
                routines.c.creator_left_at,
                routines.c.created_at,
                routines.c.updated_at,
            )
        )
        named: dict[tuple[str, str], float] = {}

        def name(team_id: str, account_id: str, since: float) -> None:
            key = (team_id, account_id)
            named[key] = min(since, named.get(key, since))

        for row in result:
            for account in (*json.loads(row.approvers), *json.loads(row.audience_members)):
                name(row.team_id, account, row.updated_at)
            if row.creator_left_at is None:
                name(row.team_id, row.created_by, row.created_at)
        return named

    async def update_routine(self, conn: AsyncConnection, routine: Routine) -> bool:
        """Write the routine's settings; never who made it or when they left (an edit read
        before they left must not bring them back: ``update_creator_left``), and never
        turned on once they have: False then, and nothing is written."""
        values = _routine_row(routine)
        for key in ("id", "team_id", "agent_id", "created_by", "created_at", "creator_left_at"):
            del values[key]
        mine = (routines.c.team_id == routine.team_id) & (routines.c.id == routine.id)
        if routine.enabled:
            mine = mine & routines.c.creator_left_at.is_(None)
        result = await conn.execute(routines.update().where(mine).values(**values))
        return int(result.rowcount) == 1

    async def update_creator_left(
        self, conn: AsyncConnection, team_id: str, routine_id: str, left_at: float
    ) -> None:
        await conn.execute(
            routines.update()
            .where(routines.c.team_id == team_id, routines.c.id == routine_id)
            .values(creator_left_at=left_at)
        )

    async def update_thread_id(
        self, conn: AsyncConnection, team_id: str, routine_id: str, thread_id: str
    ) -> None:
        await conn.execute(
            routines.update()
            .where(routines.c.team_id == team_id, routines.c.id == routine_id)
            .values(thread_id=thread_id)
        )

    async def remove_routine(self, conn: AsyncConnection, team_id: str, routine_id: str) -> bool:
        await conn.execute(
            routine_runs.delete().where(
                routine_runs.c.team_id == team_id, routine_runs.c.routine_id == routine_id
            )
        )
        result = await conn.execute(
            routines.delete().where(routines.c.team_id == team_id, routines.c.id == routine_id)
        )
        return result.rowcount > 0

    async def remove_routines_of_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> None:
        for table in (routine_runs, routines):
            await conn.execute(
                table.delete().where(table.c.team_id == team_id, table.c.agent_id == agent_id)
            )

    # -- the scheduler -----------------------------------------------------------------

    async def list_due_for_update(
        self, conn: AsyncConnection, now: float, limit: int
    ) -> list[Routine]:
        """The enabled routines due by ``now``, across the host's teams (the scheduler's one
        read that is not within a team), held for this write transaction: PostgreSQL locks
        the rows (another scheduler skips them); on SQLite a first write that changes nothing
        takes the file's write lock before the read, so no other writer can move a time
        between the read and this transaction's updates."""
        await conn.execute(
            routines.update().where(sa.false()).values(next_fire_at=routines.c.next_fire_at)
        )
        result = await conn.execute(
            sa.select(*_ROUTINE)
            .where(routines.c.enabled.is_(True), routines.c.next_fire_at <= now)
            .order_by(routines.c.next_fire_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        return [_routine(row) for row in result]

    async def update_fire_times(
        self, conn: AsyncConnection, moves: list[tuple[str, str, float, float | None]]
    ) -> None:
        """Moves each routine's next fire time on, in one statement: ``(team_id, routine_id,
        expected, next)``, only where it still is ``expected``."""
        if not moves:
            return
        await conn.execute(
            routines.update()
            .where(
                routines.c.team_id == sa.bindparam("b_team"),
                routines.c.id == sa.bindparam("b_id"),
                routines.c.next_fire_at == sa.bindparam("b_expected"),
            )
            .values(next_fire_at=sa.bindparam("b_next")),
            [
                {"b_team": team, "b_id": rid, "b_expected": expected, "b_next": nxt}
                for team, rid, expected, nxt in moves
            ],
        )

    async def get_earliest_fire(self, conn: AsyncConnection) -> float | None:
        result = await conn.execute(
            sa.select(sa.func.min(routines.c.next_fire_at)).where(routines.c.enabled.is_(True))
        )
        value = result.scalar()
        return None if value is None else float(value)

    # -- runs ---------------------------------------------------------------------------

    async def add_run(self, conn: AsyncConnection, run: RoutineRun) -> None:
        await conn.execute(routine_runs.insert().values(**_run_row(run)))

    async def add_runs(self, conn: AsyncConnection, runs: list[RoutineRun]) -> None:
        if runs:
            await conn.execute(routine_runs.insert(), [_run_row(run) for run in runs])

    async def get_run(self, conn: AsyncConnection, team_id: str, run_id: str) -> RoutineRun | None:
        result = await conn.execute(
            sa.select(*_RUN).where(routine_runs.c.team_id == team_id, routine_runs.c.id == run_id)
        )
        row = result.first()
        return None if row is None else _run(row)

    async def get_run_by_delivery(
        self, conn: AsyncConnection, team_id: str, delivery_id: str
    ) -> RoutineRun | None:
        result = await conn.execute(
            sa.select(*_RUN).where(
                routine_runs.c.team_id == team_id, routine_runs.c.delivery_id == delivery_id
            )
        )
        row = result.first()
        return None if row is None else _run(row)

    async def list_runs(
        self, conn: AsyncConnection, team_id: str, routine_id: str, limit: int
    ) -> list[RoutineRun]:
        """The routine's runs, newest first."""
        result = await conn.execute(
            sa.select(*_RUN)
            .where(routine_runs.c.team_id == team_id, routine_runs.c.routine_id == routine_id)
            .order_by(routine_runs.c.created_at.desc(), routine_runs.c.id.desc())
            .limit(limit)
        )
        return [_run(row) for row in result]

    async def list_unfinished_runs(
        self, conn: AsyncConnection, team_id: str, routine_id: str
    ) -> list[RoutineRun]:
        """The routine's queued and running runs, oldest first."""
        result = await conn.execute(
            sa.select(*_RUN)
            .where(
                routine_runs.c.team_id == team_id,
                routine_runs.c.routine_id == routine_id,
                routine_runs.c.status.in_(UNFINISHED),
            )
            .order_by(routine_runs.c.created_at, routine_runs.c.id)
        )
        return [_run(row) for row in result]

    async def list_unfinished_runs_of(
        self, conn: AsyncConnection, routines_by_team: list[tuple[str, str]]
    ) -> dict[str, list[RoutineRun]]:
        """The queued and running runs of each ``(team_id, routine_id)``, oldest first."""
        found: dict[str, list[RoutineRun]] = {}
        for team_id in {team for team, _ in routines_by_team}:
            ids = [rid for team, rid in routines_by_team if team == team_id]
            result = await conn.execute(
                sa.select(*_RUN)
                .where(
                    routine_runs.c.team_id == team_id,
                    routine_runs.c.routine_id.in_(ids),
                    routine_runs.c.status.in_(UNFINISHED),
                )
                .order_by(routine_runs.c.created_at, routine_runs.c.id)
            )
            for row in result:
                run = _run(row)
                found.setdefault(run.routine_id, []).append(run)
        return found

    async def list_all_unfinished_runs(self, conn: AsyncConnection) -> list[RoutineRun]:
        """Every team's queued and running runs (read once at start, to settle them)."""
        result = await conn.execute(
            sa.select(*_RUN)
            .where(routine_runs.c.status.in_(UNFINISHED))
            .order_by(routine_runs.c.created_at, routine_runs.c.id)
        )
        return [_run(row) for row in result]

    async def update_run(
        self, conn: AsyncConnection, team_id: str, run_id: str, **values: Any
    ) -> None:
        await conn.execute(
            routine_runs.update()
            .where(routine_runs.c.team_id == team_id, routine_runs.c.id == run_id)
            .values(**values)
        )

    async def take_queued_run(
        self, conn: AsyncConnection, team_id: str, run_id: str, started_at: float
    ) -> bool:
        """Marks a queued run running, only if it still is queued."""
        result = await conn.execute(
            routine_runs.update()
            .where(
                routine_runs.c.team_id == team_id,
                routine_runs.c.id == run_id,
                routine_runs.c.status == "queued",
            )
            .values(status="running", started_at=started_at)
        )
        return result.rowcount == 1

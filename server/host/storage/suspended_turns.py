"""Turns a stopping host put aside while they waited for consent, until its next start."""

from __future__ import annotations

import json
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import suspended_turns


@dataclass(frozen=True, slots=True)
class SuspendedTurn:
    """What takes a turn up again: the consent it waits for (``request_id``, for the call
    ``call_id``) and what it was started with."""

    turn_id: str
    team_id: str
    thread_id: str
    agent_id: str
    request_id: str
    call_id: str
    # Whose budgets it spends ('' for a routine's run: the routine's).
    started_by: str
    # Who answers its requests (None: whoever sees the thread), how long each waits (None:
    # the registry's default), and the routine it runs for.
    approvers: tuple[str, ...] | None
    attention_seconds: float | None
    routine_id: str | None
    suspended_at: float


class SuspendedTurnRepository:
    """Reads and writes of ``suspended_turns``."""

    async def add_turn(self, conn: AsyncConnection, turn: SuspendedTurn) -> None:
        await conn.execute(
            suspended_turns.insert().values(
                turn_id=turn.turn_id,
                team_id=turn.team_id,
                thread_id=turn.thread_id,
                agent_id=turn.agent_id,
                request_id=turn.request_id,
                call_id=turn.call_id,
                started_by=turn.started_by or None,
                approvers=None if turn.approvers is None else json.dumps(turn.approvers),
                attention_seconds=turn.attention_seconds,
                routine_id=turn.routine_id,
                suspended_at=turn.suspended_at,
            )
        )

    async def take_every_turn(self, conn: AsyncConnection) -> list[SuspendedTurn]:
        """Every team's suspended turns, oldest first, each taken (removed) as it is read:
        a start takes them up once, and a crash after it leaves none to take up twice."""
        result = await conn.execute(
            sa.select(*suspended_turns.c).order_by(
                suspended_turns.c.suspended_at, suspended_turns.c.turn_id
            )
        )
        taken = [_suspended(row) for row in result]
        if taken:
            await conn.execute(
                suspended_turns.delete().where(
                    suspended_turns.c.turn_id.in_([t.turn_id for t in taken])
                )
            )
        return taken


def _suspended(row: sa.Row[tuple[object, ...]]) -> SuspendedTurn:
    values = dict(row._mapping)
    approvers = values.pop("approvers")
    started_by = values.pop("started_by")
    return SuspendedTurn(
        **values,
        started_by=started_by or "",
        approvers=None if approvers is None else tuple(json.loads(approvers)),
    )

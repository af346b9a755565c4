"""Attention requests as stored: who may answer, until when, and how each ended."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import attention_requests

WAITING = "waiting"


@dataclass(frozen=True, slots=True)
class StoredRequest:
    """A request's record: never its arguments, only the host's line for a person."""

    id: str
    team_id: str
    thread_id: str
    agent_id: str
    routine_id: str | None
    kind: str
    tool: str
    description: str
    # None: whoever sees the thread may answer.
    addressed_to: tuple[str, ...] | None
    whole_team: bool
    created_at: float
    expires_at: float
    status: str
    reason: str | None = None
    answered_by: str | None = None
    resolved_at: float | None = None


def _stored(row: sa.Row[tuple[object, ...]]) -> StoredRequest:
    values = dict(row._mapping)
    addressed = values.pop("addressed_to")
    return StoredRequest(
        **values, addressed_to=None if addressed is None else tuple(json.loads(addressed))
    )


class AttentionRepository:
    """Reads and writes of ``attention_requests``; every query within one team."""

    async def add_request(self, conn: AsyncConnection, request: StoredRequest) -> None:
        addressed = None if request.addressed_to is None else json.dumps(request.addressed_to)
        await conn.execute(
            attention_requests.insert().values(
                id=request.id,
                team_id=request.team_id,
                thread_id=request.thread_id,
                agent_id=request.agent_id,
                routine_id=request.routine_id,
                kind=request.kind,
                tool=request.tool,
                description=request.description,
                addressed_to=addressed,
                whole_team=request.whole_team,
                created_at=request.created_at,
                expires_at=request.expires_at,
                status=request.status,
            )
        )

    async def get_request(
        self, conn: AsyncConnection, team_id: str, request_id: str
    ) -> StoredRequest | None:
        result = await conn.execute(
            sa.select(*attention_requests.c).where(
                attention_requests.c.team_id == team_id, attention_requests.c.id == request_id
            )
        )
        row = result.first()
        return None if row is None else _stored(row)

    async def update_ended(
        self,
        conn: AsyncConnection,
        team_id: str,
        request_id: str,
        *,
        status: str,
        reason: str | None,
        answered_by: str | None,
        resolved_at: float,
    ) -> None:
        """The request stops waiting; one that ended already keeps how it ended."""
        await conn.execute(
            attention_requests.update()
            .where(
                attention_requests.c.team_id == team_id,
                attention_requests.c.id == request_id,
                attention_requests.c.status == WAITING,
            )
            .values(status=status, reason=reason, answered_by=answered_by, resolved_at=resolved_at)
        )

    async def update_all_waiting(
        self,
        conn: AsyncConnection,
        *,
        status: str,
        reason: str,
        resolved_at: float,
        keep: Collection[str] = (),
    ) -> int:
        """Every request still waiting, in every team, but those in ``keep`` (their turns
        are taken up again), ends as ``status`` (a host starting over has no turn waiting
        for any of them); how many did."""
        waiting = attention_requests.c.status == WAITING
        if keep:
            waiting = waiting & attention_requests.c.id.not_in(list(keep))
        result = await conn.execute(
            attention_requests.update()
            .where(waiting)
            .values(status=status, reason=reason, resolved_at=resolved_at)
        )
        return int(result.rowcount)

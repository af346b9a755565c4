"""Threads, their messages in order, and their turns; every query within one team."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import (
    attention_requests,
    queued_messages,
    thread_messages,
    thread_read_cursors,
    threads,
    turns,
)


@dataclass(frozen=True, slots=True)
class Thread:
    id: str
    team_id: str
    agent_id: str
    created_by: str
    shared: bool
    title: str
    created_at: float
    updated_at: float
    # A thread another agent's ``ask_agent`` started: the thread that asked, and its agent.
    parent_thread_id: str | None = None
    parent_agent_id: str | None = None

    def visible_to(self, account_id: str) -> bool:
        """A thread is its starter's alone unless shared with the team."""
        return self.shared or self.created_by == account_id


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One transcript message; ``body`` is its provider-neutral JSON."""

    id: str
    team_id: str
    thread_id: str
    seq: int
    role: str
    body: str
    created_at: float


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    team_id: str
    thread_id: str
    status: str
    reason: str | None
    tool_calls: int
    input_tokens: int
    output_tokens: int
    started_at: float
    ended_at: float | None
    # The stable error code of a turn that ended in error, when it has one.
    code: str | None = None


_THREAD = tuple(threads.c)
_MESSAGE = tuple(thread_messages.c)
_TURN = tuple(turns.c)


def _thread(row: Any) -> Thread:
    return Thread(**row._mapping)


class ThreadRepository:
    """Reads and writes of ``threads``, ``thread_messages`` and ``turns``."""

    async def get_thread(
        self, conn: AsyncConnection, team_id: str, thread_id: str
    ) -> Thread | None:
        result = await conn.execute(
            sa.select(*_THREAD).where(threads.c.team_id == team_id, threads.c.id == thread_id)
        )
        row = result.first()
        return None if row is None else _thread(row)

    async def list_threads(
        self, conn: AsyncConnection, team_id: str, agent_id: str, account_id: str
    ) -> list[Thread]:
        """The agent's threads this member sees: their own and the shared ones, newest first."""
        result = await conn.execute(
            sa.select(*_THREAD)
            .where(
                threads.c.team_id == team_id,
                threads.c.agent_id == agent_id,
                sa.or_(threads.c.shared.is_(True), threads.c.created_by == account_id),
            )
            .order_by(threads.c.updated_at.desc(), threads.c.id)
        )
        return [_thread(row) for row in result]

    async def add_thread(self, conn: AsyncConnection, thread: Thread) -> None:
        await conn.execute(
            threads.insert().values(
                id=thread.id,
                team_id=thread.team_id,
                agent_id=thread.agent_id,
                created_by=thread.created_by,
                shared=thread.shared,
                title=thread.title,
                created_at=thread.created_at,
                updated_at=thread.updated_at,
                parent_thread_id=thread.parent_thread_id,
                parent_agent_id=thread.parent_agent_id,
            )
        )

    async def list_child_threads(
        self, conn: AsyncConnection, team_id: str, parent_thread_id: str
    ) -> list[Thread]:
        """The threads that ``ask_agent`` calls of a thread started, oldest first."""
        result = await conn.execute(
            sa.select(*_THREAD)
            .where(threads.c.team_id == team_id, threads.c.parent_thread_id == parent_thread_id)
            .order_by(threads.c.created_at, threads.c.id)
        )
        return [_thread(row) for row in result]

    async def update_thread(
        self,
        conn: AsyncConnection,
        team_id: str,
        thread_id: str,
        *,
        updated_at: float,
        shared: bool | None = None,
        title: str | None = None,
    ) -> None:
        values: dict[str, Any] = {"updated_at": updated_at}
        if shared is not None:
            values["shared"] = shared
        if title is not None:
            values["title"] = title
        await conn.execute(
            threads.update()
            .where(threads.c.team_id == team_id, threads.c.id == thread_id)
            .values(**values)
        )

    async def list_thread_ids_of_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[str]:
        result = await conn.execute(
            sa.select(threads.c.id).where(
                threads.c.team_id == team_id, threads.c.agent_id == agent_id
            )
        )
        return [row.id for row in result]

    async def remove_threads_of_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> None:
        ids = sa.select(threads.c.id).where(
            threads.c.team_id == team_id, threads.c.agent_id == agent_id
        )
        await conn.execute(
            thread_messages.delete().where(
                thread_messages.c.team_id == team_id, thread_messages.c.thread_id.in_(ids)
            )
        )
        await conn.execute(
            turns.delete().where(turns.c.team_id == team_id, turns.c.thread_id.in_(ids))
        )
        for table in (queued_messages, thread_read_cursors, attention_requests):
            await conn.execute(
                table.delete().where(table.c.team_id == team_id, table.c.thread_id.in_(ids))
            )
        await conn.execute(
            threads.delete().where(threads.c.team_id == team_id, threads.c.agent_id == agent_id)
        )

    async def list_messages(
        self, conn: AsyncConnection, team_id: str, thread_id: str
    ) -> list[StoredMessage]:
        result = await conn.execute(
            sa.select(*_MESSAGE)
            .where(thread_messages.c.team_id == team_id, thread_messages.c.thread_id == thread_id)
            .order_by(thread_messages.c.seq)
        )
        return [StoredMessage(**row._mapping) for row in result]

    async def next_seq(self, conn: AsyncConnection, team_id: str, thread_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.max(thread_messages.c.seq)).where(
                thread_messages.c.team_id == team_id, thread_messages.c.thread_id == thread_id
            )
        )
        last = result.scalar_one()
        return 0 if last is None else int(last) + 1

    async def add_messages(self, conn: AsyncConnection, messages: list[StoredMessage]) -> None:
        if messages:
            await conn.execute(
                thread_messages.insert(),
                [
                    {
                        "id": m.id,
                        "team_id": m.team_id,
                        "thread_id": m.thread_id,
                        "seq": m.seq,
                        "role": m.role,
                        "body": m.body,
                        "created_at": m.created_at,
                    }
                    for m in messages
                ],
            )

    async def add_turn(self, conn: AsyncConnection, turn: Turn) -> None:
        await conn.execute(
            turns.insert().values(
                id=turn.id,
                team_id=turn.team_id,
                thread_id=turn.thread_id,
                status=turn.status,
                reason=turn.reason,
                code=turn.code,
                tool_calls=turn.tool_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
                started_at=turn.started_at,
                ended_at=turn.ended_at,
            )
        )

    async def update_turn(self, conn: AsyncConnection, turn: Turn) -> None:
        await conn.execute(
            turns.update()
            .where(turns.c.team_id == turn.team_id, turns.c.id == turn.id)
            .values(
                status=turn.status,
                reason=turn.reason,
                code=turn.code,
                tool_calls=turn.tool_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
                ended_at=turn.ended_at,
            )
        )

    async def update_running_turns(
        self,
        conn: AsyncConnection,
        *,
        status: str,
        reason: str,
        ended_at: float,
        keep: Collection[str] = (),
    ) -> int:
        """Every turn a former run of the host left running, in every team, but those in
        ``keep`` (taken up again), ends as ``status`` (start-up: no task runs it any more);
        how many did."""
        running = turns.c.status == "running"
        if keep:
            running = running & turns.c.id.not_in(list(keep))
        result = await conn.execute(
            turns.update().where(running).values(status=status, reason=reason, ended_at=ended_at)
        )
        return int(result.rowcount)

    async def list_turns(self, conn: AsyncConnection, team_id: str, thread_id: str) -> list[Turn]:
        result = await conn.execute(
            sa.select(*_TURN)
            .where(turns.c.team_id == team_id, turns.c.thread_id == thread_id)
            .order_by(turns.c.started_at, turns.c.id)
        )
        return [Turn(**row._mapping) for row in result]

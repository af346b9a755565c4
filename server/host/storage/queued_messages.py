"""Messages queued behind a thread's running turn, oldest first; every query within one team."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import queued_messages


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A member's message waiting for its thread's turn to end; ``attachments`` is the JSON
    list of the files it carries (imported into the workspace when it was sent)."""

    id: str
    team_id: str
    thread_id: str
    account_id: str
    text: str
    attachments: str
    steer: bool
    created_at: float
    updated_at: float


_COLUMNS = tuple(queued_messages.c)
_OLDEST_FIRST = (queued_messages.c.created_at, queued_messages.c.id)


class QueuedMessageRepository:
    """Reads and writes of ``queued_messages``."""

    async def add_message(self, conn: AsyncConnection, message: QueuedMessage) -> None:
        await conn.execute(queued_messages.insert().values(**_values(message)))

    async def list_messages(
        self, conn: AsyncConnection, team_id: str, thread_id: str
    ) -> list[QueuedMessage]:
        result = await conn.execute(
            sa.select(*_COLUMNS)
            .where(queued_messages.c.team_id == team_id, queued_messages.c.thread_id == thread_id)
            .order_by(*_OLDEST_FIRST)
        )
        return [QueuedMessage(**row._mapping) for row in result]

    async def list_queued_threads(self, conn: AsyncConnection) -> list[tuple[str, str]]:
        """(team, thread) of every thread with a queued message, in every team, the one with
        the oldest first (a start: each queue's oldest message starts its thread's turn)."""
        result = await conn.execute(
            sa.select(queued_messages.c.team_id, queued_messages.c.thread_id)
            .group_by(queued_messages.c.team_id, queued_messages.c.thread_id)
            .order_by(sa.func.min(queued_messages.c.created_at))
        )
        return [(row.team_id, row.thread_id) for row in result]

    async def list_every_sender(self, conn: AsyncConnection) -> dict[tuple[str, str], float]:
        """(team, account) of every member with a queued message, in every team, with when
        the oldest was queued (the host's link asks the hub which of them left)."""
        result = await conn.execute(
            sa.select(
                queued_messages.c.team_id,
                queued_messages.c.account_id,
                sa.func.min(queued_messages.c.created_at).label("since"),
            ).group_by(queued_messages.c.team_id, queued_messages.c.account_id)
        )
        return {(row.team_id, row.account_id): row.since for row in result}

    async def remove_sender_messages(
        self, conn: AsyncConnection, team_id: str, account_id: str
    ) -> list[QueuedMessage]:
        """Take every queued message of one member of the team out of every queue."""
        mine = (queued_messages.c.team_id == team_id) & (queued_messages.c.account_id == account_id)
        result = await conn.execute(sa.select(*_COLUMNS).where(mine))
        removed = [QueuedMessage(**row._mapping) for row in result]
        await conn.execute(queued_messages.delete().where(mine))
        return removed

    async def count_messages(self, conn: AsyncConnection, team_id: str, thread_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count()).where(
                queued_messages.c.team_id == team_id, queued_messages.c.thread_id == thread_id
            )
        )
        return int(result.scalar_one())

    async def get_message(
        self, conn: AsyncConnection, team_id: str, message_id: str
    ) -> QueuedMessage | None:
        result = await conn.execute(
            sa.select(*_COLUMNS).where(
                queued_messages.c.team_id == team_id, queued_messages.c.id == message_id
            )
        )
        row = result.first()
        return None if row is None else QueuedMessage(**row._mapping)

    async def update_message(
        self,
        conn: AsyncConnection,
        team_id: str,
        message_id: str,
        *,
        updated_at: float,
        text: str | None = None,
        steer: bool | None = None,
    ) -> bool:
        """Whether the message was still queued (and is changed)."""
        values: dict[str, object] = {"updated_at": updated_at}
        if text is not None:
            values["text"] = text
        if steer is not None:
            values["steer"] = steer
        result = await conn.execute(
            queued_messages.update()
            .where(queued_messages.c.team_id == team_id, queued_messages.c.id == message_id)
            .values(**values)
        )
        return int(result.rowcount) == 1

    async def take_message(
        self, conn: AsyncConnection, team_id: str, message_id: str, *, steered_only: bool
    ) -> QueuedMessage | None:
        """Remove the message and answer it as it was removed (one statement: an edit or a
        cancel lands before it or finds it gone); None when it is gone, or not steered."""
        statement = queued_messages.delete().where(
            queued_messages.c.team_id == team_id, queued_messages.c.id == message_id
        )
        if steered_only:
            statement = statement.where(queued_messages.c.steer.is_(True))
        result = await conn.execute(statement.returning(*_COLUMNS))
        row = result.first()
        return None if row is None else QueuedMessage(**row._mapping)

    async def remove_message(self, conn: AsyncConnection, team_id: str, message_id: str) -> bool:
        """Whether the message was still queued (and is gone now): taken or cancelled once."""
        result = await conn.execute(
            queued_messages.delete().where(
                queued_messages.c.team_id == team_id, queued_messages.c.id == message_id
            )
        )
        return int(result.rowcount) == 1


def _values(message: QueuedMessage) -> dict[str, object]:
    return {
        "id": message.id,
        "team_id": message.team_id,
        "thread_id": message.thread_id,
        "account_id": message.account_id,
        "text": message.text,
        "attachments": message.attachments,
        "steer": message.steer,
        "created_at": message.created_at,
        "updated_at": message.updated_at,
    }

"""Where each member last read each thread, and what the agent said since."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import thread_read_cursors, turns


class ReadCursorRepository:
    """Reads and writes of ``thread_read_cursors``; every query within one team."""

    async def update_cursor(
        self, conn: AsyncConnection, team_id: str, thread_id: str, account_id: str, read_at: float
    ) -> None:
        """The member read the thread at ``read_at``: one upsert, so two reads at once
        cannot both insert; a cursor never moves back."""
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        statement = insert(thread_read_cursors).values(
            team_id=team_id, thread_id=thread_id, account_id=account_id, read_at=read_at
        )
        now, kept = statement.excluded.read_at, thread_read_cursors.c.read_at
        later = sa.case((kept < now, now), else_=kept)
        await conn.execute(
            statement.on_conflict_do_update(
                index_elements=[thread_read_cursors.c.thread_id, thread_read_cursors.c.account_id],
                set_={"read_at": later},
                where=thread_read_cursors.c.team_id == team_id,
            )
        )

    async def count_unread(
        self, conn: AsyncConnection, team_id: str, account_id: str, thread_ids: Sequence[str]
    ) -> dict[str, int]:
        """Per thread, how many of its turns ended after the member last read it (threads
        with none are left out)."""
        if not thread_ids:
            return {}
        cursor = thread_read_cursors
        joined = turns.outerjoin(
            cursor,
            sa.and_(
                cursor.c.team_id == team_id,
                cursor.c.thread_id == turns.c.thread_id,
                cursor.c.account_id == account_id,
            ),
        )
        result = await conn.execute(
            sa.select(turns.c.thread_id, sa.func.count())
            .select_from(joined)
            .where(
                turns.c.team_id == team_id,
                turns.c.thread_id.in_(list(thread_ids)),
                turns.c.ended_at.is_not(None),
                turns.c.ended_at > sa.func.coalesce(cursor.c.read_at, 0.0),
            )
            .group_by(turns.c.thread_id)
        )
        return {row[0]: int(row[1]) for row in result}

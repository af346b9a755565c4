"""Members' notifications, their email preferences and the team's mail server: the rows of
``notifications``, ``notification_preferences`` and ``smtp_settings``; every query names
the team."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import notification_preferences, notifications, smtp_settings

prefs = notification_preferences


@dataclass(frozen=True, slots=True)
class Notification:
    """One thing a member is told. ``title`` and ``body`` are words for a person."""

    id: str
    team_id: str
    account_id: str
    kind: str
    title: str
    body: str
    agent_id: str
    thread_id: str | None
    request_id: str | None
    routine_id: str | None
    run_id: str | None
    created_at: float
    read_at: float | None = None
    digest_pending: bool = False


@dataclass(frozen=True, slots=True)
class PreferencesRow:
    """A member's email choices: per kind ``off``, ``immediately`` or ``digest``."""

    team_id: str
    account_id: str
    email: str | None
    approval: str
    question: str
    run_finished: str
    run_failed: str
    updated_at: float
    digest_at: float | None = None


@dataclass(frozen=True, slots=True)
class SmtpRow:
    """A team's mail server. ``password`` is secret-box output; None means no password."""

    team_id: str
    host: str
    port: int
    tls_mode: str
    username: str | None
    password: bytes | None = field(repr=False)
    from_address: str
    updated_at: float


def _notification(row: Any) -> Notification:
    values = dict(row._mapping)
    values["digest_pending"] = bool(values["digest_pending"])
    return Notification(**values)


def _of_member(team_id: str, account_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (notifications.c.team_id == team_id, notifications.c.account_id == account_id)


class NotificationRepository:
    """Reads and writes of ``notifications``; every query names the team and the member."""

    async def add_notifications(self, conn: AsyncConnection, items: Sequence[Notification]) -> None:
        if not items:
            return
        await conn.execute(
            notifications.insert(),
            [
                {
                    "id": n.id,
                    "team_id": n.team_id,
                    "account_id": n.account_id,
                    "kind": n.kind,
                    "title": n.title,
                    "body": n.body,
                    "agent_id": n.agent_id,
                    "thread_id": n.thread_id,
                    "request_id": n.request_id,
                    "routine_id": n.routine_id,
                    "run_id": n.run_id,
                    "created_at": n.created_at,
                    "read_at": n.read_at,
                    "digest_pending": n.digest_pending,
                }
                for n in items
            ],
        )

    async def list_notifications(
        self,
        conn: AsyncConnection,
        team_id: str,
        account_id: str,
        *,
        unread_only: bool,
        limit: int,
        before: float | None = None,
        before_id: str | None = None,
    ) -> list[Notification]:
        """Newest first (by time, then id); ``before``: only those made before that time,
        or, with ``before_id``, at that time and after that one in this order."""
        query = sa.select(notifications).where(*_of_member(team_id, account_id))
        if unread_only:
            query = query.where(notifications.c.read_at.is_(None))
        if before is not None:
            earlier = notifications.c.created_at < before
            if before_id is not None:
                earlier = sa.or_(
                    earlier,
                    sa.and_(notifications.c.created_at == before, notifications.c.id < before_id),
                )
            query = query.where(earlier)
        query = query.order_by(notifications.c.created_at.desc(), notifications.c.id.desc())
        result = await conn.execute(query.limit(limit))
        return [_notification(row) for row in result]

    async def get_notification(
        self, conn: AsyncConnection, team_id: str, account_id: str, notification_id: str
    ) -> Notification | None:
        result = await conn.execute(
            sa.select(notifications).where(
                *_of_member(team_id, account_id), notifications.c.id == notification_id
            )
        )
        row = result.first()
        return None if row is None else _notification(row)

    async def remove_member(self, conn: AsyncConnection, team_id: str, account_id: str) -> None:
        """Forget a member's notifications (they left the team)."""
        await conn.execute(
            notifications.delete().where(
                notifications.c.team_id == team_id, notifications.c.account_id == account_id
            )
        )

    async def count_unread(self, conn: AsyncConnection, team_id: str, account_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count())
            .select_from(notifications)
            .where(*_of_member(team_id, account_id), notifications.c.read_at.is_(None))
        )
        return int(result.scalar_one())

    async def update_read(
        self,
        conn: AsyncConnection,
        team_id: str,
        account_id: str,
        read_at: float,
        notification_id: str | None = None,
    ) -> int:
        """Mark one notification read (or every unread one when ``notification_id`` is None);
        returns how many changed."""
        query = notifications.update().where(
            *_of_member(team_id, account_id), notifications.c.read_at.is_(None)
        )
        if notification_id is not None:
            query = query.where(notifications.c.id == notification_id)
        result = await conn.execute(query.values(read_at=read_at))
        return int(result.rowcount)

    async def list_digest_members(self, conn: AsyncConnection) -> list[tuple[str, str]]:
        """Every (team, member) with notifications waiting for a digest: the digest timer's
        one read across teams, which returns only ids; each read after it names the team."""
        result = await conn.execute(
            sa.select(notifications.c.team_id, notifications.c.account_id)
            .where(notifications.c.digest_pending.is_(True))
            .distinct()
        )
        return [(row.team_id, row.account_id) for row in result]

    async def list_digest_pending(
        self, conn: AsyncConnection, team_id: str, account_id: str
    ) -> list[Notification]:
        result = await conn.execute(
            sa.select(notifications)
            .where(*_of_member(team_id, account_id), notifications.c.digest_pending.is_(True))
            .order_by(notifications.c.created_at, notifications.c.id)
        )
        return [_notification(row) for row in result]

    async def update_digest_sent(
        self, conn: AsyncConnection, team_id: str, account_id: str, ids: Sequence[str]
    ) -> None:
        await conn.execute(
            notifications.update()
            .where(*_of_member(team_id, account_id), notifications.c.id.in_(list(ids)))
            .values(digest_pending=False)
        )


class PreferencesRepository:
    """Reads and writes of ``notification_preferences``; every query names the team."""

    async def get_preferences(
        self, conn: AsyncConnection, team_id: str, account_id: str
    ) -> PreferencesRow | None:
        result = await conn.execute(
            sa.select(prefs).where(prefs.c.team_id == team_id, prefs.c.account_id == account_id)
        )
        row = result.first()
        return None if row is None else PreferencesRow(**dict(row._mapping))

    async def list_preferences(
        self, conn: AsyncConnection, team_id: str, account_ids: Sequence[str]
    ) -> list[PreferencesRow]:
        result = await conn.execute(
            sa.select(prefs).where(
                prefs.c.team_id == team_id, prefs.c.account_id.in_(list(account_ids))
            )
        )
        return [PreferencesRow(**dict(row._mapping)) for row in result]

    async def list_every_member(self, conn: AsyncConnection) -> dict[tuple[str, str], float]:
        """(team, account) of every member's email choices, in every team, with when they
        were made (the host's link asks the hub which of them left)."""
        result = await conn.execute(
            sa.select(
                notification_preferences.c.team_id,
                notification_preferences.c.account_id,
                notification_preferences.c.updated_at,
            )
        )
        return {(row.team_id, row.account_id): row.updated_at for row in result}

    async def remove_member(self, conn: AsyncConnection, team_id: str, account_id: str) -> None:
        """Forget a member's choices (they left the team)."""
        await conn.execute(
            prefs.delete().where(prefs.c.team_id == team_id, prefs.c.account_id == account_id)
        )

    async def update_preferences(self, conn: AsyncConnection, row: PreferencesRow) -> None:
        """Write ``row`` as the member's choices, replacing any before."""
        await conn.execute(
            prefs.delete().where(
                prefs.c.team_id == row.team_id, prefs.c.account_id == row.account_id
            )
        )
        await conn.execute(
            prefs.insert().values(
                team_id=row.team_id,
                account_id=row.account_id,
                email=row.email,
                approval=row.approval,
                question=row.question,
                run_finished=row.run_finished,
                run_failed=row.run_failed,
                updated_at=row.updated_at,
                digest_at=row.digest_at,
            )
        )

    async def update_digest_at(
        self, conn: AsyncConnection, team_id: str, account_id: str, digest_at: float
    ) -> None:
        await conn.execute(
            prefs.update()
            .where(prefs.c.team_id == team_id, prefs.c.account_id == account_id)
            .values(digest_at=digest_at)
        )


class SmtpRepository:
    """Reads and writes of ``smtp_settings``; every query names the team."""

    async def get_smtp(self, conn: AsyncConnection, team_id: str) -> SmtpRow | None:
        result = await conn.execute(
            sa.select(smtp_settings).where(smtp_settings.c.team_id == team_id)
        )
        row = result.first()
        return None if row is None else SmtpRow(**dict(row._mapping))

    async def update_smtp(self, conn: AsyncConnection, row: SmtpRow) -> None:
        """Write ``row`` as the team's mail server, replacing any before."""
        await self.remove_smtp(conn, row.team_id)
        await conn.execute(
            smtp_settings.insert().values(
                team_id=row.team_id,
                host=row.host,
                port=row.port,
                tls_mode=row.tls_mode,
                username=row.username,
                password=row.password,
                from_address=row.from_address,
                updated_at=row.updated_at,
            )
        )

    async def remove_smtp(self, conn: AsyncConnection, team_id: str) -> None:
        await conn.execute(smtp_settings.delete().where(smtp_settings.c.team_id == team_id))

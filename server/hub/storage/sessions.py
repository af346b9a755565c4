"""Sign-in sessions. Only a hash of each token is stored."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database
from server.db.lookups import Lookup
from server.db.tables import sessions


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    account_id: str
    token_hash: str
    client: str
    user_agent: str
    created_at: float
    last_seen_at: float
    expires_at: float


_COLUMNS = (
    sessions.c.id,
    sessions.c.account_id,
    sessions.c.token_hash,
    sessions.c.client,
    sessions.c.user_agent,
    sessions.c.created_at,
    sessions.c.last_seen_at,
    sessions.c.expires_at,
)

_SESSION_BY_TOKEN_HASH = Lookup(
    sa.select(*_COLUMNS).where(sessions.c.token_hash == sa.bindparam("token_hash"))
)


class SessionRepository:
    """Reads and writes of ``sessions``."""

    async def get_session_by_token_hash(self, db: Database, token_hash: str) -> Session | None:
        """The session of a token hash, or None (a lookup)."""
        for row in await db.lookup(_SESSION_BY_TOKEN_HASH, token_hash=token_hash):
            return Session(*row)
        return None

    async def list_sessions(self, conn: AsyncConnection, account_id: str) -> list[Session]:
        result = await conn.execute(
            sa.select(*_COLUMNS)
            .where(sessions.c.account_id == account_id)
            .order_by(sessions.c.last_seen_at.desc())
        )
        return [Session(**row._mapping) for row in result]

    async def add_session(self, conn: AsyncConnection, session: Session) -> None:
        await conn.execute(
            sessions.insert().values(
                id=session.id,
                account_id=session.account_id,
                token_hash=session.token_hash,
                client=session.client,
                user_agent=session.user_agent,
                created_at=session.created_at,
                last_seen_at=session.last_seen_at,
                expires_at=session.expires_at,
            )
        )

    async def update_last_seen(self, conn: AsyncConnection, session_id: str, at: float) -> None:
        await conn.execute(
            sessions.update().where(sessions.c.id == session_id).values(last_seen_at=at)
        )

    async def remove_session(
        self, conn: AsyncConnection, account_id: str, session_id: str
    ) -> str | None:
        """Delete one session of an account; answer its token hash, or None if there was none."""
        result = await conn.execute(
            sessions.delete()
            .where(sessions.c.id == session_id, sessions.c.account_id == account_id)
            .returning(sessions.c.token_hash)
        )
        return result.scalar_one_or_none()

    async def remove_expired_sessions(
        self, conn: AsyncConnection, now: float, unused_since: float
    ) -> list[str]:
        """Delete every account's sessions past their end or unused since ``unused_since``
        (the sweep of all accounts at once); their token hashes."""
        result = await conn.execute(
            sessions.delete()
            .where(sa.or_(sessions.c.expires_at <= now, sessions.c.last_seen_at <= unused_since))
            .returning(sessions.c.token_hash)
        )
        return list(result.scalars())

    async def remove_other_sessions(
        self, conn: AsyncConnection, account_id: str, keep_session_id: str
    ) -> list[str]:
        result = await conn.execute(
            sessions.delete()
            .where(sessions.c.account_id == account_id, sessions.c.id != keep_session_id)
            .returning(sessions.c.token_hash)
        )
        return list(result.scalars())

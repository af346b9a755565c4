"""Personal access tokens and the audit list of their use. Only a hash of each token is kept."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database
from server.db.lookups import Lookup
from server.db.tables import access_token_uses, access_tokens


@dataclass(frozen=True, slots=True)
class AccessToken:
    id: str
    team_id: str
    host_id: str
    account_id: str
    name: str
    token_hash: str
    scope: str
    created_at: float
    expires_at: float
    last_used_at: float | None
    revoked_at: float | None


@dataclass(frozen=True, slots=True)
class AccessTokenUse:
    id: str
    team_id: str
    token_id: str
    account_id: str
    at: float
    tool: str
    outcome: str


_COLUMNS = (
    access_tokens.c.id,
    access_tokens.c.team_id,
    access_tokens.c.host_id,
    access_tokens.c.account_id,
    access_tokens.c.name,
    access_tokens.c.token_hash,
    access_tokens.c.scope,
    access_tokens.c.created_at,
    access_tokens.c.expires_at,
    access_tokens.c.last_used_at,
    access_tokens.c.revoked_at,
)
_USE_COLUMNS = (
    access_token_uses.c.id,
    access_token_uses.c.team_id,
    access_token_uses.c.token_id,
    access_token_uses.c.account_id,
    access_token_uses.c.at,
    access_token_uses.c.tool,
    access_token_uses.c.outcome,
)
_TOKEN_BY_HASH = Lookup(
    sa.select(*_COLUMNS).where(access_tokens.c.token_hash == sa.bindparam("token_hash"))
)


class AccessTokenRepository:
    """Reads and writes of ``access_tokens`` and ``access_token_uses``."""

    async def get_token_by_hash(self, db: Database, token_hash: str) -> AccessToken | None:
        """The token of a secret's hash, of whichever team (the bearer names no team: the
        row it finds says which)."""
        for row in await db.lookup(_TOKEN_BY_HASH, token_hash=token_hash):
            return AccessToken(*row)
        return None

    async def get_token(
        self, conn: AsyncConnection, team_id: str, token_id: str
    ) -> AccessToken | None:
        result = await conn.execute(
            sa.select(*_COLUMNS).where(
                access_tokens.c.team_id == team_id, access_tokens.c.id == token_id
            )
        )
        row = result.first()
        return None if row is None else AccessToken(**row._mapping)

    async def list_tokens(
        self, conn: AsyncConnection, team_id: str, account_id: str | None
    ) -> list[AccessToken]:
        """A member's tokens in a team (every member's when ``account_id`` is None), newest
        first."""
        query = sa.select(*_COLUMNS).where(access_tokens.c.team_id == team_id)
        if account_id is not None:
            query = query.where(access_tokens.c.account_id == account_id)
        result = await conn.execute(query.order_by(access_tokens.c.created_at.desc()))
        return [AccessToken(**row._mapping) for row in result]

    async def add_token(self, conn: AsyncConnection, token: AccessToken) -> None:
        await conn.execute(
            access_tokens.insert().values(
                id=token.id,
                team_id=token.team_id,
                host_id=token.host_id,
                account_id=token.account_id,
                name=token.name,
                token_hash=token.token_hash,
                scope=token.scope,
                created_at=token.created_at,
                expires_at=token.expires_at,
                last_used_at=token.last_used_at,
                revoked_at=token.revoked_at,
            )
        )

    async def update_revoked(
        self, conn: AsyncConnection, team_id: str, token_id: str, at: float
    ) -> bool:
        """Mark a token revoked (once); False when the team has no such token still live."""
        result = await conn.execute(
            access_tokens.update()
            .where(
                access_tokens.c.team_id == team_id,
                access_tokens.c.id == token_id,
                access_tokens.c.revoked_at.is_(None),
            )
            .values(revoked_at=at)
        )
        return bool(result.rowcount)

    async def update_member_tokens_revoked(
        self, conn: AsyncConnection, team_id: str, account_id: str, at: float
    ) -> list[str]:
        """Mark every live token of a member's in a team revoked at ``at``; their ids."""
        live = (
            access_tokens.c.team_id == team_id,
            access_tokens.c.account_id == account_id,
            access_tokens.c.revoked_at.is_(None),
            access_tokens.c.expires_at > at,
        )
        result = await conn.execute(sa.select(access_tokens.c.id).where(*live))
        token_ids = [str(row.id) for row in result]
        if token_ids:
            await conn.execute(
                access_tokens.update()
                .where(*live, access_tokens.c.id.in_(token_ids))
                .values(revoked_at=at)
            )
        return token_ids

    async def add_uses(self, conn: AsyncConnection, uses: list[AccessTokenUse]) -> None:
        """Keep tool calls made with tokens, and when each token was last used."""
        if not uses:
            return
        await conn.execute(
            access_token_uses.insert(),
            [
                {
                    "id": use.id,
                    "team_id": use.team_id,
                    "token_id": use.token_id,
                    "account_id": use.account_id,
                    "at": use.at,
                    "tool": use.tool,
                    "outcome": use.outcome,
                }
                for use in uses
            ],
        )
        last: dict[tuple[str, str], float] = {}
        for use in uses:
            key = (use.team_id, use.token_id)
            last[key] = max(use.at, last.get(key, use.at))
        for (team_id, token_id), at in last.items():
            await conn.execute(
                access_tokens.update()
                .where(access_tokens.c.team_id == team_id, access_tokens.c.id == token_id)
                .values(last_used_at=at)
            )

    async def list_uses(
        self,
        conn: AsyncConnection,
        team_id: str,
        *,
        account_id: str | None,
        token_id: str | None = None,
        limit: int = 200,
    ) -> list[AccessTokenUse]:
        """The newest uses in a team: a member's (every member's when ``account_id`` is
        None), of one token when ``token_id`` is given."""
        query = sa.select(*_USE_COLUMNS).where(access_token_uses.c.team_id == team_id)
        if account_id is not None:
            query = query.where(access_token_uses.c.account_id == account_id)
        if token_id is not None:
            query = query.where(access_token_uses.c.token_id == token_id)
        result = await conn.execute(query.order_by(access_token_uses.c.at.desc()).limit(limit))
        return [AccessTokenUse(**row._mapping) for row in result]

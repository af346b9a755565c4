"""Invitations to a team. Only a hash of each code is stored."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.roles import Role
from server.common.tokens import new_id
from server.db.tables import accounts, invitation_uses, invitations


@dataclass(frozen=True, slots=True)
class Invitation:
    id: str
    team_id: str
    code_hash: str
    role: Role
    created_by: str | None
    created_at: float
    expires_at: float
    max_uses: int
    uses: int
    revoked_at: float | None


@dataclass(frozen=True, slots=True)
class InvitationUse:
    """One person who joined with an invitation."""

    invitation_id: str
    account_id: str
    name: str
    used_at: float


_COLUMNS = (
    invitations.c.id,
    invitations.c.team_id,
    invitations.c.code_hash,
    invitations.c.role,
    invitations.c.created_by,
    invitations.c.created_at,
    invitations.c.expires_at,
    invitations.c.max_uses,
    invitations.c.uses,
    invitations.c.revoked_at,
)


def _invitation(row: sa.Row[Any]) -> Invitation:
    return Invitation(**{**row._mapping, "role": Role(row.role)})


class InvitationRepository:
    """Reads and writes of ``invitations``."""

    async def add_invitation(self, conn: AsyncConnection, invitation: Invitation) -> None:
        await conn.execute(
            invitations.insert().values(
                id=invitation.id,
                team_id=invitation.team_id,
                code_hash=invitation.code_hash,
                role=invitation.role.value,
                created_by=invitation.created_by,
                created_at=invitation.created_at,
                expires_at=invitation.expires_at,
                max_uses=invitation.max_uses,
                uses=invitation.uses,
                revoked_at=invitation.revoked_at,
            )
        )

    async def list_invitations(self, conn: AsyncConnection, team_id: str) -> list[Invitation]:
        result = await conn.execute(
            sa.select(*_COLUMNS)
            .where(invitations.c.team_id == team_id)
            .order_by(invitations.c.created_at.desc(), invitations.c.id)
        )
        return [_invitation(row) for row in result]

    async def add_invitation_use(
        self, conn: AsyncConnection, team_id: str, invitation_id: str, account_id: str, at: float
    ) -> None:
        await conn.execute(
            invitation_uses.insert().values(
                id=new_id(),
                team_id=team_id,
                invitation_id=invitation_id,
                account_id=account_id,
                used_at=at,
            )
        )

    async def list_invitation_uses(
        self, conn: AsyncConnection, team_id: str
    ) -> list[InvitationUse]:
        result = await conn.execute(
            sa.select(
                invitation_uses.c.invitation_id,
                invitation_uses.c.account_id,
                accounts.c.name,
                invitation_uses.c.used_at,
            )
            .join(accounts, accounts.c.id == invitation_uses.c.account_id)
            .where(invitation_uses.c.team_id == team_id)
            .order_by(invitation_uses.c.used_at, invitation_uses.c.id)
        )
        return [InvitationUse(row[0], row[1], row[2], row[3]) for row in result]

    async def get_invitation_by_code_hash(
        self, conn: AsyncConnection, code_hash: str
    ) -> Invitation | None:
        """Look an invitation up by its code: the one query that starts without a team."""
        result = await conn.execute(
            sa.select(*_COLUMNS).where(invitations.c.code_hash == code_hash)
        )
        row = result.first()
        return None if row is None else _invitation(row)

    async def use_invitation(
        self, conn: AsyncConnection, team_id: str, invitation_id: str, now: float
    ) -> bool:
        """Count one use if the invitation is still good; False if it is not."""
        result = await conn.execute(
            invitations.update()
            .where(
                invitations.c.team_id == team_id,
                invitations.c.id == invitation_id,
                invitations.c.revoked_at.is_(None),
                invitations.c.expires_at > now,
                invitations.c.uses < invitations.c.max_uses,
            )
            .values(uses=invitations.c.uses + 1)
        )
        return bool(result.rowcount)

    async def revoke_invitation(
        self, conn: AsyncConnection, team_id: str, invitation_id: str, now: float
    ) -> bool:
        result = await conn.execute(
            invitations.update()
            .where(
                invitations.c.team_id == team_id,
                invitations.c.id == invitation_id,
                invitations.c.revoked_at.is_(None),
            )
            .values(revoked_at=now)
        )
        return bool(result.rowcount)

    async def update_invitations_revoked(
        self,
        conn: AsyncConnection,
        team_id: str,
        *,
        created_by: str,
        roles: Collection[Role],
        now: float,
    ) -> int:
        """Revoke the open invitations ``created_by`` made for any of ``roles``; the count."""
        if not roles:
            return 0
        result = await conn.execute(
            invitations.update()
            .where(
                invitations.c.team_id == team_id,
                invitations.c.created_by == created_by,
                invitations.c.role.in_([role.value for role in roles]),
                invitations.c.revoked_at.is_(None),
            )
            .values(revoked_at=now)
        )
        return int(result.rowcount)

    async def invitation_exists(
        self, conn: AsyncConnection, team_id: str, invitation_id: str
    ) -> bool:
        result = await conn.execute(
            sa.select(invitations.c.id).where(
                invitations.c.team_id == team_id, invitations.c.id == invitation_id
            )
        )
        return result.first() is not None

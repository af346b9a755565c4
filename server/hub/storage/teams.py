"""Teams (the tenants) and memberships."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.roles import Role
from server.db.engine import Database
from server.db.lookups import Lookup
from server.db.tables import accounts, avatars, memberships, teams


@dataclass(frozen=True, slots=True)
class Team:
    id: str
    name: str
    created_at: float


@dataclass(frozen=True, slots=True)
class TeamWithRole:
    team: Team
    role: Role


@dataclass(frozen=True, slots=True)
class Member:
    account_id: str
    email: str
    name: str
    role: Role
    joined_at: float
    has_avatar: bool = False


_TEAM = sa.select(teams.c.id, teams.c.name, teams.c.created_at).where(
    teams.c.id == sa.bindparam("team_id")
)
_TEAM_LOOKUP = Lookup(_TEAM)
_TEAMS_OF = (
    sa.select(teams.c.id, teams.c.name, teams.c.created_at, memberships.c.role)
    .join(memberships, memberships.c.team_id == teams.c.id)
    .where(memberships.c.account_id == sa.bindparam("account_id"))
    .order_by(teams.c.created_at, teams.c.id)
)
_TEAMS_OF_LOOKUP = Lookup(_TEAMS_OF)


def _team_with_role(row: Sequence[Any]) -> TeamWithRole:
    return TeamWithRole(Team(row[0], row[1], row[2]), Role(row[3]))


class TeamRepository:
    """Reads and writes of ``teams`` and ``memberships``; each query names its team."""

    async def add_team(self, conn: AsyncConnection, team: Team) -> None:
        await conn.execute(
            teams.insert().values(id=team.id, name=team.name, created_at=team.created_at)
        )

    async def get_team(self, conn: AsyncConnection, team_id: str) -> Team | None:
        row = (await conn.execute(_TEAM, {"team_id": team_id})).first()
        return None if row is None else Team(row[0], row[1], row[2])

    async def lookup_team(self, db: Database, team_id: str) -> Team | None:
        """The team, or None (a lookup, outside any transaction)."""
        for row in await db.lookup(_TEAM_LOOKUP, team_id=team_id):
            return Team(*row)
        return None

    async def update_team_name(self, conn: AsyncConnection, team_id: str, name: str) -> None:
        await conn.execute(teams.update().where(teams.c.id == team_id).values(name=name))

    async def list_teams_of(self, conn: AsyncConnection, account_id: str) -> list[TeamWithRole]:
        result = await conn.execute(_TEAMS_OF, {"account_id": account_id})
        return [_team_with_role(row) for row in result]

    async def lookup_teams_of(self, db: Database, account_id: str) -> list[TeamWithRole]:
        """The account's teams with its role in each (a lookup, outside any transaction)."""
        return [
            _team_with_role(row) for row in await db.lookup(_TEAMS_OF_LOOKUP, account_id=account_id)
        ]

    async def get_role(self, conn: AsyncConnection, team_id: str, account_id: str) -> Role | None:
        result = await conn.execute(
            sa.select(memberships.c.role).where(
                memberships.c.team_id == team_id, memberships.c.account_id == account_id
            )
        )
        role = result.scalar_one_or_none()
        return None if role is None else Role(role)

    async def list_joined_at(
        self, conn: AsyncConnection, team_id: str, account_ids: list[str]
    ) -> dict[str, float]:
        """When the membership of each of ``account_ids`` that is a member of the team began."""
        result = await conn.execute(
            sa.select(memberships.c.account_id, memberships.c.joined_at).where(
                memberships.c.team_id == team_id, memberships.c.account_id.in_(account_ids)
            )
        )
        return {row.account_id: row.joined_at for row in result}

    async def add_membership(
        self, conn: AsyncConnection, team_id: str, account_id: str, role: Role, at: float
    ) -> None:
        await conn.execute(
            memberships.insert().values(
                team_id=team_id, account_id=account_id, role=role.value, joined_at=at
            )
        )

    async def update_role(
        self, conn: AsyncConnection, team_id: str, account_id: str, role: Role
    ) -> None:
        await conn.execute(
            memberships.update()
            .where(memberships.c.team_id == team_id, memberships.c.account_id == account_id)
            .values(role=role.value)
        )

    async def remove_membership(self, conn: AsyncConnection, team_id: str, account_id: str) -> None:
        await conn.execute(
            memberships.delete().where(
                memberships.c.team_id == team_id, memberships.c.account_id == account_id
            )
        )

    async def count_owners(self, conn: AsyncConnection, team_id: str) -> int:
        result = await conn.execute(
            sa.select(sa.func.count())
            .select_from(memberships)
            .where(memberships.c.team_id == team_id, memberships.c.role == Role.OWNER.value)
        )
        return int(result.scalar_one())

    async def list_members(self, conn: AsyncConnection, team_id: str) -> list[Member]:
        result = await conn.execute(
            sa.select(
                accounts.c.id,
                accounts.c.email,
                accounts.c.name,
                memberships.c.role,
                memberships.c.joined_at,
                avatars.c.account_id.is_not(None),
            )
            .join(accounts, accounts.c.id == memberships.c.account_id)
            .outerjoin(avatars, avatars.c.account_id == memberships.c.account_id)
            .where(memberships.c.team_id == team_id)
            .order_by(memberships.c.joined_at, accounts.c.id)
        )
        return [
            Member(row[0], row[1], row[2], Role(row[3]), row[4], bool(row[5])) for row in result
        ]

    async def lock_team(self, conn: AsyncConnection, team_id: str) -> None:
        """Hold the team's row until the transaction ends (PostgreSQL; SQLite writes are serial)."""
        if conn.dialect.name != "sqlite":
            await conn.execute(sa.select(teams.c.id).where(teams.c.id == team_id).with_for_update())

"""Hosts, their enrolment codes, and the hub's ticket key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import host_enrolments, hosts, hub_keys


@dataclass(frozen=True, slots=True)
class Host:
    id: str
    team_id: str | None
    name: str
    public_key: str
    builtin: bool
    created_at: float
    linked_at: float | None
    linked_by: str | None = None  # the hub instance holding the link


@dataclass(frozen=True, slots=True)
class Enrolment:
    id: str
    team_id: str
    name: str
    expires_at: float
    created_by: str | None = None  # None once its creator's account is gone


_COLUMNS = (
    hosts.c.id,
    hosts.c.team_id,
    hosts.c.name,
    hosts.c.public_key,
    hosts.c.builtin,
    hosts.c.created_at,
    hosts.c.linked_at,
    hosts.c.linked_by,
)


def _host(row: sa.Row[Any] | None) -> Host | None:
    return None if row is None else Host(**row._mapping)


def _serves(team_id: str) -> sa.ColumnElement[bool]:
    # The built-in host (team_id NULL) serves every team.
    return sa.or_(hosts.c.team_id == team_id, hosts.c.team_id.is_(None))


class HostRepository:
    """Reads and writes of ``hosts``, ``host_enrolments`` and ``hub_keys``."""

    async def list_team_hosts(self, conn: AsyncConnection, team_id: str) -> list[Host]:
        result = await conn.execute(
            sa.select(*_COLUMNS)
            .where(_serves(team_id))
            .order_by(hosts.c.builtin.desc(), hosts.c.created_at, hosts.c.id)
        )
        return [Host(**row._mapping) for row in result]

    async def get_team_host(self, conn: AsyncConnection, team_id: str, host_id: str) -> Host | None:
        result = await conn.execute(
            sa.select(*_COLUMNS).where(hosts.c.id == host_id, _serves(team_id))
        )
        return _host(result.first())

    async def get_host_for_link(self, conn: AsyncConnection, host_id: str) -> Host | None:
        """A host by id alone: the link authenticates before any team is in play."""
        result = await conn.execute(sa.select(*_COLUMNS).where(hosts.c.id == host_id))
        return _host(result.first())

    async def get_builtin_host(self, conn: AsyncConnection, public_key: str) -> Host | None:
        result = await conn.execute(
            sa.select(*_COLUMNS).where(hosts.c.public_key == public_key, hosts.c.builtin)
        )
        return _host(result.first())

    async def add_host(self, conn: AsyncConnection, host: Host) -> None:
        await conn.execute(
            hosts.insert().values(
                id=host.id,
                team_id=host.team_id,
                name=host.name,
                public_key=host.public_key,
                builtin=host.builtin,
                created_at=host.created_at,
                linked_at=host.linked_at,
            )
        )

    async def remove_team_host(self, conn: AsyncConnection, team_id: str, host_id: str) -> bool:
        """Remove a host the team enrolled (never the built-in one)."""
        result = await conn.execute(
            hosts.delete().where(hosts.c.id == host_id, hosts.c.team_id == team_id)
        )
        return bool(result.rowcount)

    async def add_link(
        self, conn: AsyncConnection, host_id: str, holder: str, linked_at: float
    ) -> None:
        """The hub instance ``holder`` holds the host's link from ``linked_at`` on (whoever
        held it before)."""
        await conn.execute(
            hosts.update()
            .where(hosts.c.id == host_id)
            .values(linked_at=linked_at, linked_by=holder)
        )

    async def remove_link(self, conn: AsyncConnection, host_id: str, holder: str) -> bool:
        """The link ``holder`` held ended; a link another instance holds now stays. True if
        the host was marked offline."""
        result = await conn.execute(
            hosts.update()
            .where(hosts.c.id == host_id, hosts.c.linked_by == holder)
            .values(linked_at=None, linked_by=None)
        )
        return bool(result.rowcount)

    async def remove_links(self, conn: AsyncConnection) -> None:
        """No host is linked any more (every row marked offline)."""
        await conn.execute(
            hosts.update()
            .where(sa.or_(hosts.c.linked_at.is_not(None), hosts.c.linked_by.is_not(None)))
            .values(linked_at=None, linked_by=None)
        )

    async def renew_links(
        self, conn: AsyncConnection, host_ids: list[str], holder: str, now: float
    ) -> None:
        """The links ``holder`` holds to these hosts are alive at ``now`` (only rows it still
        holds: a host that relinked through another instance is that one's to renew)."""
        await conn.execute(
            hosts.update()
            .where(hosts.c.id.in_(host_ids), hosts.c.linked_by == holder)
            .values(linked_at=now)
        )

    async def add_enrolment(
        self,
        conn: AsyncConnection,
        enrolment: Enrolment,
        code_hash: str,
        created_by: str,
        at: float,
    ) -> None:
        await conn.execute(
            host_enrolments.insert().values(
                id=enrolment.id,
                team_id=enrolment.team_id,
                code_hash=code_hash,
                name=enrolment.name,
                created_by=created_by,
                created_at=at,
                expires_at=enrolment.expires_at,
            )
        )

    async def take_enrolment(self, conn: AsyncConnection, code_hash: str) -> Enrolment | None:
        """Spend an enrolment code: the one lookup that starts from a code, not a team."""
        result = await conn.execute(
            host_enrolments.delete()
            .where(host_enrolments.c.code_hash == code_hash)
            .returning(
                host_enrolments.c.id,
                host_enrolments.c.team_id,
                host_enrolments.c.name,
                host_enrolments.c.expires_at,
                host_enrolments.c.created_by,
            )
        )
        row = result.first()
        return None if row is None else Enrolment(**row._mapping)

    async def remove_member_enrolments(
        self, conn: AsyncConnection, team_id: str, created_by: str
    ) -> None:
        """Drop the open enrolment codes a member made in the team."""
        await conn.execute(
            host_enrolments.delete().where(
                host_enrolments.c.team_id == team_id, host_enrolments.c.created_by == created_by
            )
        )

    async def get_hub_key(self, conn: AsyncConnection) -> str | None:
        result = await conn.execute(
            sa.select(hub_keys.c.private_key).where(hub_keys.c.id == "tickets")
        )
        return result.scalar_one_or_none()

    async def add_hub_key(self, conn: AsyncConnection, private_key: str, at: float) -> None:
        await conn.execute(
            hub_keys.insert().values(id="tickets", private_key=private_key, created_at=at)
        )

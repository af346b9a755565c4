"""Browser proxies and the profiles that use them, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import browser_profile_proxies, browser_profiles, browser_proxies


@dataclass(frozen=True, slots=True)
class ProxyRow:
    """One stored proxy. ``password`` is secret-box output; a computer has no address."""

    id: str
    team_id: str
    kind: str
    scheme: str | None
    host: str | None
    port: int | None
    username: str | None
    password: bytes | None = field(repr=False)
    member_id: str | None
    label: str | None
    created_at: float
    updated_at: float


class ProxyRepository:
    """Reads and writes of ``browser_proxies`` and ``browser_profile_proxies``; every one
    names the team."""

    async def list_proxies(self, conn: AsyncConnection, team_id: str) -> list[ProxyRow]:
        result = await conn.execute(
            sa.select(browser_proxies)
            .where(browser_proxies.c.team_id == team_id)
            .order_by(browser_proxies.c.created_at, browser_proxies.c.id)
        )
        return [ProxyRow(**row._mapping) for row in result]

    async def get_proxy(
        self, conn: AsyncConnection, team_id: str, proxy_id: str
    ) -> ProxyRow | None:
        result = await conn.execute(
            sa.select(browser_proxies).where(
                browser_proxies.c.team_id == team_id, browser_proxies.c.id == proxy_id
            )
        )
        row = result.first()
        return None if row is None else ProxyRow(**row._mapping)

    async def get_computer(
        self, conn: AsyncConnection, team_id: str, member_id: str
    ) -> ProxyRow | None:
        result = await conn.execute(
            sa.select(browser_proxies).where(
                browser_proxies.c.team_id == team_id,
                browser_proxies.c.kind == "computer",
                browser_proxies.c.member_id == member_id,
            )
        )
        row = result.first()
        return None if row is None else ProxyRow(**row._mapping)

    async def add_proxy(self, conn: AsyncConnection, row: ProxyRow) -> None:
        await conn.execute(
            browser_proxies.insert().values(
                id=row.id,
                team_id=row.team_id,
                kind=row.kind,
                scheme=row.scheme,
                host=row.host,
                port=row.port,
                username=row.username,
                password=row.password,
                member_id=row.member_id,
                label=row.label,
                created_at=row.created_at,
                updated_at=row.updated_at,
            )
        )

    async def update_proxy(
        self, conn: AsyncConnection, team_id: str, proxy_id: str, **values: Any
    ) -> None:
        """Set the named columns (``scheme``, ``host``, ``port``, ``username``, ``password``,
        ``updated_at``) of one proxy."""
        await conn.execute(
            browser_proxies.update()
            .where(browser_proxies.c.team_id == team_id, browser_proxies.c.id == proxy_id)
            .values(**values)
        )

    async def remove_proxy(self, conn: AsyncConnection, team_id: str, proxy_id: str) -> None:
        """Forget the proxy; the profiles that used it are Automatic again."""
        await conn.execute(
            browser_profile_proxies.delete().where(
                browser_profile_proxies.c.team_id == team_id,
                browser_profile_proxies.c.proxy_id == proxy_id,
            )
        )
        await conn.execute(
            browser_proxies.delete().where(
                browser_proxies.c.team_id == team_id, browser_proxies.c.id == proxy_id
            )
        )

    async def profile_choices(self, conn: AsyncConnection, team_id: str) -> dict[str, str]:
        """``{profile id: proxy id}`` of the team's profiles that use a proxy."""
        result = await conn.execute(
            sa.select(browser_profile_proxies.c.profile_id, browser_profile_proxies.c.proxy_id)
            .where(browser_profile_proxies.c.team_id == team_id)
            .order_by(browser_profile_proxies.c.profile_id)
        )
        return {row[0]: row[1] for row in result}

    async def get_profile_proxy(
        self, conn: AsyncConnection, team_id: str, profile_id: str
    ) -> ProxyRow | None:
        result = await conn.execute(
            sa.select(browser_proxies)
            .join(
                browser_profile_proxies,
                browser_profile_proxies.c.proxy_id == browser_proxies.c.id,
            )
            .where(
                browser_profile_proxies.c.team_id == team_id,
                browser_proxies.c.team_id == team_id,
                browser_profile_proxies.c.profile_id == profile_id,
            )
        )
        row = result.first()
        return None if row is None else ProxyRow(**row._mapping)

    async def set_profile_proxy(
        self, conn: AsyncConnection, team_id: str, profile_id: str, proxy_id: str | None
    ) -> None:
        """The profile uses ``proxy_id`` from now on; None makes it Automatic. Only a profile
        and a proxy of the team are joined: another team's ids record nothing."""
        await conn.execute(
            browser_profile_proxies.delete().where(
                browser_profile_proxies.c.team_id == team_id,
                browser_profile_proxies.c.profile_id == profile_id,
            )
        )
        if proxy_id is not None:
            both_of_team = (
                sa.select(browser_profiles.c.id, browser_profiles.c.team_id, browser_proxies.c.id)
                .select_from(
                    browser_profiles.join(
                        browser_proxies, browser_proxies.c.team_id == browser_profiles.c.team_id
                    )
                )
                .where(
                    browser_profiles.c.team_id == team_id,
                    browser_profiles.c.id == profile_id,
                    browser_proxies.c.team_id == team_id,
                    browser_proxies.c.id == proxy_id,
                )
            )
            await conn.execute(
                browser_profile_proxies.insert().from_select(
                    ["profile_id", "team_id", "proxy_id"], both_of_team
                )
            )

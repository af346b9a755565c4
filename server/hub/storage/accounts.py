"""Accounts and their avatars."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import accounts, avatars


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    email: str
    name: str
    password_hash: str
    created_at: float


@dataclass(frozen=True, slots=True)
class Avatar:
    content_type: str
    data: bytes
    updated_at: float


def _account(row: sa.Row[Any] | None) -> Account | None:
    return None if row is None else Account(**row._mapping)


_COLUMNS = (
    accounts.c.id,
    accounts.c.email,
    accounts.c.name,
    accounts.c.password_hash,
    accounts.c.created_at,
)
# Built once: a statement object keeps its cache key, so each request skips building the
# select and keying SQLAlchemy's compiled cache; the account comes with its avatar flag in
# one round trip.
_ACCOUNT_WITH_AVATAR_FLAG = sa.select(
    *_COLUMNS,
    sa.exists().where(avatars.c.account_id == accounts.c.id).label("has_avatar"),
).where(accounts.c.id == sa.bindparam("account_id"))


class AccountRepository:
    """Reads and writes of ``accounts`` and ``avatars``."""

    async def get_account_with_avatar_flag(
        self, conn: AsyncConnection, account_id: str
    ) -> tuple[Account, bool] | None:
        """The account and whether it has an avatar, or None."""
        result = await conn.execute(_ACCOUNT_WITH_AVATAR_FLAG, {"account_id": account_id})
        row = result.first()
        if row is None:
            return None
        fields = dict(row._mapping)
        has_avatar = bool(fields.pop("has_avatar"))
        return Account(**fields), has_avatar

    async def get_account_by_email(self, conn: AsyncConnection, email: str) -> Account | None:
        result = await conn.execute(sa.select(*_COLUMNS).where(accounts.c.email == email))
        return _account(result.first())

    async def count_accounts(self, conn: AsyncConnection) -> int:
        return int(
            (await conn.execute(sa.select(sa.func.count()).select_from(accounts))).scalar_one()
        )

    async def add_account(self, conn: AsyncConnection, account: Account) -> None:
        await conn.execute(
            accounts.insert().values(
                id=account.id,
                email=account.email,
                name=account.name,
                password_hash=account.password_hash,
                created_at=account.created_at,
            )
        )

    async def update_name(self, conn: AsyncConnection, account_id: str, name: str) -> None:
        await conn.execute(accounts.update().where(accounts.c.id == account_id).values(name=name))

    async def update_password_hash(
        self, conn: AsyncConnection, account_id: str, password_hash: str
    ) -> None:
        await conn.execute(
            accounts.update().where(accounts.c.id == account_id).values(password_hash=password_hash)
        )

    async def get_avatar(self, conn: AsyncConnection, account_id: str) -> Avatar | None:
        result = await conn.execute(
            sa.select(avatars.c.content_type, avatars.c.data, avatars.c.updated_at).where(
                avatars.c.account_id == account_id
            )
        )
        row = result.first()
        return None if row is None else Avatar(row[0], bytes(row[1]), row[2])

    async def update_avatar(self, conn: AsyncConnection, account_id: str, avatar: Avatar) -> None:
        await conn.execute(avatars.delete().where(avatars.c.account_id == account_id))
        await conn.execute(
            avatars.insert().values(
                account_id=account_id,
                content_type=avatar.content_type,
                data=avatar.data,
                updated_at=avatar.updated_at,
            )
        )

    async def remove_avatar(self, conn: AsyncConnection, account_id: str) -> bool:
        result = await conn.execute(avatars.delete().where(avatars.c.account_id == account_id))
        return bool(result.rowcount)

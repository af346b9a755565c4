"""Accounts and their avatars."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database
from server.db.lookups import Lookup
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
# Lookups are built and compiled once; the account comes with its avatar flag in one round trip.
_ACCOUNT_WITH_AVATAR_FLAG = Lookup(
    sa.select(
        *_COLUMNS,
        sa.exists().where(avatars.c.account_id == accounts.c.id).label("has_avatar"),
    ).where(accounts.c.id == sa.bindparam("account_id"))
)
_ACCOUNT_BY_EMAIL = sa.select(*_COLUMNS).where(accounts.c.email == sa.bindparam("email"))
_ACCOUNT_BY_EMAIL_LOOKUP = Lookup(_ACCOUNT_BY_EMAIL)


class AccountRepository:
    """Reads and writes of ``accounts`` and ``avatars``."""

    async def get_account_with_avatar_flag(
        self, db: Database, account_id: str
    ) -> tuple[Account, bool] | None:
        """The account and whether it has an avatar, or None (a lookup)."""
        rows = await db.lookup(_ACCOUNT_WITH_AVATAR_FLAG, account_id=account_id)
        for *fields, has_avatar in rows:
            return Account(*fields), bool(has_avatar)
        return None

    async def get_account_by_email(self, conn: AsyncConnection, email: str) -> Account | None:
        result = await conn.execute(_ACCOUNT_BY_EMAIL, {"email": email})
        return _account(result.first())

    async def lookup_account_by_email(self, db: Database, email: str) -> Account | None:
        """The account with this email, or None (a lookup, outside any transaction)."""
        for row in await db.lookup(_ACCOUNT_BY_EMAIL_LOOKUP, email=email):
            return Account(*row)
        return None

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

"""The whole database as plain data, to show that a refused request wrote nothing."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from server.db.engine import Database
from server.db.tables import metadata


async def database_snapshot(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    snapshot: dict[str, list[tuple[Any, ...]]] = {}
    async with db.read() as conn:
        for table in metadata.sorted_tables:
            rows = await conn.execute(sa.select(table))
            snapshot[table.name] = sorted((tuple(row) for row in rows), key=repr)
    return snapshot

"""Alembic environment: migrations run inside the connection that Crewhost hands over.

``crewhost admin migrate`` and every start apply them through
``server.db.engine.Database.migrate``; the ``alembic`` command works too with
``-x url=...`` for writing new revisions.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from server.db.tables import metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_from_url(url: str) -> None:
    async def main() -> None:
        engine = create_async_engine(url, hide_parameters=True)
        async with engine.begin() as connection:
            await connection.run_sync(_run)
        await engine.dispose()

    asyncio.run(main())


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    _run_from_url(context.get_x_argument(as_dictionary=True)["url"])

"""The Alembic history builds exactly the schema the code declares, on both engines."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from server.db.tables import metadata
from tests.support.databases import ScratchDatabase


async def test_migrations_match_the_tables_and_run_twice(database: ScratchDatabase) -> None:
    db = database.open()
    try:
        await db.migrate()
        await db.migrate()  # a second start finds nothing to do
        async with db.read() as conn:
            diff = await conn.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), metadata)
            )
        assert diff == []
    finally:
        await db.close()

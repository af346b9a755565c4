"""The Alembic history builds exactly the schema the code declares, on both engines, and
keeps the rows of every earlier revision on the way to it."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from server.db.engine import ALEMBIC_DIR, DatabaseTooNew
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


def history() -> list[str]:
    """Every revision of the one history, oldest first."""
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    scripts = ScriptDirectory.from_config(config)
    return [script.revision for script in reversed(list(scripts.walk_revisions()))]


def _value(table: sa.Table, column: sa.Column[Any], row: int) -> Any:
    """A plausible value of ``column``'s type for row number ``row`` (unique per row)."""
    kind = column.type
    if isinstance(kind, sa.Boolean):
        return row % 2 == 0
    if isinstance(kind, sa.Integer):
        return row + 1
    if isinstance(kind, sa.Float | sa.Numeric):
        return 1_760_000_000.0 + row
    if isinstance(kind, sa.LargeBinary):
        return bytes([row]) * 16
    if isinstance(kind, sa.JSON):
        return [f"{column.name}-{row}"]
    if isinstance(kind, sa.Text):
        return "{}"  # Text columns hold JSON documents or free text: both read this
    length = getattr(kind, "length", None) or 64
    if column.name == "email":
        text = f"person{row}@{table.name}.example.com"
    elif column.name.endswith("id") or column.name == "id":
        text = f"{table.name[:12]}{column.name[:8]}{row:04d}".ljust(32, "0")
    else:
        text = f"{column.name} {row}"
    return text[:length]


def tables_as_they_are(connection: sa.Connection) -> sa.MetaData:
    """The database's tables as its revision made them: their columns, primary keys and
    foreign keys, all that rows are made from (a third of ``MetaData.reflect``'s CPU,
    which reads indexes and constraints too)."""
    inspector = sa.inspect(connection)
    keys = inspector.get_multi_pk_constraint()
    foreign = inspector.get_multi_foreign_keys()
    tables = sa.MetaData()
    for (schema, name), columns in inspector.get_multi_columns().items():
        primary = set(keys[(schema, name)]["constrained_columns"])
        sa.Table(
            name,
            tables,
            *(sa.Column(c["name"], c["type"], primary_key=c["name"] in primary) for c in columns),
            *(
                sa.ForeignKeyConstraint(
                    fk["constrained_columns"],
                    [f"{fk['referred_table']}.{column}" for column in fk["referred_columns"]],
                )
                for fk in foreign[(schema, name)]
            ),
        )
    return tables


def realistic_rows(
    connection: sa.Connection, per_table: int, first: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """Rows for every table the database has at its revision, foreign keys pointing at rows
    made first, so later tables are covered without listing them. Row numbers start at
    ``first``, so that rows made at another revision are other rows."""
    reflected = tables_as_they_are(connection)
    made: dict[str, list[dict[str, Any]]] = {}
    for table in reflected.sorted_tables:
        if table.name == "alembic_version":
            continue
        rows = []
        for number in range(first, first + per_table):
            row = {column.name: _value(table, column, number) for column in table.columns}
            for key in table.foreign_keys:
                parent = made.get(key.column.table.name)
                if parent:
                    row[key.parent.name] = parent[number % len(parent)][key.column.name]
            rows.append(row)
        connection.execute(table.insert(), rows)
        made[table.name] = rows
    return made


ROWS_PER_TABLE = 3


async def test_rows_made_at_every_earlier_revision_survive_the_upgrade_to_head(
    database: ScratchDatabase,
) -> None:
    """One walk up the history: at each revision rows are made in every table it has, and
    the next steps carry them, with the rows of the revisions before, to head; there every
    row made on the way is read back as it was made (the columns head still has)."""
    revisions = history()
    made_at: dict[str, dict[str, list[dict[str, Any]]]] = {}
    db = database.open()
    try:
        for number, revision in enumerate(revisions[:-1]):
            await db.migrate(to=revision)
            first = number * ROWS_PER_TABLE
            async with db.write() as conn:
                made_at[revision] = await conn.run_sync(realistic_rows, ROWS_PER_TABLE, first)
            assert made_at[revision], revision
        await db.migrate()
        async with db.read() as conn:
            found: dict[str, dict[tuple[Any, ...], Any]] = {}
            for revision, made in made_at.items():
                for name, rows in made.items():
                    table = metadata.tables.get(name)
                    assert table is not None, f"{name} (made at {revision}) is gone at head"
                    keys = [c.name for c in table.primary_key.columns]
                    if name not in found:
                        found[name] = {
                            tuple(row[k] for k in keys): row
                            for row in (await conn.execute(sa.select(table))).mappings()
                        }
                    for row in rows:
                        there = found[name].get(tuple(row[k] for k in keys))
                        assert there is not None, f"a row of {name} made at {revision} is gone"
                        kept = {column: row[column] for column in row if column in table.c}
                        assert {column: there[column] for column in kept} == kept, (
                            f"a row of {name} made at {revision} changed"
                        )
    finally:
        await db.close()


async def test_a_database_newer_than_the_code_is_refused_untouched(
    database: ScratchDatabase,
) -> None:
    db = database.open()
    try:
        await db.migrate(to=history()[0])
        async with db.write() as conn:
            await conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999_future'"))
        with pytest.raises(DatabaseTooNew) as refused:
            await db.migrate()
        assert "revision 9999_future, which this Crewhost does not know" in refused.value.message
        async with db.read() as conn:
            tables = await conn.run_sync(lambda sync: set(sa.inspect(sync).get_table_names()))
            version = (
                await conn.execute(sa.text("SELECT version_num FROM alembic_version"))
            ).scalar()
        assert version == "9999_future"
        assert "agents" not in tables  # no later step ran
    finally:
        await db.close()

"""Lookups: small indexed reads on the request path, run with as little machinery as they need.

A ``Lookup`` is a ``select`` built once at import and compiled once per dialect.
``Database.lookup()`` runs it straight through the driver: on a SQLite file, one
``sqlite3`` connection on the event loop's own thread (a WAL reader never waits
for the writer, and a lookup by key takes microseconds, so no thread hop is worth
its cost); on PostgreSQL, an asyncpg pool of its own, whose driver caches the
prepared statement per connection. Going through SQLAlchemy's engine instead
costs a pool checkout, a greenlet switch per driver call, result metadata and a
rollback at check-in (on PostgreSQL also a ping and a ``BEGIN``, each a round
trip): about 40 times the SQLite statement itself.

What this asks of a lookup: a read by key of a few rows, never a scan (on SQLite
it holds the loop while it runs), and columns whose values the drivers already
return as Python wants them (strings, integers, floats, and booleans, which
SQLite returns as integers); anything else is refused when the lookup is built.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

# A SQLite reader waits only while another connection rebuilds the WAL index; never wait long
# on the loop's thread.
READER_BUSY_TIMEOUT_MS = 200

_PLAIN_TYPES = (sa.String, sa.Integer, sa.Boolean)

Row = tuple[Any, ...]


def _check_plain(what: str, type_: sa.types.TypeEngine[Any]) -> None:
    plain = isinstance(type_, _PLAIN_TYPES) or (isinstance(type_, sa.Float) and not type_.asdecimal)
    if not plain or isinstance(type_, sa.Enum | sa.types.TypeDecorator):
        raise TypeError(f"a lookup reads plain values only; {what} is {type_!r}")


@dataclass(frozen=True, slots=True)
class CompiledLookup:
    """A lookup's SQL for one dialect and the order its parameters go in."""

    sql: str
    parameters: tuple[str, ...]

    def arguments(self, values: Mapping[str, Any]) -> list[Any]:
        if values.keys() != set(self.parameters):
            raise TypeError(
                f"the lookup takes {sorted(self.parameters)}, it was given {sorted(values)}"
            )
        return [values[name] for name in self.parameters]


class Lookup:
    """A select by key, built once; ``Database.lookup(query, **parameters)`` runs it."""

    def __init__(self, statement: sa.Select[Any]) -> None:
        self.statement = statement
        for column in statement.selected_columns:
            _check_plain(f"column {column.name!r}", column.type)
        # Which columns come back as SQLite integers and must become booleans.
        self._booleans = tuple(
            index
            for index, column in enumerate(statement.selected_columns)
            if isinstance(column.type, sa.Boolean)
        )
        self._compiled: dict[str, CompiledLookup] = {}

    def compiled(self, dialect: Dialect) -> CompiledLookup:
        found = self._compiled.get(dialect.name)
        if found is None:
            compiled = self.statement.compile(dialect=dialect)
            for name, bind in compiled.binds.items():
                if bind.expanding or bind.literal_execute:
                    raise TypeError(f"a lookup takes one value per parameter; {name!r} expands")
                _check_plain(f"parameter {name!r}", bind.type)
            found = CompiledLookup(str(compiled), tuple(compiled.positiontup or ()))
            self._compiled[dialect.name] = found
        return found

    def rows(self, fetched: Sequence[Sequence[Any]]) -> list[Row]:
        """Driver rows as plain tuples, SQLite's 0 and 1 made booleans where the column is one."""
        if not self._booleans:
            return [tuple(row) for row in fetched]
        made = []
        for row in fetched:
            values = list(row)
            for index in self._booleans:
                if values[index] is not None:
                    values[index] = bool(values[index])
            made.append(tuple(values))
        return made


def open_sqlite_reader(path: Path) -> sqlite3.Connection:
    """A query-only SQLite connection in autocommit mode: each lookup reads the newest commit."""
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA query_only=ON")
    connection.execute(f"PRAGMA busy_timeout={READER_BUSY_TIMEOUT_MS}")
    return connection


def run_on_sqlite(
    connection: sqlite3.Connection, compiled: CompiledLookup, arguments: list[Any]
) -> list[Any]:
    """Every row at once: a statement read to its end is reset, so no read snapshot stays open."""
    return connection.execute(compiled.sql, arguments).fetchall()


async def keep_as_is(_connection: Any) -> None:
    """Lookups change no session state, so a connection goes back to the pool without a reset.

    asyncpg's own reset (unlock, close cursors, unlisten, reset settings) is a round
    trip of its own on every release.
    """

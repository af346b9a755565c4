"""Before a start or ``admin migrate`` changes a SQLite database's schema, a copy of it is
kept beside it (the newest three), and that copy is a way back."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from server import admin
from server.config import Settings, load_settings
from server.db.engine import Database
from tests.support.serving import run, serving

pytestmark = pytest.mark.timeout(240)

OLD = "0001"


def settings_of(folder: Path, **overrides: object) -> Settings:
    # Cheap password hashing: the hub built to migrate hashes a decoy on the event loop.
    cheap = {
        "security.password_hash_time_cost": 1,
        "security.password_hash_memory_kib": 1024,
        "security.password_hash_parallelism": 1,
    }
    return load_settings(env={}, overrides={"data_dir": str(folder), **cheap, **overrides})


def copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("crewhost.db.before-*"), key=lambda path: path.name[-24:])


def facts(database: Path) -> tuple[str, list[tuple[str, str]], str]:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        revision = connection.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        teams = connection.execute("SELECT id, name FROM teams").fetchall()
        verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        connection.close()
    return revision, teams, verdict


def go_back_to(copy: Path, database: Path) -> None:
    """What docs/operations.md says to do, with the server stopped."""
    for name in ("crewhost.db", "crewhost.db-wal", "crewhost.db-shm"):
        (database.parent / name).unlink(missing_ok=True)
    database.write_bytes(copy.read_bytes())
    database.chmod(0o600)


async def old_database(folder: Path) -> Path:
    db = Database(settings_of(folder).database_url)
    try:
        await db.migrate(to=OLD)
    finally:
        await db.close()
    database = folder / "crewhost.db"
    connection = sqlite3.connect(database)
    with connection:
        connection.execute("INSERT INTO teams (id, name, created_at) VALUES ('t1', 'Old', 1.0)")
    connection.close()
    return database


async def test_a_migration_keeps_the_database_from_before_it(tmp_path: Path) -> None:
    database = await old_database(tmp_path)
    code, out, err = await run("admin", "migrate", "--data-dir", str(tmp_path))
    assert code == 0, err
    [copy] = copies(tmp_path)
    assert out == (
        f"kept a copy of the database from before the migration: {copy}\ndatabase is up to date\n"
    )
    assert copy.name.startswith(f"crewhost.db.before-{OLD}-")
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert facts(copy) == (OLD, [("t1", "Old")], "ok")
    assert facts(database)[0] != OLD

    # Up to date: nothing to keep.
    code, out, err = await run("admin", "migrate", "--data-dir", str(tmp_path))
    assert (code, out) == (0, "database is up to date\n"), err
    assert copies(tmp_path) == [copy]

    # Going back and migrating again, three times more: the newest three are kept.
    made = [copy]
    for _ in range(3):
        await asyncio.to_thread(go_back_to, made[-1], database)
        assert facts(database) == (OLD, [("t1", "Old")], "ok")
        kept = await admin.migrate(settings_of(tmp_path))
        assert kept is not None
        made.append(kept)
    assert copies(tmp_path) == made[1:]
    assert all(facts(path) == (OLD, [("t1", "Old")], "ok") for path in made[1:])

    # Turned off: none is made, and the ones there stay.
    await asyncio.to_thread(go_back_to, made[-1], database)
    off = settings_of(tmp_path, **{"database.sqlite_migration_copies": 0})
    assert await admin.migrate(off) is None
    assert copies(tmp_path) == made[1:]
    assert facts(database)[0] != OLD
    assert not [name for name in os.listdir(tmp_path) if name.endswith("-journal")]


async def test_a_start_keeps_the_database_from_before_its_migration(tmp_path: Path) -> None:
    await old_database(tmp_path)
    async with serving(tmp_path, expect_setup=False):
        [copy] = copies(tmp_path)
    assert facts(copy) == (OLD, [("t1", "Old")], "ok")

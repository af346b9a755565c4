"""Backups of a data folder, sealed with a passphrase, and their restore into an empty folder.

A backup holds a consistent snapshot of the database (SQLite's online backup API, or
``pg_dump`` for PostgreSQL), the key ring and host identity key, the host's link state,
the agents' workspaces and each team's saved tabs. Chromium's own profile folders
(cookies, caches) are left out: Chromium rewrites them while it runs, so a copy is not
consistent, and they are large; members sign in to sites again after a restore.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, ClassVar

from sqlalchemy.engine import make_url

from server.common.crypto.archive import (
    ArchiveError,
    ArchivePassphraseMissing,
    open_stream,
    seal_stream,
)
from server.common.crypto.ring import KeyRingFile
from server.common.data_folder import FILE_MODE, FOLDER_MODE, private_folder
from server.common.errors import CrewhostError
from server.db.tables import metadata

MANIFEST = "manifest.json"
SQLITE_MEMBER = "crewhost.db"
POSTGRES_MEMBER = "postgres.sql"
FILES = "files/"
BACKUP_FORMAT = "crewhost-backup"
# Files of a data folder that a backup never copies as they are.
_DATABASE_FILES = ("crewhost.db", "crewhost.db-wal", "crewhost.db-shm", "crewhost.db-journal")


class BackupRefused(CrewhostError):
    """A backup or restore that cannot go ahead as asked."""

    status: ClassVar[int] = 400
    code: ClassVar[str] = "backupRefused"


class RestoreTargetNotEmpty(BackupRefused):
    code: ClassVar[str] = "restoreTargetNotEmpty"


class PgDumpMissing(BackupRefused):
    code: ClassVar[str] = "pgDumpMissing"


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What a backup holds: the database kind, its revision and row counts, and its files."""

    database: str
    revision: str | None
    rows: dict[str, int]
    files: int


def _kept(data_dir: Path, path: Path) -> bool:
    """Whether a data folder file goes into a backup (see the module's docstring)."""
    relative = path.relative_to(data_dir)
    if path.name.endswith(".lock") or str(relative) in _DATABASE_FILES:
        return False
    parts = relative.parts
    # browser/<team>/tabs.json is kept; browser/<team>/<partition>/… is Chromium's.
    return parts[0] != "browser" or len(parts) == 3


def _data_files(data_dir: Path) -> Iterator[Path]:
    for folder, folders, files in os.walk(data_dir):
        folders.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if not path.is_symlink() and _kept(data_dir, path):
                yield path


def _sqlite_snapshot(database: Path, target: Path) -> None:
    """A consistent copy of a live SQLite database, taken in one step of the backup API."""
    if not database.is_file():
        raise BackupRefused(f"there is no database at {database}: nothing to back up")
    source = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
    finally:
        copy.close()
        source.close()


def _sqlite_facts(database: Path) -> tuple[str | None, dict[str, int]]:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        present = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        revision = None
        if "alembic_version" in present:
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        rows: dict[str, int] = {}
        for table in metadata.sorted_tables:
            if table.name in present:  # names from our own metadata, never from input
                query = f'SELECT count(*) FROM "{table.name}"'  # noqa: S608
                rows[table.name] = connection.execute(query).fetchone()[0]
        return revision, rows
    finally:
        connection.close()


def _libpq_environment(url: str) -> dict[str, str]:
    """The connection as libpq's variables: a password never shows in the process list."""
    parsed = make_url(url)
    named = {
        "PGHOST": parsed.host,
        "PGPORT": str(parsed.port) if parsed.port else None,
        "PGUSER": parsed.username,
        "PGPASSWORD": parsed.password,
        "PGDATABASE": parsed.database,
    }
    return {name: str(value) for name, value in named.items() if value}


def _pg_dump(url: str, target: Path) -> None:
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise PgDumpMissing(
            "pg_dump is not installed: install the PostgreSQL client (apt install "
            "postgresql-client), or dump the database yourself and keep, with that dump, "
            "the data folder's host/key-ring.json (without it no secret opens), "
            "host/identity.key (members have pinned it) and host/link.json"
        )
    with target.open("wb") as out:
        done = subprocess.run(  # noqa: S603
            [pg_dump, "--no-owner", "--no-privileges", "--format=plain"],
            stdout=out,
            stderr=subprocess.PIPE,
            env={**os.environ, **_libpq_environment(url)},
            check=False,
        )
    if done.returncode != 0:
        raise BackupRefused(
            f"pg_dump failed: {done.stderr.decode(errors='replace').strip()[:500]}",
            code="pgDumpFailed",
        )


def create_backup(
    data_dir: Path, database_url: str, key_ring: KeyRingFile, out: BinaryIO, passphrase: str
) -> BackupReport:
    """Write a sealed backup of ``data_dir`` and its database to ``out``."""
    if not passphrase:
        raise ArchivePassphraseMissing("a backup needs a passphrase: give it on standard input")
    is_sqlite = make_url(database_url).get_backend_name() == "sqlite"
    with tempfile.TemporaryDirectory(prefix="crewhost-backup-") as scratch:
        work = Path(scratch)
        plain = work / "backup.tar"
        # Held shared: no rotation re-seals secrets between the snapshot and the ring's copy.
        with key_ring.hold(exclusive=False):
            if is_sqlite:
                database = Path(make_url(database_url).database or "")
                snapshot = work / SQLITE_MEMBER
                _sqlite_snapshot(database, snapshot)
                revision, rows = _sqlite_facts(snapshot)
            else:
                snapshot = work / POSTGRES_MEMBER
                _pg_dump(database_url, snapshot)
                revision, rows = None, {}
            files = list(_data_files(data_dir))
            with tarfile.open(plain, "w") as tar:
                tar.add(snapshot, snapshot.name)
                for path in files:
                    tar.add(path, FILES + path.relative_to(data_dir).as_posix())
                manifest = {
                    "format": BACKUP_FORMAT,
                    "createdAt": time.time(),
                    "database": "sqlite" if is_sqlite else "postgresql",
                    "revision": revision,
                    "rows": rows,
                }
                raw = json.dumps(manifest, indent=2).encode()
                info = tarfile.TarInfo(MANIFEST)
                info.size, info.mode = len(raw), FILE_MODE
                tar.addfile(info, io.BytesIO(raw))
        with plain.open("rb") as source:
            seal_stream(source, out, passphrase)
    return BackupReport(str(manifest["database"]), revision, rows, len(files))


def _is_empty(folder: Path) -> bool:
    return not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))


def _clear(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def restore_backup(source: BinaryIO, passphrase: str, data_dir: Path) -> dict[str, Any]:
    """Restore a sealed backup into ``data_dir``, which must be empty; answers its manifest.

    The whole archive is proven before anything is unpacked, and a failure leaves the
    folder empty again.
    """
    if not _is_empty(data_dir):
        raise RestoreTargetNotEmpty(
            f"{data_dir} is not empty: restore into a new, empty folder, then point "
            "CREWHOST_DATA_DIR at it"
        )
    private_folder(data_dir)
    os.chmod(data_dir, FOLDER_MODE)
    try:
        with tempfile.TemporaryFile(dir=data_dir) as plain:
            for chunk in open_stream(source, passphrase):
                plain.write(chunk)
            plain.seek(0)
            return _unpack(plain, data_dir)
    except BaseException:
        _clear(data_dir)
        raise


def _unpack(plain: BinaryIO, data_dir: Path) -> dict[str, Any]:
    with tarfile.open(fileobj=plain, mode="r:") as tar:
        try:
            manifest = json.load(tar.extractfile(MANIFEST) or io.BytesIO())
        except (KeyError, ValueError) as exc:
            raise ArchiveError("the backup holds no manifest") from exc
        if manifest.get("format") != BACKUP_FORMAT:
            raise ArchiveError("the backup's manifest is of an unknown format")
        for member in tar.getmembers():
            if not member.isfile():
                continue
            name = member.name
            if name == MANIFEST:
                continue
            relative = name[len(FILES) :] if name.startswith(FILES) else name
            target = (data_dir / relative).resolve()
            if data_dir.resolve() not in target.parents:
                raise ArchiveError(f"the backup names a path outside the folder: {name}")
            _write_private(target, tar.extractfile(member))
    if manifest.get("database") == "sqlite":
        _check_integrity(data_dir / SQLITE_MEMBER)
    return dict(manifest)


def _check_integrity(database: Path) -> None:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        verdict = connection.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ArchiveError(f"the backup's database is damaged: {exc}") from exc
    finally:
        connection.close()
    if verdict != [("ok",)]:
        raise ArchiveError(f"the backup's database is damaged: {verdict[0][0]}")


def _write_private(target: Path, content: IO[bytes] | None) -> None:
    folder = target.parent
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        created.mkdir(mode=FOLDER_MODE)
        os.chmod(created, FOLDER_MODE)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        if content is not None:
            shutil.copyfileobj(content, out)
        out.flush()
        os.fsync(out.fileno())

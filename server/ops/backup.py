"""Backups of a data folder, sealed with a passphrase, and their restore into an empty folder.

A backup holds a consistent snapshot of the database (SQLite's online backup API, or
``pg_dump`` for PostgreSQL), the key ring and host identity key, the host's link state,
the agents' workspaces and each team's saved tabs. Chromium's own profile folders
(cookies, caches) are left out: Chromium rewrites them while it runs, so a copy is not
consistent, and they are large; members sign in to sites again after a restore.

No plain copy leaves the data folder: the archive is sealed as it is written, and the
database snapshot is staged in a private folder inside the data folder (``STAGING``),
removed when the backup ends, however it ends, or by the next ``crewhost`` command after
a kill. A restore unpacks into a private folder and moves it into place once everything
is proven, so a restore stopped half-way leaves the target as it was: missing, or empty but
for that private folder, which the next restore removes. A missing target is made by
renaming the folder, made beside it; an empty one (a mount point, which cannot be renamed
onto) gets the folder's entries, the folder being made inside it, on the same filesystem.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import re
import shutil
import signal
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
    SealingWriter,
    open_stream,
)
from server.common.crypto.ring import KeyRingFile
from server.common.data_folder import FILE_MODE, FOLDER_MODE, private_folder
from server.common.errors import CrewhostError
from server.db.engine import MIGRATION_COPY_INFIX
from server.db.tables import metadata

MANIFEST = "manifest.json"
SQLITE_MEMBER = "crewhost.db"
POSTGRES_MEMBER = "postgres.sql"
FILES = "files/"
BACKUP_FORMAT = "crewhost-backup"
# Inside the data folder: each running backup's private folder for its database snapshot.
STAGING = ".backup-staging"
_LOCK = ".lock"
# A test hook: the path of a FIFO; a backup writes a line to it once its snapshot is staged
# and part of the archive sealed (a restore: once it is unpacked beside its target), then
# waits for a signal (the tests stop it there).
PAUSE_HOOK = "CREWHOST_TEST_BACKUP_PAUSE"
# Files of a data folder that a backup never copies as they are: the live SQLite files, and
# the dump a PostgreSQL restore leaves (each backup holds its own snapshot under that name).
_DATABASE_FILES = (
    SQLITE_MEMBER,
    f"{SQLITE_MEMBER}-wal",
    f"{SQLITE_MEMBER}-shm",
    f"{SQLITE_MEMBER}-journal",
    POSTGRES_MEMBER,
)
# Inside a restore's target folder when it exists already: the restore is unpacked there.
RESTORING = ".crewhost-restoring"


class BackupRefused(CrewhostError):
    """A backup or restore that cannot go ahead as asked."""

    status: ClassVar[int] = 400
    code: ClassVar[str] = "backupRefused"


class RestoreTargetNotEmpty(BackupRefused):
    code: ClassVar[str] = "restoreTargetNotEmpty"


class RestoreTargetNotFolder(BackupRefused):
    code: ClassVar[str] = "restoreTargetNotFolder"


class BackupBusy(BackupRefused):
    """Another backup writes the same file, or another restore fills the same folder."""

    status: ClassVar[int] = 409
    code: ClassVar[str] = "backupBusy"


class PgDumpMissing(BackupRefused):
    code: ClassVar[str] = "pgDumpMissing"


class PsqlMissing(BackupRefused):
    code: ClassVar[str] = "psqlMissing"


class RestoreDatabaseNotEmpty(BackupRefused):
    code: ClassVar[str] = "restoreDatabaseNotEmpty"


class RestoreLoadFailed(BackupRefused):
    code: ClassVar[str] = "restoreLoadFailed"


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What a backup holds: the database kind, its revision and row counts, and its files."""

    database: str
    revision: str | None
    rows: dict[str, int]
    files: int
    # Files listed for the backup but removed before they were read (an agent's temporary file).
    vanished: int = 0


def _kept(data_dir: Path, path: Path) -> bool:
    """Whether a data folder file goes into a backup (see the module's docstring)."""
    relative = path.relative_to(data_dir)
    if path.name.endswith(".lock") or str(relative) in _DATABASE_FILES:
        return False
    parts = relative.parts
    if parts[0] == STAGING or path.name.startswith(SQLITE_MEMBER + MIGRATION_COPY_INFIX):
        return False  # a running backup's snapshot; copies kept from before migrations
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


# A database URL's query parameters (asyncpg's, which the settings' URL passes on to it, and
# libpq's own names) that say where and how to connect, as libpq's environment variables.
# The rest (asyncpg's statement cache, timeouts of its commands) mean nothing to pg_dump.
_QUERY_ENVIRONMENT = {
    "host": "PGHOST",
    "port": "PGPORT",
    "user": "PGUSER",
    "password": "PGPASSWORD",
    "database": "PGDATABASE",
    "dbname": "PGDATABASE",
    "passfile": "PGPASSFILE",
    "ssl": "PGSSLMODE",
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "sslcrl": "PGSSLCRL",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "krbsrvname": "PGKRBSRVNAME",
    "gsslib": "PGGSSLIB",
    "application_name": "PGAPPNAME",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "options": "PGOPTIONS",
    "service": "PGSERVICE",
}
_SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
# One host of a query's ``host`` list: a socket folder, ``[v6]:port`` or ``name:port``.
_QUERY_HOST = re.compile(r"(?P<host>/.*|\[[^\]]*\]|[^:]*)(?::(?P<port>\d+))?")


def _split_host(text: str) -> tuple[str, str]:
    """A query's host as libpq's host and port (empty: the default)."""
    match = _QUERY_HOST.fullmatch(text)
    if match is None:
        return text, ""  # a bare IPv6 address
    return match["host"].removeprefix("[").removesuffix("]"), match["port"] or ""


def _libpq_environment(url: str) -> dict[str, str]:
    """The connection ``url`` names as libpq's environment variables, for ``pg_dump``: a
    password never shows in the process list.

    The URL is SQLAlchemy's (``postgresql+asyncpg://user@host/db?ssl=require``): its
    driver means nothing to libpq, and its query is asyncpg's, which wins over the URL's
    own parts as it does for asyncpg: ``host`` (a socket folder, or several hosts as
    ``host=a:5432&host=b:5433``), ``ssl`` (libpq's ``sslmode``) and the rest of
    ``_QUERY_ENVIRONMENT``.
    """
    parsed = make_url(url)
    named: dict[str, str | None] = {
        "PGHOST": parsed.host,
        "PGPORT": str(parsed.port) if parsed.port else None,
        "PGUSER": parsed.username,
        "PGPASSWORD": parsed.password,
        "PGDATABASE": parsed.database,
    }
    for key, value in parsed.query.items():
        variable = _QUERY_ENVIRONMENT.get(key)
        values = (value,) if isinstance(value, str) else tuple(value)
        if variable == "PGHOST":
            hosts = [_split_host(one) for one in values]
            named["PGHOST"] = ",".join(host for host, _port in hosts)
            if any(port for _host, port in hosts):
                default = named["PGPORT"] or ""
                named["PGPORT"] = ",".join(port or default for _host, port in hosts)
        elif variable == "PGSSLMODE":
            mode = values[-1].replace("_", "-")
            if mode not in _SSL_MODES:
                raise BackupRefused(
                    f"the database URL's {key}={values[-1]!r} is not one of {', '.join(_SSL_MODES)}"
                )
            named[variable] = mode
        elif variable is not None:
            named[variable] = values[-1]
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


def _psql() -> str:
    psql = shutil.which("psql")
    if psql is None:
        raise PsqlMissing(
            "psql is not installed: install the PostgreSQL client (apt install "
            "postgresql-client), or restore into a folder with no PostgreSQL database URL "
            "set and load the dump it leaves yourself"
        )
    return psql


def _run_psql(url: str, arguments: list[str]) -> subprocess.CompletedProcess[bytes]:
    # -X: no psqlrc of the user running the restore changes what is run.
    return subprocess.run(  # noqa: S603
        [_psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1", *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, **_libpq_environment(url)},
        check=False,
    )


# psql's own error lines: "psql:FILE:LINE: ERROR:  ...", "psql: error: ..." (a connection).
# Its DETAIL and CONTEXT lines may quote the rows' values, and are left out.
_PSQL_ERROR = re.compile(r"^(?:psql(?::\S*)?: )?(?:ERROR|FATAL|error):")


def _psql_errors(done: subprocess.CompletedProcess[bytes]) -> str:
    """psql's error lines alone (``_PSQL_ERROR``)."""
    lines = done.stderr.decode(errors="replace").splitlines()
    errors = [line for line in lines if _PSQL_ERROR.match(line)]
    return " ".join(errors)[:500] or f"psql exited with status {done.returncode}"


def check_restore_database(url: str) -> None:
    """Refuse a PostgreSQL database that cannot take a backup's dump (psql missing, no
    connection, a table in it already), before anything is touched."""
    done = _run_psql(
        url,
        [
            "-At",
            "-c",
            "SELECT count(*) FROM pg_catalog.pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
        ],
    )
    if done.returncode != 0:
        raise RestoreLoadFailed(f"cannot reach the database to restore into: {_psql_errors(done)}")
    if done.stdout.strip() != b"0":
        raise RestoreDatabaseNotEmpty(
            "the database to restore into has tables already: create a new, empty database "
            "and point CREWHOST_DATABASE_URL at it"
        )


def _load_dump(url: str, dump: Path) -> None:
    """Loads a plain dump in one transaction: all of it, or nothing on the first error."""
    done = _run_psql(url, ["--single-transaction", "-f", str(dump)])
    if done.returncode != 0:
        raise RestoreLoadFailed(
            f"the database could not be loaded, and is as it was: {_psql_errors(done)}"
        )


_COPY = re.compile(rb'^COPY (?:(?P<schema>"[^"]+"|[^". ]+)\.)?(?P<table>"[^"]+"|[^". ]+) ')


def _unquote(name: bytes) -> str:
    return name.decode().strip('"')


def _dump_facts(dump: Path) -> tuple[str | None, dict[str, int], str | None]:
    """The revision, row count of each table and schema of a plain ``pg_dump``.

    Read from its ``COPY`` blocks (one row a line: COPY escapes newlines), so the counts
    are exactly the dump's, taken in pg_dump's own snapshot.
    """
    known = [table.name for table in metadata.sorted_tables]
    counted: dict[str, int] = {}
    revision: str | None = None
    schema: str | None = None
    table: str | None = None
    with dump.open("rb") as lines:
        for line in lines:
            if table is None:
                match = _COPY.match(line)
                if match is not None:
                    table = _unquote(match["table"])
                    if table in known or table == "alembic_version":
                        counted.setdefault(table, 0)
                        if match["schema"] and schema is None:
                            schema = _unquote(match["schema"])
                continue
            if line.rstrip(b"\n") == b"\\.":
                table = None
            elif table == "alembic_version":
                revision = line.split(b"\t")[0].decode().strip()
            elif table in counted:
                counted[table] += 1
    return revision, {name: counted[name] for name in known if name in counted}, schema


def _claim_lock(path: Path) -> int | None:
    """``path`` opened and locked alone, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


@contextlib.contextmanager
def _staging(data_dir: Path) -> Iterator[Path]:
    """A private folder under ``data_dir/STAGING`` for this backup, locked while it runs."""
    root = private_folder(data_dir / STAGING)
    os.chmod(root, FOLDER_MODE)
    folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))  # 0700
    fd = _claim_lock(folder / _LOCK)
    assert fd is not None  # a folder just made is nobody else's
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)
        with contextlib.suppress(OSError):
            root.rmdir()  # only when no other backup stages there


def remove_stale_staging(data_dir: Path) -> int:
    """Remove what killed backups left staged in ``data_dir``; answers how many.

    A folder whose lock another process holds belongs to a running backup and stays.
    """
    root = data_dir / STAGING
    if not root.is_dir() or root.is_symlink():
        return 0
    removed = 0
    for folder in root.iterdir():
        if not folder.is_dir() or folder.is_symlink():
            continue
        lock = folder / _LOCK
        if not lock.exists():
            # Killed between making the folder and locking it: it holds nothing yet.
            if any(entry.name != _LOCK for entry in folder.iterdir()):
                continue
            fd = None
        else:
            fd = _claim_lock(lock)
            if fd is None:
                continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        finally:
            if fd is not None:
                os.close(fd)
    with contextlib.suppress(OSError):
        root.rmdir()
    return removed


def _pause_for_tests() -> None:
    fifo = os.environ.get(PAUSE_HOOK)
    if fifo:
        with open(fifo, "w", encoding="ascii") as ready:
            ready.write("paused\n")
        while True:
            signal.pause()


def create_backup(
    data_dir: Path, database_url: str, key_ring: KeyRingFile, out: BinaryIO, passphrase: str
) -> BackupReport:
    """Write a sealed backup of ``data_dir`` and its database to ``out``."""
    if not passphrase:
        raise ArchivePassphraseMissing("a backup needs a passphrase: give it on standard input")
    is_sqlite = make_url(database_url).get_backend_name() == "sqlite"
    database = Path(make_url(database_url).database or "")
    if is_sqlite and not database.is_file():
        # Refused before the staging folder would make a data folder that is not there.
        raise BackupRefused(f"there is no database at {database}: nothing to back up")
    # Held shared: no rotation re-seals secrets between the snapshot and the ring's copy.
    with _staging(data_dir) as work, key_ring.hold(exclusive=False):
        if is_sqlite:
            snapshot = work / SQLITE_MEMBER
            _sqlite_snapshot(database, snapshot)
            revision, rows = _sqlite_facts(snapshot)
        else:
            snapshot = work / POSTGRES_MEMBER
            _pg_dump(database_url, snapshot)
            revision, rows, _schema = _dump_facts(snapshot)
        files = list(_data_files(data_dir))
        manifest = {
            "format": BACKUP_FORMAT,
            "createdAt": time.time(),
            "database": "sqlite" if is_sqlite else "postgresql",
            "revision": revision,
            "rows": rows,
        }
        sealed = SealingWriter(out, passphrase)
        # Stream mode: the archive goes through the cipher as it is made, never to disk plain.
        with tarfile.open(fileobj=sealed, mode="w|") as tar:  # type: ignore[call-overload]
            tar.add(snapshot, snapshot.name)
            _pause_for_tests()
            vanished = 0
            for path in files:
                try:
                    tar.add(path, FILES + path.relative_to(data_dir).as_posix())
                except FileNotFoundError:
                    vanished += 1  # gone before it was opened: nothing of it was written
                except OSError as exc:
                    raise BackupRefused(f"cannot back up {path}: {exc.strerror or exc}") from exc
            raw = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mode = len(raw), FILE_MODE
            tar.addfile(info, io.BytesIO(raw))
        sealed.close()
    return BackupReport(str(manifest["database"]), revision, rows, len(files) - vanished, vanished)


def check_restore_target(data_dir: Path) -> None:
    """Refuse a target that is not a missing or empty folder, before anything is touched."""
    if data_dir.is_symlink() or (data_dir.exists() and not data_dir.is_dir()):
        raise RestoreTargetNotFolder(
            f"{data_dir} is a file, not a folder: restore into a new, empty folder, then "
            "point CREWHOST_DATA_DIR at it"
        )
    if data_dir.exists() and any(not _left_by_a_restore(entry) for entry in data_dir.iterdir()):
        raise RestoreTargetNotEmpty(
            f"{data_dir} is not empty: restore into a new, empty folder, then point "
            "CREWHOST_DATA_DIR at it"
        )


def _left_by_a_restore(entry: Path) -> bool:
    """The private folder a restore into this (empty) folder fills, left by a killed one."""
    return entry.name == RESTORING and entry.is_dir() and not entry.is_symlink()


def _work_folder(data_dir: Path) -> Path:
    """Where a restore into ``data_dir`` unpacks: beside a missing folder, inside an empty one."""
    if data_dir.is_dir():
        return data_dir / RESTORING
    return data_dir.with_name(f".{data_dir.name}.restoring")


@contextlib.contextmanager
def _restoring(data_dir: Path) -> Iterator[Path]:
    """A private folder for this restore (``_work_folder``), locked while it fills it.

    One that a killed restore left is removed first; one another restore holds is refused.
    Removed on any failure; the caller moves it into place on success.
    """
    work = _work_folder(data_dir)
    lock = work / _LOCK
    if work.is_dir() and not work.is_symlink():
        fd = _claim_lock(lock)
        if fd is None:
            raise BackupBusy(f"another restore into {data_dir} is under way")
        shutil.rmtree(work)
        os.close(fd)
    try:
        work.mkdir(mode=FOLDER_MODE)
    except PermissionError:
        raise BackupRefused(
            f"cannot make {work.name} in {work.parent}: a restore is unpacked there, then "
            "moved into place; restore into a folder this user may write, then move it"
        ) from None
    os.chmod(work, FOLDER_MODE)
    fd = _claim_lock(lock)
    assert fd is not None
    try:
        yield work
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        os.close(fd)


def restore_backup(
    source: BinaryIO,
    passphrase: str,
    data_dir: Path,
    *,
    sign_out_everyone: bool = False,
    database_url: str | None = None,
) -> dict[str, Any]:
    """Restore a sealed backup into ``data_dir``, which must be missing or empty.

    The whole archive is proven and unpacked in a private folder first, then moved into
    place: a failure or a stop leaves the target as it was. It is unpacked as it is
    opened, each chunk proven before it is read, so the disk holds one copy of it, not
    the archive and its files. ``sign_out_everyone`` revokes every session, open
    invitation and host enrolment code in the restored copy. A PostgreSQL backup's dump
    is loaded into ``database_url`` (an empty database: ``check_restore_database``, once
    the manifest says the backup is PostgreSQL's) in one transaction once the folder is in
    place, and not kept; a load that fails takes the folder back. Without it the dump is
    left in the folder. Answers the backup's manifest.
    """
    check_restore_target(data_dir)
    data_dir = data_dir.absolute()
    private_folder(data_dir.parent)
    in_place = data_dir.is_dir()
    with _restoring(data_dir) as work:
        plain = io.BufferedReader(_ChunkReader(open_stream(source, passphrase)))
        manifest = _unpack(plain, work)
        # To its end: the last chunk's proof says the archive was not cut short.
        while plain.read(1 << 16):
            pass
        _pause_for_tests()
        if sign_out_everyone:
            _sign_out_everyone(work, manifest)
        loading = database_url is not None and manifest.get("database") == "postgresql"
        if database_url is not None and loading:
            check_restore_database(database_url)
        placed = sorted(name for name in os.listdir(work) if name != _LOCK)
        if in_place:
            _move_entries(work, data_dir)
            (work / _LOCK).unlink()
            work.rmdir()
            with contextlib.suppress(PermissionError):  # a mount point this user does not own
                os.chmod(data_dir, FOLDER_MODE)
        else:
            (work / _LOCK).unlink()
            _rename_into_place(work, data_dir)
    if database_url is not None and loading:
        # Last, so that nothing can fail once it is loaded: a load that fails (or a stop
        # meanwhile) takes back what was placed, and the database is as it was.
        try:
            _load_dump(database_url, data_dir / POSTGRES_MEMBER)
        except BaseException:
            _take_back(data_dir, placed if in_place else None)
            raise
        (data_dir / POSTGRES_MEMBER).unlink()
    _sync_folder(data_dir if in_place else data_dir.parent)
    return manifest


def _take_back(data_dir: Path, placed: list[str] | None) -> None:
    """Removes what a restore placed: the entries it moved into ``data_dir``, or (None) the
    folder it renamed into place."""
    if placed is None:
        shutil.rmtree(data_dir, ignore_errors=True)
        return
    for name in placed:
        entry = data_dir / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _rename_into_place(work: Path, data_dir: Path) -> None:
    try:
        os.rename(work, data_dir)  # onto a missing folder, or over an empty one made meanwhile
    except OSError as exc:
        if exc.errno in (errno.EBUSY, errno.EXDEV):
            raise BackupRefused(
                f"cannot rename the restored folder onto {data_dir}: {exc.strerror} (a mount "
                "point appeared there meanwhile); run the restore again"
            ) from exc
        raise RestoreTargetNotEmpty(
            f"{data_dir} was filled while the backup was restored: {exc.strerror}"
        ) from exc


def _move_entries(work: Path, data_dir: Path) -> None:
    """Rename each entry of ``work`` (inside ``data_dir``) into ``data_dir``.

    On a failure the entries moved go back, so the target is left as it was.
    """
    moved: list[str] = []
    try:
        for name in sorted(os.listdir(work)):
            if name == _LOCK:
                continue
            if os.path.lexists(data_dir / name):
                raise RestoreTargetNotEmpty(
                    f"{data_dir} was filled while the backup was restored: {name} appeared"
                )
            os.rename(work / name, data_dir / name)
            moved.append(name)
    except BaseException:
        for name in moved:
            with contextlib.suppress(OSError):
                os.rename(data_dir / name, work / name)
        raise


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# What ``--sign-out-everyone`` does to a restored database: every session ends, every open
# invitation is revoked, every host enrolment code is dropped. Names from our own schema.
def _sign_out_statements(prefix: str, now: float) -> list[str]:
    return [
        f"DELETE FROM {prefix}sessions",  # noqa: S608 - our own names, a float
        f"UPDATE {prefix}invitations SET revoked_at = {now!r} WHERE revoked_at IS NULL",  # noqa: S608
        f"DELETE FROM {prefix}host_enrolments",  # noqa: S608
    ]


def _sign_out_everyone(work: Path, manifest: dict[str, Any]) -> None:
    now = time.time()
    if manifest.get("database") == "sqlite":
        connection = sqlite3.connect(work / SQLITE_MEMBER)
        try:
            with connection:
                for statement in _sign_out_statements("", now):
                    connection.execute(statement)
        finally:
            connection.close()
        return
    # PostgreSQL: the dump is loaded later, in one transaction; the revocations end it.
    dump = work / POSTGRES_MEMBER
    _revision, _rows, schema = _dump_facts(dump)
    prefix = f'"{schema}".' if schema else ""
    with dump.open("a", encoding="utf-8") as out:
        out.write("\n-- crewhost admin restore --sign-out-everyone\n")
        out.writelines(f"{statement};\n" for statement in _sign_out_statements(prefix, now))
        out.flush()
        os.fsync(out.fileno())


class _ChunkReader(io.RawIOBase):
    """A file over the plain chunks of a sealed archive, read in order."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._left = memoryview(chunk)
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


def _unpack(plain: BinaryIO, data_dir: Path) -> dict[str, Any]:
    """Unpack the archive as it is read (its manifest comes last); each file into the
    private folder ``data_dir``, which a failure throws away whole."""
    manifest: dict[str, Any] | None = None
    with tarfile.open(fileobj=plain, mode="r|") as tar:
        for member in tar:
            name = member.name
            if name == MANIFEST:
                try:
                    manifest = json.load(tar.extractfile(member) or io.BytesIO())
                except ValueError as exc:
                    raise ArchiveError("the backup's manifest cannot be read") from exc
                continue
            if not member.isfile():
                continue
            relative = name[len(FILES) :] if name.startswith(FILES) else name
            if name.startswith(FILES) and relative in _DATABASE_FILES:
                continue  # a dump a restore left, kept by backups made before it was left out
            target = (data_dir / relative).resolve()
            if data_dir.resolve() not in target.parents:
                raise ArchiveError(f"the backup names a path outside the folder: {name}")
            try:
                _write_private(target, tar.extractfile(member))
            except FileExistsError:
                raise ArchiveError(
                    f"the backup holds {relative} twice: it cannot be trusted"
                ) from None
    if not isinstance(manifest, dict):
        raise ArchiveError("the backup holds no manifest")
    if manifest.get("format") != BACKUP_FORMAT:
        raise ArchiveError("the backup's manifest is of an unknown format")
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

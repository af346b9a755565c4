"""``crewhost admin backup`` and ``restore``: the files around the sealed archive."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import BinaryIO

from sqlalchemy.engine import make_url

from server.config import Settings
from server.host.services.keys import key_ring_file
from server.ops.backup import (
    POSTGRES_MEMBER,
    BackupBusy,
    BackupRefused,
    BackupReport,
    check_restore_target,
    create_backup,
    restore_backup,
)


def _claim_partial(partial: Path) -> BinaryIO:
    """``partial`` created 0600 and locked for this backup, open for writing.

    One left by a killed backup (nobody holds its lock) is removed first; one that a
    running backup holds is refused. The file is locked before it takes its name (made
    under a name of its own, then linked), so no other backup ever sees it unlocked.
    """
    if partial.exists() or partial.is_symlink():
        stale = _lock_existing(partial)
        if stale is None:
            raise BackupBusy(f"another backup is writing {partial}: wait for it to end")
        with os.fdopen(stale, "rb"):
            if os.path.samestat(os.fstat(stale), partial.lstat()):
                partial.unlink()
    staged = partial.with_name(f"{partial.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(staged, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            os.link(staged, partial)
        except FileExistsError:
            raise BackupBusy(f"another backup is writing {partial}: wait for it to end") from None
    except BaseException:
        os.close(fd)
        raise
    finally:
        staged.unlink(missing_ok=True)
    return os.fdopen(fd, "wb")


def _lock_existing(path: Path) -> int | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise BackupRefused(
            f"{path} is in the way and cannot be opened: {exc.strerror}; remove it"
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def backup(settings: Settings, out: Path, passphrase: str) -> BackupReport:
    """A sealed backup of the data folder and database, written all or nothing to ``out``."""
    if out.resolve().is_relative_to(settings.data_dir.resolve()):
        raise BackupRefused(
            f"{out} is inside the data folder {settings.data_dir}: write the backup elsewhere",
            code="backupInsideDataFolder",
        )
    if not out.parent.is_dir():
        raise BackupRefused(f"{out.parent} is not a folder: make it first, or pick another --out")
    if out.is_dir():
        raise BackupRefused(f"{out} is a folder: --out names the backup file to write")
    partial = out.with_name(f".{out.name}.partial")
    try:
        target = _claim_partial(partial)
    except PermissionError as exc:
        raise BackupRefused(f"cannot write in {out.parent}: {exc.strerror}") from exc
    try:
        with target:
            report = create_backup(
                settings.data_dir,
                settings.database_url,
                key_ring_file(settings),
                target,
                passphrase,
            )
            target.flush()
            os.fsync(target.fileno())
            partial.replace(out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BackupRefused(f"the backup failed: {exc.strerror or exc}") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return report


def restore(settings: Settings, file: Path, passphrase: str, *, sign_out_everyone: bool) -> str:
    """Restore ``file`` into the (empty) data folder, and a PostgreSQL backup's database
    into the (empty) database of ``CREWHOST_DATABASE_URL`` when it names one; answers what
    to do next."""
    check_restore_target(settings.data_dir)
    on_postgresql = make_url(settings.database_url).get_backend_name() == "postgresql"
    into = settings.database_url if on_postgresql else None
    try:
        source = file.open("rb")
    except OSError as exc:
        raise BackupRefused(f"cannot read {file}: {exc.strerror}") from exc
    try:
        with source:
            manifest = restore_backup(
                source,
                passphrase,
                settings.data_dir,
                sign_out_everyone=sign_out_everyone,
                database_url=into,
            )
    except OSError as exc:
        raise BackupRefused(f"the restore failed: {exc.strerror or exc}") from exc
    signed_out = (
        " with every session signed out, every open invitation revoked and every host "
        "enrolment code dropped"
        if sign_out_everyone
        else ""
    )
    if manifest.get("database") == "postgresql" and into is not None:
        return (
            f"restored the data folder into {settings.data_dir} and the database into "
            f"CREWHOST_DATABASE_URL's (revision {manifest.get('revision')}){signed_out}; start "
            f"it with `crewhost serve --data-dir {settings.data_dir}` and the same "
            "CREWHOST_DATABASE_URL"
        )
    if manifest.get("database") == "postgresql":
        dump = settings.data_dir / POSTGRES_MEMBER
        return (
            f"restored the data folder into {settings.data_dir}{signed_out}; load the database "
            "into a new, empty PostgreSQL database with "
            f"`psql -v ON_ERROR_STOP=1 --single-transaction -f {dump} URL`, set "
            "CREWHOST_DATABASE_URL to it, then delete the dump (or restore again with "
            "CREWHOST_DATABASE_URL set to an empty database, which loads it for you)"
        )
    unset = " with CREWHOST_DATABASE_URL unset (the backup's database is SQLite's)"
    return (
        f"restored into {settings.data_dir} (database revision {manifest.get('revision')})"
        f"{signed_out}; start it with `crewhost serve --data-dir {settings.data_dir}`"
        f"{unset if into is not None else ''}"
    )

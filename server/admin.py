"""Shell administration: the work behind ``crewhost admin …``, through the same services."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from server.common.wire import invalid_argument_from
from server.config import Settings
from server.db.engine import Database
from server.host.services.keys import RotationReport, SecretKeys, key_ring_file
from server.hub.container import Hub
from server.hub.schemas import SignUp
from server.ops.backup import (
    POSTGRES_MEMBER,
    BackupRefused,
    BackupReport,
    create_backup,
    restore_backup,
)


async def migrate(settings: Settings) -> None:
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
    finally:
        await hub.db.close()


async def setup_code(settings: Settings) -> str | None:
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
        return await hub.setup.issue_code()
    finally:
        await hub.db.close()


async def create_owner(settings: Settings, email: str, name: str, password: str, team: str) -> str:
    """Create the owner of a new team, checking the fields as a sign-up would."""
    try:
        checked = SignUp.model_validate(
            {"email": email, "name": name, "password": password, "team_name": team}
        )
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc
    hub = Hub.build(settings)
    try:
        await hub.db.migrate()
        account = await hub.accounts.create_owner(
            checked.email, checked.name, checked.password, checked.team_name
        )
    finally:
        await hub.db.close()
    return account.id


async def rotate_key(settings: Settings) -> RotationReport:
    """A new active key for the host's secret box, every ciphertext re-sealed with it."""
    db = Database.from_settings(settings)
    try:
        await db.migrate()
        return await SecretKeys(db, key_ring_file(settings)).rotate()
    finally:
        await db.close()


async def retire_key(settings: Settings, key_id: str) -> None:
    """Remove an old key from the host's key ring once no ciphertext uses it."""
    db = Database.from_settings(settings)
    try:
        await db.migrate()
        await SecretKeys(db, key_ring_file(settings)).retire(key_id)
    finally:
        await db.close()


def backup(settings: Settings, out: Path, passphrase: str) -> BackupReport:
    """A sealed backup of the data folder and database, written all or nothing to ``out``."""
    if out.resolve().is_relative_to(settings.data_dir.resolve()):
        raise BackupRefused(
            f"{out} is inside the data folder {settings.data_dir}: write the backup elsewhere",
            code="backupInsideDataFolder",
        )
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("xb") as target:
            os.chmod(partial, 0o600)
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
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return report


def restore(settings: Settings, file: Path, passphrase: str) -> str:
    """Restore ``file`` into the (empty) data folder; answers what to do next."""
    try:
        source = file.open("rb")
    except OSError as exc:
        raise BackupRefused(f"cannot read {file}: {exc.strerror}") from exc
    with source:
        manifest = restore_backup(source, passphrase, settings.data_dir)
    if manifest.get("database") == "postgresql":
        dump = settings.data_dir / POSTGRES_MEMBER
        return (
            f"restored the data folder into {settings.data_dir}; load the database into a new, "
            f"empty PostgreSQL database with `psql --single-transaction -f {dump} URL`, set "
            "CREWHOST_DATABASE_URL to it, then delete the dump"
        )
    return (
        f"restored into {settings.data_dir} (database revision {manifest.get('revision')}); "
        f"start it with `crewhost serve --data-dir {settings.data_dir}`"
    )

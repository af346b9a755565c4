"""``crewhost admin rotate-key``, ``retire-key`` and ``wrap-key-ring``: the host's key ring."""

from __future__ import annotations

from server.common.crypto.ring import KeyRingFile, KeyRingLocked, KeyRingMissing
from server.config import Settings
from server.db.engine import Database
from server.host.services.keys import RotationReport, SecretKeys, key_ring_file


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


def wrap_key_ring(settings: Settings, passphrase: str) -> None:
    """Wrap the host's plain key ring with ``passphrase``; the host must be stopped.

    When CREWHOST_MASTER_PASSPHRASE is set already it must be this passphrase, so the
    next start opens the ring.
    """
    if not passphrase:
        raise KeyRingLocked("wrapping the key ring needs a passphrase")
    configured = settings.host.master_passphrase
    if configured is not None and configured.get_secret_value() != passphrase:
        raise KeyRingLocked(
            "the passphrase differs from CREWHOST_MASTER_PASSPHRASE: the next start could not "
            "open the ring; give the same one, or unset the variable first"
        )
    plain = KeyRingFile(key_ring_file(settings).path)
    if not plain.exists():
        raise KeyRingMissing(
            f"there is no key ring at {plain.path} yet: start the server once with "
            "CREWHOST_MASTER_PASSPHRASE set, and it makes the ring wrapped"
        )
    with plain.hold(exclusive=True):
        plain.wrap(passphrase)

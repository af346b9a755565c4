"""The host's key ring and every ciphertext sealed with it.

At start the ring is opened, or made if the database holds no ciphertext yet; a
missing ring while ciphertexts exist refuses the start, since those secrets can
only be opened with it. ``rotate`` adds a new active key and re-seals every
registered column with it in batches, each batch one transaction; ``retire``
removes an old key once no row uses it. A running host holds the ring shared,
a rotation or retirement holds it alone, so neither happens under the other.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from server.common.crypto.box import SecretBox, SecretUnreadable, key_id_of
from server.common.crypto.columns import EncryptedColumn
from server.common.crypto.ring import KeyRingFile, KeyRingMissing
from server.common.errors import Conflict, NotFound
from server.config import Settings
from server.db.engine import Database
from server.db.tables import ENCRYPTED_COLUMNS
from server.host.storage.ciphertexts import CiphertextRepository, StoredCiphertext

log = logging.getLogger(__name__)

ROTATION_BATCH = 200


def key_ring_file(settings: Settings) -> KeyRingFile:
    """The host's key ring: ``<data_dir>/host/key-ring.json``, wrapped by the master
    passphrase when one is set."""
    passphrase = settings.host.master_passphrase
    return KeyRingFile(
        settings.data_dir / "host" / "key-ring.json",
        passphrase.get_secret_value() if passphrase is not None else None,
    )


@dataclass(frozen=True, slots=True)
class RotationReport:
    """What a rotation did: the new key, and how many ciphertexts it re-sealed or could not open."""

    key_id: str
    resealed: int
    unreadable: int


@dataclass(frozen=True, slots=True)
class UnreadableSecret:
    """A ciphertext that does not open: where it is, and why."""

    table: str
    row_id: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.table} row {self.row_id} column {self.column} ({self.reason})"


@dataclass(frozen=True, slots=True)
class SecretsCheck:
    """How many ciphertexts were tried, and those that did not open."""

    checked: int
    unreadable: tuple[UnreadableSecret, ...]


class SecretKeys:
    """Opening, rotating and retiring the keys of the secret box."""

    def __init__(
        self,
        db: Database,
        ring_file: KeyRingFile,
        *,
        columns: Sequence[EncryptedColumn] = ENCRYPTED_COLUMNS,
        batch_size: int = ROTATION_BATCH,
    ) -> None:
        self._db = db
        self._ring_file = ring_file
        self._columns = tuple(columns)
        self._batch_size = batch_size
        self._ciphertexts = CiphertextRepository()

    @asynccontextmanager
    async def open_box(self) -> AsyncIterator[SecretBox]:
        """The secret box, with the ring held shared until the block ends.

        Raises ``KeyRingMissing`` when there is no ring but the database holds ciphertexts.
        """
        with self._ring_file.hold(exclusive=False):
            if await asyncio.to_thread(self._ring_file.exists):
                ring = await asyncio.to_thread(self._ring_file.load)
            else:
                sealed = await self._sealed_columns()
                if sealed:
                    raise KeyRingMissing(
                        f"the key ring {self._ring_file.path} is missing, but the database "
                        f"holds encrypted secrets ({', '.join(sealed)}) that only it opens: "
                        "restore the key ring file from a backup of this data folder"
                    )
                ring = await asyncio.to_thread(self._ring_file.create)
                log.info("created a new key ring", extra={"key_id": ring.active_id})
            yield SecretBox(ring)

    async def rotate(self) -> RotationReport:
        """Add a new active key, then re-seal every ciphertext sealed with another key."""
        with self._ring_file.hold(exclusive=True):
            ring = (await asyncio.to_thread(self._ring_file.load)).with_new_key()
            # Saved first: whatever is written from now on opens, even if this stops halfway.
            await asyncio.to_thread(self._ring_file.save, ring)
            box = SecretBox(ring)
            resealed = unreadable = 0
            for column in self._columns:
                after: tuple[str, str] | None = None
                while True:
                    async with self._db.write() as conn:
                        batch = await self._ciphertexts.list_ciphertexts(
                            conn, column, after=after, limit=self._batch_size
                        )
                        for stored in batch:
                            if box.is_current(stored.ciphertext):
                                continue
                            new = _reseal(box, column, stored)
                            if new is None:
                                unreadable += 1
                            elif await self._ciphertexts.update_ciphertext(
                                conn, column, stored, new
                            ):
                                resealed += 1
                    if len(batch) < self._batch_size:
                        break
                    after = (batch[-1].team_id, batch[-1].row_id)
        report = RotationReport(ring.active_id, resealed, unreadable)
        log.info(
            "rotated the key ring",
            extra={"key_id": report.key_id, "resealed": resealed, "unreadable": unreadable},
        )
        return report

    async def retire(self, key_id: str) -> None:
        """Remove ``key_id`` from the ring; refused while it is active or any row uses it."""
        with self._ring_file.hold(exclusive=True):
            ring = await asyncio.to_thread(self._ring_file.load)
            if key_id not in ring.key_ids:
                raise NotFound(f"the key ring has no key {key_id!r}", code="keyNotFound")
            if key_id == ring.active_id:
                raise Conflict(
                    f"key {key_id} is the active key: run `crewhost admin rotate-key` first",
                    code="keyActive",
                )
            using = (await self.key_usage()).get(key_id, 0)
            if using:
                raise Conflict(
                    f"{using} encrypted secret(s) still use key {key_id}: run "
                    "`crewhost admin rotate-key` first (a secret it cannot open must be set "
                    "again or cleared)",
                    code="keyInUse",
                )
            await asyncio.to_thread(self._ring_file.save, ring.without(key_id))
        log.info("retired a key", extra={"key_id": key_id})

    async def key_usage(self) -> Counter[str | None]:
        """How many ciphertexts each key id sealed (None: not of a known format)."""
        usage: Counter[str | None] = Counter()
        for column in self._columns:
            after: tuple[str, str] | None = None
            while True:
                async with self._db.read() as conn:
                    batch = await self._ciphertexts.list_ciphertexts(
                        conn, column, after=after, limit=self._batch_size
                    )
                usage.update(key_id_of(stored.ciphertext) for stored in batch)
                if len(batch) < self._batch_size:
                    break
                after = (batch[-1].team_id, batch[-1].row_id)
        return usage

    async def check_secrets(self, box: SecretBox) -> SecretsCheck:
        """Open every ciphertext with ``box``, in batches, reading only; name each that fails."""
        checked = 0
        failed: list[UnreadableSecret] = []
        for column in self._columns:
            after: tuple[str, str] | None = None
            while True:
                async with self._db.read() as conn:
                    batch = await self._ciphertexts.list_ciphertexts(
                        conn, column, after=after, limit=self._batch_size
                    )
                for stored in batch:
                    checked += 1
                    try:
                        box.decrypt(
                            stored.ciphertext, column.binding(stored.team_id, stored.row_id)
                        )
                    except SecretUnreadable as exc:
                        failed.append(
                            UnreadableSecret(
                                column.table.name, stored.row_id, column.column, exc.message
                            )
                        )
                if len(batch) < self._batch_size:
                    break
                after = (batch[-1].team_id, batch[-1].row_id)
        return SecretsCheck(checked, tuple(failed))

    async def _sealed_columns(self) -> list[str]:
        async with self._db.read() as conn:
            return [
                column.name
                for column in self._columns
                if await self._ciphertexts.has_ciphertexts(conn, column)
            ]


def _reseal(box: SecretBox, column: EncryptedColumn, stored: StoredCiphertext) -> bytes | None:
    binding = column.binding(stored.team_id, stored.row_id)
    try:
        return box.encrypt(box.decrypt(stored.ciphertext, binding), binding)
    except SecretUnreadable:
        return None

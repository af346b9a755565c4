"""Sealing one secret to its row: AES-256-GCM with the row in the associated data.

A ciphertext is ``header || nonce || GCM output``:

- header: the format version (one byte, 1) and the id of the key that sealed it
  (four bytes), so a ring with several keys knows which one opens it;
- nonce: 12 random bytes, new for every seal;
- GCM output: the encrypted secret followed by the 16-byte tag.

The associated data is the header followed by the purpose, team id, table,
column and row id, each as a two-byte big-endian length and its UTF-8 bytes.
A ciphertext copied to another row, team, column or purpose therefore fails to
open, and so does one whose header was changed.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from server.common.crypto.ring import KEY_ID_BYTES, KeyRing
from server.common.errors import CrewhostError

FORMAT_VERSION = 1
HEADER_BYTES = 1 + KEY_ID_BYTES
NONCE_BYTES = 12
TAG_BYTES = 16
MAX_FIELD_BYTES = 0xFFFF


class SecretUnreadable(CrewhostError):
    """A ciphertext this host cannot open; ``reason`` says why, for people."""

    status: ClassVar[int] = 409
    code: ClassVar[str] = "secretUnreadable"

    def __init__(self, reason: str) -> None:
        super().__init__(f"the secret cannot be decrypted: {reason}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SecretBinding:
    """Where a secret lives; sealed into its associated data, so it opens only there."""

    team_id: str
    table: str
    row_id: str
    column: str
    purpose: str

    def associated_data(self, header: bytes) -> bytes:
        parts = [header]
        for value in (self.purpose, self.team_id, self.table, self.column, self.row_id):
            raw = value.encode("utf-8")
            if len(raw) > MAX_FIELD_BYTES:
                raise ValueError("a secret binding field is too long")
            parts.append(struct.pack(">H", len(raw)) + raw)
        return b"".join(parts)


def header_of(key_id: str) -> bytes:
    return bytes([FORMAT_VERSION]) + bytes.fromhex(key_id)


def key_id_of(ciphertext: bytes) -> str | None:
    """The id of the key that sealed ``ciphertext``, or None if it is not of this format."""
    if len(ciphertext) < HEADER_BYTES + NONCE_BYTES + TAG_BYTES:
        return None
    if ciphertext[0] != FORMAT_VERSION:
        return None
    return ciphertext[1:HEADER_BYTES].hex()


class SecretBox:
    """Seals secrets with the ring's active key and opens them with whichever key sealed them.

    ``random_bytes`` makes the nonces; only a known-answer test passes its own.
    """

    def __init__(self, ring: KeyRing, *, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self._ring = ring
        self._random_bytes = random_bytes

    def __repr__(self) -> str:
        return f"SecretBox({self._ring!r})"

    @property
    def ring(self) -> KeyRing:
        return self._ring

    def encrypt(self, plaintext: bytes, binding: SecretBinding) -> bytes:
        """``plaintext`` sealed to ``binding`` with the active key."""
        key_id = self._ring.active_id
        header = header_of(key_id)
        nonce = self._random_bytes(NONCE_BYTES)
        if len(nonce) != NONCE_BYTES:
            raise ValueError("a nonce is 12 bytes")
        sealed = AESGCM(self._ring.key(key_id)).encrypt(
            nonce, plaintext, binding.associated_data(header)
        )
        return header + nonce + sealed

    def decrypt(self, ciphertext: bytes, binding: SecretBinding) -> bytes:
        """The plaintext; raises ``SecretUnreadable`` with a reason, never anything else."""
        if len(ciphertext) < HEADER_BYTES + NONCE_BYTES + TAG_BYTES:
            raise SecretUnreadable("it is too short to be a ciphertext")
        if ciphertext[0] != FORMAT_VERSION:
            raise SecretUnreadable(f"unknown format version {ciphertext[0]}")
        key_id = ciphertext[1:HEADER_BYTES].hex()
        if key_id not in self._ring.key_ids:
            raise SecretUnreadable(f"its key {key_id} is not in this host's key ring")
        header = ciphertext[:HEADER_BYTES]
        nonce = ciphertext[HEADER_BYTES : HEADER_BYTES + NONCE_BYTES]
        try:
            return AESGCM(self._ring.key(key_id)).decrypt(
                nonce, ciphertext[HEADER_BYTES + NONCE_BYTES :], binding.associated_data(header)
            )
        except InvalidTag:
            raise SecretUnreadable(
                "it does not authenticate (changed, or moved from another row)"
            ) from None

    def is_current(self, ciphertext: bytes) -> bool:
        """Whether ``ciphertext`` was sealed with the active key."""
        return key_id_of(ciphertext) == self._ring.active_id

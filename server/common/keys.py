"""Ed25519 keys: the host identity key, the hub's ticket key, and signatures with them."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from server.common.data_folder import FILE_MODE, private_folder


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64decode(text: str) -> bytes:
    """URL-safe base64 without padding; raises ValueError on anything else."""
    if not isinstance(text, str) or len(text) > 65536:
        raise ValueError("not base64")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64") from exc


class SigningKey:
    """An Ed25519 private key."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_bytes(cls, raw: bytes) -> SigningKey:
        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    @classmethod
    def load_or_create(cls, path: Path) -> SigningKey:
        """The key in ``path``, created (mode 0600) on first use."""
        if path.exists():
            return cls.from_bytes(b64decode(path.read_text(encoding="ascii").strip()))
        private_folder(path.parent)
        key = cls.generate()
        # Created with 0600 from the start, so the key is never readable by others.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(b64encode(key.private_bytes()) + "\n")
        return key

    def private_bytes(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    @property
    def public_key(self) -> str:
        """The public key, URL-safe base64."""
        raw = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return b64encode(raw)

    def sign(self, message: bytes) -> str:
        return b64encode(self._key.sign(message))


def verify_signature(public_key: str, message: bytes, signature: str) -> bool:
    """True if ``signature`` is ``public_key``'s over ``message``; False for anything malformed."""
    try:
        key = Ed25519PublicKey.from_public_bytes(b64decode(public_key))
        key.verify(b64decode(signature), message)
    except (ValueError, InvalidSignature):
        return False
    return True

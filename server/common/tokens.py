"""Random identifiers and bearer secrets, and the hash under which secrets are stored."""

from __future__ import annotations

import hashlib
import secrets
import uuid


def new_id() -> str:
    """A random 128-bit identifier as 32 hex characters."""
    return uuid.uuid4().hex


def new_secret() -> str:
    """A 256-bit random secret, URL-safe (session tokens, setup and invitation codes)."""
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """The SHA-256 under which a high-entropy secret is stored and looked up."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()

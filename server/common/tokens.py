"""Random identifiers and bearer secrets, and the hash under which secrets are stored."""

from __future__ import annotations

import hashlib
import secrets
import string
import uuid

# Letters and digits only: a code pasted after a command-line flag or into a URL
# never starts with "-" and never needs quoting. 43 characters carry 256 bits.
_SECRET_ALPHABET = string.ascii_letters + string.digits
_SECRET_LENGTH = 43


def new_id() -> str:
    """A random 128-bit identifier as 32 hex characters."""
    return uuid.uuid4().hex


def new_secret() -> str:
    """A 256-bit random secret of letters and digits (session tokens, setup,
    invitation and enrolment codes)."""
    return "".join(secrets.choice(_SECRET_ALPHABET) for _ in range(_SECRET_LENGTH))


def hash_secret(secret: str) -> str:
    """The SHA-256 under which a high-entropy secret is stored and looked up."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()

"""A file sealed with a passphrase: the format of backups.

Layout: a header (magic, format version, scrypt parameters, salt, nonce prefix and a
passphrase check), then the body in chunks of at most ``CHUNK_BYTES``, each sealed with
AES-256-GCM under a nonce made of the prefix, the chunk's number and a last-chunk flag,
with the whole header as associated data. So a wrong passphrase is told apart from a
changed file, and a chunk moved, dropped, changed or cut off is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from collections.abc import Iterator
from typing import BinaryIO, ClassVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from server.common.errors import CrewhostError

MAGIC = b"CREWHOST-BACKUP\n"
VERSION = 1
CHUNK_BYTES = 1 << 20
SCRYPT_LOG2_N = 15
SCRYPT_R = 8
SCRYPT_P = 1
_SALT_BYTES = 16
_PREFIX_BYTES = 7
_CHECK_BYTES = 32
_TAG_BYTES = 16
# magic, version, log2(N), r, p, salt, nonce prefix, then the passphrase check.
_HEADER = struct.Struct(f">{len(MAGIC)}sBBBB{_SALT_BYTES}s{_PREFIX_BYTES}s")
_LENGTH = struct.Struct(">I")


class ArchiveError(CrewhostError):
    """A sealed archive cannot be opened."""

    status: ClassVar[int] = 400
    code: ClassVar[str] = "backupUnreadable"


class ArchivePassphraseMissing(ArchiveError):
    code: ClassVar[str] = "backupPassphraseMissing"


class ArchivePassphraseWrong(ArchiveError):
    code: ClassVar[str] = "backupPassphraseWrong"


class ArchiveTampered(ArchiveError):
    code: ClassVar[str] = "backupTampered"


class ArchiveFormatUnknown(ArchiveError):
    code: ClassVar[str] = "backupFormatUnknown"


def _keys(passphrase: str, salt: bytes, log2_n: int, r: int, p: int) -> tuple[bytes, bytes]:
    if not passphrase:
        raise ArchivePassphraseMissing("a backup needs a passphrase (give it on standard input)")
    derived = Scrypt(salt=salt, length=64, n=1 << log2_n, r=r, p=p).derive(passphrase.encode())
    return derived[:32], derived[32:]


def _nonce(prefix: bytes, index: int, last: bool) -> bytes:
    return prefix + struct.pack(">IB", index, 1 if last else 0)


def seal_stream(
    source: BinaryIO, target: BinaryIO, passphrase: str, *, log2_n: int = SCRYPT_LOG2_N
) -> None:
    """Write ``source`` to ``target`` sealed with ``passphrase``."""
    salt, prefix = os.urandom(_SALT_BYTES), os.urandom(_PREFIX_BYTES)
    key, check_key = _keys(passphrase, salt, log2_n, SCRYPT_R, SCRYPT_P)
    header = _HEADER.pack(MAGIC, VERSION, log2_n, SCRYPT_R, SCRYPT_P, salt, prefix)
    header += hmac.new(check_key, header, hashlib.sha256).digest()
    target.write(header)
    box = AESGCM(key)
    index = 0
    chunk = source.read(CHUNK_BYTES)
    while True:
        following = source.read(CHUNK_BYTES)
        sealed = box.encrypt(_nonce(prefix, index, not following), chunk, header)
        target.write(_LENGTH.pack(len(sealed)) + sealed)
        if not following:
            return
        chunk, index = following, index + 1


def open_stream(source: BinaryIO, passphrase: str) -> Iterator[bytes]:
    """The plain chunks of a sealed ``source``; raises an ``ArchiveError`` on any doubt.

    The passphrase is checked before the first chunk; a chunk is given only once it is
    proven, and the end only once the last chunk is.
    """
    header = source.read(_HEADER.size + _CHECK_BYTES)
    if len(header) < _HEADER.size + _CHECK_BYTES or not header.startswith(MAGIC):
        raise ArchiveFormatUnknown("this file is not a Crewhost backup")
    _magic, version, log2_n, r, p, salt, prefix = _HEADER.unpack(header[: _HEADER.size])
    if version != VERSION:
        raise ArchiveFormatUnknown(
            f"this backup has format version {version}; this Crewhost reads version {VERSION}"
        )
    if not (10 <= log2_n <= 22 and 1 <= r <= 32 and 1 <= p <= 16):
        raise ArchiveTampered("the backup's header was changed")
    key, check_key = _keys(passphrase, salt, log2_n, r, p)
    expected = hmac.new(check_key, header[: _HEADER.size], hashlib.sha256).digest()
    if not hmac.compare_digest(expected, header[_HEADER.size :]):
        raise ArchivePassphraseWrong("the passphrase does not open this backup")
    box = AESGCM(key)
    index = 0
    while True:
        length = source.read(_LENGTH.size)
        if len(length) < _LENGTH.size:
            raise ArchiveTampered("the backup ends early: it was cut off or changed")
        (size,) = _LENGTH.unpack(length)
        if not _TAG_BYTES <= size <= CHUNK_BYTES + _TAG_BYTES:
            raise ArchiveTampered("the backup was changed")
        sealed = source.read(size)
        if len(sealed) < size:
            raise ArchiveTampered("the backup ends early: it was cut off or changed")
        last = _try_open(box, prefix, index, sealed, header)
        yield last[0]
        if last[1]:
            if source.read(1):
                raise ArchiveTampered("the backup has bytes after its end: it was changed")
            return
        index += 1


def _try_open(
    box: AESGCM, prefix: bytes, index: int, sealed: bytes, header: bytes
) -> tuple[bytes, bool]:
    for last in (False, True):
        try:
            return box.decrypt(_nonce(prefix, index, last), sealed, header), last
        except InvalidTag:
            continue
    raise ArchiveTampered("the backup was changed or damaged: it cannot be trusted")

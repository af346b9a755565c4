"""A file sealed with a passphrase: the format of backups.

Layout: a header (magic, format version, scrypt parameters, salt, nonce prefix, a
passphrase check and, from version 2, a SHA-256 digest of all of that), then the body in
chunks of at most ``CHUNK_BYTES``, each sealed with AES-256-GCM under a nonce made of the
prefix, the chunk's number and a last-chunk flag, with the whole header as associated
data. So a wrong passphrase is told apart from a changed file (a header changed by
accident fails its digest before the passphrase is tried), and a chunk moved, dropped,
changed or cut off is refused.

The body is sealed as it is written (``SealingWriter``), so no plain copy of it is
ever kept on disk.
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
VERSION = 2
# Version 1 had no header digest; it is still read.
READABLE_VERSIONS = (1, 2)
CHUNK_BYTES = 1 << 20
SCRYPT_LOG2_N = 15
SCRYPT_R = 8
SCRYPT_P = 1
_SALT_BYTES = 16
_PREFIX_BYTES = 7
_CHECK_BYTES = 32
_TAG_BYTES = 16
_DIGEST_BYTES = 32
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


class SealingWriter:
    """A write-only file that seals what it is given into ``target`` as it comes.

    One chunk at most is held in memory (the last-chunk flag needs to know which is the
    last); ``close`` seals that one. Nothing plain ever reaches the disk.
    """

    def __init__(self, target: BinaryIO, passphrase: str, *, log2_n: int = SCRYPT_LOG2_N):
        salt, prefix = os.urandom(_SALT_BYTES), os.urandom(_PREFIX_BYTES)
        key, check_key = _keys(passphrase, salt, log2_n, SCRYPT_R, SCRYPT_P)
        fields = _HEADER.pack(MAGIC, VERSION, log2_n, SCRYPT_R, SCRYPT_P, salt, prefix)
        checked = fields + hmac.new(check_key, fields, hashlib.sha256).digest()
        self._header = checked + hashlib.sha256(checked).digest()
        self._target = target
        self._prefix = prefix
        self._box = AESGCM(key)
        self._index = 0
        self._held = bytearray()
        self._closed = False
        target.write(self._header)

    def write(self, data: bytes | bytearray | memoryview) -> int:
        if self._closed:
            raise ValueError("write to a closed archive")
        self._held += data
        # A chunk is sealed only once more follows it, so the last one is known at close.
        while len(self._held) > CHUNK_BYTES:
            self._seal(bytes(self._held[:CHUNK_BYTES]), last=False)
            del self._held[:CHUNK_BYTES]
        return len(data)

    def close(self) -> None:
        """Seal the last chunk (an empty body is one empty chunk)."""
        if not self._closed:
            self._closed = True
            self._seal(bytes(self._held), last=True)
            self._held.clear()

    def _seal(self, chunk: bytes, *, last: bool) -> None:
        sealed = self._box.encrypt(_nonce(self._prefix, self._index, last), chunk, self._header)
        self._target.write(_LENGTH.pack(len(sealed)) + sealed)
        self._index += 1


def seal_stream(
    source: BinaryIO, target: BinaryIO, passphrase: str, *, log2_n: int = SCRYPT_LOG2_N
) -> None:
    """Write ``source`` to ``target`` sealed with ``passphrase``."""
    writer = SealingWriter(target, passphrase, log2_n=log2_n)
    while chunk := source.read(CHUNK_BYTES):
        writer.write(chunk)
    writer.close()


def open_stream(source: BinaryIO, passphrase: str) -> Iterator[bytes]:
    """The plain chunks of a sealed ``source``; raises an ``ArchiveError`` on any doubt.

    The header's digest, then the passphrase, are checked before the first chunk; a chunk
    is given only once it is proven, and the end only once the last chunk is.
    """
    fields = source.read(_HEADER.size)
    if len(fields) < _HEADER.size or not fields.startswith(MAGIC):
        raise ArchiveFormatUnknown("this file is not a Crewhost backup")
    _magic, version, log2_n, r, p, salt, prefix = _HEADER.unpack(fields)
    if version not in READABLE_VERSIONS:
        raise ArchiveFormatUnknown(
            f"this backup has format version {version}; this Crewhost reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    check = source.read(_CHECK_BYTES)
    digest = source.read(_DIGEST_BYTES) if version >= 2 else b""
    if len(check) < _CHECK_BYTES or (version >= 2 and len(digest) < _DIGEST_BYTES):
        raise ArchiveTampered("the backup ends early: it was cut off or changed")
    header = fields + check + digest
    if version >= 2 and not hmac.compare_digest(hashlib.sha256(fields + check).digest(), digest):
        raise ArchiveTampered("the backup's header was changed")
    if not (10 <= log2_n <= 22 and 1 <= r <= 32 and 1 <= p <= 16):
        raise ArchiveTampered("the backup's header was changed")
    key, check_key = _keys(passphrase, salt, log2_n, r, p)
    expected = hmac.new(check_key, fields, hashlib.sha256).digest()
    if not hmac.compare_digest(expected, check):
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

"""The sealed archive format of backups: streamed sealing, and what each change reports."""

from __future__ import annotations

import io

import pytest

from server.common.crypto.archive import (
    CHUNK_BYTES,
    MAGIC,
    ArchiveError,
    ArchiveFormatUnknown,
    ArchivePassphraseWrong,
    ArchiveTampered,
    SealingWriter,
    open_stream,
    seal_stream,
)

CHEAP = 10  # log2 of scrypt's N: the tests need no real cost
PASSPHRASE = "a backup passphrase"


def opened(sealed: bytes, passphrase: str = PASSPHRASE) -> bytes:
    return b"".join(open_stream(io.BytesIO(sealed), passphrase))


@pytest.mark.parametrize("size", [0, 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES + 5])
def test_a_body_written_in_pieces_opens_whole(size: int) -> None:
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    out = io.BytesIO()
    writer = SealingWriter(out, PASSPHRASE, log2_n=CHEAP)
    for start in range(0, size, 70_001):
        writer.write(body[start : start + 70_001])
    writer.close()
    assert opened(out.getvalue()) == body
    assert len(body) < 64 or body[:64] not in out.getvalue()


def sealed_body() -> bytes:
    out = io.BytesIO()
    seal_stream(io.BytesIO(b"the body" * 1000), out, PASSPHRASE, log2_n=CHEAP)
    return out.getvalue()


def test_a_changed_header_byte_is_tampering_not_a_wrong_passphrase() -> None:
    sealed = sealed_body()
    with pytest.raises(ArchivePassphraseWrong):
        opened(sealed, "another passphrase")
    # magic, version, scrypt costs, salt, nonce prefix, passphrase check, digest
    header_end = len(MAGIC) + 4 + 16 + 7 + 32 + 32
    for offset in range(len(MAGIC), header_end):
        changed = bytearray(sealed)
        changed[offset] ^= 0x01
        expected: type[ArchiveError] = (
            ArchiveFormatUnknown if offset == len(MAGIC) else ArchiveTampered
        )
        with pytest.raises(ArchiveError) as caught:
            opened(bytes(changed))
        assert type(caught.value) is expected, (offset, caught.value)
    assert opened(sealed) == b"the body" * 1000

"""The secret box: a format locked by known answers, and every tamper or move refused."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from server.common.crypto.box import (
    HEADER_BYTES,
    NONCE_BYTES,
    SecretBinding,
    SecretBox,
    SecretUnreadable,
    key_id_of,
)
from server.common.crypto.ring import KeyRing

KEY_ID = "0a0b0c0d"
KEY = bytes(range(32))
NONCE = bytes.fromhex("f0e1d2c3b4a5968778695a4b")
BINDING = SecretBinding(
    team_id="team-a",
    table="providers",
    row_id="anthropic",
    column="api_key",
    purpose="provider-api-key",
)
PLAINTEXT = b"sk-ant-test-key"
# version 1 | key id | nonce | AES-256-GCM output (ciphertext, tag); committed, never regenerated.
VECTOR = bytes.fromhex(
    "01" "0a0b0c0d" "f0e1d2c3b4a5968778695a4b"
    "9cbe9686cae7aecde3f2967fd02b16"
    "120e804fb52e1acedd22364c20c74db7"
)  # fmt: skip
# header | then purpose, team, table, column, row: each a 2-byte length and its bytes.
ASSOCIATED = bytes.fromhex(
    "010a0b0c0d"
    "0010" + b"provider-api-key".hex()
    + "0006" + b"team-a".hex()
    + "0009" + b"providers".hex()
    + "0007" + b"api_key".hex()
    + "0009" + b"anthropic".hex()
)  # fmt: skip


def fixed_box() -> SecretBox:
    return SecretBox(KeyRing({KEY_ID: KEY}, KEY_ID), random_bytes=lambda _n: NONCE)


def test_a_fixed_key_nonce_and_binding_give_the_committed_bytes() -> None:
    assert BINDING.associated_data(VECTOR[:HEADER_BYTES]) == ASSOCIATED
    sealed = fixed_box().encrypt(PLAINTEXT, BINDING)
    assert sealed == VECTOR
    # The same bytes from AES-GCM itself: the format is header, nonce, GCM output.
    assert sealed == VECTOR[:5] + NONCE + AESGCM(KEY).encrypt(NONCE, PLAINTEXT, ASSOCIATED)
    assert key_id_of(sealed) == KEY_ID


def test_the_committed_vector_decrypts() -> None:
    box = SecretBox(KeyRing({KEY_ID: KEY}, KEY_ID))
    assert box.decrypt(VECTOR, BINDING) == PLAINTEXT


def test_round_trip_with_fresh_nonces() -> None:
    box = SecretBox(KeyRing.generate())
    first = box.encrypt(b"secret", BINDING)
    second = box.encrypt(b"secret", BINDING)
    assert first != second
    assert first[HEADER_BYTES : HEADER_BYTES + NONCE_BYTES] != second[5:17]
    assert box.decrypt(first, BINDING) == box.decrypt(second, BINDING) == b"secret"
    assert box.decrypt(box.encrypt(b"", BINDING), BINDING) == b""
    assert b"secret" not in first


def flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


@pytest.mark.parametrize(
    ("part", "index", "reason"),
    [
        ("format version", 0, "unknown format version"),
        ("key id", 1, "is not in this host's key ring"),
        ("key id", 4, "is not in this host's key ring"),
        ("nonce", HEADER_BYTES, "does not authenticate"),
        ("nonce", HEADER_BYTES + NONCE_BYTES - 1, "does not authenticate"),
        ("ciphertext", HEADER_BYTES + NONCE_BYTES, "does not authenticate"),
        ("tag", len(VECTOR) - 16, "does not authenticate"),
        ("tag", len(VECTOR) - 1, "does not authenticate"),
    ],
)
def test_a_change_to_any_part_is_refused(part: str, index: int, reason: str) -> None:
    box = SecretBox(KeyRing({KEY_ID: KEY}, KEY_ID))
    with pytest.raises(SecretUnreadable, match=reason) as caught:
        box.decrypt(flip(VECTOR, index), BINDING)
    assert caught.value.code == "secretUnreadable", part


def test_a_key_id_changed_to_another_key_of_the_ring_is_refused() -> None:
    other = "0a0b0c0c"
    box = SecretBox(KeyRing({KEY_ID: KEY, other: KEY}, KEY_ID))
    # Same key bytes under the other id: only the header in the associated data catches it.
    with pytest.raises(SecretUnreadable, match="does not authenticate"):
        box.decrypt(flip(VECTOR, 4), BINDING)


def test_a_short_or_truncated_ciphertext_is_refused() -> None:
    box = SecretBox(KeyRing({KEY_ID: KEY}, KEY_ID))
    for data in (
        b"",
        VECTOR[:HEADER_BYTES],
        VECTOR[:-1],
        VECTOR[: HEADER_BYTES + NONCE_BYTES + 15],
    ):
        with pytest.raises(SecretUnreadable):
            box.decrypt(data, BINDING)
    assert key_id_of(b"\x01\x02") is None


@pytest.mark.parametrize(
    "moved",
    [
        replace(BINDING, row_id="openai"),
        replace(BINDING, team_id="team-b"),
        replace(BINDING, column="password"),
        replace(BINDING, table="vault_items"),
        replace(BINDING, purpose="proxy-password"),
        # Lengths are part of the associated data: shifting a character between fields fails.
        replace(BINDING, team_id="team-", table="aproviders"),
    ],
)
def test_a_ciphertext_moved_elsewhere_is_refused(moved: SecretBinding) -> None:
    box = SecretBox(KeyRing({KEY_ID: KEY}, KEY_ID))
    with pytest.raises(SecretUnreadable, match="moved from another row"):
        box.decrypt(VECTOR, moved)


def test_a_ring_without_the_key_cannot_open_it_and_says_which_key() -> None:
    with pytest.raises(SecretUnreadable, match=f"its key {KEY_ID} is not"):
        SecretBox(KeyRing.generate()).decrypt(VECTOR, BINDING)


def test_nothing_secret_in_a_repr() -> None:
    ring = KeyRing({KEY_ID: KEY}, KEY_ID)
    for shown in (repr(ring), repr(SecretBox(ring))):
        assert KEY_ID in shown
        assert KEY.hex() not in shown
        assert repr(KEY) not in shown

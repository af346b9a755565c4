"""The key ring file: 0600, wrapped by a passphrase when one is given, refused when damaged."""

from __future__ import annotations

import contextlib
import json
import stat
from pathlib import Path

import pytest

from server.common.crypto.box import SecretBinding, SecretBox
from server.common.crypto.ring import (
    KeyRing,
    KeyRingBusy,
    KeyRingError,
    KeyRingFile,
    KeyRingLocked,
    KeyRingMissing,
    KeyRingNotWrapped,
)

# The cheapest scrypt cost the file accepts keeps these tests fast; the host uses 2**15.
CHEAP = 2**4
BINDING = SecretBinding("team-a", "providers", "openai", "api_key", "provider-api-key")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_ring_is_a_0600_file_in_a_0700_folder(tmp_path: Path) -> None:
    ring_file = KeyRingFile(tmp_path / "host" / "key-ring.json")
    ring = ring_file.create()
    assert mode(ring_file.path) == 0o600
    assert mode(ring_file.path.parent) == 0o700
    loaded = ring_file.load()
    assert loaded.active_id == ring.active_id
    assert loaded.key(ring.active_id) == ring.key(ring.active_id)
    with pytest.raises(KeyRingError, match="a key ring exists"):
        ring_file.create()
    # Saving again replaces the file whole and keeps it private.
    ring_file.save(ring.with_new_key())
    assert mode(ring_file.path) == 0o600
    assert list(ring_file.path.parent.iterdir()) == [ring_file.path]


def test_a_missing_ring_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KeyRingMissing, match="there is no key ring") as caught:
        KeyRingFile(tmp_path / "key-ring.json").load()
    assert caught.value.code == "keyRingMissing"


def test_a_passphrase_wrapped_ring_round_trips_and_holds_no_key_in_clear(tmp_path: Path) -> None:
    path = tmp_path / "key-ring.json"
    ring = KeyRingFile(path, "correct horse", scrypt_n=CHEAP).create()
    document = json.loads(path.read_text())
    assert set(document) == {"format", "version", "kdf", "wrapped"}
    assert document["kdf"]["name"] == "scrypt"
    assert ring.active_id not in path.read_text()
    assert mode(path) == 0o600

    loaded = KeyRingFile(path, "correct horse").load()
    sealed = SecretBox(ring).encrypt(b"sk-test", BINDING)
    assert SecretBox(loaded).decrypt(sealed, BINDING) == b"sk-test"


def test_a_wrong_or_missing_passphrase_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "key-ring.json"
    KeyRingFile(path, "correct horse", scrypt_n=CHEAP).create()
    with pytest.raises(KeyRingLocked, match="does not open the key ring") as caught:
        KeyRingFile(path, "wrong horse").load()
    assert caught.value.code == "keyRingLocked"
    with pytest.raises(KeyRingLocked, match="set CREWHOST_MASTER_PASSPHRASE"):
        KeyRingFile(path).load()


def test_a_plain_ring_is_only_read_with_a_passphrase_and_wrapped_only_when_asked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "key-ring.json"
    ring = KeyRingFile(path).create()
    plain = path.read_bytes()
    # A passphrase given to a plain ring never wraps it on the way: a typo would lock it.
    with pytest.raises(KeyRingNotWrapped, match="crewhost admin wrap-key-ring") as caught:
        KeyRingFile(path, "now wrapped", scrypt_n=CHEAP).load()
    assert caught.value.code == "keyRingNotWrapped"
    assert path.read_bytes() == plain
    KeyRingFile(path, scrypt_n=CHEAP).wrap("now wrapped")
    assert "wrapped" in json.loads(path.read_text())
    assert mode(path) == 0o600
    with pytest.raises(KeyRingLocked):
        KeyRingFile(path).load()
    assert KeyRingFile(path, "now wrapped").load().key(ring.active_id) == ring.key(ring.active_id)
    with pytest.raises(KeyRingError, match="wrapped already"):
        KeyRingFile(path).wrap("again")


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "{}",
        json.dumps({"format": "crewhost-key-ring", "version": 2, "active": "x", "keys": {}}),
        json.dumps({"format": "crewhost-key-ring", "version": 1, "active": "00000000", "keys": {}}),
        json.dumps(
            {"format": "crewhost-key-ring", "version": 1, "active": "0a", "keys": {"0a": "AAAA"}}
        ),
        json.dumps(
            {
                "format": "crewhost-key-ring",
                "version": 1,
                "kdf": {"name": "pbkdf1", "salt": "", "n": 2, "r": 1, "p": 1},
                "wrapped": "",
            }
        ),
    ],
)
def test_a_damaged_ring_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "key-ring.json"
    path.write_text(content)
    with pytest.raises(KeyRingError, match="is damaged") as caught:
        KeyRingFile(path, "pass").load()
    assert caught.value.code == "keyRingInvalid"


def test_rings_gain_and_lose_keys_but_never_the_active_one() -> None:
    ring = KeyRing.generate()
    rotated = ring.with_new_key()
    assert rotated.key_ids == (ring.active_id, rotated.active_id)
    assert rotated.active_id != ring.active_id
    assert rotated.without(ring.active_id).key_ids == (rotated.active_id,)
    with pytest.raises(ValueError, match="active key"):
        rotated.without(rotated.active_id)


def test_hosts_share_the_ring_and_a_rotation_holds_it_alone(tmp_path: Path) -> None:
    ring_file = KeyRingFile(tmp_path / "key-ring.json")
    with contextlib.ExitStack() as hosts:
        hosts.enter_context(ring_file.hold(exclusive=False))
        hosts.enter_context(ring_file.hold(exclusive=False))
        with pytest.raises(KeyRingBusy, match="a host is running"):
            hosts.enter_context(ring_file.hold(exclusive=True))
    with contextlib.ExitStack() as rotation:
        rotation.enter_context(ring_file.hold(exclusive=True))
        with pytest.raises(KeyRingBusy, match="rotation is under way"):
            rotation.enter_context(ring_file.hold(exclusive=False))
    with ring_file.hold(exclusive=True):
        pass  # free again once both let go
    assert mode(ring_file.lock_path) == 0o600

"""The key ring: the secret box's AES-256 keys, one of them active, kept in one file.

The file is 0600 in the data folder. With a passphrase it holds the keys wrapped:
scrypt turns the passphrase and a random salt into a key that seals the ring with
AES-256-GCM, so a copy of the data folder alone opens nothing. Old keys stay in
the ring after a rotation until ``retire-key`` removes them.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from server.common.data_folder import FILE_MODE, private_folder
from server.common.errors import CrewhostError

KEY_BYTES = 32
KEY_ID_BYTES = 4
FILE_FORMAT = "crewhost-key-ring"
FILE_VERSION = 1
SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1
_SALT_BYTES = 16
_NONCE_BYTES = 12
_WRAP_AAD = b"crewhost-key-ring/1"


class KeyRingError(CrewhostError):
    """The key ring cannot be used as it is."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "keyRingInvalid"


class KeyRingMissing(KeyRingError):
    """No key ring where one must be."""

    code: ClassVar[str] = "keyRingMissing"


class KeyRingLocked(KeyRingError):
    """The key ring is wrapped and no passphrase, or the wrong one, was given."""

    code: ClassVar[str] = "keyRingLocked"


class KeyRingNotWrapped(KeyRingError):
    """A passphrase is set, but the ring on disk is plain: wrapping it is a command of its own."""

    code: ClassVar[str] = "keyRingNotWrapped"


class KeyRingBusy(KeyRingError):
    """Another process holds the key ring (a running host, or a rotation under way)."""

    status: ClassVar[int] = 409
    code: ClassVar[str] = "keyRingBusy"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise ValueError("not base64")
    return base64.b64decode(text, validate=True)


class KeyRing:
    """Keys by id (eight hex digits), in the order they were added; one is active."""

    def __init__(self, keys: Mapping[str, bytes], active_id: str) -> None:
        for key_id, key in keys.items():
            if len(bytes.fromhex(key_id)) != KEY_ID_BYTES or len(key) != KEY_BYTES:
                raise ValueError("a key id is 4 bytes and a key 32")
        if active_id not in keys:
            raise ValueError("the active key is not in the ring")
        self._keys = dict(keys)
        self.active_id = active_id

    @classmethod
    def generate(cls) -> KeyRing:
        """A ring with one new random key."""
        key_id = os.urandom(KEY_ID_BYTES).hex()
        return cls({key_id: AESGCM.generate_key(bit_length=256)}, key_id)

    def __repr__(self) -> str:
        # Ids only: a ring in a log line or a traceback never shows a key.
        return f"KeyRing(active={self.active_id}, keys={list(self._keys)})"

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def key(self, key_id: str) -> bytes:
        return self._keys[key_id]

    def with_new_key(self) -> KeyRing:
        """This ring plus a new random key, which becomes the active one."""
        key_id = os.urandom(KEY_ID_BYTES).hex()
        while key_id in self._keys:
            key_id = os.urandom(KEY_ID_BYTES).hex()
        return KeyRing({**self._keys, key_id: AESGCM.generate_key(bit_length=256)}, key_id)

    def without(self, key_id: str) -> KeyRing:
        """This ring less ``key_id`` (never the active key)."""
        if key_id == self.active_id:
            raise ValueError("the active key cannot leave the ring")
        return KeyRing({k: v for k, v in self._keys.items() if k != key_id}, self.active_id)

    def _to_json(self) -> dict[str, Any]:
        return {"active": self.active_id, "keys": {k: _b64(v) for k, v in self._keys.items()}}

    @classmethod
    def _from_json(cls, data: Any) -> KeyRing:
        if not isinstance(data, dict) or not isinstance(data.get("keys"), dict):
            raise ValueError("no keys")
        keys = {str(k): _unb64(v) for k, v in data["keys"].items()}
        return cls(keys, str(data.get("active")))


class KeyRingFile:
    """The key ring's file; wrapped by ``passphrase`` when one is given.

    Every method reads or writes the disk, and scrypt takes a noticeable moment:
    async code calls them in a thread.
    """

    def __init__(self, path: Path, passphrase: str | None = None, *, scrypt_n: int = SCRYPT_N):
        self.path = path
        self._passphrase = passphrase or None
        self._scrypt_n = scrypt_n

    def __repr__(self) -> str:
        return f"KeyRingFile({str(self.path)!r}, wrapped={self._passphrase is not None})"

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> KeyRing:
        """The ring. Reads only: a plain file with a passphrase given is refused
        (``keyRingNotWrapped``), never wrapped on the way, so a mistyped passphrase
        cannot lock the secrets; ``crewhost admin wrap-key-ring`` wraps it."""
        document = self._document()
        try:
            if "wrapped" in document:
                return self._unwrap(document)
            ring = KeyRing._from_json(document)
        except (ValueError, TypeError, KeyError, AttributeError, binascii.Error) as exc:
            raise KeyRingError(f"the key ring {self.path} is damaged") from exc
        if self._passphrase is not None:
            raise KeyRingNotWrapped(
                f"CREWHOST_MASTER_PASSPHRASE is set, but the key ring {self.path} is not "
                "wrapped: stop the server and run `crewhost admin wrap-key-ring` (it asks "
                "for the passphrase twice), or unset CREWHOST_MASTER_PASSPHRASE"
            )
        return ring

    def is_wrapped(self) -> bool:
        """Whether the ring on disk is wrapped by a passphrase."""
        return "wrapped" in self._document()

    def wrap(self, passphrase: str) -> None:
        """Wrap the plain ring on disk with ``passphrase`` (this file's own must be None).

        The caller holds the ring alone. The new file is read back with the passphrase
        before this returns, so a ring that does not open is never left in place.
        """
        if not passphrase:
            raise KeyRingLocked("wrapping the key ring needs a passphrase")
        if self.is_wrapped():
            raise KeyRingError(f"the key ring {self.path} is wrapped already")
        ring = self.load()
        wrapped = KeyRingFile(self.path, passphrase, scrypt_n=self._scrypt_n)
        wrapped.save(ring)
        if wrapped.load().key_ids != ring.key_ids:  # pragma: no cover - a disk that lies
            self.save(ring)
            raise KeyRingError(f"the wrapped key ring {self.path} did not read back")

    def _document(self) -> dict[str, Any]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeyRingMissing(f"there is no key ring at {self.path}") from None
        except OSError as exc:
            raise KeyRingError(f"cannot read the key ring {self.path}: {exc.strerror}") from exc
        try:
            document = json.loads(raw)
            if not isinstance(document, dict):
                raise ValueError("not an object")
            if document.get("format") != FILE_FORMAT or document.get("version") != FILE_VERSION:
                raise ValueError("not a key ring of this version")
        except ValueError as exc:
            raise KeyRingError(f"the key ring {self.path} is damaged") from exc
        return document

    def create(self) -> KeyRing:
        """A new ring with one key, written where none was."""
        if self.exists():
            raise KeyRingError(f"a key ring exists at {self.path} already")
        ring = KeyRing.generate()
        self.save(ring)
        return ring

    def save(self, ring: KeyRing) -> None:
        """Write ``ring`` in place of the old file, all or nothing (0600 from the start)."""
        document: dict[str, Any] = {"format": FILE_FORMAT, "version": FILE_VERSION}
        if self._passphrase is None:
            document.update(ring._to_json())
        else:
            document.update(self._wrap(ring))
        private_folder(self.path.parent)
        temporary = self.path.with_name(f".{self.path.name}.{os.urandom(6).hex()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(document, indent=2) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

    @contextlib.contextmanager
    def hold(self, *, exclusive: bool) -> Iterator[None]:
        """Hold the ring: shared by every running host, exclusive for a rotation or retirement.

        Refuses at once (``keyRingBusy``) rather than waiting.
        """
        private_folder(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            try:
                fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                if exclusive:
                    raise KeyRingBusy(
                        "a host is running on this data folder (or a rotation is under way): "
                        "stop it first"
                    ) from None
                raise KeyRingBusy(
                    "a key rotation is under way: start the host when it ends"
                ) from None
            yield
        finally:
            os.close(fd)  # closing the file releases the lock

    def _kek(self, salt: bytes, n: int, r: int, p: int) -> bytes:
        assert self._passphrase is not None
        return Scrypt(salt=salt, length=KEY_BYTES, n=n, r=r, p=p).derive(
            self._passphrase.encode("utf-8")
        )

    def _wrap(self, ring: KeyRing) -> dict[str, Any]:
        salt = os.urandom(_SALT_BYTES)
        nonce = os.urandom(_NONCE_BYTES)
        kek = self._kek(salt, self._scrypt_n, SCRYPT_R, SCRYPT_P)
        inner = json.dumps(ring._to_json()).encode("utf-8")
        sealed = AESGCM(kek).encrypt(nonce, inner, _WRAP_AAD)
        kdf = {"name": "scrypt", "salt": _b64(salt), "n": self._scrypt_n, "r": SCRYPT_R}
        kdf["p"] = SCRYPT_P
        return {"kdf": kdf, "wrapped": _b64(nonce + sealed)}

    def _unwrap(self, document: dict[str, Any]) -> KeyRing:
        if self._passphrase is None:
            raise KeyRingLocked(
                f"the key ring {self.path} is wrapped by a passphrase: "
                "set CREWHOST_MASTER_PASSPHRASE"
            )
        kdf = document["kdf"]
        if kdf.get("name") != "scrypt":
            raise ValueError("unknown key derivation")
        n, r, p = (int(kdf[name]) for name in ("n", "r", "p"))
        if not (2 <= n <= 2**22 and 1 <= r <= 32 and 1 <= p <= 16):
            raise ValueError("scrypt costs out of range")
        kek = self._kek(_unb64(kdf["salt"]), n, r, p)
        blob = _unb64(document["wrapped"])
        try:
            inner = AESGCM(kek).decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], _WRAP_AAD)
        except InvalidTag:
            raise KeyRingLocked(
                f"the master passphrase does not open the key ring {self.path}"
            ) from None
        return KeyRing._from_json(json.loads(inner))

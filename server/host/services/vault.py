"""A team's vault: logins, cards and contact details, their secret fields sealed.

Secret fields (a login's password and TOTP secret, a card's number and security code)
are sealed before they are written, each bound to its team, item and field, and leave
this service only through ``open_secret``, which secure entry alone calls to put a value
into a page. What the routes show is everything else, a card's last four digits and
brand, and which secrets are set. A field sent back as ``MASK`` keeps its value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import re
import struct
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, get_args
from urllib.parse import urlsplit

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.crypto.columns import EncryptedColumn
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol.events import HostEvent, VaultChanged
from server.db.engine import Database
from server.db.tables import (
    VAULT_CARD_NUMBER,
    VAULT_PASSWORD,
    VAULT_SECURITY_CODE,
    VAULT_TOTP_SECRET,
)
from server.host.services.kept_secrets import refuse_moved
from server.host.storage.vault import (
    VaultItemFields,
    VaultItemMarks,
    VaultItemRow,
    VaultRepository,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

VaultKind = Literal["login", "card", "contact"]
SecretField = Literal["password", "totp_secret", "number", "security_code"]

MAX_ITEMS = 1_000
MAX_SITES = 20
MAX_SITE_LENGTH = 2048
# What a form shows in place of a set secret; sent back unchanged, it keeps the value.
MASK = "\u2022" * 8

# Each kind's fields, and the longest each may be (sites: per site).
KIND_FIELDS: dict[VaultKind, dict[str, int]] = {
    "login": {
        "name": 100,
        "sites": MAX_SITE_LENGTH,
        "username": 254,
        "password": 1024,
        "totp_secret": 256,
        "notes": 2000,
    },
    "card": {
        "name": 100,
        "cardholder": 100,
        "number": 23,
        "expiry": 7,
        "security_code": 4,
        "billing_address": 500,
    },
    "contact": {"name": 100, "email": 254, "phone": 40, "postal_address": 500},
}
SECRET_COLUMNS: dict[SecretField, EncryptedColumn] = {
    "password": VAULT_PASSWORD,
    "totp_secret": VAULT_TOTP_SECRET,
    "number": VAULT_CARD_NUMBER,
    "security_code": VAULT_SECURITY_CODE,
}
SECRET_FIELDS: frozenset[str] = frozenset(get_args(SecretField))
KINDS: tuple[VaultKind, ...] = get_args(VaultKind)

_EXPIRY = re.compile(r"^(0[1-9]|1[0-2])/(\d{2}|\d{4})$")
_BASE32 = re.compile(r"^[A-Z2-7]+=*$")


@dataclass(frozen=True, slots=True)
class VaultSummary:
    """What every member, and an agent, may know of an item: never a value."""

    id: str
    kind: VaultKind
    name: str
    sites: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class VaultItemView:
    """What an owner or admin reads of an item: its fields without any secret in them."""

    id: str
    kind: VaultKind
    name: str
    sites: tuple[str, ...]
    username: str | None
    notes: str | None
    cardholder: str | None
    expiry: str | None
    billing_address: str | None
    card_last4: str | None
    card_brand: str | None
    email: str | None
    phone: str | None
    postal_address: str | None
    # The secret fields that hold a value.
    secrets_set: tuple[SecretField, ...]
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class VaultPage(Generic[T]):
    """Some of a team's items, and how many it has in all."""

    items: list[T]
    total: int


class VaultService:
    """List, add, change and delete a team's vault items; seal and open their secrets."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        box: SecretBox,
        announce: Callable[[str, HostEvent], None] | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._box = box
        self._announce = announce
        self._repo = VaultRepository()

    def _changed(self, team_id: str) -> None:
        if self._announce is not None:
            self._announce(team_id, VaultChanged())

    async def list_summaries(
        self, team_id: str, *, offset: int = 0, limit: int | None = None
    ) -> VaultPage[VaultSummary]:
        """Items' ids, kinds, names and sites, by name: ``limit`` from ``offset``."""
        rows, total = await self._page(team_id, offset, limit)
        return VaultPage([_summary(row) for row in rows], total)

    async def list_items(
        self, team_id: str, *, offset: int = 0, limit: int | None = None
    ) -> VaultPage[VaultItemView]:
        """Items without their secrets, by name: ``limit`` from ``offset``."""
        rows, total = await self._page(team_id, offset, limit)
        return VaultPage([_view(row) for row in rows], total)

    async def _page(
        self, team_id: str, offset: int, limit: int | None
    ) -> tuple[list[VaultItemMarks], int]:
        async with self._db.read() as conn:
            return await self._repo.list_marked(conn, team_id, offset=offset, limit=limit)

    async def read_item(self, team_id: str, item_id: str) -> VaultItemView:
        return _view(VaultItemMarks.of(await self._get(team_id, item_id)))

    async def summary(self, team_id: str, item_id: str) -> VaultSummary:
        return _summary(await self._get(team_id, item_id))

    async def create_item(
        self, team_id: str, kind: str, values: Mapping[str, object]
    ) -> VaultItemView:
        """A new item of ``kind``; refused (``vaultFull``) past ``MAX_ITEMS`` in a team."""
        checked_kind = _check_kind(kind)
        if "name" not in values:
            raise InvalidArgument("an item needs a name", field="name")
        item_id = uuid.uuid4().hex
        columns = self._columns(team_id, item_id, checked_kind, values, creating=True)
        now = self._clock.now()
        blank: dict[str, object] = dict.fromkeys(_NULLABLE)
        row = VaultItemRow(
            **{  # type: ignore[arg-type]
                **blank,
                "sites": (),
                **columns,
                "team_id": team_id,
                "id": item_id,
                "kind": checked_kind,
                "created_at": now,
                "updated_at": now,
            }
        )
        async with self._db.write() as conn:
            if await self._repo.count_items(conn, team_id) >= MAX_ITEMS:
                raise Conflict(
                    f"a team's vault holds at most {MAX_ITEMS} items; delete one first",
                    code="vaultFull",
                )
            await self._repo.add_item(conn, row)
        log.info("vault item added", extra={"team_id": team_id, "item_id": item_id, "kind": kind})
        self._changed(team_id)
        return _view(VaultItemMarks.of(row))

    async def update_item(
        self, team_id: str, item_id: str, values: Mapping[str, object]
    ) -> VaultItemView:
        """Change the fields named in ``values``; a secret given as ``MASK`` keeps its value,
        and None clears a field (a name and a login's sites cannot be cleared)."""
        async with self._db.write() as conn:
            row = await self._repo.get_item(conn, team_id, item_id)
            if row is None:
                raise _not_found()
            kind = _check_kind(row.kind)
            columns = self._columns(team_id, item_id, kind, values, creating=False)
            _refuse_kept_for_new_sites(row, columns)
            await self._repo.update_item(
                conn, team_id, item_id, updated_at=self._clock.now(), **columns
            )
            updated = await self._repo.get_item(conn, team_id, item_id)
        assert updated is not None
        log.info("vault item changed", extra={"team_id": team_id, "item_id": item_id})
        self._changed(team_id)
        return _view(VaultItemMarks.of(updated))

    async def delete_item(self, team_id: str, item_id: str) -> None:
        async with self._db.write() as conn:
            if not await self._repo.remove_item(conn, team_id, item_id):
                raise _not_found()
        log.info("vault item deleted", extra={"team_id": team_id, "item_id": item_id})
        self._changed(team_id)

    async def open_secret(self, team_id: str, item_id: str, secret: SecretField) -> str | None:
        """The value of one secret field (None when it is not set), for secure entry only."""
        row = await self._get(team_id, item_id)
        ciphertext: bytes | None = getattr(row, SECRET_COLUMNS[secret].column)
        if ciphertext is None:
            return None
        binding = SECRET_COLUMNS[secret].binding(team_id, item_id)
        try:
            return self._box.decrypt(ciphertext, binding).decode("utf-8")
        except SecretUnreadable as exc:
            raise Conflict(
                f"the {secret.replace('_', ' ')} of vault item {row.name} cannot be opened on "
                f"this host: {exc.reason}; set it again",
                code="vaultSecretUnusable",
            ) from exc

    async def one_time_code(self, team_id: str, item_id: str) -> str | None:
        """A login's current six-digit TOTP code (RFC 6238, 30 s steps), for secure entry."""
        secret = await self.open_secret(team_id, item_id, "totp_secret")
        if secret is None:
            return None
        return totp_code(secret, self._clock.now())

    async def _get(self, team_id: str, item_id: str) -> VaultItemRow:
        async with self._db.read() as conn:
            row = await self._repo.get_item(conn, team_id, item_id)
        if row is None:
            raise _not_found()
        return row

    def _columns(
        self,
        team_id: str,
        item_id: str,
        kind: VaultKind,
        values: Mapping[str, object],
        *,
        creating: bool,
    ) -> dict[str, object]:
        """``values`` checked for ``kind`` as the columns they set, secrets sealed."""
        allowed = KIND_FIELDS[kind]
        columns: dict[str, object] = {}
        for name, value in values.items():
            if name not in allowed:
                raise InvalidArgument(
                    f"a {kind} item has no field {name!r}",
                    code="vaultFieldNotAllowed",
                    field=name,
                )
            if name in SECRET_FIELDS:
                if value == MASK:
                    continue
                column = SECRET_COLUMNS[name]  # type: ignore[index]
                text = None if value is None else _check_secret(name, value, allowed[name])
                if name == "number":
                    columns["card_last4"] = None if text is None else text[-4:]
                    columns["card_brand"] = None if text is None else card_brand(text)
                columns[column.column] = (
                    None
                    if text is None
                    else self._box.encrypt(text.encode("utf-8"), column.binding(team_id, item_id))
                )
            elif name == "sites":
                columns["sites"] = check_sites(value)
            elif value is None:
                if name == "name":
                    raise InvalidArgument("an item needs a name", field="name")
                columns[name] = None
            else:
                columns[name] = _check_text(name, value, allowed[name])
        if kind == "login" and "sites" in columns and not columns["sites"]:
            raise InvalidArgument("a login names at least one site", field="sites")
        if kind == "login" and creating and not columns.get("sites"):
            raise InvalidArgument("a login names at least one site", field="sites")
        return columns


def _refuse_kept_for_new_sites(row: VaultItemRow, columns: dict[str, object]) -> None:
    """A login's secrets are entered on its sites only: one kept (not given again, nor
    cleared) does not go with a site added (``kept_secrets``)."""
    sites = columns.get("sites")
    if not isinstance(sites, tuple):
        return
    added = set(sites) - set(row.sites)  # each already an origin (``check_sites``)
    if not added:
        return
    login_secrets: tuple[tuple[SecretField, str], ...] = (
        ("password", "password"),
        ("totp_secret", "totpSecret"),
    )
    for name, field in login_secrets:
        column = SECRET_COLUMNS[name].column
        if column not in columns and getattr(row, column) is not None:
            refuse_moved(field, "the login's sites")


_NULLABLE = (
    "username",
    "notes",
    "cardholder",
    "expiry",
    "billing_address",
    "card_last4",
    "card_brand",
    "email",
    "phone",
    "postal_address",
    "password",
    "totp_secret",
    "card_number",
    "security_code",
)


def _not_found() -> NotFound:
    return NotFound("no such vault item", code="vaultItemNotFound")


def _check_kind(kind: str) -> VaultKind:
    if kind not in KINDS:
        raise InvalidArgument("an item is a login, a card or a contact", field="kind")
    return kind


def _check_text(name: str, value: object, longest: int) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} is text", field=name)
    text = value.strip()
    multiline = name in ("notes", "billing_address", "postal_address")
    if not text:
        raise InvalidArgument(f"{name} is empty; leave it out instead", field=name)
    if len(text) > longest:
        raise InvalidArgument(f"{name} has at most {longest} characters", field=name)
    if any((ord(ch) < 32 and not (multiline and ch == "\n")) or ord(ch) == 127 for ch in text):
        raise InvalidArgument(f"{name} has no control characters", field=name)
    if name == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
        raise InvalidArgument("the email address is not valid", field=name)
    if name == "expiry" and not _EXPIRY.fullmatch(text):
        raise InvalidArgument("an expiry is MM/YY or MM/YYYY", field=name)
    return text


def _check_secret(name: str, value: object, longest: int) -> str:
    """A secret as it is stored: a card number as digits only, a TOTP secret in capitals
    without spaces. Messages never quote the value."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} is text", field=name)
    text = value
    if name == "number":
        text = re.sub(r"[ -]", "", value)
        if not (_ascii_digits(text) and 12 <= len(text) <= 19 and _luhn(text)):
            raise InvalidArgument(
                "the card number is not valid", code="vaultCardNumberInvalid", field=name
            )
    elif name == "security_code":
        if not (_ascii_digits(text) and 3 <= len(text) <= 4):
            raise InvalidArgument("a security code is 3 or 4 digits", field=name)
    elif name == "totp_secret":
        text = re.sub(r"\s", "", value).upper()
        if not (_BASE32.fullmatch(text) and _base32_key(text) is not None):
            raise InvalidArgument("a TOTP secret is base32 text", field=name)
    if not text:
        raise InvalidArgument(f"{name} is empty; send null to clear it", field=name)
    if len(text) > longest:
        raise InvalidArgument(f"{name} has at most {longest} characters", field=name)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise InvalidArgument(f"{name} has no control characters", field=name)
    return text


def _ascii_digits(text: str) -> bool:
    # str.isdigit() also takes superscripts and other scripts' digits, which int() refuses.
    return text.isascii() and text.isdigit()


def _base32_key(secret: str) -> bytes | None:
    """The key a base32 TOTP secret spells, padded as it needs; None when it spells none."""
    letters = secret.rstrip("=")
    try:
        return base64.b32decode(letters + "=" * (-len(letters) % 8))
    except binascii.Error:
        return None


def totp_code(secret: str, now: float, *, step: int = 30, digits: int = 6) -> str:
    """The TOTP code of a base32 ``secret`` at ``now`` (HMAC-SHA1, RFC 6238).

    Raises ``Conflict`` (``vaultSecretUnusable``) for a secret that is not base32, one
    stored before secrets were checked this closely."""
    key = _base32_key(secret)
    if key is None:
        raise Conflict(
            "the TOTP secret of this vault item is not valid base32; set it again",
            code="vaultSecretUnusable",
        )
    counter = struct.pack(">Q", int(now // step))
    mac = hmac.new(key, counter, hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    number = struct.unpack(">I", mac[offset : offset + 4])[0] & 0x7FFFFFFF
    return str(number % 10**digits).zfill(digits)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def card_brand(digits: str) -> str:
    """The brand a card number's first digits name ("card" when none is known)."""
    if digits.startswith("4"):
        return "visa"
    if digits[:2] in ("34", "37"):
        return "amex"
    if 51 <= int(digits[:2]) <= 55 or 2221 <= int(digits[:4]) <= 2720:
        return "mastercard"
    if digits.startswith(("6011", "65")):
        return "discover"
    return "card"


def site_origin(value: str) -> str | None:
    """The origin (``scheme://host[:port]``, lowercase) of an http(s) address, or None."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    default = {"http": 80, "https": 443}[parts.scheme]
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def check_sites(value: object) -> tuple[str, ...]:
    """Sites as origins, each once, in order."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidArgument("sites are a list of addresses", field="sites")
    if len(value) > MAX_SITES:
        raise InvalidArgument(f"a login names at most {MAX_SITES} sites", field="sites")
    origins = []
    for site in value:
        origin = site_origin(site) if len(site) <= MAX_SITE_LENGTH else None
        if origin is None:
            raise InvalidArgument(
                "a site is an http:// or https:// address", code="vaultSiteInvalid", field="sites"
            )
        origins.append(origin)
    return tuple(dict.fromkeys(origins))


def _summary(row: VaultItemFields) -> VaultSummary:
    return VaultSummary(row.id, _check_kind(row.kind), row.name, row.sites)


def _view(row: VaultItemMarks) -> VaultItemView:
    secrets_set = tuple(
        name for name, column in SECRET_COLUMNS.items() if column.column in row.secrets_set
    )
    return VaultItemView(
        id=row.id,
        kind=_check_kind(row.kind),
        name=row.name,
        sites=row.sites,
        username=row.username,
        notes=row.notes,
        cardholder=row.cardholder,
        expiry=row.expiry,
        billing_address=row.billing_address,
        card_last4=row.card_last4,
        card_brand=row.card_brand,
        email=row.email,
        phone=row.phone,
        postal_address=row.postal_address,
        secrets_set=secrets_set,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )

"""Email for people: the team's mail server, which an owner sets, and sending over it.

The password is sealed by the secret box before it is written and is opened only to sign
in to the server; it never comes back out of this module, nor into a log or an error.
TLS modes: ``none`` (plain, for a relay on the same network), ``starttls`` (upgrade on
the submission port, 587) and ``tls`` (TLS from the first byte, 465). Certificates are
checked against the system's authorities.
"""

from __future__ import annotations

import logging
import re
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Literal, get_args

import aiosmtplib

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.errors import Conflict, InvalidArgument, Unavailable
from server.db.engine import Database
from server.db.tables import SMTP_PASSWORD
from server.host.services.kept_secrets import refuse_moved
from server.host.storage.notifications import SmtpRepository, SmtpRow

log = logging.getLogger(__name__)

TlsMode = Literal["none", "starttls", "tls"]
TLS_MODES: tuple[str, ...] = get_args(TlsMode)
MAX_ADDRESS = 254
MAX_HOST = 253
MAX_PASSWORD = 1024
SEND_SECONDS = 20.0
MAX_SUBJECT = 200
# One address, no display name, nothing that could end a header line.
_ADDRESS = re.compile(r"^[^@\s<>,;\"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.:-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$")


@dataclass(frozen=True)
class MailServerView:
    """The team's mail server as owners see it: never the password."""

    host: str
    port: int
    tls_mode: str
    username: str | None
    password_set: bool
    from_address: str


@dataclass(frozen=True)
class MailServerChoice:
    """What an owner sets. ``keep_password`` keeps the password already set."""

    host: str
    port: int
    tls_mode: str
    username: str | None
    password: str | None
    keep_password: bool
    from_address: str


def check_address(address: str, field_name: str) -> str:
    """``address`` as one plain email address, or ``invalidArgument`` naming the field."""
    address = address.strip()
    if len(address) > MAX_ADDRESS or not _ADDRESS.match(address):
        raise InvalidArgument("not an email address", field=field_name)
    return address


@dataclass
class MailServer:
    """Reads and changes a team's mail server, and sends mail over it. ``tls_context``
    decides which certificates are trusted (tests trust their own)."""

    db: Database
    clock: Clock
    box: SecretBox
    tls_context: ssl.SSLContext | None = None
    timeout: float = SEND_SECONDS
    _repo: SmtpRepository = field(default_factory=SmtpRepository, init=False)

    async def get_settings(self, team_id: str) -> MailServerView | None:
        row = await self._row(team_id)
        return None if row is None else _view(row)

    async def set_settings(self, team_id: str, choice: MailServerChoice) -> MailServerView:
        """Set the team's mail server; refuses a bad field, writing nothing."""
        host = _check_host(choice.host)
        if not 1 <= choice.port <= 65535:
            raise InvalidArgument("a port is between 1 and 65535", field="port")
        if choice.tls_mode not in TLS_MODES:
            raise InvalidArgument(f"TLS mode is one of {', '.join(TLS_MODES)}", field="tlsMode")
        username = (choice.username or "").strip() or None
        if username is not None and (len(username) > MAX_ADDRESS or not username.isprintable()):
            raise InvalidArgument("the user name is too long or not printable", field="username")
        from_address = check_address(choice.from_address, "fromAddress")
        if choice.password is not None and (
            not choice.password or len(choice.password) > MAX_PASSWORD
        ):
            raise InvalidArgument("the password is empty or too long", field="password")
        async with self.db.write() as conn:
            existing = await self._repo.get_smtp(conn, team_id)
            ciphertext = None
            if choice.password is not None:
                binding = SMTP_PASSWORD.binding(team_id, team_id)
                ciphertext = self.box.encrypt(choice.password.encode("utf-8"), binding)
            elif choice.keep_password and existing is not None:
                ciphertext = existing.password
                # To another host, or in the clear where it went encrypted.
                unencrypted = choice.tls_mode == "none" and existing.tls_mode != "none"
                other_host = existing.host.rstrip(".").lower() != host.rstrip(".").lower()
                if ciphertext is not None and (other_host or unencrypted):
                    refuse_moved("password", "the server's host or its encryption")
            row = SmtpRow(
                team_id,
                host,
                choice.port,
                choice.tls_mode,
                username,
                ciphertext,
                from_address,
                self.clock.now(),
            )
            await self._repo.update_smtp(conn, row)
        log.info("mail server set", extra={"team_id": team_id, "tls_mode": choice.tls_mode})
        return _view(row)

    async def remove_settings(self, team_id: str) -> None:
        async with self.db.write() as conn:
            await self._repo.remove_smtp(conn, team_id)

    async def send(self, team_id: str, to: str, subject: str, text: str) -> None:
        """Send one plain-text mail to ``to``: ``mailNotSet`` without a server, ``mailFailed``
        when it cannot be reached or refuses (in words that carry no secret)."""
        row = await self._row(team_id)
        if row is None:
            raise Conflict("the team has no mail server", code="mailNotSet")
        message = EmailMessage()
        message["From"] = row.from_address
        message["To"] = to
        # A header is one line: a routine's name or a description may hold line breaks.
        message["Subject"] = " ".join(subject.split())[:MAX_SUBJECT]
        message["Date"] = formatdate(self.clock.now(), localtime=False)
        message["Message-ID"] = make_msgid(domain=row.from_address.rpartition("@")[2])
        message.set_content(text)
        password = self._open(row)
        try:
            await aiosmtplib.send(
                message,
                hostname=row.host,
                port=row.port,
                username=row.username if password is not None else None,
                password=password,
                use_tls=row.tls_mode == "tls",
                start_tls=row.tls_mode == "starttls",
                tls_context=self.tls_context if row.tls_mode != "none" else None,
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPAuthenticationError:
            raise Unavailable(
                "the mail server refused the user name or password", code="mailFailed"
            ) from None
        except aiosmtplib.SMTPRecipientsRefused:
            raise Unavailable("the mail server refused the address", code="mailFailed") from None
        except (aiosmtplib.SMTPException, OSError) as exc:
            # The exception's class says what failed; its text may quote the server.
            raise Unavailable(
                f"the mail server could not take the mail ({type(exc).__name__})",
                code="mailFailed",
            ) from None
        log.info("mail sent", extra={"team_id": team_id})

    async def _row(self, team_id: str) -> SmtpRow | None:
        async with self.db.read() as conn:
            return await self._repo.get_smtp(conn, team_id)

    def _open(self, row: SmtpRow) -> str | None:
        if row.password is None:
            return None
        try:
            binding = SMTP_PASSWORD.binding(row.team_id, row.team_id)
            return self.box.decrypt(row.password, binding).decode("utf-8")
        except SecretUnreadable as exc:
            raise Unavailable(
                f"the mail password cannot be decrypted on this host: {exc.reason}; set it again",
                code="mailFailed",
            ) from None


def _check_host(host: str) -> str:
    host = host.strip()
    if not host or len(host) > MAX_HOST or not _HOST.match(host):
        raise InvalidArgument("not a host name or address", field="host")
    return host


def _view(row: SmtpRow) -> MailServerView:
    return MailServerView(
        row.host, row.port, row.tls_mode, row.username, row.password is not None, row.from_address
    )

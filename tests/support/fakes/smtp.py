"""A real SMTP server on a free loopback port (``aiosmtpd``), in the test's own event loop.

It keeps every mail it accepts, parsed, and lets a test wait for the next ones. With
``login`` it offers AUTH and takes only that user name and password; with ``tls`` it
offers STARTTLS, or (``implicit_tls``) speaks TLS from the first byte.
"""

from __future__ import annotations

import asyncio
import ssl
import warnings
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any, Self

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

HOST = "127.0.0.1"
WAIT_SECONDS = 10.0


@dataclass(frozen=True)
class ReceivedMail:
    """One mail as the server took it: the envelope's sender and recipients, the message."""

    sender: str
    recipients: list[str]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @property
    def text(self) -> str:
        body = self.message.get_body(("plain",))
        assert body is not None
        return str(body.get_content())


@dataclass
class FakeSmtpServer:
    """``async with FakeSmtpServer() as smtp``: serving on ``smtp.port`` until the block ends."""

    login: tuple[str, str] | None = None
    tls: ssl.SSLContext | None = None
    implicit_tls: bool = False
    mails: list[ReceivedMail] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _sessions: list[SMTP] = field(default_factory=list)
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def __aenter__(self) -> Self:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._protocol,
            HOST,
            0,
            ssl=self.tls if self.implicit_tls else None,
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for session in self._sessions:
            if session.transport is not None:
                session.transport.close()
        await self._server.wait_closed()
        await asyncio.sleep(0)  # the closed transports let go of their sockets

    def _protocol(self) -> SMTP:
        with warnings.catch_warnings():
            # AUTH without TLS is what a plain test server offers on purpose.
            warnings.simplefilter("ignore", UserWarning)
            session = SMTP(
                self,
                hostname="mail.test",
                tls_context=None if self.implicit_tls else self.tls,
                authenticator=self._authenticate if self.login else None,
                auth_required=self.login is not None,
                auth_require_tls=False,
            )
        self._sessions.append(session)
        return session

    def _authenticate(
        self, _server: SMTP, _session: Session, _envelope: Envelope, _mechanism: str, data: Any
    ) -> AuthResult:
        assert self.login is not None
        if not isinstance(data, LoginPassword):
            return AuthResult(success=False, handled=False)
        user, password = data.login.decode(), data.password.decode()
        self.logins.append(user)
        return AuthResult(success=(user, password) == self.login, handled=False)

    async def handle_DATA(self, _server: SMTP, _session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or envelope.content
        assert isinstance(raw, bytes)
        message = message_from_bytes(raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        mail = ReceivedMail(str(envelope.mail_from), [str(r) for r in envelope.rcpt_tos], message)
        async with self._arrived:
            self.mails.append(mail)
            self._arrived.notify_all()
        return "250 OK"

    async def wait_for(self, count: int) -> list[ReceivedMail]:
        """The first ``count`` mails, once that many have come (ten seconds at most)."""
        async with asyncio.timeout(WAIT_SECONDS), self._arrived:
            await self._arrived.wait_for(lambda: len(self.mails) >= count)
        return self.mails[:count]

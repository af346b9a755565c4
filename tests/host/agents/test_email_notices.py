"""The team's mail server: set by an owner with its password sealed, and mail sent over it
to a real SMTP server on loopback, plain, with a sign-in and over STARTTLS or TLS."""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRingFile
from server.common.errors import CrewhostError, InvalidArgument
from server.db.engine import Database
from server.db.tables import smtp_settings
from server.host.agents.email_notices import MailServer, MailServerChoice
from server.host.services.keys import SecretKeys
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.smtp import FakeSmtpServer
from tests.support.ports import closed_port
from tests.support.tls import self_signed_context

TEAM_A, TEAM_B = "a" * 32, "b" * 32
PASSWORD = "smtp-secret-pass-7Q"


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


@pytest.fixture
async def box(db: Database, tmp_path: Path) -> AsyncIterator[SecretBox]:
    async with SecretKeys(db, KeyRingFile(tmp_path / "key-ring.json")).open_box() as opened:
        yield opened


def choice(port: object, **overrides: object) -> MailServerChoice:
    values: dict[str, object] = {
        "host": "127.0.0.1",
        "port": port,
        "tls_mode": "none",
        "username": None,
        "password": None,
        "keep_password": False,
        "from_address": "crewhost@example.com",
    }
    return MailServerChoice(**(values | overrides))  # type: ignore[arg-type]


async def failure(mail: MailServer, team: str = TEAM_A) -> str:
    with pytest.raises(CrewhostError) as caught:
        await mail.send(team, "ana@example.com", "Subject", "Text")
    return caught.value.code


async def test_a_mail_reaches_the_server_with_its_headers(
    db: Database, box: SecretBox, clock: FakeClock
) -> None:
    mail = MailServer(db, clock, box)
    async with FakeSmtpServer() as smtp:
        await mail.set_settings(TEAM_A, choice(smtp.port))
        await mail.send(TEAM_A, "ana@example.com", "Waiting\r\nBcc: x@y.z for you", "A run waits.")
        [received] = await smtp.wait_for(1)
    assert received.sender == "crewhost@example.com"
    assert received.recipients == ["ana@example.com"]
    assert received.subject == "Waiting Bcc: x@y.z for you"  # one line, no header added
    assert received.message["Bcc"] is None
    assert received.message["From"] == "crewhost@example.com"
    assert "A run waits." in received.text


async def test_the_password_signs_in_and_is_sealed_never_shown_or_logged(
    db: Database, box: SecretBox, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    mail = MailServer(db, clock, box)
    async with FakeSmtpServer(login=("mailer", PASSWORD)) as smtp:
        shown = await mail.set_settings(
            TEAM_A, choice(smtp.port, username="mailer", password=PASSWORD)
        )
        assert shown.password_set is True
        assert PASSWORD not in repr(shown)
        assert PASSWORD not in repr(await mail.get_settings(TEAM_A))
        await mail.send(TEAM_A, "ana@example.com", "Hello", "Text")
        await smtp.wait_for(1)
        assert smtp.logins == ["mailer"]
        # Kept when an owner changes another field and sends none.
        await mail.set_settings(
            TEAM_A, choice(smtp.port, username="mailer", keep_password=True, from_address="b@c.de")
        )
        await mail.send(TEAM_A, "ana@example.com", "Again", "Text")
        await smtp.wait_for(2)
        # Not to another host, nor in the clear where it went encrypted: the saved password
        # would go there.
        await mail.set_settings(
            TEAM_A, choice(smtp.port, username="mailer", password=PASSWORD, tls_mode="starttls")
        )
        for moved in ({"host": "localhost", "tls_mode": "starttls"}, {"tls_mode": "none"}):
            with pytest.raises(InvalidArgument) as refused:
                await mail.set_settings(
                    TEAM_A, choice(smtp.port, username="mailer", keep_password=True, **moved)
                )
            assert (refused.value.code, refused.value.field) == ("secretNeedsReentry", "password")
        kept = await mail.get_settings(TEAM_A)
        assert kept is not None
        assert (kept.host, kept.tls_mode) == ("127.0.0.1", "starttls")
    async with db.read() as conn:
        stored: bytes = (await conn.execute(sa.select(smtp_settings.c.password))).scalar_one()
    assert PASSWORD.encode() not in bytes(stored)
    assert PASSWORD not in caplog.text


async def test_a_wrong_password_is_mail_failed_without_the_password(
    db: Database, box: SecretBox, clock: FakeClock
) -> None:
    mail = MailServer(db, clock, box)
    async with FakeSmtpServer(login=("mailer", "the-right-one")) as smtp:
        await mail.set_settings(TEAM_A, choice(smtp.port, username="mailer", password=PASSWORD))
        with pytest.raises(CrewhostError) as caught:
            await mail.send(TEAM_A, "ana@example.com", "Hello", "Text")
    assert caught.value.code == "mailFailed"
    assert PASSWORD not in str(caught.value)
    assert "user name or password" in str(caught.value)


async def test_no_server_and_an_unreachable_one(
    db: Database, box: SecretBox, clock: FakeClock
) -> None:
    mail = MailServer(db, clock, box, timeout=5.0)
    assert await failure(mail) == "mailNotSet"
    await mail.set_settings(TEAM_A, choice(closed_port()))
    assert await failure(mail) == "mailFailed"
    assert await failure(mail, TEAM_B) == "mailNotSet"  # one team's server is not another's
    await mail.remove_settings(TEAM_A)
    assert await mail.get_settings(TEAM_A) is None


@pytest.mark.parametrize("mode", ["starttls", "tls"])
async def test_tls_modes_check_the_certificate(
    db: Database, box: SecretBox, clock: FakeClock, tmp_path: Path, mode: str
) -> None:
    server_tls = self_signed_context(tmp_path)
    trusting = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    async with FakeSmtpServer(tls=server_tls, implicit_tls=mode == "tls") as smtp:
        trusted = MailServer(db, clock, box, tls_context=trusting)
        await trusted.set_settings(TEAM_A, choice(smtp.port, tls_mode=mode))
        await trusted.send(TEAM_A, "ana@example.com", "Over TLS", "Text")
        await smtp.wait_for(1)
        # The system's authorities do not know the test's certificate.
        assert await failure(MailServer(db, clock, box)) == "mailFailed"
    assert len(smtp.mails) == 1


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"host": "bad host"}, "host"),
        ({"host": ""}, "host"),
        ({"port": 0}, "port"),
        ({"tls_mode": "ssl"}, "tlsMode"),
        ({"from_address": "not-an-address"}, "fromAddress"),
        ({"from_address": "a@b.c\r\nBcc: x@y.z"}, "fromAddress"),
        ({"password": ""}, "password"),
    ],
)
async def test_bad_settings_are_refused_and_change_nothing(
    db: Database, box: SecretBox, clock: FakeClock, overrides: dict[str, object], field: str
) -> None:
    mail = MailServer(db, clock, box)
    await mail.set_settings(TEAM_A, choice(2525))
    with pytest.raises(CrewhostError) as caught:
        await mail.set_settings(TEAM_A, choice(**({"port": 2526} | overrides)))
    assert (caught.value.code, caught.value.field) == ("invalidArgument", field)
    kept = await mail.get_settings(TEAM_A)
    assert kept is not None
    assert kept.port == 2525


async def test_a_key_rotation_reseals_the_password_and_it_still_signs_in(
    db: Database, clock: FakeClock, tmp_path: Path
) -> None:
    keys = SecretKeys(db, KeyRingFile(tmp_path / "rotating-ring.json"))
    async with FakeSmtpServer(login=("mailer", PASSWORD)) as smtp:
        async with keys.open_box() as box:
            first = box.ring.active_id
            await MailServer(db, clock, box).set_settings(
                TEAM_A, choice(smtp.port, username="mailer", password=PASSWORD)
            )
        report = await keys.rotate()
        assert report.resealed == 1
        await keys.retire(first)
        async with keys.open_box() as box:
            await MailServer(db, clock, box).send(TEAM_A, "ana@example.com", "After", "Text")
        await smtp.wait_for(1)
    assert smtp.logins == ["mailer"]

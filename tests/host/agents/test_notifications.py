"""The notification service: what AttentionWaiting and RunFinished tell which members, the
event and signal for each, read marks, and email at once or in an hourly digest driven by
the host's clock, to a real SMTP server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRingFile
from server.common.errors import CrewhostError
from server.common.protocol.events import HostEvent, NotificationAdded, NotificationsRead
from server.common.roles import Role
from server.db.engine import Database
from server.host.agents.email_notices import MailServer, MailServerChoice
from server.host.agents.notifications import EmailPreferences, NotificationService
from server.host.agents.work_signals import AttentionWaiting, NotificationCreated, RunFinished
from server.host.services.keys import SecretKeys
from server.host.services.workspace import Member
from server.host.signals import Signals
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.smtp import FakeSmtpServer

TEAM, OTHER_TEAM = "a" * 32, "b" * 32
ANA, BEN, CY = "1" * 32, "2" * 32, "3" * 32
AGENT, THREAD = "c" * 32, "d" * 32


class Told:
    """What the service announced, and to whom."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, HostEvent, Callable[[str], bool]]] = []

    def __call__(self, team_id: str, event: HostEvent, only: Callable[[str], bool]) -> None:
        self.sent.append((team_id, event, only))

    def to(self, account_id: str) -> list[HostEvent]:
        return [event for _, event, only in self.sent if only(account_id)]


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


class Host:
    """A signal hub with the service subscribed as the container does."""

    def __init__(self, db: Database, clock: FakeClock, box: SecretBox) -> None:
        self.told = Told()
        self.signals = Signals()
        self.mail = MailServer(db, clock, box)
        self.service = NotificationService(
            db, clock, self.told, self.signals, self.mail, app_url="https://crew.test/app/"
        )
        self.created: list[NotificationCreated] = []
        self.signals.subscribe(AttentionWaiting, self.service.attention_waiting)
        self.signals.subscribe(RunFinished, self.service.run_finished)
        self.signals.subscribe(NotificationCreated, self.created.append)

    async def publish(self, signal: object) -> None:
        self.signals.publish(signal)
        await self.signals.close()  # the async subscribers have run

    async def settled(self) -> None:
        """Mail being sent at once has gone."""
        await self.service.mail_sent()


@pytest.fixture
async def host(db: Database, clock: FakeClock, box: SecretBox) -> AsyncIterator[Host]:
    made = Host(db, clock, box)
    yield made
    await made.service.close()


def waiting(**overrides: Any) -> AttentionWaiting:
    values: dict[str, Any] = {
        "team_id": TEAM,
        "agent_id": AGENT,
        "thread_id": THREAD,
        "request_id": "e" * 32,
        "kind": "consent",
        "description": "Click “Pay now” on Shop (shop.test)",
        "addressed_to": (ANA,),
        "expires_at": 0.0,
    }
    return AttentionWaiting(**(values | overrides))


def finished(**overrides: Any) -> RunFinished:
    values: dict[str, Any] = {
        "team_id": TEAM,
        "agent_id": AGENT,
        "routine_id": "f" * 32,
        "routine_name": "Morning report",
        "run_id": "9" * 32,
        "thread_id": THREAD,
        "status": "done",
        "audience": (ANA, BEN),
    }
    return RunFinished(**(values | overrides))


def member(account_id: str, team_id: str = TEAM) -> Member:
    return Member(team_id, account_id, Role.MEMBER)


async def test_an_approval_tells_only_those_it_is_addressed_to(host: Host) -> None:
    await host.publish(waiting(addressed_to=(ANA, ANA)))
    page = await host.service.list_notifications(member(ANA), before=None)
    [item] = page.notifications
    assert page.unread == 1
    assert (item.kind, item.title) == ("approval", "Waiting for your approval")
    assert item.body == "Click “Pay now” on Shop (shop.test)"
    assert (item.thread_id, item.request_id) == (THREAD, "e" * 32)
    assert (await host.service.list_notifications(member(BEN), before=None)).notifications == []
    assert (await host.service.list_notifications(member(ANA, OTHER_TEAM), before=None)).unread == 0
    [event] = host.told.to(ANA)
    assert isinstance(event, NotificationAdded)
    assert (event.id, event.kind, event.unread) == (item.id, "approval", 1)
    assert host.told.to(BEN) == []
    assert host.created == [NotificationCreated(TEAM, ANA, item.id, "approval")]


async def test_a_question_is_its_own_kind(host: Host) -> None:
    await host.publish(waiting(kind="question", description="Which size: S or M?"))
    [item] = (await host.service.list_notifications(member(ANA), before=None)).notifications
    assert (item.kind, item.title, item.body) == (
        "question",
        "A question for you",
        "Which size: S or M?",
    )


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        ("done", "runFinished", "finished"),
        ("error", "runFailed", "failed with an error"),
        ("budget", "runFailed", "budget is spent"),
        ("interrupted", "runFailed", "was interrupted"),
    ],
)
async def test_a_run_tells_its_audience_in_words(
    host: Host, status: str, kind: str, words: str
) -> None:
    await host.publish(finished(status=status, reason="The page did not load."))
    for account in (ANA, BEN):
        [item] = (await host.service.list_notifications(member(account), before=None)).notifications
        assert item.kind == kind
        assert "Morning report" in item.title
        assert words in item.title
        assert (item.routine_id, item.run_id) == ("f" * 32, "9" * 32)
    assert (await host.service.list_notifications(member(CY), before=None)).notifications == []


async def test_a_skipped_run_tells_nobody(host: Host) -> None:
    await host.publish(finished(status="skipped"))
    assert (await host.service.list_notifications(member(ANA), before=None)).notifications == []
    assert host.told.sent == []
    assert host.created == []


async def test_read_marks_are_the_members_own(host: Host, clock: FakeClock) -> None:
    await host.publish(waiting(addressed_to=(ANA, BEN)))
    clock.advance(1)
    await host.publish(finished(audience=(ANA,)))
    page = await host.service.list_notifications(member(ANA), before=None)
    newest, oldest = page.notifications
    assert newest.kind == "runFinished"
    assert page.unread == 2
    [ben_item] = (await host.service.list_notifications(member(BEN), before=None)).notifications
    with pytest.raises(CrewhostError) as caught:
        await host.service.mark_read(member(ANA), ben_item.id)
    assert caught.value.code == "notificationNotFound"
    with pytest.raises(CrewhostError):
        await host.service.mark_read(member(BEN, OTHER_TEAM), ben_item.id)
    assert await host.service.mark_read(member(ANA), oldest.id) == 1
    assert host.told.to(ANA)[-1] == NotificationsRead(unread=1)
    unread = await host.service.list_notifications(member(ANA), unread_only=True, before=None)
    assert [n.id for n in unread.notifications] == [newest.id]
    assert await host.service.mark_all_read(member(ANA)) == 1
    assert (await host.service.list_notifications(member(ANA), before=None)).unread == 0
    assert (await host.service.list_notifications(member(BEN), before=None)).unread == 1
    older = await host.service.list_notifications(member(ANA), before=newest.created_at)
    assert [n.id for n in older.notifications] == [oldest.id]


async def mail_server(host: Host, smtp: FakeSmtpServer) -> None:
    await host.mail.set_settings(
        TEAM,
        MailServerChoice("127.0.0.1", smtp.port, "none", None, None, False, "crew@example.com"),
    )


async def test_immediately_mails_each_notice_without_secrets(host: Host) -> None:
    async with FakeSmtpServer() as smtp:
        await mail_server(host, smtp)
        await host.service.set_preferences(member(ANA), EmailPreferences("ana@example.com"))
        await host.publish(waiting(addressed_to=(ANA, BEN)))
        await host.settled()
        [mail] = await smtp.wait_for(1)
    assert mail.recipients == ["ana@example.com"]
    assert mail.subject == "Waiting for your approval"
    assert "Click “Pay now” on Shop (shop.test)" in mail.text
    assert "https://crew.test/app/" in mail.text


async def test_off_sends_no_mail(host: Host) -> None:
    async with FakeSmtpServer() as smtp:
        await mail_server(host, smtp)
        off = EmailPreferences("ana@example.com", approval="off", run_finished="immediately")
        await host.service.set_preferences(member(ANA), off)
        await host.publish(waiting())
        await host.publish(finished(audience=(ANA,)))
        await host.settled()
        [mail] = await smtp.wait_for(1)
    assert "Morning report" in mail.subject
    assert len(smtp.mails) == 1


async def test_the_digest_goes_out_hourly_on_the_hosts_clock(host: Host, clock: FakeClock) -> None:
    digest = EmailPreferences("ana@example.com", approval="digest", run_failed="digest")
    async with FakeSmtpServer() as smtp:
        await mail_server(host, smtp)
        await host.service.set_preferences(member(ANA), digest)
        await host.publish(waiting())
        clock.advance(600)
        await host.publish(finished(status="error", audience=(ANA,)))
        await host.settled()
        assert await host.service.send_due_digests() == 0  # not an hour yet
        clock.advance(3000)
        assert await host.service.send_due_digests() == 1
        [mail] = await smtp.wait_for(1)
        assert mail.subject == "Crewhost: 2 notifications"
        assert "Waiting for your approval: Click “Pay now”" in mail.text
        assert "“Morning report” failed with an error" in mail.text
        assert await host.service.send_due_digests() == 0  # each notice goes once
        await host.publish(waiting())
        clock.advance(1800)
        assert await host.service.send_due_digests() == 0  # an hour after the last digest
        clock.advance(1800)
        assert await host.service.send_due_digests() == 1
        await smtp.wait_for(2)
    # Marked read or not, a notice stays in the list.
    assert (await host.service.list_notifications(member(ANA), before=None)).unread == 3


async def test_a_digest_that_cannot_be_mailed_waits_for_the_next_try(
    host: Host, clock: FakeClock
) -> None:
    await host.service.set_preferences(
        member(ANA), EmailPreferences("ana@example.com", approval="digest")
    )
    await host.publish(waiting())
    clock.advance(3600)
    assert await host.service.send_due_digests() == 0  # no mail server yet
    async with FakeSmtpServer() as smtp:
        await mail_server(host, smtp)
        assert await host.service.send_due_digests() == 0  # tried again an hour on
        clock.advance(3600)
        assert await host.service.send_due_digests() == 1
        [mail] = await smtp.wait_for(1)
    assert mail.subject == "Crewhost: 1 notification"


@pytest.mark.parametrize(
    ("chosen", "field"),
    [
        (EmailPreferences("not an address"), "email"),
        (EmailPreferences("a@b.cd", approval="weekly"), "approval"),
        (EmailPreferences("a@b.cd", run_failed="sometimes"), "runFailed"),
    ],
)
async def test_bad_preferences_are_refused_and_change_nothing(
    host: Host, chosen: EmailPreferences, field: str
) -> None:
    kept = EmailPreferences("ana@example.com", question="digest")
    await host.service.set_preferences(member(ANA), kept)
    with pytest.raises(CrewhostError) as caught:
        await host.service.set_preferences(member(ANA), chosen)
    assert (caught.value.code, caught.value.field) == ("invalidArgument", field)
    assert await host.service.get_preferences(member(ANA)) == kept
    assert await host.service.get_preferences(member(BEN)) == EmailPreferences(None)


async def test_the_timer_sends_a_digest_once_the_clock_says_it_is_due(
    db: Database, clock: FakeClock, box: SecretBox
) -> None:
    told = Told()
    mail = MailServer(db, clock, box)
    service = NotificationService(db, clock, told, Signals(), mail, check_seconds=0.01)
    await service.set_preferences(
        member(ANA), EmailPreferences("ana@example.com", approval="digest")
    )
    await service.attention_waiting(waiting())
    async with FakeSmtpServer() as smtp:
        await mail.set_settings(
            TEAM,
            MailServerChoice("127.0.0.1", smtp.port, "none", None, None, False, "crew@example.com"),
        )
        service.start()
        try:
            clock.advance(3600)
            [mail_sent] = await smtp.wait_for(1)
        finally:
            await service.close()
    assert mail_sent.subject == "Crewhost: 1 notification"


async def test_pages_of_notifications_made_at_one_time_miss_none(host: Host) -> None:
    """Many notices at one moment (the clock stands still here): a page that ends among
    them is followed by the rest, by (time, id)."""
    for n in range(9):
        await host.publish(finished(run_id=f"{n:032x}"))
    seen: list[str] = []
    before: tuple[float, str] | None = None
    while True:
        page = await host.service.list_notifications(
            member(ANA),
            limit=2,
            before=None if before is None else before[0],
            before_id=None if before is None else before[1],
        )
        if not page.notifications:
            break
        seen += [item.id for item in page.notifications]
        last = page.notifications[-1]
        before = (last.created_at, last.id)
    assert len(seen) == len(set(seen)) == 9

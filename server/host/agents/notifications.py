"""People notifications: what each member is told, and how.

The service follows three signals: ``AttentionWaiting`` (an approval or a question for the
members it is addressed to), ``RunFinished`` (a routine's run, for the members who see
its runs) and ``BudgetReached`` (a budget past 80 %, for owners, admins and the member
concerned). For each member it keeps a notification in the database, sends the member's
open windows a ``notification-created`` event, publishes ``NotificationCreated`` and, as
the member chose per kind, sends an email at once or keeps the notice for the member's
hourly digest. A notification holds words and ids only: the run's name and status, the
description of what waits; never a secret, page contents or tool arguments.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from server.common.clock import Clock
from server.common.errors import CrewhostError, InvalidArgument, NotFound
from server.common.protocol.events import (
    HostEvent,
    NotificationAdded,
    NotificationKind,
    NotificationsRead,
)
from server.common.tasks import BackgroundTasks, wait_set
from server.db.engine import Database
from server.host.agents.email_notices import MailServer, check_address
from server.host.agents.work_signals import (
    AttentionWaiting,
    BudgetReached,
    NotificationCreated,
    RunFinished,
)
from server.host.rtc.revocations import MemberRemoved
from server.host.services.workspace import Member
from server.host.signals import Signals
from server.host.storage.notifications import (
    Notification,
    NotificationRepository,
    PreferencesRepository,
    PreferencesRow,
)

log = logging.getLogger(__name__)

Announce = Callable[[str, HostEvent, Callable[[str], bool]], None]
EmailChoice = Literal["off", "immediately", "digest"]
EMAIL_CHOICES: tuple[str, ...] = get_args(EmailChoice)
KINDS: tuple[str, ...] = get_args(NotificationKind)
DIGEST_SECONDS = 3600.0
# How often the host looks for digests that are due (on its own timer, not the clock's).
DIGEST_CHECK_SECONDS = 60.0
MAX_TITLE = 200
MAX_BODY = 1000
MAX_PAGE = 200
_RUN_WORDS = {
    "error": "failed with an error",
    "capped": "stopped at its limit of steps",
    "denied": "ended: an approval was denied",
    "stopped": "was stopped",
    "budget": "stopped: its budget is spent",
    "interrupted": "was interrupted",
}


@dataclass(frozen=True)
class EmailPreferences:
    """A member's email choices: where mail goes and, per kind, off, immediately or digest."""

    email: str | None
    approval: str = "immediately"
    question: str = "immediately"
    run_finished: str = "off"
    run_failed: str = "immediately"

    def choice(self, kind: str) -> str:
        return {
            "approval": self.approval,
            "question": self.question,
            "runFinished": self.run_finished,
            "runFailed": self.run_failed,
            # A budget nearly spent is mailed as a failed run is: both stop work.
            "budget": self.run_failed,
        }[kind]


DEFAULT_PREFERENCES = EmailPreferences(email=None)


@dataclass(frozen=True)
class NotificationPage:
    notifications: list[Notification]
    unread: int


class NotificationService:
    """Keeps, lists and marks members' notifications, and mails them as each member chose.
    ``start`` begins the digest timer; ``close`` ends it and waits for mail being sent."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        announce: Announce,
        signals: Signals,
        mail: MailServer,
        *,
        app_url: str = "/app/",
        digest_seconds: float = DIGEST_SECONDS,
        check_seconds: float = DIGEST_CHECK_SECONDS,
    ) -> None:
        self._db = db
        self._clock = clock
        self._announce = announce
        self._signals = signals
        self._mail = mail
        self._app_url = app_url
        self._digest_seconds = digest_seconds
        self._check_seconds = check_seconds
        self._items = NotificationRepository()
        self._prefs = PreferencesRepository()
        self._timer = BackgroundTasks("notification digests")
        self._sending = BackgroundTasks("notification mail")
        self._digest_lock = asyncio.Lock()
        self._stopping = asyncio.Event()

    # The signals it follows.

    async def attention_waiting(self, signal: AttentionWaiting) -> None:
        """Tell the members a request is addressed to that it waits for them."""
        kind = "question" if signal.kind == "question" else "approval"
        title = "A question for you" if kind == "question" else "Waiting for your approval"
        await self._tell(
            signal.team_id,
            signal.addressed_to,
            kind=kind,
            title=title,
            body=signal.description,
            agent_id=signal.agent_id,
            thread_id=signal.thread_id,
            request_id=signal.request_id,
            routine_id=signal.routine_id,
        )

    async def run_finished(self, signal: RunFinished) -> None:
        """Tell the members who see a routine's runs that one finished or failed; a skipped
        run tells nobody."""
        if signal.status == "skipped":
            return
        if signal.status == "done":
            kind, title, body = "runFinished", f"“{signal.routine_name}” finished", "It is done."
        else:
            kind = "runFailed"
            title = f"“{signal.routine_name}” {_RUN_WORDS.get(signal.status, signal.status)}"
            body = signal.reason or f"The run ended: {signal.status}."
        await self._tell(
            signal.team_id,
            signal.audience,
            kind=kind,
            title=title,
            body=body,
            agent_id=signal.agent_id,
            thread_id=signal.thread_id,
            routine_id=signal.routine_id,
            run_id=signal.run_id,
        )

    async def budget_reached(self, signal: BudgetReached) -> None:
        """Tell the owners and admins (and the member concerned) that a budget passed 80 %."""
        await self._tell(
            signal.team_id,
            signal.accounts,
            kind="budget",
            title=signal.title,
            body=signal.body,
            agent_id=signal.agent_id,
            thread_id=None,
        )

    # What members ask for.

    async def list_notifications(
        self,
        member: Member,
        *,
        unread_only: bool = False,
        limit: int = 50,
        before: float | None,
        before_id: str | None = None,
    ) -> NotificationPage:
        """The member's notifications, newest first, and how many are unread; a page after
        the one whose last was (``before``, ``before_id``)."""
        async with self._db.read() as conn:
            items = await self._items.list_notifications(
                conn,
                member.team_id,
                member.account_id,
                unread_only=unread_only,
                limit=max(1, min(limit, MAX_PAGE)),
                before=before,
                before_id=before_id,
            )
            unread = await self._items.count_unread(conn, member.team_id, member.account_id)
        return NotificationPage(items, unread)

    async def mark_read(self, member: Member, notification_id: str) -> int:
        """Mark one of the member's notifications read; returns how many stay unread."""
        async with self._db.write() as conn:
            found = await self._items.get_notification(
                conn, member.team_id, member.account_id, notification_id
            )
            if found is None:
                raise NotFound("no such notification", code="notificationNotFound")
            changed = await self._items.update_read(
                conn, member.team_id, member.account_id, self._clock.now(), notification_id
            )
            unread = await self._items.count_unread(conn, member.team_id, member.account_id)
        if changed:
            self._tell_read(member, unread)
        return unread

    async def mark_all_read(self, member: Member) -> int:
        """Mark every notification of the member read; returns how many changed."""
        async with self._db.write() as conn:
            changed = await self._items.update_read(
                conn, member.team_id, member.account_id, self._clock.now()
            )
        if changed:
            self._tell_read(member, 0)
        return changed

    async def get_preferences(self, member: Member) -> EmailPreferences:
        async with self._db.read() as conn:
            row = await self._prefs.get_preferences(conn, member.team_id, member.account_id)
        return DEFAULT_PREFERENCES if row is None else _preferences(row)

    async def set_preferences(self, member: Member, chosen: EmailPreferences) -> EmailPreferences:
        """Set the member's email choices; refuses a bad one, writing nothing."""
        email = None if not chosen.email else check_address(chosen.email, "email")
        for name, value in (
            ("approval", chosen.approval),
            ("question", chosen.question),
            ("runFinished", chosen.run_finished),
            ("runFailed", chosen.run_failed),
        ):
            if value not in EMAIL_CHOICES:
                raise InvalidArgument(f"one of {', '.join(EMAIL_CHOICES)}", field=name)
        async with self._db.write() as conn:
            existing = await self._prefs.get_preferences(conn, member.team_id, member.account_id)
            row = PreferencesRow(
                member.team_id,
                member.account_id,
                email,
                chosen.approval,
                chosen.question,
                chosen.run_finished,
                chosen.run_failed,
                self._clock.now(),
                existing.digest_at if existing is not None else None,
            )
            await self._prefs.update_preferences(conn, row)
        return _preferences(row)

    async def named_members(self) -> dict[tuple[str, str], float]:
        """(team, account) of every member whose email choices the host keeps, with when
        they made them."""
        async with self._db.read() as conn:
            return await self._prefs.list_every_member(conn)

    async def member_removed(self, signal: MemberRemoved) -> None:
        """A member left the team: no notice of it reaches them any more, by mail or in a
        list they can no longer read."""
        async with self._db.write() as conn:
            await self._prefs.remove_member(conn, signal.team_id, signal.account_id)
            await self._items.remove_member(conn, signal.team_id, signal.account_id)

    async def send_test_mail(self, team_id: str, to: str) -> None:
        """A test mail over the team's server, to ``to``: raises what the server answered."""
        to = check_address(to, "to")
        await self._mail.send(
            team_id,
            to,
            "Crewhost test mail",
            "This is a test mail from Crewhost: the team's mail server works.\n\n"
            f"Open Crewhost: {self._app_url}\n",
        )

    # Digests.

    def start(self) -> None:
        """Begin the timer that sends digests when they are due."""
        self._timer.start(self._digest_timer())

    async def mail_sent(self) -> None:
        """Wait until the mail being sent at once has gone (or failed)."""
        await self._sending.drain()

    async def close(self) -> None:
        """End the digest timer after its round in progress and wait for mail being sent."""
        self._stopping.set()
        await self._timer.drain()
        await self._sending.drain()

    async def send_due_digests(self) -> int:
        """Send every member whose digest is due (an hour after their last one, on the
        host's clock) the notices kept for it; returns how many digests went out."""
        async with self._digest_lock:
            async with self._db.read() as conn:
                waiting = await self._items.list_digest_members(conn)
            sent = 0
            for team_id, account_id in waiting:
                with contextlib.suppress(CrewhostError):
                    sent += await self._send_digest(team_id, account_id)
            return sent

    async def _send_digest(self, team_id: str, account_id: str) -> int:
        now = self._clock.now()
        async with self._db.read() as conn:
            row = await self._prefs.get_preferences(conn, team_id, account_id)
            pending = await self._items.list_digest_pending(conn, team_id, account_id)
        last = row.digest_at if row is not None else None
        if last is not None and now < last + self._digest_seconds:
            return 0
        prefs = DEFAULT_PREFERENCES if row is None else _preferences(row)
        wanted = [n for n in pending if prefs.choice(n.kind) == "digest"]
        sent = 0
        if wanted and prefs.email is not None:
            try:
                await self._mail.send(team_id, prefs.email, *_digest_mail(wanted, self._app_url))
                sent = 1
            except CrewhostError as exc:
                log.warning(
                    "a digest could not be mailed",
                    extra={"team_id": team_id, "code": exc.code},
                )
                # Kept for the member's next digest, an hour on: no retry every minute.
                async with self._db.write() as conn:
                    await self._prefs.update_digest_at(conn, team_id, account_id, now)
                return 0
        async with self._db.write() as conn:
            await self._items.update_digest_sent(conn, team_id, account_id, [n.id for n in pending])
            if row is not None:
                await self._prefs.update_digest_at(conn, team_id, account_id, now)
        return sent

    async def _digest_timer(self) -> None:
        # Ends at ``close`` between rounds: a round in progress (a database write, a mail
        # being sent) finishes rather than being cut off.
        while not self._stopping.is_set():
            if await wait_set(self._stopping, self._check_seconds):
                return
            try:
                await self.send_due_digests()
            except Exception:
                log.exception("sending digests failed")

    # Telling members.

    async def _tell(
        self,
        team_id: str,
        accounts: Sequence[str],
        *,
        kind: str,
        title: str,
        body: str,
        agent_id: str,
        thread_id: str | None,
        request_id: str | None = None,
        routine_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        accounts = list(dict.fromkeys(accounts))
        if not accounts:
            return
        now = self._clock.now()
        async with self._db.write() as conn:
            rows = await self._prefs.list_preferences(conn, team_id, accounts)
            prefs = {row.account_id: _preferences(row) for row in rows}
            made = [
                Notification(
                    id=uuid.uuid4().hex,
                    team_id=team_id,
                    account_id=account_id,
                    kind=kind,
                    title=title[:MAX_TITLE],
                    body=body[:MAX_BODY],
                    agent_id=agent_id,
                    thread_id=thread_id,
                    request_id=request_id,
                    routine_id=routine_id,
                    run_id=run_id,
                    created_at=now,
                    digest_pending=_wants(prefs.get(account_id), kind) == "digest",
                )
                for account_id in accounts
            ]
            await self._items.add_notifications(conn, made)
            for row in rows:
                # A member's first digest goes out an hour after its first notice.
                if row.digest_at is None and _wants(prefs[row.account_id], kind) == "digest":
                    await self._prefs.update_digest_at(conn, team_id, row.account_id, now)
            unread = {
                n.account_id: await self._items.count_unread(conn, team_id, n.account_id)
                for n in made
            }
        for notification in made:
            self._created(notification, unread[notification.account_id])
            chosen = prefs.get(notification.account_id)
            if _wants(chosen, kind) == "immediately" and chosen is not None and chosen.email:
                self._sending.start(self._mail_now(notification, chosen.email))

    def _created(self, n: Notification, unread: int) -> None:
        event = NotificationAdded(
            id=n.id,
            kind=n.kind,  # type: ignore[arg-type]
            title=n.title,
            body=n.body,
            agent_id=n.agent_id,
            thread_id=n.thread_id,
            request_id=n.request_id,
            created_at=n.created_at,
            unread=unread,
        )
        account_id = n.account_id
        self._announce(n.team_id, event, lambda a: a == account_id)
        self._signals.publish(NotificationCreated(n.team_id, n.account_id, n.id, n.kind))

    def _tell_read(self, member: Member, unread: int) -> None:
        account_id = member.account_id
        self._announce(member.team_id, NotificationsRead(unread=unread), lambda a: a == account_id)

    async def _mail_now(self, n: Notification, to: str) -> None:
        try:
            await self._mail.send(n.team_id, to, n.title, _notice_text(n, self._app_url))
        except CrewhostError as exc:
            log.warning("a notification could not be mailed", extra={"code": exc.code})


def _wants(prefs: EmailPreferences | None, kind: str) -> str:
    chosen = prefs or DEFAULT_PREFERENCES
    return "off" if chosen.email is None else chosen.choice(kind)


def _preferences(row: PreferencesRow) -> EmailPreferences:
    return EmailPreferences(row.email, row.approval, row.question, row.run_finished, row.run_failed)


def _notice_text(n: Notification, app_url: str) -> str:
    return f"{n.title}\n\n{n.body}\n\nOpen Crewhost: {app_url}\n"


def _digest_mail(items: Sequence[Notification], app_url: str) -> tuple[str, str]:
    count = len(items)
    subject = f"Crewhost: {count} notification{'s' if count != 1 else ''}"
    lines = [f"- {n.title}: {n.body}" for n in items]
    return subject, "\n".join([*lines, "", f"Open Crewhost: {app_url}", ""])

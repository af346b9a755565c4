"""Team webhooks: endpoints owners and admins add, and the durable delivery of events to them.

An endpoint names the event kinds it wants (``team_webhook_events.KINDS``) and a body
format. Its address is judged by the host's public-only address policy when saved and at
every attempt; everything after the host (a chat service's token, the query) is sealed
by the secret box and shown masked. Each endpoint has a Standard Webhooks signing secret,
sealed too, shown once when the endpoint is made.

Events come from signals (``RunFinished``, ``AttentionWaiting``): each becomes one
delivery row per endpoint that wants it, stored before any attempt, so a restart loses
none. The sender takes due deliveries by a lease (``claim_delivery``), attempts, and
records the outcome; a failure waits ``RETRY_DELAYS`` before the next of at most
``MAX_ATTEMPTS`` attempts. A delivery whose endpoint is turned off is not sent: it ends
failed, at once in the log and at the latest when it comes due. A waiting request of a
private chat is not told to the team.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import uuid
from dataclasses import dataclass, field
from types import TracebackType

from sqlalchemy.ext.asyncio import AsyncConnection
from yarl import URL

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.crypto.columns import EncryptedColumn
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.public_addresses import NameNotResolved, NonPublicAddress, SavedAddressRefused
from server.common.tasks import BackgroundTasks, wait_set
from server.db.engine import Database
from server.db.tables import (
    TEAM_WEBHOOK_PREVIOUS_SECRET,
    TEAM_WEBHOOK_SIGNING_SECRET,
    TEAM_WEBHOOK_URL_SECRET,
)
from server.host.agents.team_webhook_events import (
    BODY_FORMATS,
    KINDS,
    WebhookEvent,
    run_event,
    test_event,
    waiting_event,
)
from server.host.agents.team_webhook_sender import (
    MAX_ATTEMPTS,
    Outcome,
    WebhookSender,
    retry_delay,
    signed_headers,
)
from server.host.agents.work_signals import AttentionWaiting, RunFinished
from server.host.storage.agents import AgentRepository
from server.host.storage.team_webhooks import DeliveryRow, TeamWebhookRepository, TeamWebhookRow

log = logging.getLogger(__name__)

MAX_WEBHOOKS = 20
MAX_NAME_LENGTH = 100
MAX_URL_LENGTH = 2048
MAX_LOG = 100
# How long one attempt holds a delivery before another sender may take it again.
LEASE_SECONDS = 120.0
# The longest the sender sleeps between looks at the table (another host may add rows).
POLL_SECONDS = 30.0
# Attempts under way at once: a receiver that takes its time holds up no other.
PARALLEL_ATTEMPTS = 8
# How long the log keeps a delivered or failed delivery, and how often it is pruned.
KEEP_SECONDS = 30 * 86400.0
PRUNE_EVERY_SECONDS = 3600.0
# After a rotation, how long the secret before it still signs.
ROTATION_OVERLAP_SECONDS = 86400.0
_BATCH = 50
_RESOLVE_SECONDS = 5.0
_MASK = "/••••"
TURNED_OFF = "the webhook is turned off"


@dataclass(frozen=True, slots=True)
class TeamWebhookView:
    """An endpoint as owners and admins see it: its address masked, no secret."""

    id: str
    name: str
    url: str
    kinds: tuple[str, ...]
    body_format: str
    enabled: bool
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """One entry of an endpoint's delivery log."""

    id: str
    kind: str
    status: str
    attempts: int
    last_status: int | None
    last_error: str | None
    next_attempt_at: float | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class SplitUrl:
    """A webhook address in its shown part (scheme, host, port) and its secret part."""

    origin: str
    secret: str | None

    @property
    def masked(self) -> str:
        return self.origin + (_MASK if self.secret else "")

    @property
    def full(self) -> str:
        return self.origin + (self.secret or "")


class WebhookAddressRefused(SavedAddressRefused):
    """The endpoint's address is not public, nor allowed by the host's setting."""

    code = "webhookAddressRefused"
    setting = "webhook_allowed_hosts"

    def __init__(self, refused: NonPublicAddress) -> None:
        super().__init__("this webhook", refused, field="url")


def split_url(url: str) -> SplitUrl:
    """``url`` checked (http or https, a host, no user name) and split; the fragment is
    dropped. Raises ``InvalidArgument`` (``invalidUrl``) naming the field ``url``."""
    text = url.strip()
    try:
        parsed = URL(text)
    except ValueError:
        parsed = None
    if (
        parsed is None
        or len(text) > MAX_URL_LENGTH
        or parsed.scheme not in ("http", "https")
        or not parsed.raw_host
        or not parsed.is_absolute()
    ):
        raise InvalidArgument(
            "A webhook's address is an http or https address with a host",
            code="invalidUrl",
            field="url",
        )
    if parsed.raw_user is not None or parsed.raw_password is not None:
        raise InvalidArgument(
            "A webhook's address may not carry a user name or password",
            code="invalidUrl",
            field="url",
        )
    origin = str(parsed.origin())
    rest = parsed.raw_path + (f"?{parsed.raw_query_string}" if parsed.raw_query_string else "")
    return SplitUrl(origin, None if rest in ("", "/") else rest)


def new_signing_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


@dataclass
class TeamWebhookService:
    """Endpoints, their delivery log, and the sender that works through due deliveries.

    Used as an async context manager: entering starts the sender, leaving stops it
    (deliveries left pending are taken up at the next start)."""

    db: Database
    clock: Clock
    box: SecretBox
    sender: WebhookSender
    link: str = "/app/"
    _repo: TeamWebhookRepository = field(default_factory=TeamWebhookRepository, init=False)
    _agents: AgentRepository = field(default_factory=AgentRepository, init=False)
    _tasks: BackgroundTasks = field(
        default_factory=lambda: BackgroundTasks("team webhooks"), init=False
    )
    _wake: asyncio.Event = field(default_factory=asyncio.Event, init=False)

    async def __aenter__(self) -> TeamWebhookService:
        self._tasks.start(self._send_forever())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._tasks.close()

    # Endpoints.

    async def list_webhooks(self, team_id: str) -> list[TeamWebhookView]:
        async with self.db.read() as conn:
            return [self._view(row) for row in await self._repo.list_webhooks(conn, team_id)]

    async def create_webhook(
        self,
        team_id: str,
        account_id: str,
        *,
        name: str,
        url: str,
        kinds: list[str],
        body_format: str = "standard",
        enabled: bool = True,
    ) -> tuple[TeamWebhookView, str]:
        """Add an endpoint; answers it and its signing secret (shown this once)."""
        name, checked_kinds = _check_name(name), _check_kinds(kinds)
        body_format = _check_format(body_format)
        split = split_url(url)
        await self._judge(split)
        webhook_id = uuid.uuid4().hex
        secret = new_signing_secret()
        now = self.clock.now()
        row = TeamWebhookRow(
            id=webhook_id,
            team_id=team_id,
            name=name,
            url_origin=split.origin,
            url_secret=self._seal_url(team_id, webhook_id, split),
            body_format=body_format,
            kinds=checked_kinds,
            signing_secret=self.box.encrypt(
                secret.encode("ascii"),
                TEAM_WEBHOOK_SIGNING_SECRET.binding(team_id, webhook_id),
            ),
            previous_signing_secret=None,
            previous_secret_until=None,
            enabled=enabled,
            created_by=account_id,
            created_at=now,
            updated_at=now,
        )
        async with self.db.write() as conn:
            if len(await self._repo.list_webhooks(conn, team_id)) >= MAX_WEBHOOKS:
                raise Conflict(
                    f"A team has at most {MAX_WEBHOOKS} webhooks", code="teamWebhookLimit"
                )
            await self._repo.add_webhook(conn, row)
        log.info("team webhook added", extra={"team_id": team_id, "webhook_id": webhook_id})
        return self._view(row), secret

    async def update_webhook(
        self,
        team_id: str,
        webhook_id: str,
        *,
        name: str | None = None,
        url: str | None = None,
        kinds: list[str] | None = None,
        body_format: str | None = None,
        enabled: bool | None = None,
    ) -> TeamWebhookView:
        """Change what is given; the rest stays. A new address is judged like a first."""
        values: dict[str, object] = {}
        if name is not None:
            values["name"] = _check_name(name)
        if kinds is not None:
            values["kinds"] = _check_kinds(kinds)
        if body_format is not None:
            values["body_format"] = _check_format(body_format)
        if enabled is not None:
            values["enabled"] = enabled
        if url is not None:
            split = split_url(url)
            await self._judge(split)
            values["url_origin"] = split.origin
            values["url_secret"] = self._seal_url(team_id, webhook_id, split)
        async with self.db.write() as conn:
            await self._get(conn, team_id, webhook_id)
            values["updated_at"] = self.clock.now()
            await self._repo.update_webhook(conn, team_id, webhook_id, **values)
            row = await self._get(conn, team_id, webhook_id)
            if not row.enabled:
                await self._end_pending(conn, row)
        return self._view(row)

    async def rotate_secret(self, team_id: str, webhook_id: str) -> tuple[str, float | None]:
        """A new signing secret, answered this once, and until when the one before it also
        signs each attempt (``ROTATION_OVERLAP_SECONDS``), so receivers can switch
        meanwhile; None when the one before cannot be opened on this host."""
        secret = new_signing_secret()
        now = self.clock.now()
        async with self.db.write() as conn:
            hook = await self._get(conn, team_id, webhook_id)
            binding = TEAM_WEBHOOK_SIGNING_SECRET.binding(team_id, webhook_id)
            try:
                old = self._open_secret(hook, TEAM_WEBHOOK_SIGNING_SECRET, hook.signing_secret)
            except SecretUnreadable:
                sealed_old, until = None, None  # nothing to keep signing with
            else:
                previous = TEAM_WEBHOOK_PREVIOUS_SECRET.binding(team_id, webhook_id)
                sealed_old = self.box.encrypt(old.encode("ascii"), previous)
                until = now + ROTATION_OVERLAP_SECONDS
            await self._repo.update_webhook(
                conn,
                team_id,
                webhook_id,
                signing_secret=self.box.encrypt(secret.encode("ascii"), binding),
                previous_signing_secret=sealed_old,
                previous_secret_until=until,
                updated_at=now,
            )
        log.info(
            "team webhook secret rotated",
            extra={"team_id": team_id, "webhook_id": webhook_id},
        )
        return secret, until

    async def delete_webhook(self, team_id: str, webhook_id: str) -> None:
        """Remove an endpoint and its delivery log; pending deliveries go with it."""
        async with self.db.write() as conn:
            await self._get(conn, team_id, webhook_id)
            await self._repo.remove_webhook(conn, team_id, webhook_id)
        log.info("team webhook removed", extra={"team_id": team_id, "webhook_id": webhook_id})

    async def list_deliveries(
        self, team_id: str, webhook_id: str, limit: int = MAX_LOG
    ) -> list[DeliveryView]:
        """The endpoint's latest deliveries, newest first."""
        async with self.db.read() as conn:
            await self._get(conn, team_id, webhook_id)
            rows = await self._repo.list_deliveries(
                conn, team_id, webhook_id, max(1, min(limit, MAX_LOG))
            )
        return [_delivery_view(row) for row in rows]

    async def send_test(self, team_id: str, webhook_id: str) -> DeliveryView:
        """Send a test event now (one attempt, not retried) and answer how it went."""
        async with self.db.write() as conn:
            hook = await self._get(conn, team_id, webhook_id)
            row = await self._add_delivery(
                conn, hook, test_event(team_id, webhook_id, self.link), max_attempts=1
            )
        await self._attempt(row, even_if_off=True)
        async with self.db.read() as conn:
            done = await self._repo.get_delivery(conn, team_id, row.id)
        assert done is not None
        return _delivery_view(done)

    # Events.

    async def run_finished(self, signal: RunFinished) -> None:
        """Queue ``run.finished`` or ``run.failed`` for the team's endpoints that want it."""
        await self._enqueue(signal.team_id, run_event(signal, self.link))

    async def attention_waiting(self, signal: AttentionWaiting) -> None:
        """Queue ``approval.waiting``: for a routine's run or a shared thread only; what
        a private chat waits for stays with its member."""
        if signal.routine_id is None and not signal.whole_team:
            return
        async with self.db.read() as conn:
            agent = await self._agents.get_agent(conn, signal.team_id, signal.agent_id)
        name = agent.name if agent is not None else "An agent"
        await self._enqueue(signal.team_id, waiting_event(signal, name, self.link))

    async def _enqueue(self, team_id: str, event: WebhookEvent) -> None:
        async with self.db.write() as conn:
            for hook in await self._repo.list_webhooks(conn, team_id):
                if hook.enabled and event.kind in hook.kinds:
                    await self._add_delivery(conn, hook, event, max_attempts=MAX_ATTEMPTS)
        self._wake.set()

    async def _add_delivery(
        self, conn: AsyncConnection, hook: TeamWebhookRow, event: WebhookEvent, *, max_attempts: int
    ) -> DeliveryRow:
        now = self.clock.now()
        row = DeliveryRow(
            id=f"msg_{uuid.uuid4().hex[:28]}",
            team_id=hook.team_id,
            webhook_id=hook.id,
            kind=event.kind,
            body=event.body(hook.body_format, now),
            status="pending",
            attempts=0,
            max_attempts=max_attempts,
            next_attempt_at=now,
            last_status=None,
            last_error=None,
            created_at=now,
            updated_at=now,
        )
        await self._repo.add_delivery(conn, row)
        return row

    # Sending.

    async def deliver_due(self) -> int:
        """Attempt every delivery due now (by the clock), ``PARALLEL_ATTEMPTS`` at a time
        (a slow receiver holds up no other); answers how many were taken (attempted, or
        ended unsent because their endpoint went or is turned off)."""
        attempted = 0
        gate = asyncio.Semaphore(PARALLEL_ATTEMPTS)

        async def attempt(row: DeliveryRow) -> bool:
            async with gate:
                try:
                    return await self._attempt(row)
                except Exception:
                    log.exception("a team webhook attempt failed", extra={"delivery_id": row.id})
                    return False

        while True:
            async with self.db.read() as conn:
                due = await self._repo.list_due(conn, self.clock.now(), _BATCH)
            batch = sum(await asyncio.gather(*(attempt(row) for row in due)))
            attempted += batch
            if batch == 0:  # none left, or none this sender could take now
                return attempted

    async def prune(self) -> int:
        """Remove delivered and failed deliveries older than ``KEEP_SECONDS``; answers how
        many went."""
        async with self.db.write() as conn:
            return await self._repo.remove_finished_deliveries(
                conn, self.clock.now() - KEEP_SECONDS
            )

    async def _attempt(self, row: DeliveryRow, *, even_if_off: bool = False) -> bool:
        """One attempt at ``row``, if this sender can claim it; none when its endpoint is
        turned off (``even_if_off``: a test an admin asked for), which ends it."""
        now = self.clock.now()
        async with self.db.write() as conn:
            if not await self._repo.claim_delivery(conn, row, now + LEASE_SECONDS):
                return False
            hook = await self._repo.get_webhook(conn, row.team_id, row.webhook_id)
            if hook is not None and not hook.enabled and not even_if_off:
                await self._end(conn, row)
                return True
        outcome = await self._send(hook, row) if hook is not None else None
        attempts = row.attempts + 1
        async with self.db.write() as conn:
            if outcome is None:
                return True  # the endpoint went; its deliveries went with it
            values: dict[str, object] = {
                "attempts": attempts,
                "last_status": outcome.status,
                "last_error": outcome.error or _answer_phrase(outcome),
                "updated_at": self.clock.now(),
            }
            delay = None if outcome.final else retry_delay(attempts)
            if outcome.delivered:
                values.update(status="delivered", next_attempt_at=None, last_error=None)
            elif delay is None or attempts >= row.max_attempts:
                values.update(status="failed", next_attempt_at=None)
            else:
                values.update(next_attempt_at=self.clock.now() + delay)
            await self._repo.update_delivery(conn, row.team_id, row.id, **values)
        log.info(
            "team webhook attempt",
            extra={
                "team_id": row.team_id,
                "webhook_id": row.webhook_id,
                "delivery_id": row.id,
                "attempt": attempts,
                "answer": outcome.status,
            },
        )
        return True

    async def _end_pending(self, conn: AsyncConnection, hook: TeamWebhookRow) -> None:
        """End the pending deliveries the log shows; any older one ends when it comes due."""
        for row in await self._repo.list_deliveries(conn, hook.team_id, hook.id, MAX_LOG):
            if row.status == "pending":
                await self._end(conn, row)

    async def _end(self, conn: AsyncConnection, row: DeliveryRow) -> None:
        """``row`` fails unsent: its endpoint is turned off."""
        await self._repo.update_delivery(
            conn,
            row.team_id,
            row.id,
            status="failed",
            next_attempt_at=None,
            last_error=TURNED_OFF,
            updated_at=self.clock.now(),
        )
        log.info(
            "team webhook delivery ended: the webhook is turned off",
            extra={"team_id": row.team_id, "webhook_id": row.webhook_id, "delivery_id": row.id},
        )

    async def _send(self, hook: TeamWebhookRow, row: DeliveryRow) -> Outcome:
        now = self.clock.now()
        try:
            url = self._open_url(hook)
            keys = [self._open_secret(hook, TEAM_WEBHOOK_SIGNING_SECRET, hook.signing_secret)]
            previous = hook.previous_signing_secret
            if previous is not None and (hook.previous_secret_until or 0.0) > now:
                keys.append(self._open_secret(hook, TEAM_WEBHOOK_PREVIOUS_SECRET, previous))
        except SecretUnreadable:
            return Outcome(None, "its secrets cannot be opened on this host", final=True)
        headers = signed_headers(keys, row.id, now, row.body)
        return await self.sender.send(url, headers, row.body)

    async def _send_forever(self) -> None:
        pruned_at = 0.0
        while True:
            # Cleared before looking, so an event that arrives meanwhile wakes the next wait.
            self._wake.clear()
            try:
                await self.deliver_due()
                if self.clock.now() - pruned_at >= PRUNE_EVERY_SECONDS:
                    await self.prune()
                    pruned_at = self.clock.now()
                async with self.db.read() as conn:
                    next_at = await self._repo.next_due_at(conn)
            except Exception:
                log.exception("team webhook deliveries failed; trying again")
                next_at = None
            wait = POLL_SECONDS if next_at is None else next_at - self.clock.now()
            await wait_set(self._wake, max(0.01, min(wait, POLL_SECONDS)))

    # Helpers.

    async def _judge(self, split: SplitUrl) -> None:
        try:
            async with asyncio.timeout(_RESOLVE_SECONDS):
                await self.sender.judge(split.full)
        except NonPublicAddress as refused:
            raise WebhookAddressRefused(refused) from None
        except TimeoutError:
            raise NameNotResolved(URL(split.origin).raw_host or split.origin) from None

    async def _get(self, conn: AsyncConnection, team_id: str, webhook_id: str) -> TeamWebhookRow:
        row = await self._repo.get_webhook(conn, team_id, webhook_id)
        if row is None:
            raise NotFound("No such webhook in this team", code="teamWebhookNotFound")
        return row

    def _open_secret(self, hook: TeamWebhookRow, column: EncryptedColumn, sealed: bytes) -> str:
        return self.box.decrypt(sealed, column.binding(hook.team_id, hook.id)).decode("ascii")

    def _seal_url(self, team_id: str, webhook_id: str, split: SplitUrl) -> bytes | None:
        if split.secret is None:
            return None
        binding = TEAM_WEBHOOK_URL_SECRET.binding(team_id, webhook_id)
        return self.box.encrypt(split.secret.encode("utf-8"), binding)

    def _open_url(self, hook: TeamWebhookRow) -> str:
        if hook.url_secret is None:
            return hook.url_origin
        binding = TEAM_WEBHOOK_URL_SECRET.binding(hook.team_id, hook.id)
        return hook.url_origin + self.box.decrypt(hook.url_secret, binding).decode("utf-8")

    def _view(self, row: TeamWebhookRow) -> TeamWebhookView:
        return TeamWebhookView(
            id=row.id,
            name=row.name,
            url=SplitUrl(row.url_origin, "?" if row.url_secret is not None else None).masked,
            kinds=row.kinds,
            body_format=row.body_format,
            enabled=row.enabled,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )


def _answer_phrase(outcome: Outcome) -> str | None:
    if outcome.status is None or outcome.delivered:
        return None
    return f"answered HTTP {outcome.status}"


def _delivery_view(row: DeliveryRow) -> DeliveryView:
    return DeliveryView(
        id=row.id,
        kind=row.kind,
        status=row.status,
        attempts=row.attempts,
        last_status=row.last_status,
        last_error=row.last_error,
        next_attempt_at=row.next_attempt_at if row.status == "pending" else None,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME_LENGTH or not name.isprintable():
        raise InvalidArgument(
            f"A webhook's name has 1 to {MAX_NAME_LENGTH} printable characters", field="name"
        )
    return name


def _check_kinds(kinds: list[str]) -> tuple[str, ...]:
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise InvalidArgument(f"A webhook wants one or more of {', '.join(KINDS)}", field="kinds")
    return tuple(kind for kind in KINDS if kind in kinds)


def _check_format(body_format: str) -> str:
    if body_format not in BODY_FORMATS:
        raise InvalidArgument(
            f"A webhook's body format is one of {', '.join(BODY_FORMATS)}", field="bodyFormat"
        )
    return body_format

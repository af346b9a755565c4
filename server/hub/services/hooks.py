"""Webhook intake: check a sender's delivery, keep it, and keep the hooks hosts register.

A delivery is checked the Standard Webhooks way (``webhook-id``, ``webhook-timestamp``
within five minutes of the hub's clock, ``webhook-signature`` over both and the body)
against the hook's secret and, for a day after a rotation, its previous one. An
unknown or disabled hook is checked against a decoy hook the same way before it is
refused, so a sender cannot tell a hook that exists from one that does not by time.
A signed body the database cannot keep as text (not UTF-8, or holding a NUL) is refused.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import hmac
import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from standardwebhooks.webhooks import Webhook

from server.common.clock import Clock
from server.common.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    RateLimited,
    Unauthenticated,
)
from server.common.protocol.hooks import MISSING, HookFilters, new_secret
from server.common.protocol.ids import HEX_ID_PATTERN
from server.common.protocol.link import HookRegistration
from server.common.ratelimit import TokenBuckets
from server.common.tasks import BackgroundTasks, every
from server.common.tokens import new_id
from server.db.engine import Database
from server.hub.bus import Bus
from server.hub.storage.hooks import (
    PENDING,
    SKIPPED,
    HubDelivery,
    HubHook,
    HubHookRepository,
)
from server.hub.storage.hosts import Host

log = logging.getLogger(__name__)

TIMESTAMP_TOLERANCE = 5 * 60.0
REPLAY_WINDOW = 24 * 3600.0
PRUNE_EVERY = 3600.0
MAX_WEBHOOK_ID = 256
# Deliveries written in one transaction at most, and announced in one bus message (a
# PostgreSQL NOTIFY carries 8,000 bytes).
MAX_BATCH = 200
ANNOUNCE_BATCH = 60
_ID = re.compile(HEX_ID_PATTERN)
# Seconds since the epoch in ASCII digits; twelve reach past the year 30000, and a
# longer stamp is refused before it becomes a number too large for a float.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")


@dataclass(frozen=True, slots=True)
class Accepted:
    """A delivery the hub keeps: ``skipped`` when its filters said it starts nothing."""

    delivery: HubDelivery

    @property
    def skipped(self) -> bool:
        return self.delivery.status == SKIPPED


@functools.lru_cache(maxsize=4096)
def _signer(secret: str) -> Webhook:
    return Webhook(secret)


class SignatureCheck:
    """Whether a delivery carries a valid signature by any of two secrets.

    Always two HMACs, whatever the hook: the decoy pads a hook with one secret."""

    def matches(
        self, candidates: Sequence[str], headers: Mapping[str, str], body: bytes, now: float
    ) -> bool:
        webhook_id = headers.get("webhook-id", "")
        stamp = headers.get("webhook-timestamp", "")
        signatures = _v1_signatures(headers.get("webhook-signature", ""))
        sent_at = float(stamp) if _TIMESTAMP.fullmatch(stamp) else math.nan
        fresh = abs(now - sent_at) <= TIMESTAMP_TOLERANCE
        when = datetime.fromtimestamp(sent_at if fresh else now, tz=UTC)
        matched = False
        for secret in candidates:
            # Over the bytes as sent, so a body that is not UTF-8 is refused for what it is.
            expected = base64.b64decode(_signer(secret).sign(webhook_id, when, body)[3:])
            for signature in signatures:
                matched |= hmac.compare_digest(expected, signature)
        return matched and fresh and bool(webhook_id) and len(webhook_id) <= MAX_WEBHOOK_ID


def _v1_signatures(header: str) -> list[bytes]:
    found = []
    for part in header.split(" ")[:8]:
        version, _, value = part.partition(",")
        if version != "v1":
            continue
        try:
            found.append(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            continue
    return found


@functools.lru_cache(maxsize=4096)
def _filters(text: str) -> HookFilters:
    return HookFilters.model_validate_json(text)


def _parsed(body: bytes) -> Any:
    """The body as JSON, or ``MISSING`` (which passes no filter) when it cannot be parsed:
    not JSON, or nested deeper than the parser goes."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return MISSING


def _stored_text(body: bytes) -> str:
    """The body as the text the hub keeps; both databases take it alike (PostgreSQL's
    text holds no NUL)."""
    try:
        text: str | None = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise InvalidArgument("the body must be UTF-8 text without NUL characters")
    return text


class HookService:
    """Deliveries in (``receive``), hooks from hosts (``register``), deliveries out to
    their hosts (``pending_for``, ``acknowledge``)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        bus: Bus,
        *,
        burst: int,
        refill_seconds: float,
        signatures: SignatureCheck | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._bus = bus
        self._repo = HubHookRepository()
        self._buckets = TokenBuckets(clock, burst=burst, refill_seconds=refill_seconds)
        self._signatures = signatures or SignatureCheck()
        self._tasks = BackgroundTasks("webhook deliveries")
        self._waiting: list[tuple[HubDelivery, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None
        # Checked in place of an unknown or disabled hook, so both cost the same.
        self._decoy = HubHook(
            id="0" * 32,
            team_id="0" * 32,
            host_id="0" * 32,
            routine_id="0" * 32,
            secret=new_secret(),
            previous_secret=new_secret(),
            previous_until=math.inf,
            filters="{}",
            enabled=False,
            updated_at=0.0,
        )

    async def receive(self, hook_id: str, headers: Mapping[str, str], body: bytes) -> Accepted:
        """Check and keep one delivery; raises what the sender is answered."""
        found = await self._repo.lookup_hook(self._db, hook_id) if _ID.match(hook_id) else None
        hook = found if found is not None and found.enabled else None
        checked = hook or self._decoy
        now = self._clock.now()
        signed = self._signatures.matches(_secrets_of(checked, now), headers, body, now)
        # Signed deliveries and the rest count apart: whoever learns a trigger's address
        # cannot use up what its sender's signed deliveries may.
        bucket = checked.id if signed else f"unsigned:{checked.id}"
        wait = self._buckets.retry_after(bucket)
        if hook is None:
            raise NotFound("no such hook", code="hookNotFound")
        if wait > 0:
            raise RateLimited("this hook is receiving too much; try again later", retry_after=wait)
        self._buckets.spend(bucket)
        if not signed:
            raise Unauthenticated(
                "the delivery's signature does not check out", code="hookSignature"
            )
        text = _stored_text(body)
        filters = _filters(hook.filters)
        passes = filters.passes(_parsed(body)) if not filters.empty else True
        delivery = HubDelivery(
            id=new_id(),
            team_id=hook.team_id,
            hook_id=hook.id,
            host_id=hook.host_id,
            routine_id=hook.routine_id,
            webhook_id=headers["webhook-id"],
            body=text if passes else "",
            status=PENDING if passes else SKIPPED,
            received_at=now,
        )
        if not await self._store(delivery):
            raise Conflict("this webhook-id was delivered already", code="hookReplayed")
        return Accepted(delivery)

    async def _store(self, delivery: HubDelivery) -> bool:
        """Whether ``delivery`` was stored (committed) rather than a replay.

        Deliveries that arrive while a write is under way are written together in the next
        one (a group commit): one transaction and one bus message for many deliveries."""
        stored: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((delivery, stored))
        if self._writer is None or self._writer.done():
            self._writer = self._tasks.spawn(self._write_waiting())
        return await stored

    async def _write_waiting(self) -> None:
        while self._waiting:
            batch = self._waiting[:MAX_BATCH]
            del self._waiting[:MAX_BATCH]
            try:
                inserted = await self._add([d for d, _ in batch])
            except Exception as exc:
                if len(batch) == 1:
                    _fail(batch, exc)
                    continue
                # One row the database refuses fails the whole transaction: each row is
                # written alone, so it fails only its own request.
                inserted = set()
                for delivery, stored in batch:
                    try:
                        inserted |= await self._add([delivery])
                    except Exception as alone:
                        _fail([(delivery, stored)], alone)
            for delivery, stored in batch:
                if not stored.done():
                    stored.set_result(delivery.id in inserted)
            fresh = [d for d, _ in batch if d.id in inserted and d.status == PENDING]
            if fresh:
                # Beside the next write, not before it: a NOTIFY is a round trip of its own.
                self._tasks.start(self._announce(fresh))

    async def _add(self, deliveries: list[HubDelivery]) -> set[str]:
        async with self._db.write() as conn:
            return await self._repo.add_deliveries(conn, deliveries)

    async def _announce(self, deliveries: Sequence[HubDelivery]) -> None:
        """The instance holding each host's link (this one or another) sends them now; if
        this fails, the link's resend round sends them all the same."""
        by_host: dict[str, list[str]] = {}
        for delivery in deliveries:
            by_host.setdefault(delivery.host_id, []).append(delivery.id)
        for host_id, ids in by_host.items():
            for start in range(0, len(ids), ANNOUNCE_BATCH):
                await self._bus.publish(
                    {
                        "kind": "hook-delivery",
                        "host_id": host_id,
                        "delivery_ids": ids[start : start + ANNOUNCE_BATCH],
                    }
                )

    async def register(self, host: Host, registration: HookRegistration) -> None:
        """Add or replace a hook of ``host``; one for a team the host does not serve is dropped."""
        if host.team_id is not None and host.team_id != registration.team_id:
            log.warning("dropped a hook for another team", extra={"host_id": host.id})
            return
        current, *previous = registration.secrets
        hook = HubHook(
            id=registration.hook_id,
            team_id=registration.team_id,
            host_id=host.id,
            routine_id=registration.routine_id,
            secret=current.secret,
            previous_secret=previous[0].secret if previous else None,
            previous_until=previous[0].valid_until if previous else None,
            filters=registration.filters.model_dump_json(),
            enabled=registration.enabled,
            updated_at=self._clock.now(),
        )
        async with self._db.write() as conn:
            existing = await self._repo.get_hook(conn, hook.id)
            if existing is not None and (
                existing.host_id != host.id or existing.team_id != hook.team_id
            ):
                log.warning("dropped a hook another host holds", extra={"host_id": host.id})
                return
            await self._repo.update_hook(conn, hook)

    async def sync(self, host_id: str, hook_ids: Sequence[str]) -> None:
        """Forget every hook of ``host_id`` but these."""
        async with self._db.write() as conn:
            await self._repo.remove_hooks_except(conn, host_id, list(hook_ids))

    async def remove(self, host_id: str, team_id: str, hook_id: str) -> None:
        async with self._db.write() as conn:
            await self._repo.remove_hook(conn, host_id, team_id, hook_id)

    async def pending_for(self, host_id: str, limit: int = 200) -> list[HubDelivery]:
        """What ``host_id`` has not acknowledged yet, oldest first."""
        async with self._db.read() as conn:
            return await self._repo.list_pending(conn, host_id, limit)

    async def get_pending(self, host_id: str, delivery_id: str) -> HubDelivery | None:
        async with self._db.read() as conn:
            delivery = await self._repo.get_delivery(conn, host_id, delivery_id)
        return delivery if delivery is not None and delivery.status == PENDING else None

    async def acknowledge(self, host_id: str, delivery_id: str) -> None:
        """The host took the delivery: it is not sent again (its webhook id is kept a day)."""
        async with self._db.write() as conn:
            await self._repo.update_delivered(conn, host_id, delivery_id, self._clock.now())

    async def prune(self) -> int:
        """Forget deliveries older than the replay window that need nothing more."""
        async with self._db.write() as conn:
            return await self._repo.remove_old_deliveries(conn, self._clock.now() - REPLAY_WINDOW)

    def start(self) -> None:
        self._tasks.start(every(PRUNE_EVERY, self.prune, "pruning webhook deliveries"))

    async def close(self) -> None:
        await self._tasks.close()


def _fail(waiting: Sequence[tuple[HubDelivery, asyncio.Future[bool]]], exc: Exception) -> None:
    for _, stored in waiting:
        if not stored.done():
            stored.set_exception(exc)


def _secrets_of(hook: HubHook, now: float) -> tuple[str, str]:
    """The hook's secret and its previous one while it lasts, or the decoy's in its place."""
    previous = hook.previous_secret
    if previous is None or hook.previous_until is None or hook.previous_until < now:
        previous = _DECOY_PREVIOUS
    return hook.secret, previous


_DECOY_PREVIOUS = new_secret()

"""A routine's webhook triggers: made, rotated and removed here, registered with the hub,
and the deliveries the hub hands over, each started once.

The host keeps each hook's signing secret sealed and shows it once, when it is made or
rotated; the hub, which checks signatures while the host may be away, gets it over the
link. A rotation keeps the previous secret valid for a day. A delivery id the host has
taken is recorded, so a delivery the hub sends again is acknowledged and nothing more.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.crypto.box import SecretBox
from server.common.crypto.columns import EncryptedColumn
from server.common.errors import Forbidden, InvalidArgument, NotFound, Unavailable
from server.common.protocol.hooks import HookFilters, HookSecret, new_secret
from server.common.protocol.link import (
    HookRegistration,
    LinkHookDelivery,
    LinkHookRegister,
    LinkHookRemove,
)
from server.common.roles import Role
from server.common.tokens import new_id
from server.db.engine import Database
from server.db.tables import HOOK_PREVIOUS_SECRET, HOOK_SECRET
from server.host.agents.hub_outbox import HubOutbox
from server.host.agents.routines import RoutineService
from server.host.agents.work_signals import RoutineDeleted
from server.host.services.workspace import Member
from server.host.storage.routine_hooks import HookRow, RoutineHookRepository

log = logging.getLogger(__name__)

PREVIOUS_SECRET_SECONDS = 24 * 3600.0
MAX_HOOKS_PER_ROUTINE = 10


class RoutineRuns(Protocol):
    """What webhook triggers need of the routines: who may manage a routine's triggers,
    and starting a run from a delivery (the routines service)."""

    async def check_may_manage(self, member: Member, routine_id: str) -> None:
        """Raise ``NotFound`` for a routine the member cannot see, ``Forbidden`` for one
        they may not change."""

    async def start_from_delivery(
        self,
        team_id: str,
        routine_id: str,
        *,
        delivery_id: str,
        body: str,
        received_at: float,
    ) -> object:
        """Start the routine's run for one delivery (none for a delivery id it has started
        one for already); ``body`` is data from outside. ``NotFound`` for a routine that
        is gone."""


class RoutinesForHooks:
    """``RoutineRuns`` by the routines service: its creator, owners and admins manage a
    routine's triggers, as they change the routine itself."""

    def __init__(self, routines: RoutineService) -> None:
        self._routines = routines

    async def check_may_manage(self, member: Member, routine_id: str) -> None:
        routine = await self._routines.get_routine(member, routine_id)
        if not (member.role.at_least(Role.ADMIN) or routine.created_by == member.account_id):
            raise Forbidden("only the routine's creator or an admin may manage its triggers")

    async def start_from_delivery(
        self,
        team_id: str,
        routine_id: str,
        *,
        delivery_id: str,
        body: str,
        received_at: float,
    ) -> object:
        return await self._routines.start_from_delivery(
            team_id, routine_id, delivery_id=delivery_id, body=body, received_at=received_at
        )


class NoRoutines:
    """``RoutineRuns`` while this host has no routines service: owners and admins manage
    triggers, and a delivery waits at the hub (it is not acknowledged)."""

    async def check_may_manage(self, member: Member, routine_id: str) -> None:
        if not member.role.at_least(Role.ADMIN):
            raise Forbidden("managing webhook triggers needs the admin role or higher")

    async def start_from_delivery(
        self,
        team_id: str,
        routine_id: str,
        *,
        delivery_id: str,
        body: str,
        received_at: float,
    ) -> object:
        raise Unavailable("this host cannot start routines", code="routinesUnavailable")


@dataclass(frozen=True, slots=True)
class HookWithSecret:
    """A hook just made or rotated, with the secret shown this once."""

    hook: HookRow
    secret: str


@dataclass
class RoutineHookService:
    db: Database
    clock: Clock
    box: SecretBox
    outbox: HubOutbox
    runs: RoutineRuns = field(default_factory=NoRoutines)
    _repo: RoutineHookRepository = field(default_factory=RoutineHookRepository, init=False)
    _taking: set[str] = field(default_factory=set, init=False)
    _taken: asyncio.Condition = field(default_factory=asyncio.Condition, init=False)

    async def create_hook(
        self, member: Member, routine_id: str, filters: HookFilters, *, enabled: bool = True
    ) -> HookWithSecret:
        """A new trigger for the routine; its secret is in the answer and nowhere after."""
        await self.runs.check_may_manage(member, routine_id)
        hook_id = new_id()
        secret = new_secret()
        async with self.db.write() as conn:
            existing = await self._repo.list_hooks(conn, member.team_id, routine_id)
            if len(existing) >= MAX_HOOKS_PER_ROUTINE:
                raise InvalidArgument(
                    f"a routine has at most {MAX_HOOKS_PER_ROUTINE} webhook triggers",
                    code="tooManyHooks",
                )
            hook = HookRow(
                id=hook_id,
                team_id=member.team_id,
                routine_id=routine_id,
                created_by=member.account_id,
                secret=self._seal(HOOK_SECRET, member.team_id, hook_id, secret),
                previous_secret=None,
                previous_until=None,
                filters=filters.model_dump(mode="json", by_alias=True),
                enabled=enabled,
                created_at=self.clock.now(),
                rotated_at=None,
            )
            await self._repo.add_hook(conn, hook)
        self.outbox.put(LinkHookRegister(hook=self._registration(hook)))
        log.info("webhook trigger created", extra={"team_id": member.team_id, "hook_id": hook_id})
        return HookWithSecret(hook, secret)

    async def rotate_hook(self, member: Member, hook_id: str) -> HookWithSecret:
        """A new secret; the one before stays valid for a day."""
        secret = new_secret()
        now = self.clock.now()
        async with self.db.write() as conn:
            hook = await self._managed(conn, member, hook_id)
            current = self._open(HOOK_SECRET, hook.team_id, hook.id, hook.secret)
            hook = HookRow(
                id=hook.id,
                team_id=hook.team_id,
                routine_id=hook.routine_id,
                created_by=hook.created_by,
                secret=self._seal(HOOK_SECRET, hook.team_id, hook.id, secret),
                previous_secret=self._seal(HOOK_PREVIOUS_SECRET, hook.team_id, hook.id, current),
                previous_until=now + PREVIOUS_SECRET_SECONDS,
                filters=hook.filters,
                enabled=hook.enabled,
                created_at=hook.created_at,
                rotated_at=now,
            )
            await self._repo.update_hook(conn, hook)
        self.outbox.put(LinkHookRegister(hook=self._registration(hook)))
        log.info("webhook trigger rotated", extra={"team_id": hook.team_id, "hook_id": hook_id})
        return HookWithSecret(hook, secret)

    async def delete_hook(self, member: Member, hook_id: str) -> None:
        """Remove the trigger; the hub answers 404 for it from now on."""
        async with self.db.write() as conn:
            hook = await self._managed(conn, member, hook_id)
            await self._repo.remove_hook(conn, hook.team_id, hook.id)
        self.outbox.put(LinkHookRemove(hook_id=hook_id, team_id=member.team_id))
        log.info("webhook trigger deleted", extra={"team_id": member.team_id, "hook_id": hook_id})

    async def routine_deleted(self, signal: RoutineDeleted) -> None:
        """The routine is gone: its triggers go now, and the hub forgets them."""
        async with self.db.write() as conn:
            hooks = await self._repo.list_hooks(conn, signal.team_id, signal.routine_id)
            for hook in hooks:
                await self._repo.remove_hook(conn, hook.team_id, hook.id)
        for hook in hooks:
            self.outbox.put(LinkHookRemove(hook_id=hook.id, team_id=hook.team_id))

    async def list_hooks(self, member: Member, routine_id: str) -> list[HookRow]:
        await self.runs.check_may_manage(member, routine_id)
        async with self.db.read() as conn:
            return await self._repo.list_hooks(conn, member.team_id, routine_id)

    async def registrations(self) -> list[HookRegistration]:
        """Every hook of this host as the hub keeps it (secrets in the clear)."""
        async with self.db.read() as conn:
            hooks = await self._repo.list_every_hook(conn)
        return [self._registration(hook) for hook in hooks]

    async def take_delivery(self, delivery: LinkHookDelivery) -> None:
        """Start the routine's run for a delivery, once however often it comes; returns when
        the host has it (then the hub may forget it)."""
        async with self._taken:
            # The same delivery may come twice at once (a resend): the second waits.
            await self._taken.wait_for(lambda: delivery.delivery_id not in self._taking)
            self._taking.add(delivery.delivery_id)
        try:
            await self._take(delivery)
        finally:
            async with self._taken:
                self._taking.discard(delivery.delivery_id)
                self._taken.notify_all()

    async def _take(self, delivery: LinkHookDelivery) -> None:
        async with self.db.read() as conn:
            if await self._repo.get_taken(conn, delivery.team_id, delivery.delivery_id):
                return
            hook = await self._repo.get_hook(conn, delivery.team_id, delivery.hook_id)
        try:
            body = base64.b64decode(delivery.body, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise InvalidArgument("a delivery's body is not base64 of UTF-8") from exc
        if hook is not None and hook.enabled and hook.routine_id == delivery.routine_id:
            # Started before it is recorded: a crash between the two sends it again, and the
            # routines service knows the delivery id of each run it started.
            try:
                await self.runs.start_from_delivery(
                    delivery.team_id,
                    delivery.routine_id,
                    delivery_id=delivery.delivery_id,
                    body=body,
                    received_at=delivery.received_at,
                )
            except NotFound:
                # The routine was deleted: its triggers go too, and the hub forgets them.
                log.info("a delivery for a removed routine", extra={"hook_id": hook.id})
                async with self.db.write() as conn:
                    await self._repo.remove_hook(conn, hook.team_id, hook.id)
                self.outbox.put(LinkHookRemove(hook_id=hook.id, team_id=hook.team_id))
        else:
            log.info("a delivery for a removed trigger", extra={"hook_id": delivery.hook_id})
        async with self.db.write() as conn:
            await self._repo.add_taken(
                conn,
                delivery.team_id,
                delivery.delivery_id,
                delivery.hook_id,
                delivery.routine_id,
                delivery.received_at,
                self.clock.now(),
            )

    async def _managed(self, conn: AsyncConnection, member: Member, hook_id: str) -> HookRow:
        hook = await self._repo.get_hook(conn, member.team_id, hook_id)
        if hook is None:
            raise NotFound("no such webhook trigger", code="hookNotFound")
        await self.runs.check_may_manage(member, hook.routine_id)
        return hook

    def _registration(self, hook: HookRow) -> HookRegistration:
        secrets = [HookSecret(secret=self._open(HOOK_SECRET, hook.team_id, hook.id, hook.secret))]
        if hook.previous_secret is not None and hook.previous_until is not None:
            previous = self._open(HOOK_PREVIOUS_SECRET, hook.team_id, hook.id, hook.previous_secret)
            secrets.append(HookSecret(secret=previous, valid_until=hook.previous_until))
        return HookRegistration(
            hook_id=hook.id,
            team_id=hook.team_id,
            routine_id=hook.routine_id,
            secrets=secrets,
            filters=HookFilters.model_validate(hook.filters),
            enabled=hook.enabled,
        )

    def _seal(self, column: EncryptedColumn, team_id: str, hook_id: str, secret: str) -> bytes:
        return self.box.encrypt(secret.encode("ascii"), column.binding(team_id, hook_id))

    def _open(self, column: EncryptedColumn, team_id: str, hook_id: str, sealed: bytes) -> str:
        return self.box.decrypt(sealed, column.binding(team_id, hook_id)).decode("ascii")

"""The hub's services, built once from the settings and kept under ``HUB_KEY``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from server.common.clock import Clock, SystemClock
from server.common.protocol.link import LinkRevoke
from server.common.tokens import new_id
from server.config import Settings
from server.db.engine import Database
from server.hub.account_streams import AccountStreams
from server.hub.bus import Bus, LocalBus, PostgresBus
from server.hub.links import HostLinks
from server.hub.mcp_relay import BUS_KINDS as MCP_BUS_KINDS
from server.hub.mcp_relay import McpRelay
from server.hub.metrics import HubMetrics
from server.hub.passwords import PasswordHasher
from server.hub.services.access_changes import ACCESS_KINDS, AccessChanges
from server.hub.services.access_tokens import ENDED_KIND as ACCESS_TOKENS_ENDED
from server.hub.services.access_tokens import AccessTokenService
from server.hub.services.accounts import AccountService
from server.hub.services.hooks import HookService
from server.hub.services.hosts import HostService
from server.hub.services.invitations import InvitationService
from server.hub.services.peer_checks import PeerChecks
from server.hub.services.sessions import SessionService
from server.hub.services.setup import SetupService
from server.hub.services.teams import TeamService
from server.hub.services.tickets import TicketService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hub:
    """Every service of one hub. Tests swap a part by keyword to ``Hub.build``."""

    settings: Settings
    clock: Clock
    db: Database
    metrics: HubMetrics
    passwords: PasswordHasher
    sessions: SessionService
    teams: TeamService
    invitations: InvitationService
    accounts: AccountService
    setup: SetupService
    hosts: HostService
    bus: Bus
    tickets: TicketService
    links: HostLinks
    changes: AccessChanges
    streams: AccountStreams
    hooks: HookService
    access_tokens: AccessTokenService
    mcp: McpRelay

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        db: Database | None = None,
        bus: Bus | None = None,
    ) -> Hub:
        clock = clock or SystemClock()
        db = db or Database.from_settings(settings)
        if bus is None:
            bus = LocalBus() if db.is_sqlite else PostgresBus(db.url, db.schema)
        instance_id = new_id()
        changes = AccessChanges(bus, instance_id, clock)
        passwords = PasswordHasher(settings.security)
        metrics = HubMetrics()
        sessions = SessionService(db, clock, settings.security, passwords, changes, metrics)
        teams = TeamService(db, clock, changes)
        hosts = HostService(db, clock, changes, link_lease=settings.hub.link_lease_seconds)
        tickets = TicketService(clock, hosts.ticket_key)
        hooks = HookService(
            db,
            clock,
            bus,
            burst=settings.hub.hook_burst,
            refill_seconds=settings.hub.hook_refill_seconds,
        )
        invitations = InvitationService(db, clock, changes)
        access_tokens = AccessTokenService(db, clock, teams, hosts, bus)
        peer_checks = PeerChecks(sessions, teams, clock)
        links = HostLinks(
            hosts, tickets, bus, instance_id, clock, hooks, access_tokens, peer_checks
        )
        accounts = AccountService(
            db,
            clock,
            passwords,
            sessions,
            teams,
            invitations,
            security=settings.security,
            open_signup=settings.hub.open_signup,
        )
        hub = cls(
            settings=settings,
            clock=clock,
            db=db,
            metrics=metrics,
            passwords=passwords,
            sessions=sessions,
            teams=teams,
            invitations=invitations,
            accounts=accounts,
            setup=SetupService(db, clock),
            hosts=hosts,
            bus=bus,
            tickets=tickets,
            links=links,
            changes=changes,
            streams=AccountStreams(),
            hooks=hooks,
            access_tokens=access_tokens,
            mcp=McpRelay(links, hosts, access_tokens, clock, bus),
        )
        changes.bind(hub.apply_access_change)
        return hub

    async def on_bus(self, message: dict[str, Any]) -> None:
        """Every message from the bus; changes this instance made were applied already."""
        if message.get("kind") == "resync":
            # Announcements may have been missed: trust nothing cached.
            self.teams.forget_cached(None)
            self.sessions.forget_all_cached()
            self.access_tokens.forget_cached()
            self.mcp.resync()
            return
        if message.get("kind") in MCP_BUS_KINDS:
            await self.mcp.on_bus(message)
            return
        if message.get("kind") == ACCESS_TOKENS_ENDED:
            ids = message.get("token_ids")
            self.access_tokens.forget_cached()
            if isinstance(ids, list):
                await self.mcp.end_tokens([str(i) for i in ids])
            return
        if message.get("kind") in ACCESS_KINDS:
            if message.get("origin") != self.changes.origin:
                await self.apply_access_change(message)
            return
        await self.links.on_bus(message)

    async def apply_access_change(self, message: dict[str, Any]) -> None:
        if message.get("kind") == "memberships":
            raw_ids = message.get("account_ids")
            account_ids = None if raw_ids is None else [str(i) for i in raw_ids]
            self.teams.forget_cached(account_ids)
            self.streams.memberships_changed(account_ids)
            return
        try:
            revoke = LinkRevoke.model_validate(message.get("revoke") or {})
        except ValidationError:
            log.warning("dropped a malformed revocation from the bus")
            return
        # Another instance ended these sessions: this one must not trust its cache of them.
        self.sessions.forget_cached(revoke.session_hashes)
        self.streams.revoked(revoke)
        await self.links.deliver_revoke(message)
        if revoke.team_id is not None and revoke.account_id is not None:
            # A member removed or of another role: their MCP sessions end as well.
            await self.mcp.end_member(revoke.team_id, revoke.account_id)


HUB_KEY = web.AppKey("hub", Hub)

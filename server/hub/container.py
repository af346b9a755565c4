"""The hub's services, built once from the settings and kept under ``HUB_KEY``."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from server.common.clock import Clock, SystemClock
from server.config import Settings
from server.db.engine import Database
from server.hub.metrics import HubMetrics
from server.hub.passwords import PasswordHasher
from server.hub.services.accounts import AccountService
from server.hub.services.hosts import HostEntry, HostService
from server.hub.services.invitations import InvitationService
from server.hub.services.sessions import SessionService
from server.hub.services.setup import SetupService
from server.hub.services.teams import TeamService


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

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        db: Database | None = None,
        builtin_host: HostEntry | None = None,
    ) -> Hub:
        clock = clock or SystemClock()
        db = db or Database(settings.database_url, pool_size=settings.database.pool_size)
        passwords = PasswordHasher(settings.security)
        sessions = SessionService(db, clock, settings.security, passwords)
        teams = TeamService(db, clock)
        invitations = InvitationService(db, clock)
        accounts = AccountService(
            db,
            clock,
            passwords,
            sessions,
            teams,
            invitations,
            open_signup=settings.hub.open_signup,
        )
        return cls(
            settings=settings,
            clock=clock,
            db=db,
            metrics=HubMetrics(),
            passwords=passwords,
            sessions=sessions,
            teams=teams,
            invitations=invitations,
            accounts=accounts,
            setup=SetupService(db, clock),
            hosts=HostService(builtin_host),
        )


HUB_KEY = web.AppKey("hub", Hub)

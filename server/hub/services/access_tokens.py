"""Personal access tokens: a member's bearer for the MCP endpoint, bound to one team and
one host, with a scope and an expiry; each is shown once and only its hash is kept.

Revoking one (or its member leaving the team) is announced on the bus as
``access-tokens-ended``, so every hub instance ends the MCP sessions it relays for it.

Every MCP request checks its bearer: the token found by a secret's hash is kept a few
seconds (``CHECK_CACHE_SECONDS``), dropped at once when any token ends, so a request
costs no database read. A host's reports of tool calls are written in groups, one
transaction for those that arrived while the last was written.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import Literal

from server.common.clock import Clock
from server.common.errors import Forbidden, NotFound, Unauthenticated
from server.common.roles import Role
from server.common.tasks import BackgroundTasks, wait_set
from server.common.tokens import hash_secret, new_id, new_secret
from server.db.engine import Database
from server.hub.bus import Bus
from server.hub.cache import ExpiringCache
from server.hub.services.access_changes import TOKENS_ENDED_KIND, announce_tokens_ended
from server.hub.services.hosts import HostService
from server.hub.services.teams import TeamService
from server.hub.storage.access_tokens import AccessToken, AccessTokenRepository, AccessTokenUse
from server.hub.storage.teams import TeamRepository

log = logging.getLogger(__name__)

TOKEN_PREFIX = "crh_pat_"  # noqa: S105 - the prefix every token starts with, no secret
TokenScope = Literal["browser", "browser+agents"]
UseOutcome = Literal["ok", "error", "refused"]
# Announced by ``announce_tokens_ended`` (a revoke here, a member leaving in TeamService).
ENDED_KIND = TOKENS_ENDED_KIND
MAX_TOKENS_PER_MEMBER = 50
# How long a checked token is trusted without reading it again; an ended token is
# forgotten at once (the bus), so this bounds staleness only if an announcement is lost.
CHECK_CACHE_SECONDS = 5.0
# The most tool uses written in one transaction.
MAX_USE_BATCH = 500
# How long the first use reported waits for others to be written with it: a transaction
# a call cost a fifth of a quick call's time on the hub when many sessions are busy.
USE_WRITE_PAUSE = 0.5


@dataclass(frozen=True, slots=True)
class HostReportedUse:
    """A tool call a host reported, before it is checked and kept."""

    host_id: str
    team_id: str
    token_id: str
    tool: str
    outcome: UseOutcome
    # When the report arrived (None: when it is kept), so the audit list keeps their order.
    at: float | None = None


@dataclass(frozen=True, slots=True)
class NewAccessToken:
    token: AccessToken
    secret: str


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """Who calls with a token, checked: the token, and the holder's role in its team."""

    token: AccessToken
    role: Role


class AccessTokenService:
    """Create, list, revoke and check personal access tokens; keep and list their use."""

    def __init__(
        self, db: Database, clock: Clock, teams: TeamService, hosts: HostService, bus: Bus
    ) -> None:
        self._db = db
        self._clock = clock
        self._teams = teams
        self._hosts = hosts
        self._bus = bus
        self._tokens = AccessTokenRepository()
        self._memberships = TeamRepository()
        self._checked: ExpiringCache[str, AccessToken] = ExpiringCache(
            clock, seconds=CHECK_CACHE_SECONDS
        )
        self._reported: list[HostReportedUse] = []
        self._writer: asyncio.Task[None] | None = None
        self._tasks = BackgroundTasks("access token uses")
        self._closing = asyncio.Event()

    def forget_cached(self) -> None:
        """Read every token again at its next use (one ended, or the bus missed news)."""
        self._checked.clear()

    async def close(self) -> None:
        """Write the uses still waiting, then stop."""
        self._closing.set()
        if self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)
        await self._tasks.close()

    async def create(
        self,
        team_id: str,
        account_id: str,
        *,
        name: str,
        host_id: str,
        scope: TokenScope,
        expires_in_days: int,
    ) -> NewAccessToken:
        """A new token of the member's for one host of the team; its secret is in the
        answer and nowhere else."""
        host = await self._hosts.get_team_host(team_id, host_id)
        now = self._clock.now()
        secret = TOKEN_PREFIX + new_secret()
        token = AccessToken(
            id=new_id(),
            team_id=team_id,
            host_id=host.id,
            account_id=account_id,
            name=name,
            token_hash=hash_secret(secret),
            scope=scope,
            created_at=now,
            expires_at=now + expires_in_days * 86400.0,
            last_used_at=None,
            revoked_at=None,
        )
        async with self._db.write() as conn:
            # Made after the member left (a removal that committed while this waited), a
            # token would outlive the revocation of theirs that the removal made.
            await self._memberships.lock_team(conn, team_id)
            if await self._memberships.get_role(conn, team_id, account_id) is None:
                raise Forbidden("you are no longer a member of this team", code="forbidden")
            live = [
                t
                for t in await self._tokens.list_tokens(conn, team_id, account_id)
                if t.revoked_at is None and t.expires_at > now
            ]
            if len(live) >= MAX_TOKENS_PER_MEMBER:
                raise Forbidden(
                    f"a member may hold {MAX_TOKENS_PER_MEMBER} live tokens in a team; "
                    "revoke one first",
                    code="tooManyAccessTokens",
                )
            await self._tokens.add_token(conn, token)
        log.info("access token created", extra={"token_id": token.id, "team_id": team_id})
        return NewAccessToken(token, secret)

    async def list_tokens(self, team_id: str, account_id: str | None) -> list[AccessToken]:
        """A member's tokens (every member's when ``account_id`` is None)."""
        async with self._db.read() as conn:
            return await self._tokens.list_tokens(conn, team_id, account_id)

    async def revoke(self, team_id: str, account_id: str, role: Role, token_id: str) -> None:
        """End a token: the member's own, or anyone's in the team for an owner or admin."""
        async with self._db.write() as conn:
            token = await self._tokens.get_token(conn, team_id, token_id)
            if token is None or (token.account_id != account_id and not role.at_least(Role.ADMIN)):
                raise NotFound("no such access token", code="accessTokenNotFound")
            await self._tokens.update_revoked(conn, team_id, token_id, self._clock.now())
        self.forget_cached()
        log.info("access token revoked", extra={"token_id": token_id, "team_id": team_id})
        await announce_tokens_ended(self._bus, [token_id])

    async def authenticate(self, secret: str) -> TokenHolder:
        """The token a bearer secret names, still live and its member still in the team;
        else ``unauthenticated`` with a code that says which."""
        if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            raise Unauthenticated("not a Crewhost access token", code="accessTokenInvalid")
        token_hash = hash_secret(secret)
        token = await self._checked.get_or_read(
            token_hash, lambda: self._tokens.get_token_by_hash(self._db, token_hash)
        )
        if token is None:
            raise Unauthenticated("the access token is not known", code="accessTokenInvalid")
        if token.revoked_at is not None:
            raise Unauthenticated("the access token was revoked", code="accessTokenRevoked")
        if self._clock.now() >= token.expires_at:
            raise Unauthenticated("the access token has expired", code="accessTokenExpired")
        role = await self._teams.role_of(token.team_id, token.account_id)
        if role is None:
            raise Unauthenticated(
                "the token's member is no longer in its team", code="accessTokenRevoked"
            )
        return TokenHolder(token, role)

    async def still_live(self, token: AccessToken) -> bool:
        """Whether a token a session was opened with may still be used now."""
        if self._clock.now() >= token.expires_at:
            return False
        async with self._db.read() as conn:
            current = await self._tokens.get_token(conn, token.team_id, token.id)
        return current is not None and current.revoked_at is None

    def keep_use_from_host(self, use: HostReportedUse) -> None:
        """Keep a tool call a host reports, for a token of that host's in that team only:
        written with the others that arrive meanwhile, in one transaction."""
        if use.at is None:
            use = replace(use, at=self._clock.now())
        self._reported.append(use)
        if self._writer is None or self._writer.done():
            self._writer = self._tasks.spawn(self._write_reported())

    async def _write_reported(self) -> None:
        await wait_set(self._closing, USE_WRITE_PAUSE)
        while self._reported:
            batch = self._reported[:MAX_USE_BATCH]
            del self._reported[:MAX_USE_BATCH]
            try:
                await self._write_uses(batch)
            except Exception:  # the calls are done; their audit lines are lost, said here
                log.exception("keeping MCP tool uses failed", extra={"uses": len(batch)})

    async def _write_uses(self, batch: list[HostReportedUse]) -> None:
        now = self._clock.now()
        async with self._db.write() as conn:
            tokens: dict[tuple[str, str], AccessToken | None] = {}
            uses: list[AccessTokenUse] = []
            for reported in batch:
                key = (reported.team_id, reported.token_id)
                if key not in tokens:
                    tokens[key] = await self._tokens.get_token(conn, *key)
                token = tokens[key]
                if token is None or token.host_id != reported.host_id:
                    log.warning(
                        "a host reported a use of a token not its own",
                        extra={"host_id": reported.host_id},
                    )
                    continue
                uses.append(
                    AccessTokenUse(
                        id=new_id(),
                        team_id=token.team_id,
                        token_id=token.id,
                        account_id=token.account_id,
                        at=reported.at if reported.at is not None else now,
                        tool=reported.tool[:100],
                        outcome=reported.outcome,
                    )
                )
            await self._tokens.add_uses(conn, uses)

    async def list_uses(
        self, team_id: str, account_id: str | None, token_id: str | None = None
    ) -> list[AccessTokenUse]:
        """The audit list: a member's own uses (every member's when ``account_id`` is None)."""
        async with self._db.read() as conn:
            return await self._tokens.list_uses(
                conn, team_id, account_id=account_id, token_id=token_id
            )

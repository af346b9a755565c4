"""Sign-in, sign-out, and turning a bearer token or cookie into a principal."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import RateLimited, Unauthenticated
from server.common.ratelimit import TokenBuckets
from server.common.tasks import BackgroundTasks, every
from server.common.tokens import hash_secret, new_id, new_secret
from server.config import SecuritySettings
from server.db.engine import Database
from server.hub.cache import ExpiringCache
from server.hub.metrics import HubMetrics
from server.hub.passwords import PasswordHasher
from server.hub.services.access_changes import AccessChanges
from server.hub.storage.accounts import Account, AccountRepository
from server.hub.storage.sessions import Session, SessionRepository

log = logging.getLogger(__name__)

# Revocations reach every instance's cache over the bus at once; the lifetime only
# bounds how stale a session could be if an announcement were lost.
_CACHE_SECONDS = 10.0
# last_seen_at is written at most this often per session, not on every request.
_TOUCH_SECONDS = 60.0
# How often sessions past their time are looked for (and ended with their connections).
EXPIRY_SWEEP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the account and the session the call came with."""

    account_id: str
    session_id: str
    token_hash: str
    client: str


@dataclass(frozen=True, slots=True)
class NewSession:
    session: Session
    token: str


class SignInLimiter:
    """Rate limits for sign-in: per client address, and failures per account.

    Failures count per (account, address) with a short refill, and per account
    from all addresses with a higher burst: a guesser is slowed, but cannot keep
    the real owner of an account out for more than seconds.
    """

    def __init__(self, clock: Clock, settings: SecuritySettings) -> None:
        self._address = TokenBuckets(
            clock,
            burst=settings.signin_per_address_burst,
            refill_seconds=settings.signin_per_address_refill_seconds,
        )
        self._account_address = TokenBuckets(
            clock,
            burst=settings.signin_failures_per_account_burst,
            refill_seconds=settings.signin_failures_per_account_refill_seconds,
        )
        self._account = TokenBuckets(
            clock,
            burst=settings.signin_failures_account_wide_burst,
            refill_seconds=settings.signin_failures_account_wide_refill_seconds,
        )

    def check(self, email: str, address: str) -> None:
        wait = max(
            self._address.retry_after(address),
            self._account_address.retry_after(f"{email}\0{address}"),
            self._account.retry_after(email),
        )
        if wait > 0:
            raise RateLimited("too many sign-in attempts; try again shortly", retry_after=wait)
        self._address.spend(address)

    def failed(self, email: str, address: str) -> None:
        self._account_address.spend(f"{email}\0{address}")
        self._account.spend(email)


class SessionService:
    """Sessions: create on sign-in, resolve on each request, revoke; and end those past
    their time whether or not they are used again, with the connections they opened."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        settings: SecuritySettings,
        passwords: PasswordHasher,
        changes: AccessChanges,
        metrics: HubMetrics,
    ) -> None:
        self._db = db
        self._metrics = metrics
        self._changes = changes
        self._clock = clock
        self._settings = settings
        self._passwords = passwords
        self._accounts = AccountRepository()
        self._sessions = SessionRepository()
        self._limiter = SignInLimiter(clock, settings)
        self._cache: ExpiringCache[str, Session] = ExpiringCache(clock, seconds=_CACHE_SECONDS)
        self._tasks = BackgroundTasks("session expiry")

    def start(self) -> None:
        self._tasks.start(every(EXPIRY_SWEEP_SECONDS, self.end_expired, "ending expired sessions"))

    async def close(self) -> None:
        await self._tasks.close()

    async def end_expired(self) -> int:
        """End every session past its time (``session_max_seconds`` since sign-in, or
        ``session_idle_seconds`` unused): a browser's event stream, its peer connections
        and its tickets end with it, as at sign-out. How many ended."""
        now = self._clock.now()
        async with self._db.write() as conn:
            hashes = await self._sessions.remove_expired_sessions(
                conn, now, now - self._settings.session_idle_seconds
            )
        for token_hash in hashes:
            self._cache.forget(token_hash)
        if hashes:
            await self._changes.sessions_ended(hashes, "the session expired")
        return len(hashes)

    async def sign_in(
        self, email: str, password: str, *, client: str, user_agent: str, address: str
    ) -> tuple[Account, NewSession]:
        try:
            self._limiter.check(email, address)
        except RateLimited:
            self._metrics.signed_in("limited")
            raise
        account = await self._accounts.lookup_account_by_email(self._db, email)
        ok = await self._passwords.verify(account.password_hash if account else None, password)
        if account is None or not ok:
            # An unknown email counts as a wrong password: the metric tells no more than the
            # answer does.
            self._metrics.signed_in("badPassword")
            self._limiter.failed(email, address)
            log.info("sign-in refused", extra={"client_address": address})
            raise Unauthenticated("the email or the password is wrong", code="badCredentials")
        if self._passwords.needs_rehash(account.password_hash):
            new_hash = await self._passwords.hash(password)
            async with self._db.write() as conn:
                await self._accounts.update_password_hash(conn, account.id, new_hash)
        new = await self.start_session(account.id, client=client, user_agent=user_agent)
        self._metrics.signed_in("ok")
        log.info("signed in", extra={"account_id": account.id, "session_id": new.session.id})
        return account, new

    async def start_session(self, account_id: str, *, client: str, user_agent: str) -> NewSession:
        async with self._db.write() as conn:
            return await self.add_session(conn, account_id, client=client, user_agent=user_agent)

    async def add_session(
        self, conn: AsyncConnection, account_id: str, *, client: str, user_agent: str
    ) -> NewSession:
        """Create a session in the caller's transaction (sign-up makes one with its account)."""
        now = self._clock.now()
        token = new_secret()
        session = Session(
            id=new_id(),
            account_id=account_id,
            token_hash=hash_secret(token),
            client=client,
            user_agent=user_agent[:200],
            created_at=now,
            last_seen_at=now,
            expires_at=now + self._settings.session_max_seconds,
        )
        await self._sessions.add_session(conn, session)
        return NewSession(session, token)

    async def authenticate(self, token: str) -> Principal:
        """The principal of a token, or ``unauthenticated`` if it is unknown or has expired."""
        token_hash = hash_secret(token)
        now = self._clock.now()
        # Taken before any read: a revocation from here on keeps what was read out of the cache.
        stamp = self._cache.stamp()
        session = self._cache.get(token_hash)
        if session is None:
            session = await self._sessions.get_session_by_token_hash(self._db, token_hash)
            if session is None:
                raise Unauthenticated("sign in first", code="sessionExpired")
            self._cache.put(token_hash, session, stamp)
        if self._expired(session, now):
            await self._forget(session)
            raise Unauthenticated("the session has expired; sign in again", code="sessionExpired")
        if now - session.last_seen_at >= _TOUCH_SECONDS:
            async with self._db.write() as conn:
                await self._sessions.update_last_seen(conn, session.id, now)
            self._cache.put(token_hash, replace(session, last_seen_at=now), stamp)
        return Principal(session.account_id, session.id, token_hash, session.client)

    async def is_live(self, token_hash: str) -> bool:
        """Whether the session of ``token_hash`` still lasts (a peer's ticket names it)."""
        session = await self._cache.get_or_read(
            token_hash, lambda: self._sessions.get_session_by_token_hash(self._db, token_hash)
        )
        return session is not None and not self._expired(session, self._clock.now())

    def _expired(self, session: Session, now: float) -> bool:
        return (
            now >= session.expires_at
            or now - session.last_seen_at >= self._settings.session_idle_seconds
        )

    async def _forget(self, session: Session) -> None:
        async with self._db.write() as conn:
            await self._sessions.remove_session(conn, session.account_id, session.id)
        self._cache.forget(session.token_hash)
        await self._changes.sessions_ended([session.token_hash], "the session expired")

    def forget_cached(self, token_hashes: list[str]) -> None:
        """Drop sessions another instance ended (from the bus)."""
        for token_hash in token_hashes:
            self._cache.forget(token_hash)

    def forget_all_cached(self) -> None:
        self._cache.clear()

    async def sign_out(self, principal: Principal) -> None:
        await self.revoke_session(principal.account_id, principal.session_id)

    async def list_sessions(self, account_id: str) -> list[Session]:
        async with self._db.read() as conn:
            return await self._sessions.list_sessions(conn, account_id)

    async def revoke_session(self, account_id: str, session_id: str) -> bool:
        async with self._db.write() as conn:
            token_hash = await self._sessions.remove_session(conn, account_id, session_id)
        if token_hash is None:
            return False
        self._cache.forget(token_hash)
        await self._changes.sessions_ended([token_hash], "the session was signed out")
        return True

    async def revoke_other_sessions(self, principal: Principal) -> int:
        async with self._db.write() as conn:
            hashes = await self._sessions.remove_other_sessions(
                conn, principal.account_id, principal.session_id
            )
        for token_hash in hashes:
            self._cache.forget(token_hash)
        await self._changes.sessions_ended(hashes, "the session was signed out")
        return len(hashes)

"""Sign-up, the profile, and avatars."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from server.common.clock import Clock
from server.common.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    NotFound,
    PayloadTooLarge,
    RateLimited,
)
from server.common.ratelimit import TokenBuckets
from server.common.tokens import hash_secret, new_id
from server.config import SecuritySettings
from server.db.engine import Database
from server.hub.passwords import PasswordHasher
from server.hub.services.invitations import InvitationService
from server.hub.services.sessions import NewSession, SessionService
from server.hub.services.teams import TeamService
from server.hub.storage.accounts import Account, AccountRepository, Avatar
from server.hub.storage.setup_codes import SetupCodeRepository
from server.hub.storage.teams import TeamRepository

log = logging.getLogger(__name__)

MAX_AVATAR_BYTES = 1024 * 1024
# Avatars are recognised by their first bytes, never by what the client claims.
_IMAGE_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"WEBP", 8, "image/webp"),
)


def sniff_image_type(data: bytes) -> str | None:
    """The image type of ``data`` by its magic bytes (PNG, JPEG, WebP), or None."""
    for magic, offset, content_type in _IMAGE_MAGIC:
        if data[offset : offset + len(magic)] == magic and (
            content_type != "image/webp" or data[:4] == b"RIFF"
        ):
            return content_type
    return None


@dataclass(frozen=True, slots=True)
class SignUpRequest:
    email: str
    name: str
    password: str
    setup_code: str | None
    invitation_code: str | None
    team_name: str
    client: str
    user_agent: str
    address: str


class AccountService:
    """Accounts: sign-up (setup code, invitation or open), profile and avatar."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        passwords: PasswordHasher,
        sessions: SessionService,
        teams: TeamService,
        invitations: InvitationService,
        *,
        security: SecuritySettings,
        open_signup: bool,
    ) -> None:
        self._db = db
        self._clock = clock
        self._passwords = passwords
        self._sessions = sessions
        self._teams = teams
        self._invitations = invitations
        self._open_signup = open_signup
        self._accounts = AccountRepository()
        self._setup_codes = SetupCodeRepository()
        self._memberships = TeamRepository()
        # Every attempt spends a token, as at sign-in: each may cost a password hash.
        self._per_address = TokenBuckets(
            clock,
            burst=security.signin_per_address_burst,
            refill_seconds=security.signin_per_address_refill_seconds,
        )

    async def sign_up(self, request: SignUpRequest) -> tuple[Account, NewSession]:
        """Create an account and its first session.

        A wrong invitation code is refused before the email is looked at, so the answer
        tells nobody which emails have accounts.
        """
        wait = self._per_address.retry_after(request.address)
        if wait > 0:
            raise RateLimited("too many sign-up attempts; try again shortly", retry_after=wait)
        self._per_address.spend(request.address)
        if request.setup_code and request.invitation_code:
            raise InvalidArgument(
                "give a setup code or an invitation code, not both", field="invitationCode"
            )
        if not (request.setup_code or request.invitation_code or self._open_signup):
            raise Forbidden("sign-up needs an invitation on this server", code="signupClosed")
        if request.invitation_code:
            # Checked again when it is spent below, in the transaction that adds the account.
            await self._invitations.preview(request.invitation_code)
        password_hash = await self._passwords.hash(request.password)
        account = Account(
            id=new_id(),
            email=request.email,
            name=request.name,
            password_hash=password_hash,
            created_at=self._clock.now(),
        )
        try:
            async with self._db.write() as conn:
                if request.setup_code and not await self._setup_codes.remove_setup_code(
                    conn, hash_secret(request.setup_code)
                ):
                    raise Forbidden("the setup code is not valid", code="setupCodeInvalid")
                if await self._accounts.get_account_by_email(conn, request.email) is not None:
                    raise Conflict("an account with this email exists", code="emailTaken")
                await self._accounts.add_account(conn, account)
                if request.setup_code:
                    await self._teams.add_team(conn, account.id, request.team_name)
                elif request.invitation_code:
                    await self._invitations.redeem(conn, request.invitation_code, account.id)
                session = await self._sessions.add_session(
                    conn, account.id, client=request.client, user_agent=request.user_agent
                )
        except IntegrityError as exc:
            # Two sign-ups with one email at the same moment: the unique index decides.
            raise Conflict("an account with this email exists", code="emailTaken") from exc
        log.info("account created", extra={"account_id": account.id})
        return account, session

    async def create_owner(self, email: str, name: str, password: str, team_name: str) -> Account:
        """Create an account that owns a new team (``crewhost admin create-owner``)."""
        account = Account(
            id=new_id(),
            email=email,
            name=name,
            password_hash=await self._passwords.hash(password),
            created_at=self._clock.now(),
        )
        try:
            async with self._db.write() as conn:
                await self._accounts.add_account(conn, account)
                await self._teams.add_team(conn, account.id, team_name)
                await self._setup_codes.remove_all_setup_codes(conn)
        except IntegrityError as exc:
            raise Conflict("an account with this email exists", code="emailTaken") from exc
        return account

    async def get_account(self, account_id: str) -> tuple[Account, bool]:
        """The account and whether it has an avatar."""
        found = await self._accounts.get_account_with_avatar_flag(self._db, account_id)
        if found is None:
            raise NotFound("no such account")
        return found

    async def update_name(self, account_id: str, name: str) -> tuple[Account, bool]:
        async with self._db.write() as conn:
            await self._accounts.update_name(conn, account_id, name)
        return await self.get_account(account_id)

    async def get_avatar(self, account_id: str) -> Avatar:
        async with self._db.read() as conn:
            avatar = await self._accounts.get_avatar(conn, account_id)
        if avatar is None:
            raise NotFound("no avatar", code="avatarNotFound")
        return avatar

    async def get_member_avatar(self, team_id: str, account_id: str) -> Avatar:
        """A team member's avatar; whoever is not in ``team_id`` has none here."""
        async with self._db.read() as conn:
            avatar = None
            if await self._memberships.get_role(conn, team_id, account_id) is not None:
                avatar = await self._accounts.get_avatar(conn, account_id)
        if avatar is None:
            raise NotFound("no avatar", code="avatarNotFound")
        return avatar

    async def set_avatar(self, account_id: str, data: bytes) -> None:
        if len(data) > MAX_AVATAR_BYTES:
            raise PayloadTooLarge("an avatar may be at most 1 MiB")
        content_type = sniff_image_type(data)
        if content_type is None:
            raise InvalidArgument("an avatar must be a PNG, JPEG or WebP image", code="notAnImage")
        avatar = Avatar(content_type, data, self._clock.now())
        async with self._db.write() as conn:
            await self._accounts.update_avatar(conn, account_id, avatar)

    async def remove_avatar(self, account_id: str) -> None:
        async with self._db.write() as conn:
            await self._accounts.remove_avatar(conn, account_id)

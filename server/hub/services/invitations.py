"""Invitations: create, list, revoke, preview and accept by code."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, Forbidden, NotFound
from server.common.roles import Role
from server.common.tokens import hash_secret, new_id, new_secret
from server.db.engine import Database
from server.hub.services.access_changes import AccessChanges
from server.hub.services.teams import MAX_TEAMS_PER_ACCOUNT
from server.hub.storage.invitations import Invitation, InvitationRepository, InvitationUse
from server.hub.storage.teams import Team, TeamRepository

MAX_OPEN_INVITATIONS = 200


@dataclass(frozen=True, slots=True)
class NewInvitation:
    invitation: Invitation
    code: str


def invitation_usable(invitation: Invitation, now: float) -> bool:
    return (
        invitation.revoked_at is None
        and invitation.expires_at > now
        and invitation.uses < invitation.max_uses
    )


class InvitationService:
    """Codes that let someone join a team with a given role."""

    def __init__(self, db: Database, clock: Clock, changes: AccessChanges) -> None:
        self._db = db
        self._changes = changes
        self._clock = clock
        self._invitations = InvitationRepository()
        self._teams = TeamRepository()

    def now(self) -> float:
        return self._clock.now()

    async def create_invitation(
        self,
        team_id: str,
        actor_id: str,
        actor_role: Role,
        *,
        role: Role,
        expires_in_seconds: int,
        max_uses: int,
    ) -> NewInvitation:
        if not actor_role.may_invite(role):
            if role is Role.OWNER:
                raise Forbidden("only an owner can invite an owner", code="ownerOnly")
            raise Forbidden("only owners and admins can invite")
        now = self._clock.now()
        code = new_secret()
        invitation = Invitation(
            id=new_id(),
            team_id=team_id,
            code_hash=hash_secret(code),
            role=role,
            created_by=actor_id,
            created_at=now,
            expires_at=now + expires_in_seconds,
            max_uses=max_uses,
            uses=0,
            revoked_at=None,
        )
        async with self._db.write() as conn:
            existing = await self._invitations.list_invitations(conn, team_id)
            if sum(invitation_usable(i, now) for i in existing) >= MAX_OPEN_INVITATIONS:
                raise Conflict(
                    f"a team may have at most {MAX_OPEN_INVITATIONS} open invitations",
                    code="tooManyInvitations",
                )
            await self._invitations.add_invitation(conn, invitation)
        return NewInvitation(invitation, code)

    async def list_invitations(self, team_id: str) -> list[tuple[Invitation, list[InvitationUse]]]:
        """The team's invitations, newest first, each with who joined by it and when."""
        async with self._db.read() as conn:
            listed = await self._invitations.list_invitations(conn, team_id)
            uses = await self._invitations.list_invitation_uses(conn, team_id)
        by_invitation: dict[str, list[InvitationUse]] = {}
        for use in uses:
            by_invitation.setdefault(use.invitation_id, []).append(use)
        return [(invitation, by_invitation.get(invitation.id, [])) for invitation in listed]

    async def revoke_invitation(self, team_id: str, invitation_id: str) -> None:
        async with self._db.write() as conn:
            if not await self._invitations.invitation_exists(conn, team_id, invitation_id):
                raise NotFound("no such invitation")
            await self._invitations.revoke_invitation(conn, team_id, invitation_id, self.now())

    async def preview(self, code: str) -> tuple[Invitation, Team]:
        """The team and role a code offers, if the code is still good."""
        async with self._db.read() as conn:
            invitation = await self._usable(conn, code)
            team = await self._teams.get_team(conn, invitation.team_id)
        if team is None:
            raise NotFound("this invitation is not valid", code="invitationInvalid")
        return invitation, team

    async def redeem(self, conn: AsyncConnection, code: str, account_id: str) -> Invitation:
        """Spend one use of a code and add the account to its team, in the caller's transaction."""
        invitation = await self._find(conn, code)
        # Joins to a team wait for each other and for role changes, so the second of two
        # accepts by one account sees the first one's membership.
        await self._teams.lock_team(conn, invitation.team_id)
        await self._check_usable(conn, invitation)
        if await self._teams.get_role(conn, invitation.team_id, account_id) is not None:
            raise Conflict("you are already a member of this team", code="alreadyMember")
        if len(await self._teams.list_teams_of(conn, account_id)) >= MAX_TEAMS_PER_ACCOUNT:
            raise Conflict(
                f"an account may belong to at most {MAX_TEAMS_PER_ACCOUNT} teams: leave one first",
                code="tooManyTeams",
            )
        if not await self._invitations.use_invitation(
            conn, invitation.team_id, invitation.id, self.now()
        ):
            raise NotFound("this invitation has been used up", code="invitationInvalid")
        await self._invitations.add_invitation_use(
            conn, invitation.team_id, invitation.id, account_id, self.now()
        )
        await self._teams.add_membership(
            conn, invitation.team_id, account_id, invitation.role, self.now()
        )
        return invitation

    async def accept(self, code: str, account_id: str) -> Invitation:
        async with self._db.write() as conn:
            invitation = await self.redeem(conn, code, account_id)
        await self._changes.memberships_changed([account_id])
        return invitation

    async def _usable(self, conn: AsyncConnection, code: str) -> Invitation:
        invitation = await self._find(conn, code)
        await self._check_usable(conn, invitation)
        return invitation

    async def _find(self, conn: AsyncConnection, code: str) -> Invitation:
        invitation = await self._invitations.get_invitation_by_code_hash(conn, hash_secret(code))
        if invitation is None:
            raise NotFound("this invitation is not valid", code="invitationInvalid")
        return invitation

    async def _check_usable(self, conn: AsyncConnection, invitation: Invitation) -> None:
        if invitation.revoked_at is not None:
            raise NotFound("this invitation was revoked", code="invitationInvalid")
        if invitation.expires_at <= self.now():
            raise NotFound("this invitation has expired", code="invitationInvalid")
        if invitation.uses >= invitation.max_uses:
            raise NotFound("this invitation has been used up", code="invitationInvalid")
        # Never more than its creator may grant now: a demoted or departed admin's codes are dead.
        creator_role = None
        if invitation.created_by is not None:
            creator_role = await self._teams.get_role(
                conn, invitation.team_id, invitation.created_by
            )
        if creator_role is None or not creator_role.may_invite(invitation.role):
            raise NotFound(
                "this invitation was revoked: the person who made it can no longer grant its role",
                code="invitationInvalid",
            )

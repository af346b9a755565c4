"""Teams, memberships and the role rules."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, Forbidden, NotFound
from server.common.roles import Role
from server.common.tokens import new_id
from server.db.engine import Database
from server.hub.cache import ExpiringCache
from server.hub.services.access_changes import AccessChanges
from server.hub.services.hosts import ENROLMENT_ROLE
from server.hub.storage.access_tokens import AccessTokenRepository
from server.hub.storage.hosts import HostRepository
from server.hub.storage.invitations import InvitationRepository
from server.hub.storage.teams import Member, Team, TeamRepository, TeamWithRole

MAX_TEAMS_PER_ACCOUNT = 100
# Membership changes reach every instance's cache over the bus at once; the
# lifetime only bounds staleness if an announcement were lost.
_CACHE_SECONDS = 10.0


class TeamService:
    """Create and rename teams; list, promote, demote and remove members.

    The rules: an admin may not change or remove an owner, nor make anyone an
    owner; a team always keeps at least one owner. A member who loses a role loses
    the open invitations and host enrolment codes they made that it allowed; a member
    who leaves or is removed loses their access tokens in the team for good (rejoining
    brings none back).
    """

    def __init__(self, db: Database, clock: Clock, changes: AccessChanges) -> None:
        self._db = db
        self._changes = changes
        self._clock = clock
        self._teams = TeamRepository()
        self._invitations = InvitationRepository()
        self._access_tokens = AccessTokenRepository()
        self._hosts = HostRepository()
        self._cache: ExpiringCache[str, list[TeamWithRole]] = ExpiringCache(
            clock, seconds=_CACHE_SECONDS
        )

    async def role_of(self, team_id: str, account_id: str) -> Role | None:
        """The account's role in the team, or None if it is not a member."""
        for entry in await self.list_my_teams(account_id):
            if entry.team.id == team_id:
                return entry.role
        return None

    async def members_since(self, team_id: str, account_ids: list[str]) -> dict[str, float]:
        """When the present membership of each of ``account_ids`` who is a member of the team
        began (an account removed and invited again: its second); the others are absent."""
        async with self._db.read() as conn:
            return await self._teams.list_joined_at(conn, team_id, account_ids)

    def forget_cached(self, account_ids: list[str] | None) -> None:
        if account_ids is None:
            self._cache.clear()
        else:
            for account_id in account_ids:
                self._cache.forget(account_id)

    async def add_team(self, conn: AsyncConnection, owner_id: str, name: str) -> Team:
        """Create a team with its first owner inside the caller's transaction."""
        now = self._clock.now()
        team = Team(id=new_id(), name=name, created_at=now)
        await self._teams.add_team(conn, team)
        await self._teams.add_membership(conn, team.id, owner_id, Role.OWNER, now)
        return team

    async def create_team(self, owner_id: str, name: str) -> TeamWithRole:
        async with self._db.write() as conn:
            if len(await self._teams.list_teams_of(conn, owner_id)) >= MAX_TEAMS_PER_ACCOUNT:
                raise Conflict(
                    f"an account may belong to at most {MAX_TEAMS_PER_ACCOUNT} teams",
                    code="tooManyTeams",
                )
            team = await self.add_team(conn, owner_id, name)
        await self._changes.memberships_changed([owner_id])
        return TeamWithRole(team, Role.OWNER)

    async def list_my_teams(self, account_id: str) -> list[TeamWithRole]:
        teams = await self._cache.get_or_read(
            account_id, lambda: self._teams.lookup_teams_of(self._db, account_id)
        )
        return list(teams or [])

    async def get_team(self, team_id: str, role: Role) -> TeamWithRole:
        team = await self._teams.lookup_team(self._db, team_id)
        if team is None:
            raise NotFound("no such team")
        return TeamWithRole(team, role)

    async def rename_team(self, team_id: str, role: Role, name: str) -> TeamWithRole:
        async with self._db.write() as conn:
            await self._teams.update_team_name(conn, team_id, name)
            team = await self._teams.get_team(conn, team_id)
            members = await self._teams.list_members(conn, team_id)
        if team is None:
            raise NotFound("no such team")
        await self._changes.memberships_changed([m.account_id for m in members])
        return TeamWithRole(team, role)

    async def list_members(self, team_id: str) -> list[Member]:
        async with self._db.read() as conn:
            return await self._teams.list_members(conn, team_id)

    async def change_role(self, team_id: str, actor_id: str, target_id: str, role: Role) -> Member:
        """Give a member another role: an admin's or an owner's doing, by their role as it
        is once the team is theirs to change (not as it was when they asked)."""
        async with self._db.write() as conn:
            await self._teams.lock_team(conn, team_id)
            actor_role = await self._role_now(conn, team_id, actor_id, Role.ADMIN)
            current = await self._target_role(conn, team_id, target_id)
            if actor_role is not Role.OWNER and (current is Role.OWNER or role is Role.OWNER):
                raise Forbidden("only an owner can change an owner or make one", code="ownerOnly")
            if current is Role.OWNER and role is not Role.OWNER:
                await self._keep_an_owner(conn, team_id)
            await self._teams.update_role(conn, team_id, target_id, role)
            await self._revoke_invitations_beyond(conn, team_id, target_id, role)
            if not role.at_least(ENROLMENT_ROLE):
                await self._hosts.remove_member_enrolments(conn, team_id, target_id)
            members = await self._teams.list_members(conn, team_id)
        if role is not current:
            await self._changes.role_changed(team_id, target_id)
        return next(m for m in members if m.account_id == target_id)

    async def remove_member(self, team_id: str, actor_id: str, target_id: str) -> None:
        """Take a member out of the team, with their open invitations, their host
        enrolment codes and their live access tokens in it, which stay revoked should they
        ever rejoin. Another member is removed by an admin or an owner, by their role as it
        is once the team is theirs to change."""
        async with self._db.write() as conn:
            await self._teams.lock_team(conn, team_id)
            least = Role.MEMBER if actor_id == target_id else Role.ADMIN
            actor_role = await self._role_now(conn, team_id, actor_id, least)
            current = await self._target_role(conn, team_id, target_id)
            if current is Role.OWNER:
                if actor_role is not Role.OWNER:
                    raise Forbidden("only an owner can remove an owner", code="ownerOnly")
                await self._keep_an_owner(conn, team_id)
            await self._teams.remove_membership(conn, team_id, target_id)
            await self._revoke_invitations_beyond(conn, team_id, target_id, None)
            await self._hosts.remove_member_enrolments(conn, team_id, target_id)
            ended_token_ids = await self._access_tokens.update_member_tokens_revoked(
                conn, team_id, target_id, self._clock.now()
            )
        await self._changes.member_removed(team_id, target_id)
        if ended_token_ids:
            await self._changes.access_tokens_ended(ended_token_ids)

    async def leave(self, team_id: str, account_id: str) -> None:
        """Leave the team, as ``remove_member`` takes a member out."""
        await self.remove_member(team_id, account_id, account_id)

    async def _role_now(
        self, conn: AsyncConnection, team_id: str, actor_id: str, least: Role
    ) -> Role:
        """The actor's role read under the team's lock: a change that waited for another
        (the actor removed or demoted meanwhile) is judged by what the actor is now."""
        role = await self._teams.get_role(conn, team_id, actor_id)
        if role is None or not role.at_least(least):
            raise Forbidden(
                "your role in this team changed: this needs an admin or an owner",
                code="forbidden",
            )
        return role

    async def _revoke_invitations_beyond(
        self, conn: AsyncConnection, team_id: str, account_id: str, role: Role | None
    ) -> None:
        """Revoke the account's open invitations that ``role`` (None: not a member) cannot grant."""
        await self._invitations.update_invitations_revoked(
            conn,
            team_id,
            created_by=account_id,
            roles=[r for r in Role if role is None or not role.may_invite(r)],
            now=self._clock.now(),
        )

    async def _target_role(self, conn: AsyncConnection, team_id: str, account_id: str) -> Role:
        role = await self._teams.get_role(conn, team_id, account_id)
        if role is None:
            raise NotFound("no such member in this team", code="memberNotFound")
        return role

    async def _keep_an_owner(self, conn: AsyncConnection, team_id: str) -> None:
        if await self._teams.count_owners(conn, team_id) <= 1:
            raise Conflict(
                "a team needs an owner: make someone else an owner first", code="lastOwner"
            )

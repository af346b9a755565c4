"""Records of the storage layer as the wire models the API answers with."""

from __future__ import annotations

from server.hub.schemas import (
    AccountView,
    HostView,
    InvitationView,
    MemberView,
    SessionView,
    TeamView,
)
from server.hub.services.invitations import invitation_usable
from server.hub.storage.accounts import Account
from server.hub.storage.hosts import Host
from server.hub.storage.invitations import Invitation
from server.hub.storage.sessions import Session
from server.hub.storage.teams import Member, TeamWithRole


def account_view(account: Account, has_avatar: bool) -> AccountView:
    return AccountView(
        id=account.id,
        email=account.email,
        name=account.name,
        has_avatar=has_avatar,
        created_at=account.created_at,
    )


def session_view(session: Session, current_session_id: str) -> SessionView:
    return SessionView(
        id=session.id,
        client="peer" if session.client == "peer" else "browser",
        user_agent=session.user_agent,
        created_at=session.created_at,
        last_seen_at=session.last_seen_at,
        expires_at=session.expires_at,
        current=session.id == current_session_id,
    )


def team_view(entry: TeamWithRole) -> TeamView:
    return TeamView(
        id=entry.team.id, name=entry.team.name, role=entry.role, created_at=entry.team.created_at
    )


def member_view(member: Member) -> MemberView:
    return MemberView(
        account_id=member.account_id,
        email=member.email,
        name=member.name,
        role=member.role,
        joined_at=member.joined_at,
    )


def invitation_view(invitation: Invitation, now: float) -> InvitationView:
    return InvitationView(
        id=invitation.id,
        role=invitation.role,
        created_by=invitation.created_by,
        created_at=invitation.created_at,
        expires_at=invitation.expires_at,
        max_uses=invitation.max_uses,
        uses=invitation.uses,
        revoked=invitation.revoked_at is not None,
        usable=invitation_usable(invitation, now),
    )


def host_view(host: Host, *, online: bool) -> HostView:
    return HostView(
        id=host.id,
        name=host.name,
        builtin=host.builtin,
        online=online,
        public_key=host.public_key,
    )

"""Records of the storage layer as the wire models the API answers with."""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp import web

from server.hub.schemas import (
    AccessTokenUseView,
    AccessTokenView,
    AccountView,
    HostView,
    InvitationUseView,
    InvitationView,
    MemberView,
    SessionView,
    TeamView,
)
from server.hub.services.invitations import invitation_usable
from server.hub.storage.access_tokens import AccessToken, AccessTokenUse
from server.hub.storage.accounts import Account, Avatar
from server.hub.storage.hosts import Host
from server.hub.storage.invitations import Invitation, InvitationUse
from server.hub.storage.sessions import Session
from server.hub.storage.teams import Member, TeamWithRole

IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")


def avatar_response(avatar: Avatar) -> web.Response:
    """An avatar image, with the type its bytes show, never run as a page."""
    return web.Response(
        body=avatar.data,
        content_type=avatar.content_type,
        headers={
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "Cache-Control": "private, max-age=60",
            "Content-Disposition": "inline",
        },
    )


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
        has_avatar=member.has_avatar,
    )


def invitation_view(
    invitation: Invitation, now: float, used_by: Sequence[InvitationUse] = ()
) -> InvitationView:
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
        used_by=[
            InvitationUseView(account_id=u.account_id, name=u.name, used_at=u.used_at)
            for u in used_by
        ],
    )


def host_view(host: Host, *, online: bool) -> HostView:
    return HostView(
        id=host.id,
        name=host.name,
        builtin=host.builtin,
        online=online,
        public_key=host.public_key,
    )


def access_token_view(token: AccessToken, now: float) -> AccessTokenView:
    """A token as its member and the team's admins see it: never its secret nor its hash."""
    return AccessTokenView(
        id=token.id,
        name=token.name,
        host_id=token.host_id,
        account_id=token.account_id,
        scope=token.scope,
        created_at=token.created_at,
        expires_at=token.expires_at,
        last_used_at=token.last_used_at,
        revoked=token.revoked_at is not None,
        live=token.revoked_at is None and now < token.expires_at,
    )


def access_token_use_view(use: AccessTokenUse) -> AccessTokenUseView:
    return AccessTokenUseView(
        id=use.id,
        token_id=use.token_id,
        account_id=use.account_id,
        at=use.at,
        tool=use.tool,
        outcome=use.outcome,
    )

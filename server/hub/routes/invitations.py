"""Invitations: created by admins, previewed and accepted by code."""

from __future__ import annotations

from server.common.roles import Role
from server.hub.http.routing import Call, RouteTable
from server.hub.routes.views import invitation_view, team_view
from server.hub.schemas import (
    AcceptInvitation,
    CreateInvitation,
    InvitationCreated,
    InvitationList,
    InvitationPreview,
    TeamView,
)
from server.hub.storage.teams import TeamWithRole

routes = RouteTable()


@routes.post(
    "/v1/teams/{team_id}/invitations",
    access=Role.ADMIN,
    body=CreateInvitation,
    reply=InvitationCreated,
    status=201,
)
async def create_invitation(call: Call[CreateInvitation]) -> InvitationCreated:
    """Create an invitation; its code is shown only in this answer."""
    new = await call.hub.invitations.create_invitation(
        call.team.team_id,
        call.principal.account_id,
        call.team.role,
        role=call.body.role,
        expires_in_seconds=call.body.expires_in_seconds,
        max_uses=call.body.max_uses,
    )
    return InvitationCreated(
        invitation=invitation_view(new.invitation, call.hub.invitations.now()),
        code=new.code,
        link=f"{call.origin}/app/join/{new.code}",
    )


@routes.get("/v1/teams/{team_id}/invitations", access=Role.ADMIN, reply=InvitationList)
async def list_invitations(call: Call[None]) -> InvitationList:
    """The team's invitations (without their codes)."""
    now = call.hub.invitations.now()
    invitations = await call.hub.invitations.list_invitations(call.team.team_id)
    return InvitationList(invitations=[invitation_view(i, now, uses) for i, uses in invitations])


@routes.delete("/v1/teams/{team_id}/invitations/{invitation_id}", access=Role.ADMIN)
async def revoke_invitation(call: Call[None]) -> None:
    """Revoke an invitation so its code stops working."""
    await call.hub.invitations.revoke_invitation(call.team.team_id, call.path_id("invitation_id"))


@routes.post(
    "/v1/invitations/preview", access="public", body=AcceptInvitation, reply=InvitationPreview
)
async def preview_invitation(call: Call[AcceptInvitation]) -> InvitationPreview:
    """The team and role an invitation code offers."""
    invitation, team = await call.hub.invitations.preview(call.body.code)
    return InvitationPreview(
        team_name=team.name, role=invitation.role, expires_at=invitation.expires_at
    )


@routes.post(
    "/v1/invitations/accept", access="account", body=AcceptInvitation, reply=TeamView, status=201
)
async def accept_invitation(call: Call[AcceptInvitation]) -> TeamView:
    """Join a team with an invitation code."""
    invitation = await call.hub.invitations.accept(call.body.code, call.principal.account_id)
    team = await call.hub.teams.get_team(invitation.team_id, invitation.role)
    return team_view(TeamWithRole(team.team, invitation.role))

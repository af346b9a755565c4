"""Teams and their members."""

from __future__ import annotations

from aiohttp import web

from server.common.roles import Role
from server.hub.http.routing import Call, RouteTable
from server.hub.routes.views import IMAGE_TYPES, avatar_response, member_view, team_view
from server.hub.schemas import (
    ChangeRole,
    CreateTeam,
    MemberList,
    MemberView,
    RenameTeam,
    TeamList,
    TeamView,
)

routes = RouteTable()


@routes.post("/v1/teams", access="account", body=CreateTeam, reply=TeamView, status=201)
async def create_team(call: Call[CreateTeam]) -> TeamView:
    """Create a team; the caller becomes its owner."""
    return team_view(await call.hub.teams.create_team(call.principal.account_id, call.body.name))


@routes.get("/v1/teams", access="account", reply=TeamList)
async def list_my_teams(call: Call[None]) -> TeamList:
    """The teams the caller belongs to, with the caller's role in each."""
    teams = await call.hub.teams.list_my_teams(call.principal.account_id)
    return TeamList(teams=[team_view(t) for t in teams])


@routes.get("/v1/teams/{team_id}", access=Role.MEMBER, reply=TeamView)
async def get_team(call: Call[None]) -> TeamView:
    """One team."""
    return team_view(await call.hub.teams.get_team(call.team.team_id, call.team.role))


@routes.patch("/v1/teams/{team_id}", access=Role.ADMIN, body=RenameTeam, reply=TeamView)
async def rename_team(call: Call[RenameTeam]) -> TeamView:
    """Rename a team."""
    team = await call.hub.teams.rename_team(call.team.team_id, call.team.role, call.body.name)
    return team_view(team)


@routes.get("/v1/teams/{team_id}/members", access=Role.MEMBER, reply=MemberList)
async def list_members(call: Call[None]) -> MemberList:
    """The members of a team and their roles."""
    members = await call.hub.teams.list_members(call.team.team_id)
    return MemberList(members=[member_view(m) for m in members])


@routes.get(
    "/v1/teams/{team_id}/members/{account_id}/avatar",
    access=Role.MEMBER,
    reply_content_types=IMAGE_TYPES,
)
async def get_member_avatar(call: Call[None]) -> web.Response:
    """A teammate's avatar; 404 unless they are in this team and have one."""
    avatar = await call.hub.accounts.get_member_avatar(
        call.team.team_id, call.path_id("account_id")
    )
    return avatar_response(avatar)


@routes.patch(
    "/v1/teams/{team_id}/members/{account_id}", access=Role.ADMIN, body=ChangeRole, reply=MemberView
)
async def change_role(call: Call[ChangeRole]) -> MemberView:
    """Change a member's role (only an owner changes an owner; a team keeps one owner)."""
    member = await call.hub.teams.change_role(
        call.team.team_id, call.principal.account_id, call.path_id("account_id"), call.body.role
    )
    return member_view(member)


@routes.delete("/v1/teams/{team_id}/members/{account_id}", access=Role.ADMIN)
async def remove_member(call: Call[None]) -> None:
    """Remove a member from the team."""
    await call.hub.teams.remove_member(
        call.team.team_id, call.principal.account_id, call.path_id("account_id")
    )


@routes.post("/v1/teams/{team_id}/leave", access=Role.MEMBER)
async def leave_team(call: Call[None]) -> None:
    """Leave a team (the last owner cannot)."""
    await call.hub.teams.leave(call.team.team_id, call.principal.account_id)

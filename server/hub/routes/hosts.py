"""The hosts a team can connect to."""

from __future__ import annotations

from server.hub.http.routing import Call, RouteTable
from server.hub.roles import Role
from server.hub.routes.views import host_view
from server.hub.schemas import HostList

routes = RouteTable()


@routes.get("/v1/teams/{team_id}/hosts", access=Role.MEMBER, reply=HostList)
async def list_hosts(call: Call[None]) -> HostList:
    """The hosts of a team, the built-in one included."""
    hosts = await call.hub.hosts.list_hosts(call.team.team_id)
    return HostList(hosts=[host_view(h) for h in hosts])

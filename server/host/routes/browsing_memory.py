"""``browsing-memory-v1``: whether the team's agents learn from what people do in their tabs."""

from __future__ import annotations

from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("browsing-memory-v1")


class BrowsingMemoryView(WireModel):
    enabled: bool


class SetBrowsingMemory(InboundModel):
    enabled: bool


@routes.route("browsing-memory-v1/get", args=NoArgs, least_role=Role.ADMIN)
async def get_browsing_memory(call: HostCall, _args: NoArgs) -> BrowsingMemoryView:
    """Whether steps in agents' tabs are recorded for the agents' memory reviews."""
    return BrowsingMemoryView(enabled=await call.host.browsing_steps.is_enabled(call.peer.team_id))


@routes.route("browsing-memory-v1/set", args=SetBrowsingMemory, least_role=Role.ADMIN)
async def set_browsing_memory(call: HostCall, args: SetBrowsingMemory) -> BrowsingMemoryView:
    """Turn recording on or off; off deletes the steps recorded so far."""
    enabled = await call.host.browsing_steps.set_enabled(call.peer.team_id, args.enabled)
    return BrowsingMemoryView(enabled=enabled)

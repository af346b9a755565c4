"""Routes every host serves: what it can do, who you are, who else is here."""

from __future__ import annotations

from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("host-v1")


class NoArgs(InboundModel):
    """A route that takes no arguments."""


class Capabilities(WireModel):
    protocol: int
    host_id: str
    capabilities: list[str]


class Whoami(WireModel):
    account_id: str
    team_id: str
    role: Role
    peer_id: str


class PeerView(WireModel):
    peer_id: str
    account_id: str
    role: Role


class PeerList(WireModel):
    peers: list[PeerView]


@routes.route("capabilities", args=NoArgs, least_role=Role.MEMBER)
async def capabilities(call: HostCall, _args: NoArgs) -> Capabilities:
    """The protocol version and the capability names this host serves."""
    listed = call.host.team_api.capability_list()
    return Capabilities(
        protocol=listed["protocol"], host_id=call.host.host_id, capabilities=listed["capabilities"]
    )


@routes.route("host-v1/whoami", args=NoArgs, least_role=Role.MEMBER)
async def whoami(call: HostCall, _args: NoArgs) -> Whoami:
    """The account, team and role this connection acts as."""
    peer = call.peer
    return Whoami(
        account_id=peer.account_id, team_id=peer.team_id, role=peer.role, peer_id=peer.peer_id
    )


@routes.route("host-v1/peers/list", args=NoArgs, least_role=Role.ADMIN)
async def list_peers(call: HostCall, _args: NoArgs) -> PeerList:
    """The team's members connected to this host right now (admins and owners)."""
    peers = call.host.peers.team_peers(call.peer.team_id)
    return PeerList(
        peers=[PeerView(peer_id=p.peer_id, account_id=p.account_id, role=p.role) for p in peers]
    )

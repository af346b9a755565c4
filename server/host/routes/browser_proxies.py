"""``browser-proxies-v1``: a team's browser proxies. No answer ever carries a password."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from server.common.protocol.ids import ProfileId, ProxyId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.proxies.addresses import MAX_ADDRESS_LENGTH
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.services.proxies import MAX_PROFILE_REFS, ProxyStatus

routes = HostRouteTable("browser-proxies-v1")

Address = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ADDRESS_LENGTH)]
PASSWORD_MASK = "••••••••"  # noqa: S105 (a mask, never a password)


class ProxyView(WireModel):
    id: str
    kind: str = Field(description="'address', or 'computer' (a member's computer)")
    name: str
    address: str | None = Field(description="the address without its password")
    password: str | None = Field(description="a mask when a password is saved, else null")
    member_id: str | None
    profiles: list[str] = Field(description="the named profiles that use the proxy")
    status: str | None = Field(description="'unreachable', 'signIn', 'offline' or null")


class ProxyList(WireModel):
    proxies: list[ProxyView]


class ProfileProxy(WireModel):
    profile_id: str
    proxy_name: str


class ProfileProxyList(WireModel):
    profiles: list[ProfileProxy]


class ProxyDeleted(WireModel):
    deleted: bool


class ProxyAssigned(WireModel):
    profile_id: str
    proxy_id: str | None


class CreateProxy(InboundModel):
    address: Address


class UpdateProxy(InboundModel):
    id: ProxyId
    previous_address: Address = Field(description="the address the edit form opened with")
    address: Address
    keep_password: bool = Field(False, description="keep the saved password (the form's mask)")


class DeleteProxy(InboundModel):
    id: ProxyId
    profiles: Annotated[list[ProfileId], Field(max_length=MAX_PROFILE_REFS)] = Field(
        description="the profiles using it that the question showed"
    )


class AssignProxy(InboundModel):
    profile: str = Field(max_length=60, description="a named profile's id")
    proxy_id: ProxyId | None = Field(description="null: Automatic")


class ShareComputer(InboundModel):
    label: Annotated[str, StringConstraints(max_length=60)] = ""


def _view(status: ProxyStatus) -> ProxyView:
    return ProxyView(
        id=status.id,
        kind=status.kind,
        name=status.name,
        address=status.address,
        password=PASSWORD_MASK if status.password_set else None,
        member_id=status.member_id,
        profiles=list(status.profiles),
        status=status.status,
    )


@routes.route("browser-proxies-v1/list", args=NoArgs, least_role=Role.ADMIN)
async def list_proxies(call: HostCall, _args: NoArgs) -> ProxyList:
    """The team's proxies, their profiles and status marks; passwords as a mask."""
    listed = await call.host.proxies.list_proxies(call.peer.team_id)
    return ProxyList(proxies=[_view(status) for status in listed])


@routes.route("browser-proxies-v1/profile_proxies", args=NoArgs, least_role=Role.MEMBER)
async def profile_proxies(call: HostCall, _args: NoArgs) -> ProfileProxyList:
    """The proxy name of each named profile that uses one (what a member may see)."""
    names = await call.host.proxies.profile_proxy_names(call.peer.team_id)
    return ProfileProxyList(
        profiles=[ProfileProxy(profile_id=p, proxy_name=n) for p, n in names.items()]
    )


@routes.route("browser-proxies-v1/create", args=CreateProxy, least_role=Role.ADMIN)
async def create_proxy(call: HostCall, args: CreateProxy) -> ProxyView:
    """Save a proxy address (its password sealed before it is stored)."""
    return _view(await call.host.proxies.create_proxy(call.peer.team_id, args.address))


@routes.route("browser-proxies-v1/update", args=UpdateProxy, least_role=Role.ADMIN)
async def update_proxy(call: HostCall, args: UpdateProxy) -> ProxyView:
    """Change a proxy's address; the tabs of profiles using it close."""
    status = await call.host.proxies.update_proxy(
        call.peer.team_id,
        args.id,
        previous_address=args.previous_address,
        address_text=args.address,
        keep_password=args.keep_password,
    )
    return _view(status)


@routes.route("browser-proxies-v1/delete", args=DeleteProxy, least_role=Role.ADMIN)
async def delete_proxy(call: HostCall, args: DeleteProxy) -> ProxyDeleted:
    """Delete a proxy; the profiles using it become Automatic and their tabs close."""
    await call.host.proxies.delete_proxy(call.peer.team_id, args.id, args.profiles)
    return ProxyDeleted(deleted=True)


@routes.route("browser-proxies-v1/assign", args=AssignProxy, least_role=Role.ADMIN)
async def assign_proxy(call: HostCall, args: AssignProxy) -> ProxyAssigned:
    """Choose a named profile's proxy (null: Automatic); its tabs close."""
    await call.host.proxies.assign(call.peer.team_id, args.profile, args.proxy_id)
    return ProxyAssigned(profile_id=args.profile, proxy_id=args.proxy_id)


@routes.route("browser-proxies-v1/share_computer", args=ShareComputer, least_role=Role.ADMIN)
async def share_computer(call: HostCall, args: ShareComputer) -> ProxyView:
    """Record the caller's computer as a proxy; its egress channel carries the traffic."""
    status = await call.host.proxies.share_computer(
        call.peer.team_id, call.peer.account_id, args.label
    )
    return _view(status)

"""``browser-profiles-v1``: a team's named browser profiles."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.ids import AgentId, ProfileId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel, no_control_characters
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.profiles import BrowserProfile

routes = HostRouteTable("browser-profiles-v1", also=("browser-profiles-events-v1",))


ProfileName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=60),
    AfterValidator(no_control_characters),
]


class ProfileView(WireModel):
    id: str
    name: str
    hue: int


class ProfileList(WireModel):
    profiles: list[ProfileView]


class ProfileCleared(WireModel):
    cleared: bool


class ProfileDeleted(WireModel):
    deleted: bool


class CreateProfile(InboundModel):
    name: ProfileName


class UpdateProfile(InboundModel):
    id: ProfileId
    name: ProfileName | None = None
    hue: WireInt | None = None


class ProfileRef(InboundModel):
    id: ProfileId


class AssignProfile(InboundModel):
    agent_id: AgentId
    profile: str = Field(description="'shared', 'agent' (only this agent) or a profile id")


class AgentChoice(WireModel):
    agent_id: str
    own_browser_session: bool
    browser_profile_id: str | None


def _view(profile: BrowserProfile) -> ProfileView:
    return ProfileView(id=profile.id, name=profile.name, hue=profile.hue)


@routes.route("browser-profiles-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_profiles(call: HostCall, _args: NoArgs) -> ProfileList:
    """The team's browser profiles (members see the labels of their tabs)."""
    profiles = await call.host.profiles.list_profiles(call.peer.team_id)
    return ProfileList(profiles=[_view(p) for p in profiles])


@routes.route("browser-profiles-v1/create", args=CreateProfile, least_role=Role.ADMIN)
async def create_profile(call: HostCall, args: CreateProfile) -> ProfileView:
    """Create a profile; it takes the hue the fewest profiles use."""
    return _view(await call.host.profiles.create_profile(call.peer.team_id, args.name))


@routes.route("browser-profiles-v1/update", args=UpdateProfile, least_role=Role.ADMIN)
async def update_profile(call: HostCall, args: UpdateProfile) -> ProfileView:
    """Rename a profile or change its hue."""
    profile = await call.host.profiles.update_profile(
        call.peer.team_id, args.id, name=args.name, hue=args.hue
    )
    return _view(profile)


@routes.route("browser-profiles-v1/clear", args=ProfileRef, least_role=Role.ADMIN)
async def clear_profile(call: HostCall, args: ProfileRef) -> ProfileCleared:
    """Close the profile's tabs, then clear its cookies, storage and cache."""
    await call.host.profiles.clear_profile(call.peer.team_id, args.id)
    return ProfileCleared(cleared=True)


@routes.route("browser-profiles-v1/delete", args=ProfileRef, least_role=Role.ADMIN)
async def delete_profile(call: HostCall, args: ProfileRef) -> ProfileDeleted:
    """Delete a profile: its tabs close, its data goes, its agents move to Shared."""
    await call.host.profiles.delete_profile(call.peer.team_id, args.id)
    return ProfileDeleted(deleted=True)


@routes.route("browser-profiles-v1/assign", args=AssignProfile, least_role=Role.ADMIN)
async def assign_profile(call: HostCall, args: AssignProfile) -> AgentChoice:
    """Choose where an agent's new tabs open."""
    agent = await call.host.profiles.assign(call.peer.team_id, args.agent_id, args.profile)
    return AgentChoice(
        agent_id=agent.id,
        own_browser_session=agent.own_browser_session,
        browser_profile_id=agent.browser_profile_id,
    )

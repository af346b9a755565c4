"""``browser-control-v1``: a member's own hands on the team's tabs (not an agent's tools).

Members see the team's tabs except private sign-in tabs, and may go back,
forward, reload, open and close them; a tab another person holds is theirs alone, but
they may ask its holder for it, and the holder may grant or dismiss the request.
An address is taken as typed into a browser's address bar (``localhost:3000``,
``example.com``, a search phrase) and resolved by the host.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from server.common.protocol.ids import ProfileId, RequestId, TabId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.services.control_requests import ControlRequest
from server.host.services.tabs import HistoryStep, TabSummary

routes = HostRouteTable("browser-control-v1")


# What a person typed: an address with or without its scheme, or a search phrase.
TypedAddress = Annotated[str, StringConstraints(min_length=1, max_length=8192)]


class TabRef(InboundModel):
    tab_id: TabId


class ControlRequestRef(InboundModel):
    request_id: RequestId


class NewTab(InboundModel):
    url: TypedAddress = "about:blank"
    profile_id: ProfileId | None = Field(
        None, description="The named browser profile to open in; None for Shared."
    )
    private: bool = Field(
        False,
        description="A private sign-in: storage in memory, gone with the tab, and seen by "
        "the member who opened it only. Takes no profile.",
    )


class Navigate(InboundModel):
    tab_id: TabId
    url: TypedAddress


class TabView(WireModel):
    id: str
    url: str
    title: str = Field(description="The page's title; empty until its document has one.")
    icon: str | None = Field(
        description="A short hash naming the page's icon (tab_icon serves it); None when the "
        "page has no icon the browser could load."
    )
    owner_agent_id: str | None
    opener_tab_id: str | None
    partition_kind: str
    partition_label: str
    hue: int | None = Field(description="The profile's colour; None for Shared and own sessions.")
    held_by_person: bool
    held_by: str | None = Field(
        description="The account of the person in control; the web client shows their name."
    )
    loaded: bool


class TabList(WireModel):
    tabs: list[TabView]


class OpenedTab(TabView):
    load_error: str | None = Field(
        description="Chromium's network error (ERR_CONNECTION_REFUSED, …) when the page did "
        "not load; the tab shows the error page at the address."
    )


class TabAddress(WireModel):
    tab_id: str
    url: str
    load_error: str | None = Field(
        None,
        description="Chromium's network error when the page did not load; the tab shows "
        "the error page at the address.",
    )


class TabClosed(WireModel):
    closed: bool


class TabIconView(WireModel):
    tab_id: str
    icon: str | None = Field(description="The hash the tab list names the icon by.")
    data_url: str | None = Field(
        description="The icon as a data: address (an image of at most 32 KiB); None when "
        "the page has none."
    )


class ControlRequestView(WireModel):
    id: str
    tab_id: str
    account_id: str = Field(description="The member who asks.")
    holder: str = Field(description="The account of the person asked, in control of the tab.")
    expires_at: float = Field(description="When it lapses unanswered, on the host's clock.")
    expires_in: float = Field(description="Seconds it still waits; 0 once answered.")


def _request_view(call: HostCall, request: ControlRequest) -> ControlRequestView:
    return ControlRequestView(
        id=request.id,
        tab_id=request.tab_id,
        account_id=request.account_id,
        holder=request.holder,
        expires_at=request.expires_at,
        expires_in=call.host.control_requests.seconds_left(request),
    )


def _view(summary: TabSummary) -> TabView:
    tab = summary.tab
    return TabView(
        id=tab.id,
        url=tab.url,
        title=tab.title,
        icon=tab.icon.digest if tab.icon else None,
        owner_agent_id=tab.owner_agent_id,
        opener_tab_id=tab.opener_tab_id,
        partition_kind=tab.partition.kind,
        partition_label=summary.partition_label,
        hue=summary.hue,
        held_by_person=tab.held_by is not None,
        held_by=tab.held_by,
        loaded=tab.loaded,
    )


@routes.route("browser-control-v1/list_tabs", args=NoArgs, least_role=Role.MEMBER)
async def list_tabs(call: HostCall, _args: NoArgs) -> TabList:
    """The team's tabs this member can see, with owner, profile label and colour."""
    summaries = await call.host.tabs.list_tabs(call.peer.team_id, call.peer.account_id)
    return TabList(tabs=[_view(s) for s in summaries])


@routes.route("browser-control-v1/new_tab", args=NewTab, least_role=Role.MEMBER)
async def new_tab(call: HostCall, args: NewTab) -> OpenedTab:
    """Open a tab in the team's shared profile or a named one, at a typed address."""
    peer = call.peer
    summary, visit = await call.host.tabs.new_tab(
        peer.team_id, peer.account_id, args.url, args.profile_id, private=args.private
    )
    return OpenedTab(**_view(summary).model_dump(), load_error=visit.load_error)


@routes.route("browser-control-v1/navigate", args=Navigate, least_role=Role.MEMBER)
async def navigate(call: HostCall, args: Navigate) -> TabAddress:
    """Load a typed address (or search for a phrase) in the tab."""
    peer = call.peer
    visit = await call.host.tabs.navigate(peer.team_id, peer.account_id, args.tab_id, args.url)
    return TabAddress(tab_id=args.tab_id, url=visit.url, load_error=visit.load_error)


async def _step(call: HostCall, tab_id: str, step: HistoryStep) -> TabAddress:
    url = await call.host.tabs.step(call.peer.team_id, call.peer.account_id, tab_id, step)
    return TabAddress(tab_id=tab_id, url=url)


@routes.route("browser-control-v1/back", args=TabRef, least_role=Role.MEMBER)
async def back(call: HostCall, args: TabRef) -> TabAddress:
    """Go back in the tab's history."""
    return await _step(call, args.tab_id, "back")


@routes.route("browser-control-v1/forward", args=TabRef, least_role=Role.MEMBER)
async def forward(call: HostCall, args: TabRef) -> TabAddress:
    """Go forward in the tab's history."""
    return await _step(call, args.tab_id, "forward")


@routes.route("browser-control-v1/reload", args=TabRef, least_role=Role.MEMBER)
async def reload(call: HostCall, args: TabRef) -> TabAddress:
    """Load the tab's page again."""
    return await _step(call, args.tab_id, "reload")


@routes.route("browser-control-v1/close_tab", args=TabRef, least_role=Role.MEMBER)
async def close_tab(call: HostCall, args: TabRef) -> TabClosed:
    """Close the tab (and its dependent popups)."""
    await call.host.tabs.close_tab(call.peer.team_id, call.peer.account_id, args.tab_id)
    return TabClosed(closed=True)


@routes.route("browser-control-v1/tab_icon", args=TabRef, least_role=Role.MEMBER)
async def tab_icon(call: HostCall, args: TabRef) -> TabIconView:
    """The page icon a tab list names by its hash, as a data: address."""
    icon = await call.host.tabs.icon(call.peer.team_id, call.peer.account_id, args.tab_id)
    return TabIconView(
        tab_id=args.tab_id,
        icon=icon.digest if icon else None,
        data_url=icon.data_url if icon else None,
    )


@routes.route("browser-control-v1/request_control", args=TabRef, least_role=Role.MEMBER)
async def request_control(call: HostCall, args: TabRef) -> ControlRequestView:
    """Ask the person in control of a tab to pass it on; it waits a minute at most."""
    peer = call.peer
    request = await call.host.control_requests.request_control(
        peer.team_id, peer.account_id, args.tab_id
    )
    return _request_view(call, request)


@routes.route("browser-control-v1/grant_control", args=ControlRequestRef, least_role=Role.MEMBER)
async def grant_control(call: HostCall, args: ControlRequestRef) -> ControlRequestView:
    """The person in control passes the tab to the member who asked (who must be watching)."""
    peer = call.peer
    request = await call.host.control_requests.grant(peer.team_id, peer.account_id, args.request_id)
    return _request_view(call, request)


@routes.route(
    "browser-control-v1/dismiss_control_request", args=ControlRequestRef, least_role=Role.MEMBER
)
async def dismiss_control_request(call: HostCall, args: ControlRequestRef) -> ControlRequestView:
    """The person in control turns a request down; the member who asked hears so."""
    peer = call.peer
    request = call.host.control_requests.dismiss(peer.team_id, peer.account_id, args.request_id)
    return _request_view(call, request)


@routes.route(
    "browser-control-v1/withdraw_control_request", args=ControlRequestRef, least_role=Role.MEMBER
)
async def withdraw_control_request(call: HostCall, args: ControlRequestRef) -> ControlRequestView:
    """The member who asked for control takes the request back; the holder hears so."""
    peer = call.peer
    request = call.host.control_requests.withdraw(peer.team_id, peer.account_id, args.request_id)
    return _request_view(call, request)

"""``browser-control-v1``: a member's own hands on the team's tabs (not an agent's tools).

Members see the team's tabs except private sign-in tabs, and may go back,
forward, reload, open and close them; a tab another person holds is theirs alone.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, StringConstraints

from server.common.errors import NotFound
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.api.system import NoArgs
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.rtc.team_api import HostCall, HostRouteTable

routes = HostRouteTable("browser-control-v1")
TABS_CHANGED = "browser-tabs-changed"


def _web_address(value: str) -> str:
    if value == "about:blank":
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("only http and https addresses (or about:blank) can be opened")
    return value


WebAddress = Annotated[
    str, StringConstraints(min_length=1, max_length=8192), AfterValidator(_web_address)
]
TabId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f-]{36}$")]


class TabRef(InboundModel):
    tab_id: TabId


class NewTab(InboundModel):
    url: WebAddress = "about:blank"


class Navigate(InboundModel):
    tab_id: TabId
    url: WebAddress


class TabView(WireModel):
    id: str
    url: str
    owner_agent_id: str | None
    opener_tab_id: str | None
    partition_kind: str
    partition_label: str
    hue: int | None = Field(description="The profile's colour; None for Shared and own sessions.")
    held_by_person: bool
    loaded: bool


class TabList(WireModel):
    tabs: list[TabView]


class TabAddress(WireModel):
    tab_id: str
    url: str


class TabClosed(WireModel):
    closed: bool


async def _views(call: HostCall, tabs: list[Tab]) -> list[TabView]:
    profiles = {p.id: p for p in await call.host.profiles.list_profiles(call.peer.team_id)}
    views = []
    for tab in tabs:
        profile = profiles.get(tab.partition.key) if tab.partition.kind == "profile" else None
        views.append(
            TabView(
                id=tab.id,
                url=tab.url,
                owner_agent_id=tab.owner_agent_id,
                opener_tab_id=tab.opener_tab_id,
                partition_kind=tab.partition.kind,
                partition_label=profile.name if profile else tab.partition.label,
                hue=profile.hue if profile else None,
                held_by_person=tab.held_by is not None,
                loaded=tab.loaded,
            )
        )
    return views


def _visible(tabs: list[Tab]) -> list[Tab]:
    # A private tab is a sign-in in progress: nobody else watches it.
    return [t for t in tabs if t.partition.kind != "private"]


async def _visible_tab(call: HostCall, tab_id: str) -> Tab:
    engine = await call.host.browser.engine()
    tab = engine.get_tab(call.peer.team_id, tab_id)
    if tab.partition.kind == "private":
        raise NotFound("no such tab", code="tabNotFound")
    return tab


@routes.route("browser-control-v1/list_tabs", args=NoArgs, least_role=Role.MEMBER)
async def list_tabs(call: HostCall, _args: NoArgs) -> TabList:
    """The team's tabs this member can see, with owner, profile label and colour."""
    engine = await call.host.browser.engine()
    return TabList(tabs=await _views(call, _visible(engine.list_tabs(call.peer.team_id))))


@routes.route("browser-control-v1/new_tab", args=NewTab, least_role=Role.MEMBER)
async def new_tab(call: HostCall, args: NewTab) -> TabView:
    """Open a tab in the team's shared profile."""
    engine = await call.host.browser.engine()
    tab = await engine.open_tab(call.peer.team_id, Partition.shared(), url=args.url)
    return (await _views(call, [tab]))[0]


async def _page_step(call: HostCall, tab_id: str, step: str) -> TabAddress:
    tab = await _visible_tab(call, tab_id)
    engine = await call.host.browser.engine()

    async def act(page: Any) -> str:
        if step == "back":
            await page.go_back()
        elif step == "forward":
            await page.go_forward()
        else:
            await page.reload()
        return str(page.url)

    result = await engine.run(call.peer.team_id, tab.id, Caller.person(call.peer.account_id), act)
    tab.url = str(result.value)
    return TabAddress(tab_id=tab.id, url=tab.url)


@routes.route("browser-control-v1/navigate", args=Navigate, least_role=Role.MEMBER)
async def navigate(call: HostCall, args: Navigate) -> TabAddress:
    """Load an http or https address in the tab."""
    tab = await _visible_tab(call, args.tab_id)
    engine = await call.host.browser.engine()
    result = await engine.navigate(
        call.peer.team_id, tab.id, Caller.person(call.peer.account_id), args.url
    )
    return TabAddress(tab_id=tab.id, url=str(result.value))


@routes.route("browser-control-v1/back", args=TabRef, least_role=Role.MEMBER)
async def back(call: HostCall, args: TabRef) -> TabAddress:
    """Go back in the tab's history."""
    return await _page_step(call, args.tab_id, "back")


@routes.route("browser-control-v1/forward", args=TabRef, least_role=Role.MEMBER)
async def forward(call: HostCall, args: TabRef) -> TabAddress:
    """Go forward in the tab's history."""
    return await _page_step(call, args.tab_id, "forward")


@routes.route("browser-control-v1/reload", args=TabRef, least_role=Role.MEMBER)
async def reload(call: HostCall, args: TabRef) -> TabAddress:
    """Load the tab's page again."""
    return await _page_step(call, args.tab_id, "reload")


@routes.route("browser-control-v1/close_tab", args=TabRef, least_role=Role.MEMBER)
async def close_tab(call: HostCall, args: TabRef) -> TabClosed:
    """Close the tab (and its dependent popups)."""
    tab = await _visible_tab(call, args.tab_id)
    engine = await call.host.browser.engine()
    await engine.close_tab(call.peer.team_id, tab.id, Caller.person(call.peer.account_id))
    return TabClosed(closed=True)

"""``web-search-v1``: how a team's agents search the web. No answer ever carries a key."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import SearchEngineId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.services.providers import MAX_BASE_URL_LENGTH, MAX_KEY_LENGTH
from server.host.services.web_search import WebSearchStatus

routes = HostRouteTable("web-search-v1")

Engine = Literal["duckduckgo", "searxng", "brave", "google"]


class WebSearchView(WireModel):
    engine: Engine
    base_url: str | None = Field(description="The SearXNG instance's address.")
    engine_id: str | None = Field(description="Google Programmable Search's engine id (cx).")
    key_set: bool


class SetWebSearch(InboundModel):
    engine: Engine
    base_url: Annotated[str, StringConstraints(max_length=MAX_BASE_URL_LENGTH)] | None = None
    engine_id: SearchEngineId | None = None
    key: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEY_LENGTH)] | None = None
    keep_key: bool = Field(False, description="Keep the key already set for this engine.")


def _view(status: WebSearchStatus) -> WebSearchView:
    return WebSearchView(
        engine=status.engine,  # type: ignore[arg-type]
        base_url=status.base_url,
        engine_id=status.engine_id,
        key_set=status.key_set,
    )


@routes.route("web-search-v1/get", args=NoArgs, least_role=Role.MEMBER)
async def get_web_search(call: HostCall, _args: NoArgs) -> WebSearchView:
    """The team's search engine and whether its key is set, never the key."""
    return _view(await call.host.web_search.get_settings(call.peer.team_id))


@routes.route("web-search-v1/set", args=SetWebSearch, least_role=Role.ADMIN)
async def set_web_search(call: HostCall, args: SetWebSearch) -> WebSearchView:
    """Choose the team's search engine (a key is sealed before it is stored)."""
    status = await call.host.web_search.set_settings(
        call.peer.team_id,
        args.engine,
        base_url=args.base_url,
        engine_id=args.engine_id,
        key=args.key,
        keep_key=args.keep_key,
    )
    return _view(status)

"""The hub's aiohttp application: its route tables, middleware and lifecycle, assembled."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from server import __version__
from server.common.protocol.hooks import HOOK_PATH
from server.common.protocol.link import LINK_PATH, MCP_PATH
from server.hub.container import HUB_KEY, Hub
from server.hub.http.middleware import errors_and_metrics
from server.hub.http.openapi import build_openapi
from server.hub.http.routing import Route, wrap
from server.hub.http.web_client import add_web_client
from server.hub.routes import (
    access_tokens,
    accounts,
    hooks,
    hosts,
    invitations,
    mcp,
    system,
    teams,
)
from server.hub.services.accounts import MAX_AVATAR_BYTES

ROUTE_TABLES = (
    system.routes,
    accounts.routes,
    teams.routes,
    invitations.routes,
    hosts.routes,
    access_tokens.routes,
)


def all_routes() -> list[Route]:
    return [route for table in ROUTE_TABLES for route in table.routes]


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI document; the routes are fixed, so it is built once per process."""
    return build_openapi(all_routes(), version=__version__)


def build_app(hub: Hub) -> web.Application:
    """An application serving ``hub``; its database is migrated when the app starts."""
    app = web.Application(
        middlewares=[errors_and_metrics],
        # Above every route's own limit, so the route (not aiohttp) names the limit.
        client_max_size=MAX_AVATAR_BYTES + 64 * 1024,
    )
    app[HUB_KEY] = hub
    routes = all_routes()
    for route in routes:
        app.router.add_route(route.method, route.path, wrap(route), name=route.name)
    openapi = openapi_document()

    async def serve_openapi(_request: web.Request) -> web.Response:
        return web.json_response(openapi)

    app.router.add_get("/v1/openapi.json", serve_openapi, name="openapi")
    app.router.add_get(LINK_PATH, hub.links.handle, name="host_link")
    app.router.add_post(HOOK_PATH, hooks.receive_delivery, name="receive_hook_delivery")
    for method in ("GET", "POST", "DELETE"):
        app.router.add_route(method, MCP_PATH, mcp.serve_mcp, name=f"mcp_{method.lower()}")
    add_web_client(app)
    app.cleanup_ctx.append(_lifecycle(hub))
    # Long-lived websockets and event streams end first, so shutdown does not wait for them.
    app.on_shutdown.append(lambda _app: hub.mcp.close())
    app.on_shutdown.append(lambda _app: hub.links.close())
    app.on_shutdown.append(_end_streams(hub))
    return app


def _end_streams(hub: Hub) -> Any:
    async def end(_app: web.Application) -> None:
        hub.streams.close_all()

    return end


def _lifecycle(hub: Hub) -> Any:
    async def lifecycle(_app: web.Application) -> AsyncIterator[None]:
        await hub.db.migrate()
        await hub.bus.start(hub.on_bus)
        await hub.links.start()
        hub.hooks.start()
        hub.mcp.start()
        hub.sessions.start()
        yield
        await hub.sessions.close()
        await hub.mcp.close()
        await hub.access_tokens.close()
        await hub.hooks.close()
        await hub.bus.close()
        hub.passwords.close()
        await hub.db.close()

    return lifecycle

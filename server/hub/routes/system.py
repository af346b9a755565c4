"""Health, metrics and the OpenAPI document."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from server import __version__
from server.hub.http.routing import Call, RouteTable
from server.hub.schemas import Health

routes = RouteTable()


@routes.get("/healthz", access="public", reply=Health)
async def health(call: Call[None]) -> Health:
    """Liveness: the hub answers and its database does too."""
    await call.hub.db.ping()
    return Health(status="ok", version=__version__)


@routes.get("/metrics", access="public", reply_content_types=(CONTENT_TYPE_LATEST,))
async def metrics(call: Call[None]) -> web.Response:
    """Prometheus metrics in the text format."""
    response = web.Response(body=call.hub.metrics.render())
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response

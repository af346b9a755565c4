"""``/metrics`` of a host that runs apart from its hub (``crewhost host``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from server.common.errors import Unavailable
from server.host.metrics import HostMetrics


@asynccontextmanager
async def metrics_endpoint(metrics: HostMetrics, listen: str) -> AsyncIterator[str]:
    """Serve ``metrics`` at ``http://<listen>/metrics`` while the block runs; yields its URL."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")

    async def render(_request: web.Request) -> web.Response:
        response = web.Response(body=metrics.registry_text())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    app = web.Application()
    app.router.add_get("/metrics", render)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, int(port))
        try:
            await site.start()
        except OSError as exc:
            raise Unavailable(f"cannot serve metrics on {listen}: {exc.strerror or exc}") from exc
        bound = runner.addresses[0]
        where = f"[{bound[0]}]" if ":" in str(bound[0]) else str(bound[0])
        yield f"http://{where}:{bound[1]}/metrics"
    finally:
        await runner.cleanup()

"""Local websites for the host's browser to open: fixture pages on a free loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

from server.common.addresses import AddressPolicy

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Where the fixture sites listen: loopback, which the host's browsers are refused unless
# allowed, so the tests' engines and hubs allow this address (and only it).
SITE_HOST = "127.0.0.1"
SITES_ALLOWED = AddressPolicy.from_entries([SITE_HOST])


@dataclass
class Site:
    """A running site: its base URL and every request's path and headers, in order."""

    base: str = ""
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def headers_of(self, path: str) -> dict[str, str]:
        return [h for p, h in self.requests if p == path][-1]


def pages_app(
    pages: Mapping[str, str], *, routes: Mapping[str, Handler] | None = None
) -> web.Application:
    """An app that answers each path of ``pages`` with its HTML (after ``routes``), else 404."""

    async def page(request: web.Request) -> web.Response:
        body = pages.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    for path, handler in (routes or {}).items():
        app.router.add_get(path, handler)
    app.router.add_get("/{tail:.*}", page)
    return app


@asynccontextmanager
async def serving(app: web.Application, host: str = SITE_HOST) -> AsyncIterator[Site]:
    """Serves ``app`` on a free port of ``host`` until the block ends, recording requests."""
    site = Site()

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        site.requests.append((request.path, dict(request.headers)))
        return await handler(request)

    app.middlewares.append(record)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, 0).start()
        site.base = f"http://{host}:{runner.addresses[0][1]}"
        yield site
    finally:
        await runner.cleanup()

"""A local site for the browser tests: fixture pages and the headers each request carried."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web

PAGES = {
    "/": "<title>home</title><p>home</p>",
    "/set-cookie": "<title>set</title><p>cookie set</p>",
    "/cookies": "<title>cookies</title><p>cookies</p>",
    "/popups": (
        "<a id=dep href='/child' target=_blank>dependent</a>"
        "<a id=free href='/child' target=_blank rel=noopener>noopener</a>"
    ),
    "/child": "<title>child</title><p>child</p>",
    "/confirm": "<button id=ask onclick='document.title = String(confirm(\"Sure?\"))'>ask</button>",
    "/alert-on-load": "<script>setTimeout(() => alert('hello person'), 0)</script>",
}


@dataclass
class Site:
    """The running site: its base URL and every request's headers, in order."""

    base: str
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path

    def headers_of(self, path: str) -> dict[str, str]:
        return [h for p, h in self.requests if p == path][-1]


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    running = Site("")

    async def page(request: web.Request) -> web.Response:
        running.requests.append((request.path, dict(request.headers)))
        body = PAGES.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        response = web.Response(text=f"<!doctype html>{body}", content_type="text/html")
        if request.path == "/set-cookie":
            value = request.query.get("v", "1")
            response.headers["Set-Cookie"] = f"session={value}; Max-Age=3600; Path=/"
        return response

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    running.base = f"http://127.0.0.1:{port}"
    yield running
    await runner.cleanup()

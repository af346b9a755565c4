"""A local site for the browser tests: fixture pages and the headers each request carried."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from tests.support.sites import Site, pages_app, serving

PAGES = {
    "/": "<title>home</title><p>home</p>",
    "/set-cookie": "<title>set</title><p>cookie set</p>",
    "/cookies": "<title>cookies</title><p>cookies</p>",
    "/popups": (
        "<a id=dep href='/child' target=_blank rel=opener>dependent</a>"
        "<a id=free href='/child' target=_blank rel=noopener>noopener</a>"
    ),
    "/child": "<title>child</title><p>child</p>",
    # Retitled after its load: only the page-facts script reports the new title.
    "/retitle": (
        "<title>before</title>"
        "<script>addEventListener('load', () => setTimeout(() => {"
        " document.title = 'after' }, 300))</script>"
    ),
    "/confirm": "<button id=ask onclick='document.title = String(confirm(\"Sure?\"))'>ask</button>",
    "/alert-on-load": "<script>setTimeout(() => alert('hello person'), 0)</script>",
}


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async def set_cookie(request: web.Request) -> web.Response:
        value = request.query.get("v", "1")
        response = web.Response(
            text=f"<!doctype html>{PAGES['/set-cookie']}", content_type="text/html"
        )
        response.headers["Set-Cookie"] = f"session={value}; Max-Age=3600; Path=/"
        return response

    pages = {path: f"<!doctype html>{body}" for path, body in PAGES.items()}
    async with serving(pages_app(pages, routes={"/set-cookie": set_cookie})) as running:
        yield running

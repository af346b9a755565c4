"""Local search services speaking the real wire formats, their refusals included.

One server answers as four: SearXNG's JSON API (``GET /search?format=json``; 403 when
the JSON format is not enabled), DuckDuckGo's HTML results (``POST /html/``; 202 with its
anomaly page when it limits a client), the Brave Search API (``GET /res/v1/web/search``;
422 ``SUBSCRIPTION_TOKEN_INVALID`` for a bad token, 429 ``RATE_LIMITED``) and Google's
Custom Search JSON API (``GET /customsearch/v1``; 400 "API key not valid", 429 quota).
"""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from aiohttp import web
from aiohttp.typedefs import Handler

from tests.support.sites import Site, serving

BRAVE_KEY = "BSA-fake-token-0123456789"
GOOGLE_KEY = "AIza-fake-key-0123456789"
GOOGLE_CX = "0123456789abcdef0"


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


HITS = [
    Hit(f"Tide tables {n}", f"https://tides{n}.example/port", f"High water at <b>{n}</b>:00")
    for n in range(1, 13)
]


@dataclass
class SearchFake:
    """What each service does next: ``limited`` engines answer with their rate limit."""

    site: Site = field(default_factory=Site)
    limited: set[str] = field(default_factory=set)
    json_enabled: bool = True
    # The address answers 200 with a page, not SearXNG's JSON (a wrong address, a proxy).
    searxng_page: bool = False
    queries: list[tuple[str, str]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.site.url(path)


def _searxng(fake: SearchFake) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        if fake.searxng_page:
            return web.Response(text="<html><body>Welcome</body></html>", content_type="text/html")
        if request.query.get("format") == "json" and not fake.json_enabled:
            return web.Response(status=403, text="<html><body>403 Forbidden</body></html>")
        if "searxng" in fake.limited:
            return web.Response(status=429, text="Too Many Requests")
        fake.queries.append(("searxng", request.query.get("q", "")))
        results = [
            {"url": h.url, "title": h.title, "content": h.snippet, "engine": "bing", "score": 1.0}
            for h in HITS
        ]
        body = {
            "query": request.query.get("q", ""),
            "number_of_results": 0,
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
        return web.json_response(body)

    return handle


_DDG_ANOMALY = (
    '<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.'
    "</div></body></html>"
)


def _duckduckgo(fake: SearchFake) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        form = await request.post()
        if "duckduckgo" in fake.limited:
            return web.Response(status=202, text=_DDG_ANOMALY, content_type="text/html")
        fake.queries.append(("duckduckgo", str(form.get("q", ""))))
        rows = []
        for hit in HITS[:10]:
            wrapped = "//duckduckgo.com/l/?uddg=" + quote(hit.url, safe="") + "&rut=abc"
            rows.append(
                '<div class="result results_links results_links_deep web-result ">'
                '<div class="links_main links_deep result__body">'
                f'<h2 class="result__title"><a rel="nofollow" class="result__a" href="{wrapped}">'
                f"{html.escape(hit.title)}</a></h2>"
                f'<a class="result__snippet" href="{wrapped}">{hit.snippet}</a>'
                "</div></div>"
            )
        ad = (
            '<div class="result result--ad"><div class="links_main result__body">'
            '<h2 class="result__title">Ad</h2><a href="https://duckduckgo.com/y.js?ad=1">ad</a>'
            "</div></div>"
        )
        page = f"<html><body><div id='links'>{ad}{''.join(rows)}</div></body></html>"
        return web.Response(text=page, content_type="text/html")

    return handle


def _brave_error(status: int, code: str, detail: str) -> web.Response:
    body = {
        "type": "ErrorResponse",
        "error": {"id": "fake-id", "status": status, "code": code, "detail": detail, "meta": {}},
        "time": 1700000000,
    }
    return web.json_response(body, status=status)


def _brave(fake: SearchFake) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        if request.headers.get("X-Subscription-Token") != BRAVE_KEY:
            return _brave_error(
                422, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid."
            )
        if "brave" in fake.limited:
            return _brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.")
        fake.queries.append(("brave", request.query.get("q", "")))
        count = int(request.query.get("count", "20"))
        results: list[dict[str, Any]] = [
            {"title": h.title, "url": h.url, "description": h.snippet, "is_source_local": False}
            for h in HITS[:count]
        ]
        body = {
            "type": "search",
            "query": {"original": request.query.get("q", "")},
            "web": {"type": "search", "results": results},
        }
        return web.json_response(body)

    return handle


def _google_error(status: int, message: str, reason: str, state: str) -> web.Response:
    error = {
        "code": status,
        "message": message,
        "errors": [{"message": message, "domain": "global", "reason": reason}],
        "status": state,
    }
    return web.json_response({"error": error}, status=status)


def _google(fake: SearchFake) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        if request.query.get("key") != GOOGLE_KEY:
            message = "API key not valid. Please pass a valid API key."
            return _google_error(400, message, "badRequest", "INVALID_ARGUMENT")
        if "google" in fake.limited:
            message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per day'."
            return _google_error(429, message, "rateLimitExceeded", "RESOURCE_EXHAUSTED")
        num = int(request.query.get("num", "10"))
        if not 1 <= num <= 10 or request.query.get("cx") != GOOGLE_CX:
            return _google_error(
                400, "Request contains an invalid argument.", "invalid", "INVALID_ARGUMENT"
            )
        fake.queries.append(("google", request.query.get("q", "")))
        items = [
            {
                "kind": "customsearch#result",
                "title": h.title,
                "htmlTitle": h.title,
                "link": h.url,
                "displayLink": h.url.split("/")[2],
                "snippet": h.snippet,
            }
            for h in HITS[:num]
        ]
        return web.json_response({"kind": "customsearch#search", "items": items})

    return handle


@asynccontextmanager
async def search_services() -> AsyncIterator[SearchFake]:
    """The four services on one free loopback port until the block ends."""
    fake = SearchFake()
    app = web.Application()
    app.router.add_get("/search", _searxng(fake))
    app.router.add_post("/html/", _duckduckgo(fake))
    app.router.add_get("/res/v1/web/search", _brave(fake))
    app.router.add_get("/customsearch/v1", _google(fake))
    async with serving(app) as site:
        fake.site = site
        yield fake

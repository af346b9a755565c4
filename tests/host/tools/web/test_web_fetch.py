"""web_fetch as an agent calls it: HTML as Markdown, JSON parsed, text as is, a prompt."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import pytest_asyncio
from aiohttp import web

from server.common.public_addresses import PublicOnlyPolicy
from server.host.browser.engine import BrowserEngine
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext
from server.host.web.extract import MAX_JSON_DEPTH
from server.host.web.fetcher import FetchLimits, WebFetcher
from tests.support.sites import Site, serving

ARTICLE = """<!doctype html><html><head><title>Tides</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>
<main><article><h1>How tides work</h1>
<p>The Moon pulls the oceans toward it, and the water on the far side lags behind, so most
coasts see two high tides a day. This paragraph is long enough to count as content.</p>
<p>Spring tides come when the Sun and the Moon line up; neap tides when they stand at right
angles. Harbours publish tables of both, a week or a year ahead.</p>
</article></main>
<footer>Copyright and cookie notices nobody reads.</footer></body></html>"""

BARE = "<html><body><div><p>Only a short line.</p></div></body></html>"


def app() -> web.Application:
    async def article(_request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    async def bare(_request: web.Request) -> web.Response:
        return web.Response(text=BARE, content_type="text/html")

    async def data(_request: web.Request) -> web.Response:
        return web.json_response({"name": "tide", "heights": [1.2, 3.4]})

    async def halves(_request: web.Request) -> web.Response:
        # Half a UTF-16 pair escaped alone, as JSON allows and no UTF-8 text holds.
        return web.Response(text='{"tide": "high \\ud83d"}', content_type="application/json")

    async def text(_request: web.Request) -> web.Response:
        return web.Response(text="plain words\nsecond line", content_type="text/plain")

    async def image(_request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG", content_type="image/png")

    async def moved(_request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/article")

    async def charset(request: web.Request) -> web.Response:
        # A charset no page is written in: a host-name codec, a byte codec, or none.
        content_type = f"text/plain; charset={request.match_info['name']}"
        return web.Response(
            body="tide tables, ½ hourly".encode(),
            content_type=None,
            headers={"Content-Type": content_type},
        )

    async def deep(request: web.Request) -> web.Response:
        depth = int(request.match_info["depth"])
        return web.Response(body=b"[" * depth + b"]" * depth, content_type="application/json")

    application = web.Application()
    for path, handler in [
        ("/article", article),
        ("/bare", bare),
        ("/data", data),
        ("/halves", halves),
        ("/text", text),
        ("/image", image),
        ("/moved", moved),
        ("/charset/{name}", charset),
        ("/deep/{depth}", deep),
    ]:
        application.router.add_get(path, handler)
    return application


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[Site]:  # on the module's loop, where this folder's tests run
    async with serving(app()) as running:
        yield running


class Summaries:
    """The model's side of a prompt: records what it was asked, answers in kind."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, prompt: str, content: str) -> str:
        self.asked.append((prompt, content))
        return f"summary for {prompt}"


def context_for(site: Site, summaries: Summaries | None = None) -> ToolContext:
    loopback = ipaddress.ip_address("127.0.0.1")
    policy = PublicOnlyPolicy(allowed_endpoints=frozenset({(loopback, site.port)}))
    return ToolContext(
        engine=cast(BrowserEngine, None),  # web_fetch never touches the browser
        team_id="team-1",
        caller=cast(Any, None),
        web=WebFetcher(policy, FetchLimits(timeout=5.0)),
        summarize=summaries,
    )


async def fetch(context: ToolContext, **args: Any) -> dict[str, Any]:
    return await call_tool(context, "web_fetch", args)


async def test_html_becomes_its_main_content_as_markdown(site: Site) -> None:
    result = await fetch(context_for(site), url=site.url("/moved"))
    assert result["final_url"] == site.url("/article")
    assert result["url"] == site.url("/moved")
    assert result["content_type"] == "text/html"
    assert result["truncated"] is False
    content = result["content"]
    assert "How tides work" in content
    assert "Spring tides" in content
    assert "About us" not in content
    assert "cookie notices" not in content


async def test_a_page_trafilatura_finds_nothing_in_falls_back_to_readability(
    site: Site,
) -> None:
    result = await fetch(context_for(site), url=site.url("/bare"))
    assert "Only a short line." in result["content"]


async def test_json_is_parsed_and_text_kept(site: Site) -> None:
    data = await fetch(context_for(site), url=site.url("/data"))
    assert data["content"] == {"name": "tide", "heights": [1.2, 3.4]}
    assert data["content_type"] == "application/json"
    text = await fetch(context_for(site), url=site.url("/text"))
    assert text["content"] == "plain words\nsecond line"
    halves = await fetch(context_for(site), url=site.url("/halves"))
    assert halves["content"] == {"tide": "high \ufffd"}


@pytest.mark.parametrize("name", ["idna", "undefined", "punycode", "rot13", "x-unknown"])
async def test_a_charset_no_page_is_written_in_reads_as_utf8(site: Site, name: str) -> None:
    result = await fetch(context_for(site), url=site.url(f"/charset/{name}"))
    assert result["content"] == "tide tables, ½ hourly"


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 990, 100_000])
async def test_json_nested_too_deep_is_given_as_its_text(site: Site, depth: int) -> None:
    result = await fetch(context_for(site), url=site.url(f"/deep/{depth}"), max_length=300)
    body = "[" * depth + "]" * depth
    assert (result["content"], result["truncated"]) == (body[:300], len(body) > 300)
    within = await fetch(context_for(site), url=site.url(f"/deep/{MAX_JSON_DEPTH}"))
    assert json.dumps(within["content"]) == "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH


async def test_max_length_cuts_and_says_so(site: Site) -> None:
    result = await fetch(context_for(site), url=site.url("/article"), maxLength=100)
    assert len(result["content"]) == 100
    assert result["truncated"] is True
    data = await fetch(context_for(site), url=site.url("/data"), max_length=100)
    assert json.loads(json.dumps(data["content"])) == data["content"]


async def test_a_prompt_has_the_model_distil_the_content(site: Site) -> None:
    summaries = Summaries()
    result = await fetch(
        context_for(site, summaries), url=site.url("/article"), prompt="when are spring tides?"
    )
    assert result["content"] == "summary for when are spring tides?"
    [(prompt, content)] = summaries.asked
    assert prompt == "when are spring tides?"
    assert "Spring tides" in content
    refused = await fetch(context_for(site), url=site.url("/article"), prompt="anything")
    assert refused["error"]["code"] == "summaryUnavailable"


async def test_other_content_is_refused_and_so_is_loopback(site: Site) -> None:
    image = await fetch(context_for(site), url=site.url("/image"))
    assert image["error"]["code"] == "unsupportedContent"
    refused = await fetch(context_for(site), url=f"http://127.0.0.1:{site.port + 1}/")
    assert refused["error"]["code"] == "addressRefused"
    invalid = await fetch(context_for(site), url="ftp://example.com/")
    assert invalid["error"]["code"] == "invalidUrl"


async def test_without_a_fetcher_the_tool_says_so(site: Site) -> None:
    context = dataclasses.replace(context_for(site), web=None)
    result = await fetch(context, url=site.url("/text"))
    assert result["error"]["code"] == "webFetchUnavailable"

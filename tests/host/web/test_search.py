"""Each search engine against a local service speaking its real format, refusals included."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from server.host.web.search import (
    BraveEngine,
    DuckDuckGoEngine,
    GoogleEngine,
    SearchEngine,
    SearchFailed,
    SearxngEngine,
)
from tests.support.fakes.search import BRAVE_KEY, GOOGLE_CX, GOOGLE_KEY, SearchFake, search_services
from tests.support.sites import serving


@pytest.fixture
async def fake() -> AsyncIterator[SearchFake]:
    async with search_services() as running:
        yield running


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as opened:
        yield opened


def engines(fake: SearchFake, session: aiohttp.ClientSession) -> dict[str, SearchEngine]:
    return {
        "searxng": SearxngEngine(session, base_url=fake.url("/")),
        "duckduckgo": DuckDuckGoEngine(endpoint=fake.url("/html/")),
        "brave": BraveEngine(session, api_key=BRAVE_KEY, endpoint=fake.url("/res/v1/web/search")),
        "google": GoogleEngine(
            session, api_key=GOOGLE_KEY, cx=GOOGLE_CX, endpoint=fake.url("/customsearch/v1")
        ),
    }


KINDS = ["searxng", "duckduckgo", "brave", "google"]


@pytest.mark.parametrize("kind", KINDS)
async def test_results_come_back_as_title_url_and_plain_snippet(
    fake: SearchFake, session: aiohttp.ClientSession, kind: str
) -> None:
    results = await engines(fake, session)[kind].search("tide tables", 3)
    assert [r.to_wire() for r in results] == [
        {
            "title": f"Tide tables {n}",
            "url": f"https://tides{n}.example/port",
            "snippet": f"High water at {n}:00",
        }
        for n in (1, 2, 3)
    ]
    assert fake.queries == [(kind, "tide tables")]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rate_limit_has_its_own_code(
    fake: SearchFake, session: aiohttp.ClientSession, kind: str
) -> None:
    fake.limited.add(kind)
    with pytest.raises(SearchFailed) as failed:
        await engines(fake, session)[kind].search("tides", 5)
    assert failed.value.code == "searchRateLimited"


@pytest.mark.parametrize("kind", ["brave", "google"])
async def test_a_bad_key_is_refused_without_showing_it(
    fake: SearchFake, session: aiohttp.ClientSession, kind: str
) -> None:
    engine = engines(fake, session)[kind]
    engine.api_key = "wrong-key-value"  # type: ignore[attr-defined]
    with pytest.raises(SearchFailed) as failed:
        await engine.search("tides", 5)
    assert failed.value.code == "searchKeyRefused"
    assert "wrong-key-value" not in failed.value.message
    assert "wrong-key-value" not in repr(engine)


async def test_searxng_without_its_json_format_says_how_to_enable_it(
    fake: SearchFake, session: aiohttp.ClientSession
) -> None:
    fake.json_enabled = False
    with pytest.raises(SearchFailed) as failed:
        await engines(fake, session)["searxng"].search("tides", 5)
    assert "search.formats" in failed.value.message


async def test_an_unreachable_engine_fails_clearly(session: aiohttp.ClientSession) -> None:
    with pytest.raises(SearchFailed) as failed:
        await SearxngEngine(session, base_url="http://127.0.0.1:9").search("tides", 5)
    assert failed.value.code == "searchFailed"
    with pytest.raises(SearchFailed):
        await DuckDuckGoEngine(endpoint="http://127.0.0.1:9/html/").search("tides", 5)


async def test_searxng_answering_a_page_instead_of_json_says_so(
    fake: SearchFake, session: aiohttp.ClientSession
) -> None:
    fake.searxng_page = True
    with pytest.raises(SearchFailed) as failed:
        await engines(fake, session)["searxng"].search("tides", 5)
    assert failed.value.code == "searchFailed"
    assert "not JSON" in failed.value.message


async def test_searxng_json_without_results_is_not_taken_for_no_results(
    session: aiohttp.ClientSession,
) -> None:
    async def not_searxng(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    app = web.Application()
    app.router.add_get("/search", not_searxng)
    async with serving(app) as site:
        with pytest.raises(SearchFailed) as failed:
            await SearxngEngine(session, base_url=site.url("/")).search("tides", 5)
    assert "results" in failed.value.message


@pytest.mark.parametrize(
    ("endpoint", "cause"),
    [
        ("https://no-such-host.invalid/html/", "does not resolve"),
        ("http://127.0.0.1:9/html/", "refused"),
    ],
)
async def test_duckduckgo_out_of_reach_names_the_cause_not_the_resolver(
    endpoint: str, cause: str
) -> None:
    with pytest.raises(SearchFailed) as failed:
        await DuckDuckGoEngine(endpoint=endpoint).search("tides", 5)
    message = failed.value.message
    assert cause in message
    for raw in ("error sending request", "Query {", "os error", "DNSError", "ConnectError"):
        assert raw not in message

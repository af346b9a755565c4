"""WebSearchService on both databases: engines chosen per team, keys sealed, search via fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import sqlalchemy as sa

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.errors import InvalidArgument
from server.db.engine import Database
from server.db.tables import web_search_settings
from server.host.browser.engine import BrowserEngine
from server.host.services.web_search import SearchEndpoints, WebSearchService
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext
from server.host.web.search import SearchFailed
from tests.support.clock import FakeClock
from tests.support.fakes.search import BRAVE_KEY, GOOGLE_CX, GOOGLE_KEY, SearchFake, search_services

TEAM_A, TEAM_B = "a" * 32, "b" * 32


@pytest.fixture
async def fake() -> AsyncIterator[SearchFake]:
    async with search_services() as running:
        yield running


@pytest.fixture
async def service(
    db: Database, clock: FakeClock, fake: SearchFake
) -> AsyncIterator[WebSearchService]:
    endpoints = SearchEndpoints(
        duckduckgo=fake.url("/html/"),
        brave=fake.url("/res/v1/web/search"),
        google=fake.url("/customsearch/v1"),
    )
    opened = WebSearchService(db, clock, SecretBox(KeyRing.generate()), endpoints)
    yield opened
    await opened.close()


async def test_duckduckgo_is_the_default_and_teams_choose_apart(
    service: WebSearchService, fake: SearchFake
) -> None:
    status = await service.get_settings(TEAM_A)
    assert (status.engine, status.key_set) == ("duckduckgo", False)
    await service.set_settings(TEAM_A, "searxng", base_url=fake.url("/"))
    assert (await service.get_settings(TEAM_B)).engine == "duckduckgo"
    await service.search(TEAM_A, "tides", 2)
    await service.search(TEAM_B, "tides", 2)
    assert fake.queries == [("searxng", "tides"), ("duckduckgo", "tides")]


async def test_keys_are_sealed_kept_and_never_shown(
    service: WebSearchService, db: Database, fake: SearchFake
) -> None:
    status = await service.set_settings(TEAM_A, "brave", key=BRAVE_KEY)
    assert status.key_set
    assert BRAVE_KEY not in repr(status)
    async with db.read() as conn:
        stored: bytes = (await conn.execute(sa.select(web_search_settings.c.api_key))).scalar_one()
    assert BRAVE_KEY.encode() not in stored
    assert len(await service.search(TEAM_A, "tides", 4)) == 4
    await service.set_settings(TEAM_A, "brave", keep_key=True)
    assert len(await service.search(TEAM_A, "tides", 20)) == 10  # at most ten
    await service.set_settings(TEAM_A, "google", key=GOOGLE_KEY, engine_id=GOOGLE_CX)
    assert [r.url for r in await service.search(TEAM_A, "q", 1)] == ["https://tides1.example/port"]
    await service.set_settings(TEAM_A, "brave", key="not-the-key")
    with pytest.raises(SearchFailed) as failed:
        await service.search(TEAM_A, "tides", 3)
    assert failed.value.code == "searchKeyRefused"


@pytest.mark.parametrize(
    ("engine", "args", "field"),
    [
        ("bing", {}, "engine"),
        ("searxng", {}, "baseUrl"),
        ("searxng", {"base_url": "ftp://x"}, "baseUrl"),
        ("brave", {}, "key"),
        ("brave", {"keep_key": True}, "key"),
        ("brave", {"key": "a b"}, "key"),
        ("google", {"key": GOOGLE_KEY}, "engineId"),
    ],
)
async def test_bad_settings_are_refused_and_change_nothing(
    service: WebSearchService, engine: str, args: dict[str, Any], field: str
) -> None:
    await service.set_settings(TEAM_A, "duckduckgo")
    with pytest.raises(InvalidArgument) as refused:
        await service.set_settings(TEAM_A, engine, **args)
    assert refused.value.field == field
    assert (await service.get_settings(TEAM_A)).engine == "duckduckgo"


async def test_the_tool_searches_with_the_teams_engine(
    service: WebSearchService, fake: SearchFake
) -> None:
    context = ToolContext(
        engine=cast(BrowserEngine, None),
        team_id=TEAM_A,
        caller=cast(Any, None),
        search=lambda query, count: service.search(TEAM_A, query, count),
    )
    result = await call_tool(context, "web_search", {"query": " tide tables "})
    assert result["query"] == "tide tables"
    assert len(result["results"]) == 5
    assert set(result["results"][0]) == {"title", "url", "snippet"}
    too_many = await call_tool(context, "web_search", {"query": "x", "maxResults": 11})
    assert too_many["error"]["code"] == "invalidArguments"
    fake.limited.add("duckduckgo")
    limited = await call_tool(context, "web_search", {"query": "x"})
    assert limited["error"]["code"] == "searchRateLimited"


async def test_a_search_that_fails_says_where_an_admin_chooses_the_engine(
    db: Database, clock: FakeClock, fake: SearchFake
) -> None:
    # The default engine out of reach, as on a host without internet access.
    offline = SearchEndpoints(duckduckgo="https://no-such-host.invalid/html/")
    service = WebSearchService(db, clock, SecretBox(KeyRing.generate()), offline)
    try:
        with pytest.raises(SearchFailed) as failed:
            await service.search(TEAM_A, "tides", 3)
        message = failed.value.message
        assert "No search engine is chosen" in message
        assert "Web search screen" in message
        assert "web-search-v1/set" in message
        await service.set_settings(TEAM_A, "searxng", base_url=fake.url("/"))
        fake.searxng_page = True
        with pytest.raises(SearchFailed) as failed:
            await service.search(TEAM_A, "tides", 3)
        assert "web-search-v1/set" in failed.value.message
        assert "No search engine is chosen" not in failed.value.message
    finally:
        await service.close()

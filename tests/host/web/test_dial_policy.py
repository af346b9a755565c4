"""A session made under the address policy dials a name only where the policy lets it: a
name that answers a loopback address is refused as the connection opens, every time, and a
name the policy allows reaches its server."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from server.common.public_addresses import PublicOnlyPolicy
from server.host.web.dial_policy import policy_session
from tests.support.resolvers import TableResolver
from tests.support.sites import Site, serving


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async def models(_request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "house-model"}]})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    async with serving(app) as running:
        yield running


async def test_a_name_that_answers_loopback_is_refused_as_it_is_dialed(site: Site) -> None:
    resolver = TableResolver({"llm.corp.example": ["127.0.0.1"]})
    async with policy_session(PublicOnlyPolicy(), resolver) as session:
        for _ in range(2):  # judged at each connection, not once
            with pytest.raises(aiohttp.ClientConnectorError) as refused:
                await session.get(f"http://llm.corp.example:{site.port}/v1/models")
            assert "127.0.0.1 is loopback" in str(refused.value.os_error)
    assert resolver.asked == ["llm.corp.example", "llm.corp.example"]


async def test_a_name_the_policy_allows_reaches_its_server(site: Site) -> None:
    allowed = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.IPv4Address("127.0.0.1"), site.port)})
    )
    resolver = TableResolver({"llm.corp.example": ["127.0.0.1"]})
    async with (
        policy_session(allowed, resolver) as session,
        session.get(f"http://llm.corp.example:{site.port}/v1/models") as answer,
    ):
        assert (answer.status, await answer.json()) == (200, {"data": [{"id": "house-model"}]})

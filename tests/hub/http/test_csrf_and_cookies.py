"""CSRF refusals, cookie flags under plain HTTP and TLS, and GET never writing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.hub.app import all_routes
from tests.hub.http.test_role_matrix import SAMPLES, build_world
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import PASSWORD, RunningHub, hub_settings, running_hub
from tests.support.snapshots import database_snapshot
from tests.support.tls import self_signed_context


async def test_a_browser_write_without_the_csrf_header_is_refused(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    before = await database_snapshot(server.hub.db)
    owner.csrf = False
    reply = await owner.post("/v1/teams", {"name": "Sneaky"})
    assert (reply.status, reply.code) == (403, "csrfRejected")
    assert await database_snapshot(server.hub.db) == before


async def test_a_write_from_a_foreign_origin_is_refused(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    before = await database_snapshot(server.hub.db)
    owner.origin = "https://evil.example"
    reply = await owner.post("/v1/teams", {"name": "Sneaky"})
    assert (reply.status, reply.code) == (403, "csrfRejected")
    # Sign-in is a write too (login CSRF).
    stranger = server.client(origin="https://evil.example")
    signin = await stranger.post(
        "/v1/sessions", {"email": "owner@example.com", "password": PASSWORD}
    )
    assert (signin.status, signin.code) == (403, "csrfRejected")
    assert await database_snapshot(server.hub.db) == before


async def test_same_origin_writes_and_bearer_writes_pass(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    assert (await owner.post("/v1/teams", {"name": "Fine"})).status == 201
    peer = await server.sign_in("owner@example.com", client_kind="peer")
    # No CSRF header, no Origin: a bearer token is not something a page can attach.
    assert (await peer.post("/v1/teams", {"name": "Also fine"})).status == 201


async def test_a_forged_bearer_token_is_refused(server: RunningHub) -> None:
    await server.sign_up_owner()
    forged = server.client(bearer="A" * 43)
    reply = await forged.get("/v1/me")
    assert (reply.status, reply.code) == (401, "sessionExpired")
    malformed = await server.client().get("/v1/me", headers={"Authorization": "Basic abc"})
    assert (malformed.status, malformed.code) == (401, "unauthenticated")


async def test_get_routes_change_nothing(server: RunningHub) -> None:
    world = await build_world(server)
    before = await database_snapshot(server.hub.db)
    for route in all_routes():
        if route.method != "GET":
            continue
        if "text/event-stream" in route.reply_content_types:
            continue  # a stream lasts as long as its session (tests/hub/routes/test_account_events)
        if route.name in SAMPLES:
            path, _ = await SAMPLES[route.name][0](world)
        else:
            path = route.path
        reply = await world.clients["owner"].get(path)
        assert reply.status < 500, route.name
    assert await database_snapshot(server.hub.db) == before


@pytest.fixture
async def tls_server(tmp_path: Path, database: ScratchDatabase) -> AsyncIterator[RunningHub]:
    settings = hub_settings(tmp_path, database)
    async with running_hub(settings, database, ssl_context=self_signed_context(tmp_path)) as hub:
        yield hub


async def test_under_tls_the_cookie_is_secure_and_host_prefixed(tls_server: RunningHub) -> None:
    owner = await tls_server.sign_up_owner()
    reply = await owner.post("/v1/sessions", {"email": "owner@example.com", "password": PASSWORD})
    cookie = reply.headers["Set-Cookie"]
    assert cookie.startswith("__Host-crewhost_session=")
    assert "Secure" in cookie
    assert "HttpOnly" in cookie
    assert "Domain" not in cookie
    assert (await owner.get("/v1/me")).status == 200


@pytest.mark.parametrize(
    ("trust", "cookie_prefix"), [(False, "crewhost_session="), (True, "__Host-crewhost_session=")]
)
async def test_forwarded_https_is_trusted_only_when_configured(
    tmp_path: Path, database: ScratchDatabase, trust: bool, cookie_prefix: str
) -> None:
    settings = hub_settings(tmp_path, database, **{"hub.trust_forwarded": trust})
    async with running_hub(settings, database) as hub:
        owner = await hub.sign_up_owner()
        # Behind a TLS proxy the browser's Origin is https.
        owner.origin = ("https" if trust else "http") + hub.url.removeprefix("http")
        reply = await owner.post(
            "/v1/sessions",
            {"email": "owner@example.com", "password": PASSWORD},
            headers={"X-Forwarded-Proto": "https"},
        )
        assert reply.status == 201, reply.body
        assert reply.headers["Set-Cookie"].startswith(cookie_prefix)

"""The OAuth client's requests against the local authorization server: a client an admin
entered proves itself as the server's metadata allows, and an answer's issuer is read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx2
import pytest
from aiohttp import web
from mcp.shared.auth_utils import check_resource_allowed

from server.common.public_addresses import PublicOnlyPolicy, system_resolve
from server.host.agents.mcp import oauth as oauth_module
from server.host.agents.mcp.oauth import (
    REDIRECT_URI,
    HandClient,
    IssuerMismatch,
    OAuthClient,
    OAuthFailed,
)
from tests.support.clock import FakeClock
from tests.support.fakes.oauth_server import (
    PASSWORD,
    USER,
    FakeAuthorizationServer,
    authorization_server,
)
from tests.support.sites import serving


@pytest.fixture
async def oauth() -> AsyncIterator[FakeAuthorizationServer]:
    async with authorization_server() as fake:
        yield fake


def client() -> OAuthClient:
    policy = PublicOnlyPolicy.from_entries(["127.0.0.1"])
    return OAuthClient(policy, system_resolve, FakeClock())


async def authorized(url: str) -> str:
    """What a person's Allow on the authorization page redirects to."""
    query = dict(httpx2.URL(url).params)
    form = {**query, "user": USER, "password": PASSWORD}
    async with httpx2.AsyncClient() as http:
        answer = await http.post(url.split("?")[0], data=form)
    assert answer.status_code == 302
    return answer.headers["Location"]


async def test_an_entered_client_sends_its_secret_in_the_form_where_only_that_is_listed(
    oauth: FakeAuthorizationServer,
) -> None:
    oauth.registration = False
    oauth.auth_methods = ("client_secret_post",)
    oauth.iss_supported = True
    client_id = oauth.add_client(REDIRECT_URI, "s3cret")
    flow = client()
    grant = await flow.discover(oauth.issuer + "/mcp", "", HandClient(client_id, "s3cret"))
    assert (grant.client_id, grant.auth_method, grant.issuer_in_answer) == (
        client_id,
        "client_secret_post",
        True,
    )
    authorization = flow.authorization(grant)
    answer = await authorized(authorization.url)
    assert urlsplit(answer).path == "/callback"
    code = flow.answered_code(grant, answer, authorization.state)
    signed = await flow.exchange(grant, code, authorization.verifier)
    assert signed.access_token in oauth.access
    assert oauth.client_auth == ["post"]
    # The same answer said to come from elsewhere is refused before any exchange.
    forged = answer.replace("iss=", "iss=https%3A%2F%2Fother.example%2F&was=")
    with pytest.raises(IssuerMismatch):
        flow.answered_code(grant, forged, authorization.state)


@pytest.mark.parametrize(
    "metadata_url",
    ["http://127.0.0.1:99999/x", "http://[::1", "http://127.0.0.1:1/\x7f"],
)
async def test_a_metadata_address_that_is_not_valid_fails_the_sign_in(
    oauth: FakeAuthorizationServer, metadata_url: str
) -> None:
    challenge = f'Bearer resource_metadata="{metadata_url}"'
    with pytest.raises(OAuthFailed) as failed:
        await client().discover(oauth.issuer + "/mcp", challenge)
    assert failed.value.code == "mcpSignInFailed"
    assert "named an address that is not valid" in str(failed.value)
    assert "\x7f" not in str(failed.value)


@pytest.fixture
async def odd_server() -> AsyncIterator[str]:
    """A server whose answers a sign-in must not trust: metadata naming another resource,
    an endless event stream, an answer that trickles."""

    async def metadata(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "resource": "https://victim.example/mcp",
                "authorization_servers": [f"{request.url.origin()}/"],
            }
        )

    async def flood(request: web.Request) -> web.StreamResponse:
        answer = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await answer.prepare(request)
        chunk = b"data: " + b"x" * (1 << 20) + b"\n\n"
        for _ in range(40):
            await answer.write(chunk)
        return answer

    async def trickle(request: web.Request) -> web.StreamResponse:
        answer = web.StreamResponse(headers={"Content-Type": "application/json"})
        await answer.prepare(request)
        while True:
            await answer.write(b" ")
            await asyncio.sleep(0.05)

    app = web.Application()
    app.router.add_get("/.well-known/oauth-protected-resource{rest:.*}", metadata)
    app.router.add_post("/flood", flood)
    app.router.add_post("/trickle", trickle)
    async with serving(app) as site:
        yield site.base


async def test_metadata_that_names_another_resource_fails_the_sign_in(odd_server: str) -> None:
    # Its token would be sent to this server with every request.
    with pytest.raises(OAuthFailed) as failed:
        await client().discover(odd_server + "/mcp", "")
    assert "names another resource (https://victim.example/mcp)" in str(failed.value)


async def test_an_endless_event_stream_is_read_only_to_the_cap(odd_server: str) -> None:
    with pytest.raises(OAuthFailed) as failed:
        await client().needs_sign_in(odd_server + "/flood")
    assert "answered too much" in str(failed.value)


async def test_an_answer_that_trickles_is_not_waited_for_past_the_steps_time(
    odd_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oauth_module, "STEP_SECONDS", 0.5)
    with pytest.raises(OAuthFailed) as failed:
        await client().needs_sign_in(odd_server + "/trickle")
    assert "did not answer within 0.5 s" in str(failed.value)


@pytest.mark.parametrize(
    ("server", "resource", "same"),
    [
        ("https://tracker.example/mcp", "https://TRACKER.example:443/mcp", True),
        ("https://bücher.example/mcp", "https://xn--bcher-kva.example/", True),
        ("http://tracker.example:8080/mcp", "http://tracker.example/mcp", False),
        ("https://tracker.example/mcp", "https://tracker.example.evil/mcp", False),
    ],
)
def test_a_resource_is_the_servers_however_its_address_is_spelled(
    server: str, resource: str, same: bool
) -> None:
    allowed = check_resource_allowed(
        oauth_module._as_resource(server), oauth_module._as_resource(resource)
    )
    assert allowed is same

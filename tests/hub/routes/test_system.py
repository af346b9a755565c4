"""Health, metrics, the hosts list and the OpenAPI document."""

from __future__ import annotations

import logging

import pytest

from server.hub.app import all_routes
from tests.support.hub_server import PASSWORD, RunningHub


async def test_healthz(server: RunningHub) -> None:
    reply = await server.client().get("/healthz")
    assert reply.status == 200
    assert reply.body["status"] == "ok"


async def test_metrics_count_requests_in_prometheus_text(server: RunningHub) -> None:
    client = server.client()
    await client.get("/healthz")
    await client.get("/v1/me")
    reply = await client.get("/metrics")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/plain")
    text = reply.raw.decode()
    assert 'crewhost_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in text
    assert 'crewhost_http_requests_total{method="GET",route="/v1/me",status="401"} 1.0' in text
    assert "crewhost_http_request_seconds_bucket" in text


async def test_metrics_and_logs_never_hold_secrets(
    server: RunningHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    owner = await server.sign_up_owner()
    await server.client().post(
        "/v1/sessions", {"email": "owner@example.com", "password": "wrong-guess-1"}
    )
    peer = await server.sign_in("owner@example.com", client_kind="peer")
    text = (await owner.get("/metrics")).raw.decode()
    assert PASSWORD not in text
    assert peer.bearer is not None
    assert peer.bearer not in text
    assert "signed in" in caplog.text
    assert "sign-in refused" in caplog.text
    for secret in (PASSWORD, "wrong-guess-1", peer.bearer):
        assert secret not in caplog.text


async def test_the_builtin_host_is_listed_for_every_team(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    other = await server.create_owner("b@example.com", "Team B")
    other_team = await server.first_team_id(other)
    for client, team in ((owner, team_id), (other, other_team)):
        hosts = (await client.get(f"/v1/teams/{team}/hosts")).body["hosts"]
        assert [(h["id"], h["builtin"]) for h in hosts] == [(server.builtin.services.host_id, True)]
        assert hosts[0]["publicKey"] == server.builtin.services.identity.public_key


async def test_openapi_lists_every_route_with_its_models(server: RunningHub) -> None:
    reply = await server.client().get("/v1/openapi.json")
    assert reply.status == 200
    document = reply.body
    assert document["openapi"].startswith("3.")
    for route in all_routes():
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["summary"]
        if route.body is not None:
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/" + route.body.__name__)
            assert route.body.__name__ in document["components"]["schemas"]
        if route.reply is not None:
            assert str(route.status) in operation["responses"]
    team = document["paths"]["/v1/teams/{team_id}/members/{account_id}"]["patch"]
    assert team["x-least-role"] == "admin"
    sign_up = document["components"]["schemas"]["SignUp"]
    assert sign_up["additionalProperties"] is False
    assert "setupCode" in sign_up["properties"]

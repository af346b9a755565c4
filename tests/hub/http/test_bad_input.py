"""Bad input on every route: a 4xx with a stable code that names the field, and nothing written."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

import pytest

from server.hub.app import all_routes
from server.hub.http.routing import Route
from tests.hub.http.test_role_matrix import SAMPLES, World, build_world
from tests.support.hub_server import PASSWORD, ApiClient, RunningHub
from tests.support.snapshots import database_snapshot

# A body each model accepts, so that one changed field is the only fault.
VALID_BODIES: dict[str, dict[str, Any]] = {
    "SignUp": {"email": "new@example.com", "name": "New", "password": PASSWORD},
    "SignIn": {"email": "owner@example.com", "password": PASSWORD},
    "UpdateProfile": {"name": "Renamed"},
    "CreateTeam": {"name": "Another"},
    "RenameTeam": {"name": "Renamed"},
    "ChangeRole": {"role": "admin"},
    "CreateInvitation": {"role": "member", "expiresInSeconds": 3600, "maxUses": 2},
    "AcceptInvitation": {"code": "not-a-real-code"},
    "CreateEnrolment": {"name": "Lab"},
    "EnrolHost": {"code": "not-a-real-code", "publicKey": "A" * 43},
    "TicketRequest": {"fingerprint": ":".join(["AB"] * 32)},
    "ConnectRequest": {"ticket": "x.y", "sdp": "v=0"},
    "CreateAccessToken": {"name": "laptop", "hostId": "0" * 32, "expiresInDays": 7},
}
WRITE_ROUTES = [r for r in all_routes() if r.method != "GET" and not r.raw_body_types]
BODY_ROUTES = [r for r in WRITE_ROUTES if r.body is not None]


def field_aliases(route: Route) -> list[str]:
    assert route.body is not None
    return [info.alias or name for name, info in route.body.model_fields.items()]


def required_aliases(route: Route) -> list[str]:
    assert route.body is not None
    return [
        info.alias or name for name, info in route.body.model_fields.items() if info.is_required()
    ]


async def caller_and_path(world: World, route: Route) -> tuple[ApiClient, str]:
    if route.name in SAMPLES:
        path, _ = await SAMPLES[route.name][0](world)
        return world.clients["owner"], path
    path = route.path.format(session_id="0" * 32)
    if route.access == "public":
        return world.server.client(), path
    return world.clients["owner"], path


def test_every_body_model_has_a_valid_sample() -> None:
    assert {r.body.__name__ for r in BODY_ROUTES if r.body} == set(VALID_BODIES)


CASES = ["missing", "wrong_type", "unknown_field", "oversize", "content_type", "malformed", "array"]


@dataclass(frozen=True)
class BadBody:
    """One fault in a request body, and the refusal it gets."""

    status: int
    code: str
    field: str | None = None
    json_body: Any = None
    data: bytes | None = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


def bad_body(route: Route, case: str, limit: int) -> BadBody | None:
    """The request body of ``case`` for ``route``: its valid sample with one fault; None
    when the case does not apply (nothing is required, so nothing can be missing)."""
    assert route.body is not None
    valid = VALID_BODIES[route.body.__name__]
    if case == "missing":
        required = required_aliases(route)
        if not required:
            return None
        body = {k: v for k, v in valid.items() if k != required[0]}
        return BadBody(400, "invalidArgument", required[0], body)
    if case == "wrong_type":
        return BadBody(400, "invalidArgument", None, {**valid, field_aliases(route)[-1]: [1]})
    if case == "unknown_field":
        return BadBody(400, "invalidArgument", "isAdmin", {**valid, "isAdmin": True})
    if case == "oversize":
        return BadBody(413, "payloadTooLarge", None, {**valid, "padding": "x" * (limit + 1)})
    if case == "content_type":
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        return BadBody(415, "unsupportedMediaType", data=b"name=x", headers=form)
    if case == "malformed":
        json_type = {"Content-Type": "application/json"}
        return BadBody(400, "invalidArgument", data=b'{"name": ', headers=json_type)
    return BadBody(400, "invalidArgument", None, [valid])


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: r.name)
async def test_bad_bodies_are_refused_and_write_nothing(server: RunningHub, route: Route) -> None:
    """Each fault in turn against one world: a refusal writes nothing, so the next fault
    meets the same database."""
    world = await build_world(server)
    client, path = await caller_and_path(world, route)
    limit = server.hub.settings.hub.max_json_body_bytes
    before = await database_snapshot(server.hub.db)
    for case in CASES:
        bad = bad_body(route, case, limit)
        if bad is None:
            continue
        reply = await client.request(
            route.method, path, bad.json_body, data=bad.data, headers=bad.headers
        )

        assert (reply.status, reply.code) == (bad.status, bad.code), (case, reply.body)
        assert reply.body["error"]["message"], case
        if bad.field is not None:
            assert reply.body["error"]["field"] == bad.field, case
            assert bad.field in reply.body["error"]["message"], case
        assert await database_snapshot(server.hub.db) == before, case


@pytest.mark.parametrize("route", [r for r in WRITE_ROUTES if r.body is None], ids=lambda r: r.name)
async def test_routes_without_a_body_refuse_fields(server: RunningHub, route: Route) -> None:
    world = await build_world(server)
    client, path = await caller_and_path(world, route)
    before = await database_snapshot(server.hub.db)
    reply = await client.request(route.method, path, {"force": True})
    assert (reply.status, reply.code) == (400, "invalidArgument")
    assert await database_snapshot(server.hub.db) == before


async def test_unknown_routes_and_methods_get_codes(server: RunningHub) -> None:
    client = server.client()
    missing = await client.get("/v1/nothing-here")
    assert (missing.status, missing.code) == (404, "notFound")
    wrong_method = await client.request("PUT", "/v1/teams", {})
    assert (wrong_method.status, wrong_method.code) == (405, "methodNotAllowed")


async def test_malformed_ids_in_paths_are_not_found(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    for path in ("/v1/teams/../../etc", "/v1/teams/ZZZ", "/v1/teams/%00"):
        reply = await owner.get(path)
        assert reply.status == 404, path
    for member in ("not-an-id", "%00", "A" * 32):
        reply = await owner.delete(f"/v1/teams/{team_id}/members/{member}")
        assert (reply.status, reply.code) == (404, "notFound"), member


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_body_that_is_not_compressed_as_it_claims_is_refused(
    server: RunningHub, encoding: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Every write route, JSON or raw, reads its body in one place: each answers 400 the same.
    world = await build_world(server)
    before = await database_snapshot(server.hub.db)
    for route in [r for r in all_routes() if r.method != "GET"]:
        client, path = await caller_and_path(world, route)
        content_type = route.raw_body_types[0] if route.raw_body_types else "application/json"
        reply = await client.request(
            route.method,
            path,
            data=b'{"name": "plain, not compressed"}',
            headers={"Content-Type": content_type, "Content-Encoding": encoding},
        )
        assert (reply.status, reply.code) == (400, "invalidBody"), (route.name, reply.body)
        assert encoding in reply.body["error"]["message"]
    assert await database_snapshot(server.hub.db) == before
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]

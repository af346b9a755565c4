"""Every operation of ``/v1/openapi.json``, fuzzed against ``crewhost serve`` by three callers.

An owner, a member (each with a bearer token) and an anonymous caller send what
schemathesis makes of the document: no answer is a server error, and every status,
content type and body is one the document declares. Path parameters are sometimes
the real team, host, account and invitation, so the fuzzer reaches past the 404s.
The owner's and member's own session and membership are left alone (signing out
or leaving mid-run would turn the rest of the run into an anonymous one).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from server.hub.app import openapi_document
from server.hub.http.routing import CSRF_HEADER
from tests.support.fuzzing import Serving, examples, serve_in_background
from tests.support.hub_server import PASSWORD

EXAMPLES = examples(4, 200)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# What would end a signed-in caller's access mid-run, and the one stream that never ends.
KEEPS_ACCESS = [
    "DELETE /v1/sessions/current",
    "POST /v1/teams/{team_id}/leave",
    "GET /v1/events",
]

pytestmark = pytest.mark.timeout(600)


@dataclass
class World:
    serving: Serving
    owner: str
    member: str
    real: dict[str, str]


def browser(base: str) -> dict[str, str]:
    """What a browser page of the hub sends with a request that changes something."""
    return {CSRF_HEADER: "1", "Origin": base}


def _post(url: str, body: dict[str, Any], token: str | None = None) -> Any:
    base = url.split("/v1/")[0]
    headers = {"Authorization": f"Bearer {token}"} if token else browser(base)
    reply = requests.post(url, json=body, headers=headers, timeout=30)
    assert reply.status_code in (200, 201), reply.text
    return reply.json()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder: Path = tmp_path_factory.mktemp("fuzz-hub")
    with serve_in_background(folder) as serving:
        base = serving.url
        owner = _post(
            base + "/v1/accounts",
            {"email": "owner@example.com", "name": "Owner", "password": PASSWORD}
            | {"setupCode": serving.setup_code, "teamName": "Team A", "client": "peer"},
        )
        owner_token = owner["token"]
        team_id = requests.get(
            base + "/v1/teams", headers={"Authorization": f"Bearer {owner_token}"}, timeout=30
        ).json()["teams"][0]["id"]
        invitation = _post(f"{base}/v1/teams/{team_id}/invitations", {"maxUses": 5}, owner_token)
        member = _post(
            base + "/v1/accounts",
            {"email": "member@example.com", "name": "Member", "password": PASSWORD}
            | {"invitationCode": invitation["code"], "client": "peer"},
        )
        hosts = requests.get(
            f"{base}/v1/teams/{team_id}/hosts",
            headers={"Authorization": f"Bearer {owner_token}"},
            timeout=30,
        ).json()["hosts"]
        real = {
            "team_id": team_id,
            # The owner's own id: the last owner can be neither demoted nor removed.
            "account_id": owner["account"]["id"],
            "invitation_id": invitation["invitation"]["id"],
        }
        if hosts:
            real["host_id"] = hosts[0]["id"]
        REAL.update(real)
        yield World(serving, owner_token, member["token"], real)
        assert serving.process.poll() is None, "crewhost serve died during the fuzzing"


# The document ``crewhost serve`` serves at /v1/openapi.json (a test checks it is the same).
schema = schemathesis.openapi.from_dict(openapi_document())
# Filled in by ``world`` before any case is drawn.
REAL: dict[str, str] = {}


@schema.hook
def flatmap_path_parameters(_context: Any, path_parameters: dict[str, Any] | None) -> Any:
    """Each path parameter is what the fuzzer made of it, or the real one."""
    if not path_parameters:
        return st.just(path_parameters)
    return st.fixed_dictionaries(
        {
            name: st.sampled_from([value, REAL[name]]) if name in REAL else st.just(value)
            for name, value in path_parameters.items()
        }
    )


def call_as(case: Any, world: World, headers: dict[str, str]) -> None:
    case.call_and_validate(world.serving.url, headers=headers, checks=CHECKS, timeout=30)


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@schema.exclude(name=KEEPS_ACCESS).parametrize()
@FUZZ
def test_the_owner_gets_declared_answers(case: Any, world: World) -> None:
    call_as(case, world, {"Authorization": f"Bearer {world.owner}"})


@schema.exclude(name=KEEPS_ACCESS).parametrize()
@FUZZ
def test_a_member_gets_declared_answers(case: Any, world: World) -> None:
    call_as(case, world, {"Authorization": f"Bearer {world.member}"})


@schema.parametrize()
@FUZZ
def test_an_anonymous_caller_gets_declared_answers(case: Any, world: World) -> None:
    call_as(case, world, browser(world.serving.url))


def test_the_fuzzed_document_is_the_served_one(world: World) -> None:
    served = requests.get(world.serving.url + "/v1/openapi.json", timeout=30)
    assert served.json() == openapi_document()

"""providers-v1 over real peers: roles, bad input, keys that never leave, tenant isolation."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.db.tables import providers
from server.host.services.providers import MAX_CUSTOM_PROVIDERS, ProviderService
from tests.host.routes.conftest import Roles, refused
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic
from tests.support.fakes.openai import API_KEY as OPENAI_KEY
from tests.support.fakes.openai import FakeChatCompletions
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member
from tests.support.sites import pages_app, serving

ADMIN_ROUTES = (
    "providers-v1/set_key",
    "providers-v1/clear_key",
    "providers-v1/create_custom",
    "providers-v1/update",
    "providers-v1/delete_custom",
)
VIEW_FIELDS = {
    "id",
    "kind",
    "name",
    "baseUrl",
    "models",
    "defaultModel",
    "keySet",
    "usable",
    "unusableReason",
    "lastError",
    "verified",
}


# This module's team has all three roles: the shared ``roles`` fixture.
Team = Roles


@pytest.fixture
def team(roles: Roles) -> Roles:
    return roles


def admin_args(custom_id: str, name: str) -> dict[str, dict[str, Any]]:
    return {
        "providers-v1/set_key": {"provider": "openai", "key": "sk-x"},
        "providers-v1/clear_key": {"provider": "openai"},
        "providers-v1/create_custom": {"name": name, "baseUrl": "http://x.test"},
        "providers-v1/update": {"provider": custom_id, "models": ["m"]},
        "providers-v1/delete_custom": {"provider": custom_id},
    }


async def test_members_list_and_admins_change(team: Team) -> None:
    listed = (await team.member.call("providers-v1/list"))["providers"]
    assert [(p["id"], p["keySet"], p["usable"]) for p in listed] == [
        ("anthropic", False, False),
        ("openai", False, False),
        ("openrouter", False, False),
    ]
    assert set(listed[0]) == VIEW_FIELDS
    assert listed[0]["unusableReason"] == "no key is set"

    for n, admin in enumerate((team.admin, team.owner)):
        custom = await admin.call(
            "providers-v1/create_custom", {"name": f"Gateway {n}", "baseUrl": "http://gw.test"}
        )
        for route, args in admin_args(custom["id"], f"New {n}").items():
            assert await refused(team.member, route, args) == "forbidden", route
            await admin.call(route, args)
    assert len((await team.member.call("providers-v1/list"))["providers"]) == 5


async def test_set_clear_update_and_events(team: Team) -> None:
    shown = await team.admin.call(
        "providers-v1/set_key", {"provider": "anthropic", "key": "sk-ant-route-1"}
    )
    assert (shown["keySet"], shown["usable"], shown["unusableReason"]) == (True, True, None)
    overridden = await team.admin.call(
        "providers-v1/update",
        {"provider": "anthropic", "baseUrl": "http://127.0.0.1:9/v1", "defaultModel": "claude-x"},
    )
    assert (overridden["baseUrl"], overridden["defaultModel"]) == (
        "http://127.0.0.1:9/v1",
        "claude-x",
    )
    reset = await team.admin.call("providers-v1/update", {"provider": "anthropic", "baseUrl": None})
    assert (reset["baseUrl"], reset["defaultModel"]) == ("https://api.anthropic.com/v1", "claude-x")
    cleared = await team.admin.call("providers-v1/clear_key", {"provider": "anthropic"})
    assert (cleared["keySet"], cleared["usable"]) == (False, False)
    events = [await asyncio.wait_for(team.member.events.get(), 5) for _ in range(4)]
    assert events == [{"event": "providers-changed", "data": {}}] * 4


async def test_bad_input_gets_a_code_and_changes_nothing(team: Team) -> None:
    custom = await team.admin.call(
        "providers-v1/create_custom", {"name": "Gateway", "baseUrl": "http://gw.test"}
    )
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("providers-v1/set_key", {"provider": "mistral", "key": "k"}, "providerNotFound"),
        ("providers-v1/set_key", {"provider": "openai", "key": ""}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai", "key": "   "}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai", "key": "a\nb"}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai", "key": "k" * 4097}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai", "key": 5}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai"}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "", "key": "k"}, "invalidArgument"),
        ("providers-v1/set_key", {"provider": "openai", "key": "k", "x": 1}, "invalidArgument"),
        ("providers-v1/clear_key", {"provider": "custom-" + "0" * 32}, "providerNotFound"),
        ("providers-v1/create_custom", {"name": "", "baseUrl": "http://x.test"}, "invalidArgument"),
        (
            "providers-v1/create_custom",
            {"name": "n" * 61, "baseUrl": "http://x.test"},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "tab\there", "baseUrl": "http://x.test"},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "gateway", "baseUrl": "http://x.test"},
            "providerNameTaken",
        ),
        ("providers-v1/create_custom", {"name": "N", "baseUrl": "ftp://x.test"}, "invalidArgument"),
        ("providers-v1/create_custom", {"name": "N", "baseUrl": "http://"}, "invalidArgument"),
        ("providers-v1/create_custom", {"name": "N", "baseUrl": "x.test"}, "invalidArgument"),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://user:pw@x.test"},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://x.test/" + "a" * 2048},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://x.test", "models": ["m"] * 201},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://x.test", "models": ["m" * 201]},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://x.test", "defaultModel": ""},
            "invalidArgument",
        ),
        (
            "providers-v1/create_custom",
            {"name": "N", "baseUrl": "http://x.test", "key": ""},
            "invalidArgument",
        ),
        ("providers-v1/update", {"provider": "nope", "models": []}, "providerNotFound"),
        (
            "providers-v1/update",
            {"provider": "openai", "baseUrl": "javascript:x"},
            "invalidArgument",
        ),
        ("providers-v1/update", {"provider": custom["id"], "baseUrl": None}, "invalidArgument"),
        ("providers-v1/update", {"provider": "openai", "models": "m"}, "invalidArgument"),
        ("providers-v1/delete_custom", {"provider": "openai"}, "providerBuiltIn"),
        ("providers-v1/delete_custom", {"provider": "custom-" + "1" * 32}, "providerNotFound"),
    ]
    before = await team.admin.call("providers-v1/list")
    for route, args, code in cases:
        assert await refused(team.admin, route, args) == code, (route, args)
    assert await team.admin.call("providers-v1/list") == before


async def test_at_most_fifty_custom_providers(team: Team) -> None:
    for n in range(MAX_CUSTOM_PROVIDERS):
        await team.admin.call(
            "providers-v1/create_custom", {"name": f"P{n}", "baseUrl": "http://x"}
        )
    assert await refused(
        team.admin, "providers-v1/create_custom", {"name": "More", "baseUrl": "http://x"}
    ) == ("providerLimit")


async def test_a_provider_that_agents_use_is_not_deleted_under_them(team: Team) -> None:
    custom = await team.admin.call(
        "providers-v1/create_custom", {"name": "Gateway", "baseUrl": "http://x", "models": ["m"]}
    )
    agent = await team.admin.call("agents-v1/create", {"name": "Scout", "provider": custom["id"]})
    delete = {"provider": custom["id"]}
    assert await refused(team.admin, "providers-v1/delete_custom", delete) == "providerInUse"
    listed = await team.admin.call("providers-v1/list")
    assert custom["id"] in [p["id"] for p in listed["providers"]]

    await team.admin.call("agents-v1/update", {"id": agent["id"], "provider": "anthropic"})
    await team.admin.call("providers-v1/delete_custom", delete)
    listed = await team.admin.call("providers-v1/list")
    assert custom["id"] not in [p["id"] for p in listed["providers"]]


def database_bytes(folder: Path) -> bytes:
    """The SQLite database and its write-ahead log, as bytes on disk (none on PostgreSQL)."""
    return b"".join(path.read_bytes() for path in folder.glob("crewhost.db*") if path.is_file())


async def test_a_set_key_never_leaves_the_host(
    server: RunningHub, team: Team, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = ("sk-ant-NEVER-SHOWN-0123456789", "gw-NEVER-SHOWN-abcdef")
    answers = [
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": secrets[0]}),
        await team.owner.call(
            "providers-v1/create_custom",
            {"name": "Gateway", "baseUrl": "http://gw.test", "models": ["m"], "key": secrets[1]},
        ),
    ]
    answers.append(await team.member.call("providers-v1/list"))
    answers.append(
        await team.admin.call("providers-v1/update", {"provider": "anthropic", "models": ["c"]})
    )
    events = [await asyncio.wait_for(team.member.events.get(), 5) for _ in range(3)]
    seen = repr(answers) + repr(events)
    assert "provider key set" in [r.getMessage() for r in caplog.records]  # the host's logs too
    seen += "\n".join(f"{r.getMessage()} {vars(r)!r}" for r in caplog.records)
    async with server.builtin.services.db.read() as conn:
        rows = (await conn.execute(sa.select(providers))).all()
    seen += repr(rows)
    for secret in secrets:
        assert secret not in seen
        assert secret[3:-3] not in seen  # not even part of it
    stored = await asyncio.to_thread(database_bytes, tmp_path)
    for secret in secrets:
        assert secret.encode() not in stored
    assert all(p["usable"] for p in answers[2]["providers"] if p["keySet"])
    credentials = await server.builtin.services.providers.credentials(team.team_id, "anthropic")
    assert credentials.api_key == secrets[0]


async def test_another_team_sees_and_touches_nothing(
    server: RunningHub, team: Team, tmp_path: Path
) -> None:
    await team.admin.call("providers-v1/set_key", {"provider": "openai", "key": "sk-team-a"})
    custom = await team.admin.call(
        "providers-v1/create_custom", {"name": "Gateway", "baseUrl": "http://gw.test"}
    )
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    listed = (await connection.call("providers-v1/list"))["providers"]
    assert [(p["id"], p["keySet"]) for p in listed] == [
        ("anthropic", False),
        ("openai", False),
        ("openrouter", False),
    ]
    for route in ("providers-v1/update", "providers-v1/delete_custom", "providers-v1/set_key"):
        args: dict[str, Any] = {"provider": custom["id"]}
        if route.endswith("set_key"):
            args["key"] = "stolen"
        assert await refused(connection, route, args) == "providerNotFound"
    await connection.call("providers-v1/set_key", {"provider": "openai", "key": "sk-team-b"})
    services = server.builtin.services
    assert (await services.providers.credentials(team.team_id, "openai")).api_key == "sk-team-a"
    assert len((await team.member.call("providers-v1/list"))["providers"]) == 4
    await connection.close()
    await outsider.hub.close()


async def test_a_key_the_host_cannot_decrypt_is_reported_not_fatal(
    server: RunningHub, team: Team
) -> None:
    await team.admin.call("providers-v1/set_key", {"provider": "openrouter", "key": "sk-or-1"})
    services = server.builtin.services
    kept = services.providers
    # The same database on a host whose key ring lacks the key.
    services.providers = ProviderService(
        services.db, services.clock, SecretBox(KeyRing.generate()), services.peers.announce
    )
    try:
        listed = (await team.member.call("providers-v1/list"))["providers"]
        openrouter = next(p for p in listed if p["id"] == "openrouter")
        assert (openrouter["keySet"], openrouter["usable"]) == (True, False)
        assert "cannot be decrypted on this host" in openrouter["unusableReason"]
        again = await team.admin.call(
            "providers-v1/set_key", {"provider": "openrouter", "key": "sk-or-2"}
        )
        assert again["usable"]
    finally:
        services.providers = kept


async def test_a_test_asks_the_provider_once_and_keeps_its_answer_as_the_status(
    team: Team,
) -> None:
    async with FakeAnthropic() as anthropic, FakeChatCompletions(flavour="openrouter") as router:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        ref = {"provider": "anthropic"}
        keyless = await team.admin.call("providers-v1/test", ref)
        assert (keyless["ok"], keyless["outcome"]) == (False, "noKey")
        assert anthropic.requests == []  # nothing is asked without a key

        await team.admin.call("providers-v1/set_key", {**ref, "key": "sk-ant-wrong-0001"})
        wrong = await team.admin.call("providers-v1/test", ref)
        assert (wrong["ok"], wrong["outcome"]) == (False, "refused")
        assert wrong["message"] == "Anthropic refused the API key (401): invalid x-api-key"
        assert "sk-ant-wrong" not in repr(wrong)
        listed = await team.member.call("providers-v1/list")
        status = next(p for p in listed["providers"] if p["id"] == "anthropic")
        assert (status["lastError"], status["verified"]) == (wrong["message"], False)

        await team.admin.call("providers-v1/set_key", {**ref, "key": API_KEY})
        right = await team.admin.call("providers-v1/test", ref)
        assert (right["ok"], right["message"]) == (True, "Anthropic answered with this key")
        asked = anthropic.requests[-1]
        assert (asked.path, asked.headers["anthropic-version"]) == ("/v1/models", "2023-06-01")
        listed = await team.member.call("providers-v1/list")
        status = next(p for p in listed["providers"] if p["id"] == "anthropic")
        assert (status["lastError"], status["verified"]) == (None, True)

        # An OpenAI-style provider is asked at {base}/models, with Bearer auth.
        await team.admin.call(
            "providers-v1/update", {"provider": "openrouter", "baseUrl": router.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "openrouter", "key": "nope-1"})
        refused_key = await team.admin.call("providers-v1/test", {"provider": "openrouter"})
        assert refused_key["outcome"] == "refused"
        assert refused_key["message"].startswith("OpenRouter")
        assert "User not found." in refused_key["message"]
        assert router.requests[-1].path == "/api/v1/models"
        await team.admin.call("providers-v1/set_key", {"provider": "openrouter", "key": OPENAI_KEY})
        assert (await team.admin.call("providers-v1/test", {"provider": "openrouter"}))["ok"]

    # Gone: unreachable, in words.
    gone = await team.admin.call("providers-v1/test", ref)
    assert (gone["outcome"], gone["message"]) == (
        "unreachable",
        "Anthropic could not be reached (no connection)",
    )
    assert await refused(team.member, "providers-v1/test", ref) == "forbidden"
    assert await refused(team.admin, "providers-v1/test", {"provider": "nope"}) == (
        "providerNotFound"
    )


async def test_a_provider_moved_elsewhere_sends_its_key_nowhere(team: Team) -> None:
    """An admin who cannot read the key cannot point the provider at a host they control
    and have the key sent there: the move forgets it."""
    await team.admin.call(
        "providers-v1/set_key", {"provider": "openai", "key": "sk-owner-12345678"}
    )
    async with FakeChatCompletions() as elsewhere:
        moved = await team.admin.call(
            "providers-v1/update", {"provider": "openai", "baseUrl": elsewhere.base_url}
        )
        assert (moved["keySet"], moved["usable"]) == (False, False)
        checked = await team.admin.call("providers-v1/test", {"provider": "openai"})
        assert checked["outcome"] == "noKey"
        assert elsewhere.requests == []


async def test_a_test_wants_the_model_list_not_any_answer(team: Team) -> None:
    pages = {"/v1/models": "<html>a web page, not an API</html>"}
    async with serving(pages_app(pages), host="127.0.0.1") as site:
        await team.admin.call(
            "providers-v1/update", {"provider": "openai", "baseUrl": site.base + "/v1"}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "openai", "key": OPENAI_KEY})
        checked = await team.admin.call("providers-v1/test", {"provider": "openai"})
    assert (checked["ok"], checked["outcome"]) == (False, "refused")
    assert "something other than its model list" in checked["message"]

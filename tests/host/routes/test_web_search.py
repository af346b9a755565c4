"""web-search-v1 over real peers: members read, owners and admins set, keys never come back."""

from __future__ import annotations

from typing import Any

import pytest

from tests.host.routes.conftest import Team, refused


async def test_members_read_and_only_owners_and_admins_set(team: Team) -> None:
    shown = await team.member.call("web-search-v1/get")
    assert shown == {"engine": "duckduckgo", "baseUrl": None, "engineId": None, "keySet": False}
    args = {"engine": "searxng", "baseUrl": "http://searx.test:8080"}
    assert await refused(team.member, "web-search-v1/set", args) == "forbidden"
    assert (await team.admin.call("web-search-v1/set", args))["engine"] == "searxng"
    assert (await team.member.call("web-search-v1/get"))["baseUrl"] == "http://searx.test:8080"


async def test_a_key_is_set_but_never_returned(team: Team) -> None:
    key = "BSA-route-secret-value"
    shown = await team.admin.call("web-search-v1/set", {"engine": "brave", "key": key})
    assert shown["keySet"] is True
    assert key not in str(shown)
    assert key not in str(await team.member.call("web-search-v1/get"))
    kept = await team.admin.call("web-search-v1/set", {"engine": "brave", "keepKey": True})
    assert kept["keySet"] is True


@pytest.mark.parametrize(
    "args",
    [
        {"engine": "bing"},
        {"engine": "searxng"},
        {"engine": "brave"},
        {"engine": "google", "key": "k"},
        {"engine": "duckduckgo", "extra": 1},
        {"engine": "brave", "key": ""},
    ],
)
async def test_bad_input_is_refused_and_changes_nothing(team: Team, args: dict[str, Any]) -> None:
    assert await refused(team.admin, "web-search-v1/set", args) == "invalidArgument"
    assert (await team.member.call("web-search-v1/get"))["engine"] == "duckduckgo"

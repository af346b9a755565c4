"""browser-proxies-v1 over real peers: roles, bad input, passwords that never leave,
two admins editing one proxy, and tenant isolation for every route."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from peer.connection import TeamApiCallError
from server.db.tables import browser_proxies
from server.host.services.proxies import MAX_PROXIES
from tests.host.routes.conftest import Roles, refused
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member

ADMIN_ROUTES = (
    "browser-proxies-v1/list",
    "browser-proxies-v1/create",
    "browser-proxies-v1/update",
    "browser-proxies-v1/delete",
    "browser-proxies-v1/assign",
    "browser-proxies-v1/share_computer",
)
MISSING = "proxy-" + "0" * 32


# This module's team has all three roles: the shared ``roles`` fixture.
Team = Roles


@pytest.fixture
def team(roles: Roles) -> Roles:
    return roles


def route_args(proxy_id: str, profile_id: str) -> dict[str, dict[str, Any]]:
    return {
        "browser-proxies-v1/list": {},
        "browser-proxies-v1/create": {"address": "proxy.example.com:8080"},
        "browser-proxies-v1/update": {
            "id": proxy_id,
            "previousAddress": "http://proxy.example.com:8080",
            "address": "proxy.example.com:8081",
        },
        "browser-proxies-v1/delete": {"id": proxy_id, "profiles": []},
        "browser-proxies-v1/assign": {"profile": profile_id, "proxyId": proxy_id},
        "browser-proxies-v1/share_computer": {"label": "laptop"},
    }


async def test_members_see_proxy_names_only_and_every_admin_route_refuses_them(
    team: Team,
) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "u:p@px.example:3128"})
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    for route, args in route_args(proxy["id"], profile["id"]).items():
        assert route in ADMIN_ROUTES
        assert await refused(team.member, route, args) == "forbidden", route
    await team.owner.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy["id"]}
    )
    names = await team.member.call("browser-proxies-v1/profile_proxies")
    assert names == {"profiles": [{"profileId": profile["id"], "proxyName": "px.example"}]}


async def test_create_list_update_and_the_password_mask(team: Team) -> None:
    created = await team.admin.call(
        "browser-proxies-v1/create", {"address": "socks5://me:s3cr/t#@x@px.example:1080"}
    )
    assert created["address"] == "socks5://me@px.example:1080"
    assert created["password"] == "••••••••"
    assert (created["name"], created["kind"], created["status"]) == ("px.example", "address", None)
    update = {"id": created["id"], "previousAddress": created["address"]}
    kept = await team.admin.call(
        "browser-proxies-v1/update",
        {**update, "address": "socks5://me@px.example:1081", "keepPassword": True},
    )
    assert (kept["address"], kept["password"]) == ("socks5://me@px.example:1081", "••••••••")
    # Another host would be sent the saved password: it is given again, or cleared.
    elsewhere = {
        "id": created["id"],
        "previousAddress": kept["address"],
        "address": "socks5://me@other.example:1081",
        "keepPassword": True,
    }
    assert await refused(team.admin, "browser-proxies-v1/update", elsewhere) == (
        "secretNeedsReentry"
    )
    removed = await team.admin.call(
        "browser-proxies-v1/update",
        {"id": created["id"], "previousAddress": kept["address"], "address": kept["address"]},
    )
    assert removed["password"] is None
    listed = await team.owner.call("browser-proxies-v1/list")
    assert listed["proxies"] == [removed]


async def test_names_tell_proxies_with_one_host_apart(team: Team) -> None:
    for address in ("a@px.example:1", "b@px.example:1", "other.example:2"):
        await team.admin.call("browser-proxies-v1/create", {"address": address})
    names = [p["name"] for p in (await team.admin.call("browser-proxies-v1/list"))["proxies"]]
    assert names == ["a@px.example:1", "b@px.example:1", "other.example"]


async def test_bad_input_gets_a_code_and_changes_nothing(team: Team) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "px.example:8080"})
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("browser-proxies-v1/create", {"address": "ftp://x:1"}, "browserProxySchemeUnsupported"),
        ("browser-proxies-v1/create", {"address": "px.example"}, "browserProxyPortMissing"),
        ("browser-proxies-v1/create", {"address": "http://[::1:80"}, "browserProxyHostInvalid"),
        ("browser-proxies-v1/create", {"address": "h:99999"}, "browserProxyPortInvalid"),
        ("browser-proxies-v1/create", {"address": ""}, "invalidArgument"),
        ("browser-proxies-v1/create", {"address": "h:1", "extra": 1}, "invalidArgument"),
        (
            "browser-proxies-v1/update",
            {"id": proxy["id"], "previousAddress": proxy["address"], "address": "bad"},
            "browserProxyPortMissing",
        ),
        (
            "browser-proxies-v1/update",
            {"id": MISSING, "previousAddress": "x", "address": "h:1"},
            "browserProxyNotFound",
        ),
        ("browser-proxies-v1/delete", {"id": MISSING, "profiles": []}, "browserProxyNotFound"),
        ("browser-proxies-v1/delete", {"id": "nope", "profiles": []}, "invalidArgument"),
        (
            "browser-proxies-v1/assign",
            {"profile": "shared", "proxyId": proxy["id"]},
            "browserProxyAutomaticOnly",
        ),
        (
            "browser-proxies-v1/assign",
            {"profile": "agent", "proxyId": proxy["id"]},
            "browserProxyAutomaticOnly",
        ),
        (
            "browser-proxies-v1/assign",
            {"profile": "profile-" + "1" * 32, "proxyId": proxy["id"]},
            "browserProfileNotFound",
        ),
        (
            "browser-proxies-v1/assign",
            {"profile": profile["id"], "proxyId": MISSING},
            "browserProxyNotFound",
        ),
    ]
    before = await team.admin.call("browser-proxies-v1/list")
    for route, args, code in cases:
        assert await refused(team.admin, route, args) == code, (route, args)
    assert await team.admin.call("browser-proxies-v1/list") == before


async def test_two_admins_editing_one_proxy(team: Team) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "px.example:8080"})
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    # Both open the edit form; the owner saves first.
    await team.owner.call(
        "browser-proxies-v1/update",
        {"id": proxy["id"], "previousAddress": proxy["address"], "address": "px.example:9090"},
    )
    stale = {"id": proxy["id"], "previousAddress": proxy["address"], "address": "px.example:1"}
    assert await refused(team.admin, "browser-proxies-v1/update", stale) == "browserProxyChanged"
    # The admin's delete question showed no profiles; the owner assigns one meanwhile.
    await team.owner.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy["id"]}
    )
    delete = {"id": proxy["id"], "profiles": []}
    assert await refused(team.admin, "browser-proxies-v1/delete", delete) == "browserProxyChanged"
    listed = (await team.admin.call("browser-proxies-v1/list"))["proxies"]
    assert listed[0]["profiles"] == [profile["id"]]
    await team.admin.call(
        "browser-proxies-v1/delete", {"id": proxy["id"], "profiles": [profile["id"]]}
    )
    assert (await team.admin.call("browser-proxies-v1/list"))["proxies"] == []
    # The profile is Automatic again: no proxy name for it.
    assert (await team.member.call("browser-proxies-v1/profile_proxies"))["profiles"] == []


async def test_every_change_is_announced_and_a_save_that_changes_nothing_is_not(
    team: Team,
) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "u:p@px.example:1"})
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    await team.admin.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy["id"]}
    )
    unchanged = await team.admin.call(
        "browser-proxies-v1/update",
        {
            "id": proxy["id"],
            "previousAddress": proxy["address"],
            "address": proxy["address"],
            "keepPassword": True,
        },
    )
    assert unchanged == {**proxy, "profiles": [profile["id"]]}
    await team.admin.call("browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": None})
    events = [await asyncio.wait_for(team.member.events.get(), 5) for _ in range(4)]
    # create proxy, create profile, assign, assign back: the unchanged save said nothing.
    assert events == [{"event": "browser-profiles-changed", "data": {}}] * 4
    assert team.member.events.empty()


async def test_at_most_fifty_proxies(team: Team) -> None:
    for n in range(MAX_PROXIES):
        await team.admin.call("browser-proxies-v1/create", {"address": f"p{n}.example:1"})
    assert (
        await refused(team.admin, "browser-proxies-v1/create", {"address": "more.example:1"})
        == "browserProxyLimit"
    )
    assert (
        await refused(team.admin, "browser-proxies-v1/share_computer", {"label": "laptop"})
        == "browserProxyLimit"
    )


def database_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in folder.glob("crewhost.db*") if path.is_file())


async def test_a_password_never_leaves_the_host(
    server: RunningHub, team: Team, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "NEVER-SHOWN-pa/ss#w@rd-0123"
    created = await team.admin.call(
        "browser-proxies-v1/create", {"address": f"http://me:{secret}@px.example:3128"}
    )
    answers = [created, await team.admin.call("browser-proxies-v1/list")]
    answers.append(await team.member.call("browser-proxies-v1/profile_proxies"))
    seen = repr(answers) + "\n".join(f"{r.getMessage()} {vars(r)!r}" for r in caplog.records)
    async with server.builtin.services.db.read() as conn:
        seen += repr((await conn.execute(sa.select(browser_proxies))).all())
    assert secret not in seen
    assert secret[3:-3] not in seen
    assert secret.encode() not in await asyncio.to_thread(database_bytes, tmp_path)
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    await team.admin.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": created["id"]}
    )
    plan = await server.builtin.services.proxies.plan_for(team.team_id, profile["id"])
    assert plan is not None
    assert plan.address is not None
    assert plan.address.password == secret
    assert secret not in repr(plan)


async def test_another_team_sees_and_touches_nothing(
    server: RunningHub, team: Team, tmp_path: Path
) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "px.example:8080"})
    profile = await team.admin.call("browser-profiles-v1/create", {"name": "Shop"})
    await team.admin.call(
        "browser-proxies-v1/assign", {"profile": profile["id"], "proxyId": proxy["id"]}
    )
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    assert (await connection.call("browser-proxies-v1/list"))["proxies"] == []
    assert (await connection.call("browser-proxies-v1/profile_proxies"))["profiles"] == []
    own_profile = await connection.call("browser-profiles-v1/create", {"name": "Mine"})
    attempts: list[tuple[str, dict[str, Any], str]] = [
        (
            "browser-proxies-v1/update",
            {"id": proxy["id"], "previousAddress": proxy["address"], "address": "evil.example:1"},
            "browserProxyNotFound",
        ),
        ("browser-proxies-v1/delete", {"id": proxy["id"], "profiles": []}, "browserProxyNotFound"),
        (
            "browser-proxies-v1/delete",
            {"id": proxy["id"], "profiles": [profile["id"]]},
            "browserProxyNotFound",
        ),
        (
            "browser-proxies-v1/assign",
            {"profile": own_profile["id"], "proxyId": proxy["id"]},
            "browserProxyNotFound",
        ),
        (
            "browser-proxies-v1/assign",
            {"profile": profile["id"], "proxyId": None},
            "browserProfileNotFound",
        ),
    ]
    for route, args, code in attempts:
        assert await refused(connection, route, args) == code, route
    await connection.call("browser-proxies-v1/share_computer", {"label": "b's laptop"})
    listed = (await team.admin.call("browser-proxies-v1/list"))["proxies"]
    assert [(p["id"], p["address"], p["profiles"]) for p in listed] == [
        (proxy["id"], proxy["address"], [profile["id"]])
    ]
    await connection.close()
    await outsider.hub.close()


async def test_share_computer_records_one_row_per_member(team: Team) -> None:
    first = await team.admin.call("browser-proxies-v1/share_computer", {"label": "laptop"})
    again = await team.admin.call("browser-proxies-v1/share_computer", {"label": "laptop"})
    assert first["id"] == again["id"]
    assert (first["kind"], first["name"], first["address"]) == (
        "computer",
        "computer: laptop",
        None,
    )
    assert first["status"] == "offline"
    owner_computer = await team.owner.call("browser-proxies-v1/share_computer", {})
    assert owner_computer["id"] != first["id"]
    edit = {"id": first["id"], "previousAddress": "x", "address": "h:1"}
    assert (
        await refused(team.admin, "browser-proxies-v1/update", edit) == "browserProxyComputerFixed"
    )


# Proxy addresses that would let a team's browser read the host itself or its cloud's
# metadata service, and the block each refusal names.
NON_PUBLIC_PROXIES = (
    ("http://127.0.0.1:8080", "loopback"),
    ("http://[::1]:8080", "loopback"),
    ("localhost:8080", "loopback"),
    ("http://app.localhost:8080", "loopback"),
    ("socks5://127.0.0.1:1080", "loopback"),
    ("socks5://me:pw@127.0.0.1:1080", "loopback"),
    ("http://[::ffff:127.0.0.1]:3128", "loopback"),
    ("http://169.254.169.254:80", "cloud metadata"),
    ("http://0.0.0.0:3128", "this network"),
    ("http://10.1.2.3:3128", "private network"),
    ("http://100.64.0.1:3128", "shared address space"),
    ("https://[fd00::1]:443", "unique local"),
)


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_proxy_at_a_non_public_address_is_refused_at_create_and_update(
    team: Team,
) -> None:
    proxy = await team.admin.call("browser-proxies-v1/create", {"address": "203.0.114.9:8080"})
    before = await team.admin.call("browser-proxies-v1/list")
    for address, block in NON_PUBLIC_PROXIES:
        for route, args in (
            ("browser-proxies-v1/create", {"address": address}),
            (
                "browser-proxies-v1/update",
                {"id": proxy["id"], "previousAddress": proxy["address"], "address": address},
            ),
        ):
            with pytest.raises(TeamApiCallError) as caught:
                await team.admin.call(route, args)
            assert caught.value.code == "proxyAddressRefused", (route, address)
            assert block in caught.value.message, (route, address, caught.value.message)
    assert await team.admin.call("browser-proxies-v1/list") == before

"""browser-control-v1 over a real peer, and the agent tab rules of profile changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from peer.connection import HostConnection, TeamApiCallError
from server.common.tokens import new_id
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.services.profiles import duplicate_choice
from server.host.storage.agents import AgentBrowserChoice, AgentRepository
from tests.support.hub_server import RunningHub
from tests.support.peers import Member, peer_member, wait_linked
from tests.support.ports import closed_port
from tests.support.sites import Site

pytestmark = pytest.mark.sqlite_only


@dataclass
class Room:
    team_id: str
    member: HostConnection
    outsider: HostConnection


@pytest.fixture
async def room(server: RunningHub, tmp_path: Path) -> AsyncIterator[Room]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", "member")
    await server.create_owner("b@example.com", "Team B")
    host_id = await wait_linked(server)
    members: list[Member] = [
        await peer_member(server, email, tmp_path)
        for email in ("member@example.com", "b@example.com")
    ]
    member, outsider = [await m.connect(host_id) for m in members]
    yield Room(team_id, member, outsider)
    for connection in (member, outsider):
        await connection.close()
    for m in members:
        await m.hub.close()


async def code_of(connection: HostConnection, route: str, args: Mapping[str, object]) -> str:
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call(route, dict(args))
    return caught.value.code


async def events_until(connection: HostConnection, name: str) -> set[str]:
    """Reads events until ``name`` comes; answers the names seen before it."""
    seen: set[str] = set()
    while (event := (await asyncio.wait_for(connection.events.get(), 15))["event"]) != name:
        seen.add(event)
    return seen


async def listed_when(
    connection: HostConnection, check: Callable[[list[dict[str, Any]]], bool]
) -> list[dict[str, Any]]:
    """The tab list once ``check`` holds, read again at each ``browser-tabs-changed``."""
    tabs: list[dict[str, Any]]
    while not check(tabs := (await connection.call("browser-control-v1/list_tabs"))["tabs"]):
        await events_until(connection, "browser-tabs-changed")
    return tabs


async def test_a_typed_address_loads_as_an_address_bar_would_and_a_failed_load_keeps_it(
    server: RunningHub, room: Room, site: Site
) -> None:
    opened = await room.member.call(
        "browser-control-v1/new_tab", {"url": f"127.0.0.1:{site.port}/child"}
    )
    assert (opened["url"], opened["loadError"]) == (site.url("/child"), None)
    # The title is read once the page loaded, and announced.
    await listed_when(room.member, lambda tabs: [t["title"] for t in tabs] == ["child"])

    dead = f"127.0.0.1:{closed_port()}/page"
    went = await room.member.call(
        "browser-control-v1/navigate", {"tabId": opened["id"], "url": dead}
    )
    assert went["url"] == f"http://{dead}"
    assert str(went["loadError"]).startswith("ERR_"), went
    # The tab shows Chromium's error page, and lists the address that failed, not chrome-error.
    # A navigation announces its address and its title apart: wait for both to change.
    await listed_when(
        room.member,
        lambda tabs: (tabs[0]["url"], tabs[0]["title"] != "child") == (f"http://{dead}", True),
    )
    engine = await server.builtin.services.browser.engine()
    assert engine.get_tab(room.team_id, opened["id"]).url == f"http://{dead}"
    assert await code_of(
        room.member, "browser-control-v1/navigate", {"tabId": opened["id"], "url": "tel:123"}
    ) == ("invalidArgument")


async def test_a_new_tab_opens_in_the_profile_a_member_chooses(
    server: RunningHub, room: Room, site: Site
) -> None:
    profile = await server.builtin.services.profiles.create_profile(room.team_id, "Work")
    opened = await room.member.call(
        "browser-control-v1/new_tab", {"url": site.url("/"), "profileId": profile.id}
    )
    assert (opened["partitionKind"], opened["partitionLabel"], opened["hue"]) == (
        "profile",
        "Work",
        profile.hue,
    )
    engine = await server.builtin.services.browser.engine()
    assert engine.get_tab(room.team_id, opened["id"]).partition.key == profile.id
    missing = {"url": "about:blank", "profileId": "profile-" + "0" * 32}
    assert await code_of(room.member, "browser-control-v1/new_tab", missing) == (
        "browserProfileNotFound"
    )
    # Another team's profile is as unknown as a missing one.
    assert await code_of(
        room.outsider, "browser-control-v1/new_tab", {"profileId": profile.id}
    ) == ("browserProfileNotFound")


async def test_a_held_and_a_closed_tab_are_announced(
    server: RunningHub, room: Room, site: Site
) -> None:
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(room.team_id, Partition.shared(), url=site.url("/"))
    await events_until(room.member, "browser-tabs-changed")
    engine.take_control(room.team_id, tab.id, "someone")
    await events_until(room.member, "browser-tabs-changed")
    assert [
        t["heldByPerson"] for t in (await room.member.call("browser-control-v1/list_tabs"))["tabs"]
    ] == [True]
    engine.release(room.team_id, tab.id, "someone")
    await events_until(room.member, "browser-tabs-changed")
    await engine.close_tab(room.team_id, tab.id, Caller.person("someone"))
    await events_until(room.member, "browser-tabs-changed")
    assert (await room.member.call("browser-control-v1/list_tabs"))["tabs"] == []


async def test_members_see_and_steer_the_teams_tabs(
    server: RunningHub, room: Room, site: Site
) -> None:
    engine = await server.builtin.services.browser.engine()
    profile = await server.builtin.services.profiles.create_profile(room.team_id, "Work")
    agent_tab = await engine.open_tab(
        room.team_id, Partition.profile(profile.id), url=site.url("/"), owner_agent_id="a" * 32
    )
    await engine.open_tab(room.team_id, Partition.private(), url=site.url("/"))

    listed = (await room.member.call("browser-control-v1/list_tabs"))["tabs"]
    assert [(t["id"], t["partitionLabel"], t["hue"], t["ownerAgentId"]) for t in listed] == [
        (agent_tab.id, "Work", profile.hue, "a" * 32)
    ]  # the private sign-in tab is nobody's to watch

    # A tab an agent opened is announced like one a member opened.
    assert await events_until(room.member, "browser-tabs-changed") >= {"browser-profiles-changed"}
    opened = await room.member.call("browser-control-v1/new_tab", {"url": site.url("/child")})
    assert (opened["partitionLabel"], opened["hue"]) == ("Shared", None)
    await events_until(room.member, "browser-tabs-changed")
    went = await room.member.call(
        "browser-control-v1/navigate", {"tabId": opened["id"], "url": site.url("/cookies")}
    )
    assert went == {"tabId": opened["id"], "url": site.url("/cookies"), "loadError": None}
    back = await room.member.call("browser-control-v1/back", {"tabId": opened["id"]})
    assert back["url"] == site.url("/child")
    forward = await room.member.call("browser-control-v1/forward", {"tabId": opened["id"]})
    assert forward["url"] == site.url("/cookies")
    reloaded = await room.member.call("browser-control-v1/reload", {"tabId": opened["id"]})
    assert reloaded["url"] == site.url("/cookies")
    assert await room.member.call("browser-control-v1/close_tab", {"tabId": opened["id"]}) == {
        "closed": True
    }
    assert [t.id for t in engine.list_tabs(room.team_id) if t.partition.kind != "private"] == [
        agent_tab.id
    ]


async def test_refusals(server: RunningHub, room: Room, site: Site) -> None:
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(room.team_id, Partition.shared(), url=site.url("/"))
    for url in ("javascript:alert(1)", "file:///etc/passwd", "chrome://settings", "mailto:a@b.c"):
        assert await code_of(room.member, "browser-control-v1/new_tab", {"url": url}) == (
            "invalidArgument"
        ), url
        assert await code_of(
            room.member, "browser-control-v1/navigate", {"tabId": tab.id, "url": url}
        ) == ("invalidArgument"), url
    assert await code_of(room.outsider, "browser-control-v1/close_tab", {"tabId": tab.id}) == (
        "tabNotFound"
    )
    assert (await room.outsider.call("browser-control-v1/list_tabs"))["tabs"] == []
    engine.take_control(room.team_id, tab.id, "someone-else")
    assert await code_of(room.member, "browser-control-v1/reload", {"tabId": tab.id}) == "tabHeld"
    assert (
        await code_of(room.member, "browser-control-v1/close_tab", {"tabId": tab.id}) == "tabHeld"
    )
    bad = {"tabId": "../../etc"}
    assert await code_of(room.member, "browser-control-v1/back", bad) == "invalidArgument"


async def test_a_new_profile_closes_only_that_agents_tabs_and_deletion_clears_its_own(
    server: RunningHub, room: Room, site: Site
) -> None:
    services = server.builtin.services
    engine = await services.browser.engine()
    mover, stayer = new_id(), new_id()
    async with services.db.write() as conn:
        for agent_id in (mover, stayer):
            choice = AgentBrowserChoice(agent_id, room.team_id, "A", False, None)
            await AgentRepository().add_agent(conn, choice, 1.0)
    moving = await engine.open_tab(
        room.team_id, Partition.shared(), url=site.url("/"), owner_agent_id=mover
    )
    staying = await engine.open_tab(
        room.team_id, Partition.shared(), url=site.url("/"), owner_agent_id=stayer
    )
    await services.profiles.assign(room.team_id, mover, "agent")
    assert [t.id for t in engine.list_tabs(room.team_id)] == [staying.id]
    del moving

    own = await engine.open_tab(
        room.team_id,
        Partition.for_agent(mover),
        url=site.url("/set-cookie?v=mine"),
        owner_agent_id=mover,
    )
    folder = engine.team_folder(room.team_id) / Partition.for_agent(mover).folder
    assert own.id in [t.id for t in engine.list_tabs(room.team_id)]
    await services.profiles.agent_deleted(room.team_id, mover)
    assert [t.id for t in engine.list_tabs(room.team_id)] == [staying.id]
    assert not folder.exists()


def test_duplicates_keep_a_named_profile_and_imports_start_shared() -> None:
    named = AgentBrowserChoice("a" * 32, "t" * 32, "A", True, "profile-" + "1" * 32)
    own = AgentBrowserChoice("b" * 32, "t" * 32, "B", True, None)
    assert duplicate_choice(named) == (True, named.browser_profile_id)
    assert duplicate_choice(own) == (False, None)
    assert duplicate_choice(named, imported=True) == (False, None)


async def test_a_private_sign_in_is_seen_and_steered_by_the_member_who_opened_it_only(
    server: RunningHub, room: Room, site: Site, tmp_path: Path
) -> None:
    owner = await server.sign_in("owner@example.com")
    await server.invite(owner, room.team_id, "mate@example.com", "member")
    host_id = await wait_linked(server)
    mate_member = await peer_member(server, "mate@example.com", tmp_path / "mate")
    mate = await mate_member.connect(host_id)
    try:
        opened = await room.member.call(
            "browser-control-v1/new_tab", {"url": site.url("/set-cookie?v=p"), "private": True}
        )
        assert opened["partitionLabel"] == "Private"
        mine = (await room.member.call("browser-control-v1/list_tabs"))["tabs"]
        assert [t["id"] for t in mine] == [opened["id"]]
        assert (await mate.call("browser-control-v1/list_tabs"))["tabs"] == []
        tab_ref = {"tabId": opened["id"]}
        for route in ("navigate", "reload", "close_tab", "request_control"):
            args = {**tab_ref, "url": site.url("/")} if route == "navigate" else tab_ref
            assert await code_of(mate, f"browser-control-v1/{route}", args) == "tabNotFound"
        # Its storage is its own: the shared profile never saw the cookie.
        shared = await room.member.call("browser-control-v1/new_tab", {"url": site.url("/cookies")})
        engine = await server.builtin.services.browser.engine()
        page = engine.get_tab(room.team_id, shared["id"]).page
        assert page is not None
        assert "v=p" not in await page.content()
        assert await code_of(
            room.member,
            "browser-control-v1/new_tab",
            {"private": True, "profileId": "0" * 32},
        ) == ("invalidArgument")
        reloaded = await room.member.call("browser-control-v1/reload", tab_ref)
        assert reloaded["url"] == site.url("/set-cookie?v=p")
        assert await room.member.call("browser-control-v1/close_tab", tab_ref) == {"closed": True}
        await room.member.call("browser-control-v1/close_tab", {"tabId": shared["id"]})
    finally:
        await mate.close()
        await mate_member.hub.close()


async def test_the_active_tab_an_agent_chose_comes_first_for_members(
    server: RunningHub, room: Room, site: Site
) -> None:
    engine = await server.builtin.services.browser.engine()
    first = await engine.open_tab(room.team_id, Partition.shared(), url=site.url("/"))
    second = await engine.open_tab(room.team_id, Partition.shared(), url=site.url("/child"))
    listed = (await room.member.call("browser-control-v1/list_tabs"))["tabs"]
    assert [t["id"] for t in listed] == [first.id, second.id]
    await events_until(room.member, "browser-tabs-changed")
    engine.activate_tab(room.team_id, second.id)
    await events_until(room.member, "browser-tabs-changed")
    listed = (await room.member.call("browser-control-v1/list_tabs"))["tabs"]
    assert [t["id"] for t in listed] == [second.id, first.id]

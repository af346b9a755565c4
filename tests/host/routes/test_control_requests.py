"""Asking for control of a held tab: the holder hears who asks, and grants or dismisses.

Two members of a team connect to the built-in host over real WebRTC and watch one tab in
real Chromium; the host's clock is the test's, so a request lapses when the test says.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from peer.browser_control import BrowserControl
from peer.connection import HostConnection, TeamApiCallError
from peer.live_view import LiveView, open_view
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from tests.host.routes.conftest import Team, refused
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import RunningHub
from tests.support.waiting import eventually

REQUESTED = "browser-control-requested"
RESOLVED = "browser-control-request-resolved"


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Control is about tabs and views, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


@dataclass
class HeldTab:
    """The owner holds a tab in a live view; the member watches it in another."""

    engine: BrowserEngine
    tab_id: str
    holder_id: str
    asker_id: str
    holder_view: LiveView
    asker_view: LiveView


@pytest.fixture
async def held(server: RunningHub, team: Team) -> AsyncIterator[HeldTab]:
    engine = await server.builtin.services.browser.engine()
    tab = await team.admin.call("browser-control-v1/new_tab", {})
    holder_id = (await team.admin.call("host-v1/whoami"))["accountId"]
    asker_id = (await team.member.call("host-v1/whoami"))["accountId"]
    holder_view = await open_view(team.admin, tab["id"])
    asker_view = await open_view(team.member, tab["id"])
    await holder_view.take()
    yield HeldTab(engine, tab["id"], holder_id, asker_id, holder_view, asker_view)
    holder_view.close()
    asker_view.close()


async def next_event(connection: HostConnection, *names: str) -> dict[str, Any]:
    """The data of the next event named one of ``names`` (others are skipped)."""
    async with asyncio.timeout(15):
        while (event := await connection.events.get())["event"] not in names:
            pass
    data: dict[str, Any] = event["data"]
    return {"event": event["event"], **data}


async def test_the_holder_hears_who_asks_and_a_grant_passes_control_to_the_asker(
    team: Team, held: HeldTab
) -> None:
    listed = (await team.member.call("browser-control-v1/list_tabs"))["tabs"]
    assert [(t["heldByPerson"], t["heldBy"]) for t in listed] == [(True, held.holder_id)]

    asked = await team.member.call("browser-control-v1/request_control", {"tabId": held.tab_id})
    assert (asked["tabId"], asked["accountId"], asked["holder"], asked["expiresIn"]) == (
        held.tab_id,
        held.asker_id,
        held.holder_id,
        pytest.approx(60),
    )
    heard = await next_event(team.admin, REQUESTED)
    assert (heard["id"], heard["tabId"], heard["accountId"], heard["expiresIn"]) == (
        asked["id"],
        held.tab_id,
        held.asker_id,
        60,
    )
    # One request per asker and tab: asking again answers the waiting one.
    again = await team.member.call("browser-control-v1/request_control", {"tabId": held.tab_id})
    assert again["id"] == asked["id"]
    # Only the holder answers.
    grant = {"requestId": asked["id"]}
    assert await refused(team.member, "browser-control-v1/grant_control", grant) == "tabNotHeld"

    await team.admin.call("browser-control-v1/grant_control", grant)
    assert (await held.holder_view.expect("held"))["byYou"] is False
    assert (await held.asker_view.expect("held"))["byYou"] is True
    assert held.engine.get_tab(team.team_id, held.tab_id).held_by == held.asker_id
    for connection in (team.admin, team.member):
        resolved = await next_event(connection, RESOLVED)
        assert (resolved["id"], resolved["outcome"]) == (asked["id"], "granted")
    # The request was the asker's only one, and it is answered.
    assert (
        await refused(team.admin, "browser-control-v1/grant_control", grant)
        == "controlRequestNotFound"
    )
    # The former holder is a watcher now: its keys are refused.
    held.holder_view.key("down", "a", text="a")
    assert (await held.holder_view.expect("error"))["code"] == "notHolding"
    # The new holder's view holds the tab: closing it gives the tab back.
    held.asker_view.close()
    await eventually(lambda: held.engine.get_tab(team.team_id, held.tab_id).held_by is None)


async def test_a_grant_through_the_team_api_ends_holding_in_every_view_of_the_holder(
    team: Team, held: HeldTab
) -> None:
    second_holder_view = await open_view(team.admin, held.tab_id)
    await second_holder_view.take()  # the holder holds the tab through both views
    older_asker_view = await open_view(team.member, held.tab_id)
    newest_asker_view = await open_view(team.member, held.tab_id)
    asked = await team.member.call("browser-control-v1/request_control", {"tabId": held.tab_id})
    await team.admin.call("browser-control-v1/grant_control", {"requestId": asked["id"]})

    assert (await newest_asker_view.expect("held"))["byYou"] is True
    for former in (held.holder_view, second_holder_view):
        assert (await former.expect("held"))["byYou"] is False
        former.key("down", "a", text="a")
        assert (await former.expect("error"))["code"] == "notHolding"
    # Control went to the asker's newest view only.
    older_asker_view.key("down", "a", text="a")
    assert (await older_asker_view.expect("error"))["code"] == "notHolding"
    for view in (second_holder_view, older_asker_view, newest_asker_view):
        view.close()


async def test_requests_are_refused_with_a_code_saying_why(
    server: RunningHub, team: Team, held: HeldTab
) -> None:
    ask = "browser-control-v1/request_control"
    assert await refused(team.admin, ask, {"tabId": held.tab_id}) == "controlAlreadyYours"
    free = await team.admin.call("browser-control-v1/new_tab", {})
    assert await refused(team.member, ask, {"tabId": free["id"]}) == "tabFree"
    private = await held.engine.open_tab(team.team_id, Partition.private())
    held.engine.take_control(team.team_id, private.id, held.holder_id)
    assert await refused(team.member, ask, {"tabId": private.id}) == "tabNotFound"
    unknown = {"requestId": "0" * 32}
    for route in ("grant_control", "dismiss_control_request"):
        code = await refused(team.admin, f"browser-control-v1/{route}", unknown)
        assert code == "controlRequestNotFound"

    # Control goes only to a view: an asker who stopped watching cannot be given it.
    asked = await team.member.call(ask, {"tabId": held.tab_id})
    held.asker_view.close()
    live = server.builtin.services.live
    await eventually(lambda: len(live.sessions(team.team_id, held.tab_id)) == 1)
    grant = {"requestId": asked["id"]}
    code = await refused(team.admin, "browser-control-v1/grant_control", grant)
    assert code == "askerNotWatching"
    assert held.engine.get_tab(team.team_id, held.tab_id).held_by == held.holder_id


async def test_a_request_lapses_after_a_minute_and_another_may_follow(
    team: Team, held: HeldTab, clock: FakeClock
) -> None:
    ask = {"tabId": held.tab_id}
    asked = await team.member.call("browser-control-v1/request_control", ask)
    clock.advance(61)
    grant = {"requestId": asked["id"]}
    code = await refused(team.admin, "browser-control-v1/grant_control", grant)
    assert code == "controlRequestNotFound"
    for connection in (team.admin, team.member):
        resolved = await next_event(connection, RESOLVED)
        assert (resolved["id"], resolved["outcome"]) == (asked["id"], "expired")
    fresh = await team.member.call("browser-control-v1/request_control", ask)
    assert fresh["id"] != asked["id"]
    assert held.engine.get_tab(team.team_id, held.tab_id).held_by == held.holder_id


async def test_a_dismissed_request_and_one_whose_holder_let_go_end_for_both(
    team: Team, held: HeldTab
) -> None:
    ask = {"tabId": held.tab_id}
    asked = await team.member.call("browser-control-v1/request_control", ask)
    await team.admin.call("browser-control-v1/dismiss_control_request", {"requestId": asked["id"]})
    resolved = await next_event(team.member, RESOLVED)
    assert (resolved["id"], resolved["outcome"]) == (asked["id"], "dismissed")
    assert held.engine.get_tab(team.team_id, held.tab_id).held_by == held.holder_id

    again = await team.member.call("browser-control-v1/request_control", ask)
    assert again["id"] != asked["id"]
    await held.holder_view.release()
    resolved = await next_event(team.member, RESOLVED)
    assert (resolved["id"], resolved["outcome"]) == (again["id"], "cancelled")


async def test_the_asker_withdraws_a_request_through_the_peer_library(
    team: Team, held: HeldTab
) -> None:
    asker, holder = BrowserControl(team.member), BrowserControl(team.admin)
    asked = await asker.request_control(held.tab_id)
    assert (await next_event(team.admin, REQUESTED))["id"] == asked["id"]
    with pytest.raises(TeamApiCallError) as caught:
        await holder.withdraw_control_request(asked["id"])
    assert caught.value.code == "notAsker"

    await asker.withdraw_control_request(asked["id"])
    for connection in (team.admin, team.member):
        resolved = await next_event(connection, RESOLVED)
        assert (resolved["id"], resolved["outcome"]) == (asked["id"], "withdrawn")
    # Withdrawn is over: neither side can answer or withdraw it again.
    for call in (holder.grant_control, holder.dismiss_control_request):
        with pytest.raises(TeamApiCallError) as caught:
            await call(asked["id"])
        assert caught.value.code == "controlRequestNotFound"
    with pytest.raises(TeamApiCallError) as caught:
        await asker.withdraw_control_request(asked["id"])
    assert caught.value.code == "controlRequestNotFound"
    assert held.engine.get_tab(team.team_id, held.tab_id).held_by == held.holder_id
    # And the helpers reach the same tab list the routes do.
    assert [t["id"] for t in await asker.list_tabs()] == [held.tab_id]

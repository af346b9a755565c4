"""Learn from my browsing over a real peer: a member holds an agent's tab in real Chromium
and the host records page loads and presses on controls (role and name read in the
isolated world), never a field's value, a key, a secret field or a press outside a control;
a tab no agent owns, or a team that did not turn it on, records nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from peer.connection import HostConnection, TeamApiCallError
from peer.live_view import Frame, LiveView, open_view
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.container import HostServices
from server.host.live.steps import Step
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

AGENT = "agent-learning"
TYPED = "alice@example.com"
FORM = (
    "<!doctype html><title>Sign in</title><style>body{margin:0;font:16px sans-serif}"
    "*{display:block;margin:8px;width:260px;height:32px}</style>"
    "<button id=save>Save</button>"
    "<label for=email style='height:20px'>Email</label><input id=email>"
    "<input id=pw type=password aria-label='Account password'>"
    "<input id=otp autocomplete=one-time-code aria-label='Sign-in code'>"
    "<input id=card autocomplete=cc-number aria-label='Card number'>"
    "<p id=plain>Just some words</p>"
    "<a id=next href='/orders/48213?session=abc#top'>Next</a>"
    "<button id=done onclick=\"document.body.dataset.done='1'\">Done</button>"
)
ORDER = "<!doctype html><title>Order 48213</title><p>Order details</p>"


@dataclass
class Holding:
    services: HostServices
    team_id: str
    engine: BrowserEngine
    site: Site
    owner: HostConnection
    member: HostConnection
    steps: list[Step]


@pytest.fixture
async def holding(server: RunningHub, tmp_path: Path) -> AsyncIterator[Holding]:
    async def order(_request: web.Request) -> web.Response:
        return web.Response(text=ORDER, content_type="text/html")

    owner_account = await server.sign_up_owner()
    team_id = await server.first_team_id(owner_account)
    await server.invite(owner_account, team_id, "member@example.com", "member")
    host_id = await wait_linked(server)
    services = server.builtin.services
    seen: list[Step] = []

    async def listen(step: Step) -> None:
        seen.append(step)

    services.live.steps.listen(listen)
    async with serving(pages_app({"/form": FORM}, routes={"/orders/{id}": order})) as site:
        members = [
            await peer_member(server, email, tmp_path)
            for email in ("owner@example.com", "member@example.com")
        ]
        owner, member = [await m.connect(host_id) for m in members]
        engine = await services.browser.engine()
        yield Holding(services, team_id, engine, site, owner, member, seen)
        for connection in (owner, member):
            await connection.close()
        for m in members:
            await m.hub.close()


async def press(view: LiveView, frame: Frame, holding: Holding, tab_id: str, css: str) -> None:
    page = holding.engine.get_tab(holding.team_id, tab_id).page
    assert page is not None
    x, y = await page.evaluate(
        "(css) => { const r = document.querySelector(css).getBoundingClientRect();"
        " return [(r.left + r.right) / 2, (r.top + r.bottom) / 2]; }",
        css,
    )
    view.click(x / frame.width, y / frame.height)


async def hold(holding: Holding, tab_id: str) -> tuple[LiveView, Frame]:
    view = await open_view(holding.member, tab_id)
    frame = await view.next_frame()
    await view.take()
    return view, frame


async def press_every_field_then_done(holding: Holding, tab_id: str) -> LiveView:
    view, frame = await hold(holding, tab_id)
    await press(view, frame, holding, tab_id, "#email")
    view.type_text(TYPED)
    for css in ("#pw", "#otp", "#card", "#plain", "#save", "#done"):
        await press(view, frame, holding, tab_id, css)
    page = holding.engine.get_tab(holding.team_id, tab_id).page
    assert page is not None
    await page.wait_for_function(f"document.getElementById('email').value === '{TYPED}'")
    await page.wait_for_function("document.body.dataset.done === '1'")
    await holding.services.live.steps.settled()
    return view


async def test_steps_in_an_agents_tab_name_controls_and_pages_never_values(
    holding: Holding,
) -> None:
    await holding.owner.call("browsing-memory-v1/set", {"enabled": True})
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form"), owner_agent_id=AGENT
    )
    view = await press_every_field_then_done(holding, tab.id)
    frame = await view.next_frame()
    await press(view, frame, holding, tab.id, "#next")
    await eventually(lambda: any(step.kind == "page" for step in holding.steps))
    await holding.services.live.steps.settled()
    expected = [
        'pressed textbox "Email"',
        'pressed button "Save"',
        'pressed button "Done"',
        'pressed link "Next"',
        'opened 127.0.0.1/orders/:id "Order 48213"',
    ]
    assert [step.line for step in holding.steps] == expected
    assert {(s.agent_id, s.tab_id) for s in holding.steps} == {(AGENT, tab.id)}
    kept = await holding.services.browsing_steps.steps_for_review(holding.team_id, AGENT)
    assert [line for _, line in kept] == expected
    assert TYPED not in str(kept)
    view.close()


async def test_a_tab_no_agent_owns_records_nothing(holding: Holding) -> None:
    await holding.owner.call("browsing-memory-v1/set", {"enabled": True})
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form")
    )
    view = await press_every_field_then_done(holding, tab.id)
    assert holding.steps == []
    view.close()


async def test_the_setting_is_off_by_default_and_for_admins_only(holding: Holding) -> None:
    for route, args in (("get", {}), ("set", {"enabled": True})):
        with pytest.raises(TeamApiCallError) as refused:
            await holding.member.call(f"browsing-memory-v1/{route}", args)
        assert refused.value.code == "forbidden"
    assert await holding.owner.call("browsing-memory-v1/get", {}) == {"enabled": False}
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form"), owner_agent_id=AGENT
    )
    view = await press_every_field_then_done(holding, tab.id)
    # The presses were seen, but a team that did not turn it on keeps none of them.
    assert len(holding.steps) == 3
    assert await holding.services.browsing_steps.steps_for_review(holding.team_id, AGENT) == []
    assert await holding.owner.call("browsing-memory-v1/set", {"enabled": True}) == {
        "enabled": True
    }
    view.close()

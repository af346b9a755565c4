"""A member holding an agent's tab over a real peer, on fixture pages with fields of every
kind (text, password, one-time code, card), for the tests of recorded steps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from peer.connection import HostConnection
from peer.live_view import LiveView, open_view
from server.common.protocol.view import Frame
from server.host.browser.engine import BrowserEngine
from server.host.container import HostServices
from server.host.live.steps import Step, StepRecorded
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving

AGENT = "agent-learning"
TYPED = "alice@example.com"
FORM = (
    "<!doctype html><title>Sign in</title><style>body{margin:0;font:16px sans-serif}"
    "*{display:block;margin:8px;width:260px;height:32px}</style>"
    "<button id=save>Save</button>"
    "<label for=email style='height:20px'>Email</label><input id=email>"
    "<input id=pw type=password aria-label='Account password'>"
    "<input id=otp autocomplete=one-time-code aria-label='Sign-in code'>"
    "<input id=known autocomplete='username current-password' aria-label='Saved login'>"
    "<input id=card autocomplete=cc-number aria-label='Card number'>"
    "<p id=plain>Just some words</p>"
    # The page leaves a moment after the press: its step is read beside the input, and a
    # page gone before that records nothing.
    "<a id=next href='/orders/48213?session=abc#top' onclick=\"event.preventDefault();"
    'setTimeout(() => { location.href = this.href; }, 300)">Next</a>'
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


@asynccontextmanager
async def holding_tabs(server: RunningHub, tmp_path: Path) -> AsyncIterator[Holding]:
    """The team's owner and a member connected over real peers, and the fixture site."""

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

    services.signals.subscribe(StepRecorded, lambda s: listen(s.step))
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


async def press_every_field_then_done(
    holding: Holding, tab_id: str, held: tuple[LiveView, Frame] | None = None
) -> LiveView:
    """Press each field (typing into the email one), a paragraph and the buttons, as the
    member holding ``tab_id`` (in ``held``, a view and its first frame, or a new view that
    takes control)."""
    view, frame = held or await hold(holding, tab_id)
    await press(view, frame, holding, tab_id, "#email")
    view.type_text(TYPED)
    for css in ("#pw", "#otp", "#known", "#card", "#plain", "#save", "#done"):
        await press(view, frame, holding, tab_id, css)
    page = holding.engine.get_tab(holding.team_id, tab_id).page
    assert page is not None
    await page.wait_for_function(f"document.getElementById('email').value === '{TYPED}'")
    await page.wait_for_function("document.body.dataset.done === '1'")
    await holding.services.live.steps.settled()
    return view

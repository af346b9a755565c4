"""Secure entry in real Chromium: submit_secret, fill_from_vault, request_vault_item.

Local sign-in pages (a form that posts and redirects, a single-page sign-in, a page that
echoes what was typed) take secrets from a real attention registry, answered the way a
member's route answers, and from a real vault on SQLite.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlencode

import pytest
import pytest_asyncio
from aiohttp import web

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.protocol.events import AttentionRequested, BrowserTakeoverRequested, HostEvent
from server.db.engine import Database
from server.host.agents.attention import AttentionRegistry
from server.host.agents.secret_handoff import SecretHandoffService
from server.host.browser.access import holds_secret
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.protection import ProtectionChanged, kept_address, protection_of
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from server.host.services.vault import VaultService
from server.host.tools.catalog import call_tool, describe_call
from server.host.tools.context import SecureEntryDesk, ToolContext, TurnState
from server.host.tools.page.approval import Approval
from tests.host.tools.conftest import AGENT, FAST, TEAM, call, ref_of
from tests.support.clock import FakeClock
from tests.support.sites import Site, serving

PASSWORD = "s3cret-NEVER-SHOWN-pw"
MEMBER = "m" * 32

FORM = """<!doctype html><title>Sign in</title>
<form method="post" action="/signin" id="f">
<label>Email <input name="email" type="email" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>"""
# Single-page sign-in: the submit posts with fetch and shows the next step in place.
SPA = """<!doctype html><title>Sign in</title>
<form id="f"><label>Password <input name="password" type="password"></label>
<button type="submit">Next</button></form><p id="step"></p>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const pw = e.target.password.value;
  await fetch('/api/login', {method: 'POST', body: pw});
  document.getElementById('step').textContent = ECHO ? 'Wrong password: ' + pw : 'Enter the code';
});
</script>"""
# Single-page sign-in with a user name: the page then greets the user and asks for their
# profile by it, as signed-in pages do.
SPA_LOGIN = """<!doctype html><title>Sign in</title>
<form id="f"><label>Email <input name="email" type="email" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password">
</label><button type="submit">Sign in</button></form><p id="step"></p>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const email = e.target.email.value;
  await fetch('/api/login', {method: 'POST', body: e.target.password.value});
  await fetch('/api/me?email=' + encodeURIComponent(email));
  document.getElementById('step').textContent = 'Signed in as ' + email;
});
</script>"""
# The echo hides in an open shadow root's attribute, where a text search would not look.
SHADOW_ECHO = """<!doctype html><title>Sign in</title>
<form id="f"><label>Password <input name="password" type="password"></label>
<button type="submit">Next</button></form><div id="host"></div>
<script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
document.getElementById('f').addEventListener('submit', (e) => {
  e.preventDefault();
  root.innerHTML = '<span data-last="' + e.target.password.value + '">Try again</span>';
});
</script>"""
# A password field and a visible search field in one form; the page may move a class.
SEARCH_BESIDE = """<!doctype html><title>Sign in</title>
<form method="post" action="/signin">
<label>Password <input name="password" type="password" class="pw"></label>
<label>Search <input name="q" type="text" id="q"></label>
<label>Card <input name="card" type="search" autocomplete="cc-number"></label>
<button type="submit">Sign in</button></form>"""
# A form that sends what it holds in the next page's address.
GET_FORM = """<!doctype html><title>Sign in</title>
<form method="get" action="/welcome">
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form>"""
# A form with neither method nor action, and no script: the browser sends it with GET, to
# the page's own address.
BARE_FORM = """<!doctype html><title>Sign in</title>
<form><label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form>"""
# The same, aimed at a new window: by the form, by its button, or by the document's base.
BARE_FORM_NEW_WINDOW = {
    "form": BARE_FORM.replace("<form>", '<form target="_blank">'),
    "button": BARE_FORM.replace('type="submit"', 'type="submit" formtarget="results"'),
    "base": BARE_FORM.replace("<title>", '<base target="_blank"><title>'),
}
# A form that posts to ELSEWHERE, or whose button does.
POSTS_ELSEWHERE = """<!doctype html><title>Sign in</title>
<form method="post" action="ELSEWHERE/collect">
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form>"""
BUTTON_POSTS_ELSEWHERE = """<!doctype html><title>Sign in</title>
<form method="post" action="/signin">
<label>Password <input name="password" type="password"></label>
<button type="submit" formaction="ELSEWHERE/collect">Sign in</button></form>"""
# A single-page code check: it also sends a beacon whose number holds the code among other
# digits, and asks the site to check the code by GET (which the browser stops).
SPA_CODE = """<!doctype html><title>Verify</title>
<form id="f"><label>Code <input name="code" autocomplete="one-time-code"></label>
<button type="submit">Verify</button></form><p id="step"></p>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const code = e.target.code.value;
  await fetch('/api/login', {method: 'POST', body: code});
  await fetch('/api/beacon?ts=1733500' + code + '123');
  await fetch('/api/verify?code=' + code).catch(() => null);
  document.getElementById('step').textContent = 'Verified';
});
</script>"""
# A single-page sign-in that then opens the site's check of the password in a new window,
# by script, the password in its address.
SPA_POPUP = """<!doctype html><title>Sign in</title>
<form id="f"><label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form><p id="step"></p>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const pw = e.target.password.value;
  await fetch('/api/login', {method: 'POST', body: pw});
  window.open('/api/verify?pw=' + encodeURIComponent(pw));
  document.getElementById('step').textContent = 'Checking';
});
</script>"""
# The same sign-in, whose service worker sends the site's check: the page hands it the
# password, and the worker's own fetch carries it in its address.
SW_POPUP_PAGE = """<!doctype html><title>Sign in</title>
<form id="f"><label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form><p id="step"></p><p id="ready"></p>
<script>
navigator.serviceWorker.register('/worker.js').then(async () => {
  await navigator.serviceWorker.ready;
  document.getElementById('ready').textContent = 'ready';
});
navigator.serviceWorker.addEventListener('message', (e) => {
  document.getElementById('step').textContent = e.data;
});
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const pw = e.target.password.value;
  await fetch('/api/login', {method: 'POST', body: pw});
  (await navigator.serviceWorker.ready).active.postMessage(pw);
});
</script>"""
SW_SCRIPT = """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', async (e) => {
  const answer = await fetch('/api/verify?pw=' + encodeURIComponent(e.data))
    .then(() => 'sent', () => 'stopped');
  e.source.postMessage(answer);
});"""
# A store finder that sends a phone number with GET, as such forms do.
FIND_BY_PHONE = """<!doctype html><title>Find your order</title>
<form method="get" action="/welcome">
<label>Phone <input name="phone" type="tel" autocomplete="tel"></label>
<button type="submit">Find</button></form>"""
CHECKOUT = """<!doctype html><title>Checkout</title>
<form method="post" action="/pay">
<label>Card number <input name="cc" autocomplete="cc-number"></label>
<label>Security code <input name="csc" autocomplete="cc-csc"></label>
<button type="submit">Pay</button></form>"""


@dataclass
class Requests:
    seen: list[tuple[str, str, str]] = field(default_factory=list)

    def of(self, path: str) -> list[str]:
        return [method for method, p, _body in self.seen if p == path]


def sign_in_app(requests: Requests) -> web.Application:
    pages = {
        "/signin": FORM,
        "/welcome": "<title>Welcome</title><h1>Hi</h1>",
        "/spa": SPA.replace("ECHO", "false"),
        "/echo": SPA.replace("ECHO", "true"),
        "/checkout": CHECKOUT,
        "/checkout-order": CHECKOUT + "<p>Order 97371</p>",
        "/shadow-echo": SHADOW_ECHO,
        "/framed": "<title>Pay</title><iframe src='FRAME'></iframe>",
        "/api/login": "ok",
        "/api/me": "ok",
        "/spa-login": SPA_LOGIN,
        "/search-beside": SEARCH_BESIDE,
        "/get-form": GET_FORM,
        "/bare-form": BARE_FORM,
        **{f"/bare-form-{by}": page for by, page in BARE_FORM_NEW_WINDOW.items()},
        "/signin-redirect": FORM.replace('action="/signin"', 'action="/signin-then-redirect"'),
        "/spa-code": SPA_CODE,
        "/spa-popup": SPA_POPUP,
        "/sw-sign-in": SW_POPUP_PAGE,
        "/api/beacon": "ok",
        "/api/verify": "ok",
        "/find-by-phone": FIND_BY_PHONE,
        "/posts-elsewhere": POSTS_ELSEWHERE,
        "/button-posts-elsewhere": BUTTON_POSTS_ELSEWHERE,
    }

    async def answer(request: web.Request) -> web.Response:
        requests.seen.append((request.method, request.path, await request.text()))
        if request.method == "POST" and request.path == "/signin":
            raise web.HTTPSeeOther("/welcome")
        if request.method == "POST" and request.path == "/signin-then-redirect":
            # A site that hands the password back in the next page's address.
            password = parse_qs(await request.text())["password"][0]
            raise web.HTTPFound("/welcome?" + urlencode({"pw": password}))
        if request.path == "/worker.js":
            return web.Response(text=SW_SCRIPT, content_type="text/javascript")
        if request.path not in pages:
            raise web.HTTPNotFound()
        text = pages[request.path].replace("FRAME", request.query.get("frame", ""))
        text = text.replace("ELSEWHERE", request.query.get("to", ""))
        return web.Response(text=text, content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_sign_in() -> AsyncIterator[tuple[Site, Requests]]:
    requests = Requests()
    async with serving(sign_in_app(requests)) as running:
        yield running, requests


@pytest.fixture
def sign_in(module_sign_in: tuple[Site, Requests]) -> tuple[Site, Requests]:
    module_sign_in[1].seen.clear()
    return module_sign_in


@dataclass
class People:
    """The people of the thread: the attention registry, answered like a member's route."""

    attention: AttentionRegistry
    handoff: SecretHandoffService
    vault: VaultService
    events: list[HostEvent] = field(default_factory=list)
    asked: asyncio.Queue[AttentionRequested] = field(default_factory=asyncio.Queue)
    # Each ProtectionChanged the tab's live views heard, with whether the tab held a secret.
    views_told: list[tuple[Protection, bool]] = field(default_factory=list)
    engine: BrowserEngine | None = None
    # The host's clock: a request expires when it says so.
    clock: FakeClock = field(default_factory=FakeClock)

    def announce(self, _team: str, event: HostEvent, *_rest: Any) -> None:
        self.events.append(event)
        if isinstance(event, AttentionRequested):
            self.asked.put_nowait(event)

    def protection_changed(self, signal: ProtectionChanged) -> None:
        assert self.engine is not None
        tab = self.engine.get_tab(signal.team_id, signal.tab_id)
        self.views_told.append((signal.protection, holds_secret(tab)))


@pytest_asyncio.fixture(loop_scope="module")
async def people(tmp_path: Path, engine: BrowserEngine) -> AsyncIterator[People]:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'crewhost.db'}")
    await db.migrate()
    clock = FakeClock()
    vault = VaultService(db, clock, SecretBox(KeyRing.generate()))
    holder: list[People] = []
    attention = AttentionRegistry(clock, lambda *a: holder[0].announce(*a))
    holder.append(
        People(attention, SecretHandoffService(attention, vault), vault, engine=engine, clock=clock)
    )
    engine.signals.subscribe(ProtectionChanged, holder[0].protection_changed)
    yield holder[0]
    await db.close()


@pytest.fixture
def desk_context(engine: BrowserEngine, people: People) -> ToolContext:
    return ToolContext(
        engine=engine,
        team_id=TEAM,
        caller=AGENT,
        turn=TurnState(),
        settings=FAST,
        announce=people.announce,
        secure_entry=SecureEntryDesk(
            ask_person=people.attention.ask_person,
            vault=people.vault,
            visible_to=lambda account: account == MEMBER,
        ),
    )


async def open_on(context: ToolContext, url: str) -> Tab:
    return await context.engine.open_tab(
        TEAM,
        Partition.shared(),
        url=url,
        owner_agent_id=AGENT.agent_id,
        owner_thread_id=AGENT.thread_id,
    )


async def answer_with(people: People, *values: str) -> AttentionRequested:
    asked = await asyncio.wait_for(people.asked.get(), 10)
    people.handoff.submit(TEAM, MEMBER, asked.id, list(values))
    return asked


def start_submit(context: ToolContext, tab: Tab, selector: str) -> asyncio.Task[dict[str, Any]]:
    """An agent's submit_secret for the one field ``selector`` finds, left running."""
    field = {"target": {"kind": "css", "selector": selector}}
    return asyncio.create_task(
        call(context, "submit_secret", tabId=tab.id, fields=[field], purpose="sign in")
    )


async def fill_card(context: ToolContext, people: People, tab: Tab) -> dict[str, Any]:
    """fill_from_vault of a new card of the team into the tab's card number and code."""
    card = await people.vault.create_item(
        TEAM, "card", {"name": "Card", "number": "4111111111111111", "security_code": "737"}
    )
    fields = [
        {"target": {"kind": "css", "selector": "input[name=cc]"}, "field": "number"},
        {"target": {"kind": "css", "selector": "input[name=csc]"}, "field": "securityCode"},
    ]
    return await call(context, "fill_from_vault", tabId=tab.id, itemId=card.id, fields=fields)


async def field_value(tab: Tab, selector: str) -> str:
    assert tab.page is not None
    return str(await tab.page.eval_on_selector(selector, "el => el.value"))


async def test_a_form_sign_in_enters_and_the_new_page_releases(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/signin"))
    shot = await call(desk_context, "snapshot", tabId=tab.id)
    fields = [
        {"target": {"kind": "ref", "ref": ref_of(shot, 'textbox "Email"')}, "kind": "username"},
        {"target": {"kind": "css", "selector": "input[type=password]"}},
    ]
    running = asyncio.create_task(
        call(desk_context, "submit_secret", tabId=tab.id, fields=fields, purpose="sign in")
    )
    asked = await answer_with(people, "ada@example.com", PASSWORD)
    result = await running
    assert result["status"] == "entered", result
    assert result["page"] == "new"
    assert asked.secret is not None
    assert asked.secret.origin == site.base
    assert [(f.label, f.kind) for f in asked.secret.fields] == [
        ("Email", "username"),
        ("Password", "password"),
    ]
    assert asked.secret.vault_offered
    # The page got the secret; the views were ended with the tab already protected.
    assert requests.of("/signin") == ["GET", "POST"]
    assert PASSWORD in next(body for m, p, body in requests.seen if m == "POST")
    assert people.views_told == [(Protection.ENTERING, True), (Protection.NONE, False)]
    assert not holds_secret(tab)
    assert tab.page is not None
    # The browser's history holds the new page only; the page hears of it a moment later.
    cdp = await tab.page.context.new_cdp_session(tab.page)
    history = await cdp.send("Page.getNavigationHistory")
    await cdp.detach()
    assert [e["url"] for e in history["entries"]] == [site.url("/welcome")]
    await tab.page.wait_for_function("history.length === 1", timeout=10_000)
    seen = repr(result) + repr(people.events)
    assert PASSWORD not in seen


async def test_a_single_page_sign_in_is_kept_with_its_fields_emptied_and_scripts_refused(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/spa"))
    running = start_submit(desk_context, tab, "input")
    await answer_with(people, PASSWORD)
    result = await running
    assert (result["status"], result["page"]) == ("entered", "kept"), result
    assert requests.of("/api/login") == ["POST"]
    assert await field_value(tab, "input") == ""
    assert holds_secret(tab)
    refused = await call(desk_context, "evaluate", tabId=tab.id, expression="1")
    assert refused["error"]["code"] == "tabHoldsSecret"
    content = await call(desk_context, "get_tab_content", tabId=tab.id)
    assert "error" in content
    shot = await call(desk_context, "snapshot", tabId=tab.id)
    assert "Enter the code" in shot["tree"]
    assert "value hidden" in shot["tree"]
    # The next step takes its own secret (a one-time code) on the same, still protected page.
    running = start_submit(desk_context, tab, "input")
    await answer_with(people, "493817")
    again = await running
    assert (again["status"], again["page"]) == ("entered", "kept"), again
    assert [body for m, p, body in requests.seen if p == "/api/login"] == [PASSWORD, "493817"]
    assert holds_secret(tab)
    # The page echoes the code later, after the entry's scan: no snapshot reads it, and the
    # tab's title hides it.
    assert tab.page is not None
    await tab.page.evaluate(
        "code => { document.body.append('Signed in with ' + code); document.title = code }",
        "493817",
    )
    echoed = await call(desk_context, "snapshot", tabId=tab.id)
    assert echoed["error"]["code"] == "pageShowsSecret"
    listed = await call(desk_context, "list_tabs")
    assert "493817" not in repr(listed) + repr(echoed)
    # A same-document navigation keeps protection; a new document ends it.
    await tab.page.evaluate("history.pushState({}, '', '#next')")
    assert holds_secret(tab)
    protection = protection_of(tab)
    assert protection is not None
    await call(desk_context, "navigate", tabId=tab.id, url=site.url("/welcome"))
    await asyncio.wait_for(protection.released.wait(), 10)
    assert not holds_secret(tab)


async def test_a_page_that_echoes_the_secret_is_loaded_again_with_get(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/echo"))
    running = start_submit(desk_context, tab, "input")
    await answer_with(people, PASSWORD)
    result = await running
    assert (result["status"], result["page"]) == ("entered", "reloaded"), result
    # Loaded again with GET; the one POST was never sent again.
    assert requests.of("/echo") == ["GET", "GET"]
    assert requests.of("/api/login") == ["POST"]
    assert not holds_secret(tab)
    assert tab.page is not None
    assert PASSWORD not in await tab.page.content()


async def test_a_tab_that_moved_to_another_site_goes_to_takeover_without_the_secret(
    desk_context: ToolContext,
    people: People,
    sign_in: tuple[Site, Requests],
    site: Site,
) -> None:
    signin_site, requests = sign_in
    tab = await open_on(desk_context, signin_site.url("/signin"))
    running = start_submit(desk_context, tab, "input[type=password]")
    asked = await asyncio.wait_for(people.asked.get(), 10)
    await call(desk_context, "navigate", tabId=tab.id, url=site.url("/article.html"))
    people.handoff.submit(TEAM, MEMBER, asked.id, [PASSWORD])
    result = await running
    assert result["status"] == "takeover"
    assert "another site" in result["reason"]
    assert "POST" not in requests.of("/signin")
    assert any(type(e).__name__ == "BrowserTakeoverRequested" for e in people.events)


async def test_a_declined_or_unanswered_request_enters_nothing(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/signin"))
    args = {
        "tabId": tab.id,
        "fields": [{"target": {"kind": "css", "selector": "input[type=password]"}}],
        "purpose": "sign in",
    }
    running = asyncio.create_task(call(desk_context, "submit_secret", **args))
    asked = await asyncio.wait_for(people.asked.get(), 10)
    people.handoff.decline(TEAM, MEMBER, asked.id, "secret")
    assert (await running)["status"] == "declined"
    quick = ToolContext(
        **{**vars(desk_context), "settings": FAST.__class__(secret_answer_wait=0.2)}
    )
    unanswered = asyncio.create_task(call(quick, "submit_secret", **args))
    await asyncio.wait_for(people.asked.get(), 10)
    people.clock.advance(1)  # past the request's 0.2 s on the host's clock
    assert (await unanswered)["status"] == "timeout"
    assert requests.of("/signin") == ["GET"]
    assert not holds_secret(tab)


async def test_fill_from_vault_checks_the_origin_and_signs_in(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    vault = people.vault
    elsewhere = await vault.create_item(
        TEAM, "login", {"name": "Other", "sites": ["https://other.example"], "password": "x"}
    )
    mine = await vault.create_item(
        TEAM,
        "login",
        {"name": "Shop", "sites": [site.base], "username": "ada@example.com", "password": PASSWORD},
    )
    tab = await open_on(desk_context, site.url("/signin"))
    listed = await call(desk_context, "list_vault_items")
    assert {i["name"] for i in listed["items"]} == {"Other", "Shop"}
    assert PASSWORD not in repr(listed)
    fields = [
        {"target": {"kind": "css", "selector": "input[type=email]"}, "field": "username"},
        {"target": {"kind": "css", "selector": "input[type=password]"}, "field": "password"},
    ]
    refused = await call(
        desk_context, "fill_from_vault", tabId=tab.id, itemId=elsewhere.id, fields=fields
    )
    assert refused["error"]["code"] == "vaultSiteMismatch"
    assert requests.of("/signin") == ["GET"]
    result = await call(
        desk_context, "fill_from_vault", tabId=tab.id, itemId=mine.id, fields=fields
    )
    assert (result["status"], result["page"]) == ("entered", "new"), result
    body = next(body for m, p, body in requests.seen if m == "POST")
    assert PASSWORD in body
    assert PASSWORD not in repr(result)


async def test_a_single_page_sign_in_may_show_and_send_its_user_name(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    login = await people.vault.create_item(
        TEAM,
        "login",
        {"name": "App", "sites": [site.base], "username": "ada@example.com", "password": PASSWORD},
    )
    tab = await open_on(desk_context, site.url("/spa-login"))
    fields = [
        {"target": {"kind": "css", "selector": "input[type=email]"}, "field": "username"},
        {"target": {"kind": "css", "selector": "input[type=password]"}, "field": "password"},
    ]
    result = await call(
        desk_context, "fill_from_vault", tabId=tab.id, itemId=login.id, fields=fields
    )
    assert (result["status"], result["page"]) == ("entered", "kept"), result
    assert tab.page is not None
    await tab.page.wait_for_function("document.getElementById('step').textContent !== ''")
    # The page greets the user by name and asked for their profile by it: the agent reads it.
    assert requests.of("/api/me") == ["GET"]
    shot = await call(desk_context, "snapshot", tabId=tab.id)
    assert "Signed in as ada@example.com" in shot["tree"], shot
    assert holds_secret(tab)
    # The password is another matter, still.
    await tab.page.evaluate("pw => document.body.append(pw)", PASSWORD)
    echoed = await call(desk_context, "snapshot", tabId=tab.id)
    assert echoed["error"]["code"] == "pageShowsSecret"


async def test_a_card_is_filled_and_the_payment_left_to_a_person(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/checkout"))
    result = await fill_card(desk_context, people, tab)
    assert result["status"] == "takeover"
    assert "payment" in result["reason"]
    assert requests.of("/pay") == []
    assert holds_secret(tab)
    assert "4111111111111111" not in repr(result)
    # The page takes the dots off the number: they are back before anything is drawn.
    assert tab.page is not None
    shown = await tab.page.evaluate(
        """async () => {
            const field = document.querySelector('[name=cc]');
            field.style.removeProperty('-webkit-text-security');
            field.setAttribute('style', 'color: red');
            await new Promise((done) => requestAnimationFrame(done));
            return getComputedStyle(field).getPropertyValue('-webkit-text-security');
        }"""
    )
    assert shown == "disc"
    # The page writes the number out later, spaced: the agent reads none of the page.
    await tab.page.evaluate("() => document.body.append('Card 4111 1111 1111 1111')")
    echoed = await call(desk_context, "snapshot", tabId=tab.id)
    assert echoed["error"]["code"] == "pageShowsSecret"


async def test_a_code_among_the_digits_of_a_longer_number_is_no_echo(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, _requests = sign_in
    tab = await open_on(desk_context, site.url("/checkout-order"))
    result = await fill_card(desk_context, people, tab)
    assert result["status"] == "takeover"
    # The order number 97371 holds the card's code 737 between other digits: no echo, so
    # the person asked to confirm the payment may watch the tab (its fields show dots).
    assert tab.protection is Protection.TAKEOVER


async def test_request_vault_item_gives_the_agent_only_id_kind_and_name(
    desk_context: ToolContext, people: People
) -> None:
    running = asyncio.create_task(
        call_tool(
            desk_context,
            "request_vault_item",
            {
                "kind": "login",
                "reason": "to sign in to the shop",
                "name": "Shop",
                "sites": ["https://shop.example"],
            },
        )
    )
    asked = await asyncio.wait_for(people.asked.get(), 10)
    assert asked.vault_item is not None
    assert asked.vault_item.prefill == {"name": "Shop", "sites": ["https://shop.example"]}
    added = await people.handoff.add_requested_item(
        TEAM,
        MEMBER,
        asked.id,
        {"name": "Shop", "sites": ["https://shop.example"], "password": PASSWORD},
    )
    result = await running
    assert result["item"] == {"id": added.id, "kind": "login", "name": "Shop"}
    assert PASSWORD not in repr(result)
    refused = await call(
        desk_context, "request_vault_item", kind="card", reason="pay", sites=["https://x.example"]
    )
    assert refused["error"]["code"] == "invalidArguments"


async def test_outside_a_thread_nobody_is_asked(desk_context: ToolContext) -> None:
    assert desk_context.secure_entry is not None
    alone = ToolContext(
        **{
            **vars(desk_context),
            "secure_entry": SecureEntryDesk(
                ask_person=desk_context.secure_entry.ask_person,
                vault=desk_context.secure_entry.vault,
                visible_to=None,
            ),
        }
    )
    refused = await call(alone, "request_vault_item", kind="contact", reason="address")
    assert refused["error"]["code"] == "attentionUnavailable"


async def test_an_echo_in_a_shadow_root_attribute_is_found_and_the_page_loaded_again(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/shadow-echo"))
    running = start_submit(desk_context, tab, "input")
    await answer_with(people, PASSWORD)
    result = await running
    assert (result["status"], result["page"]) == ("entered", "reloaded"), result
    assert requests.of("/shadow-echo") == ["GET", "GET"]


async def test_fields_in_a_frame_of_another_site_go_to_takeover_before_anyone_is_asked(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests], site: Site
) -> None:
    signin_site, _requests = sign_in
    # The module's other site listens on another port: another origin.
    framed = signin_site.url("/framed?frame=" + site.url("/forms.html"))
    tab = await open_on(desk_context, framed)
    result = await call(
        desk_context,
        "submit_secret",
        tabId=tab.id,
        fields=[{"target": {"kind": "css", "selector": "input"}}],
        purpose="pay",
    )
    assert result["status"] == "takeover", result
    assert result["code"] == "crossOriginFrame"
    assert "frame of another site" in result["reason"]
    assert people.asked.empty()
    assert not holds_secret(tab)


async def test_a_passkey_prompt_goes_to_takeover_before_anyone_is_asked(
    desk_context: ToolContext, people: People, site: Site
) -> None:
    tab = await open_on(desk_context, site.url("/passkey.html"))
    assert tab.page is not None
    await tab.page.click("#passkey")
    result = await call(
        desk_context,
        "submit_secret",
        tabId=tab.id,
        fields=[{"target": {"kind": "css", "selector": "input[type=email]"}}],
        purpose="sign in",
    )
    assert (result["status"], result["code"]) == ("takeover", "passkey"), result
    assert people.asked.empty()
    wanted = [e for e in people.events if isinstance(e, BrowserTakeoverRequested)]
    assert [e.code for e in wanted] == ["passkey"]


async def test_a_card_meets_a_payment_challenge_unfilled(
    desk_context: ToolContext, people: People, site: Site
) -> None:
    tab = await open_on(desk_context, site.url("/three-ds.html"))
    result = await fill_card(desk_context, people, tab)
    assert (result["status"], result["code"]) == ("takeover", "paymentConfirmation"), result
    assert await field_value(tab, "input[name=cc]") == ""
    assert not holds_secret(tab)


async def _shop_login(people: People, *sites: str) -> Any:
    return await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": list(sites), "password": PASSWORD}
    )


def _vault_args(tab: Tab, item_id: str, selector: str, value: str = "password") -> dict[str, Any]:
    target = {"kind": "css", "selector": selector}
    return {"tabId": tab.id, "itemId": item_id, "fields": [{"target": target, "field": value}]}


async def test_an_approved_vault_fill_goes_only_into_the_field_its_card_named(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    item = await _shop_login(people, site.base)
    tab = await open_on(desk_context, site.url("/search-beside"))
    args = _vault_args(tab, item.id, ".pw")
    approval = Approval()
    card = await describe_call(desk_context, "fill_from_vault", args, approval)
    assert (card or "").startswith("Fill “Password” from the vault")
    # The page moves the class the call names to its visible search field.
    assert tab.page is not None
    await tab.page.evaluate(
        "document.querySelector('.pw').className = '';document.getElementById('q').className = 'pw'"
    )
    result = await call_tool(desk_context, "fill_from_vault", args, approval)
    assert result["error"]["code"] == "targetChanged", result
    assert await field_value(tab, "#q") == ""
    assert requests.of("/signin") == []
    assert not holds_secret(tab)


async def test_a_vault_value_goes_only_into_a_field_of_its_kind(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    item = await _shop_login(people, site.base)
    card = await people.vault.create_item(
        TEAM, "card", {"name": "Card", "number": "4111111111111111", "security_code": "737"}
    )
    tab = await open_on(desk_context, site.url("/search-beside"))
    # Nobody was asked (no approval): the agent's word for the field still does not count.
    into_text = await call(desk_context, "fill_from_vault", **_vault_args(tab, item.id, "#q"))
    assert into_text["error"]["code"] == "secretFieldInvalid", into_text
    into_search = await call(
        desk_context, "fill_from_vault", **_vault_args(tab, card.id, "[name=card]", "number")
    )
    assert into_search["error"]["code"] == "secretFieldInvalid", into_search
    assert await field_value(tab, "#q") == ""
    assert await field_value(tab, "[name=card]") == ""
    # A field that hides what it holds takes a card's number (filled, left to a person).
    into_password = await call(
        desk_context, "fill_from_vault", **_vault_args(tab, card.id, ".pw", "number")
    )
    assert (into_password["status"], into_password["code"]) == ("takeover", "paymentConfirmation")
    assert requests.of("/signin") == []


async def test_a_get_form_goes_to_a_person_with_nothing_typed(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    item = await _shop_login(people, site.base)
    tab = await open_on(desk_context, site.url("/get-form"))
    args = _vault_args(tab, item.id, "input[type=password]")
    result = await call(desk_context, "fill_from_vault", **args)
    assert (result["status"], result["code"]) == ("takeover", "entryFailed"), result
    assert "GET form" in result["reason"]
    assert await field_value(tab, "input") == ""
    assert requests.of("/welcome") == []
    assert PASSWORD not in tab.url


async def test_a_form_turned_to_get_while_a_person_answers_takes_no_secret(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/signin"))
    running = start_submit(desk_context, tab, "input[type=password]")
    asked = await asyncio.wait_for(people.asked.get(), 10)
    assert tab.page is not None
    await tab.page.evaluate("document.getElementById('f').method = 'get'")
    people.handoff.submit(TEAM, MEMBER, asked.id, [PASSWORD])
    result = await running
    assert result["status"] == "takeover", result
    assert await field_value(tab, "input[type=password]") == ""
    assert requests.of("/signin") == ["GET"]
    assert PASSWORD not in tab.url


@pytest.mark.parametrize("path", ["/posts-elsewhere", "/button-posts-elsewhere"])
async def test_a_login_is_not_sent_to_another_origin_than_its_sites(
    desk_context: ToolContext,
    people: People,
    sign_in: tuple[Site, Requests],
    site: Site,
    path: str,
) -> None:
    signin_site, requests = sign_in
    item = await _shop_login(people, signin_site.base)
    # The module's other site listens on another port: another origin.
    tab = await open_on(desk_context, signin_site.url(f"{path}?to={site.base}"))
    args = _vault_args(tab, item.id, "input[type=password]")
    refused = await call(desk_context, "fill_from_vault", **args)
    assert refused["error"]["code"] == "vaultSiteMismatch", refused
    assert site.base in refused["error"]["message"]
    assert await field_value(tab, "input") == ""
    assert requests.of(path) == ["GET"]
    assert [path for method, path, _body in requests.seen if method != "GET"] == []


@pytest.mark.parametrize(
    ("secret", "submit"),
    [
        (PASSWORD, {"kind": "css", "selector": "button"}),
        # Sent form-encoded (a space as +, & escaped); submitted with Enter in the field.
        ("pa ss&w+rd=Ü~1", None),
    ],
)
async def test_a_bare_form_sent_with_get_is_stopped_and_goes_to_a_person(
    desk_context: ToolContext,
    people: People,
    sign_in: tuple[Site, Requests],
    secret: str,
    submit: dict[str, str] | None,
) -> None:
    site, requests = sign_in
    # The submit's wait is short: the stopped submit leaves the page as it was.
    quick = dataclasses.replace(
        desk_context, settings=dataclasses.replace(FAST, secret_submit_wait=0.5)
    )
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    tab = await open_on(quick, site.url("/bare-form"))
    args = _vault_args(tab, item.id, "input[type=password]")
    if submit is not None:
        args["submit"] = submit
    result = await call(quick, "fill_from_vault", **args)
    # The request never left the browser; the tab stays on its page, emptied, for a person.
    assert requests.of("/bare-form") == ["GET"]
    assert tab.url == site.url("/bare-form")
    assert (result["status"], result["code"]) == ("takeover", "entryFailed"), result
    assert "stopped" in result["reason"]
    assert await field_value(tab, "input") == ""
    assert tab.protection is Protection.TAKEOVER
    shot = await call(quick, "snapshot", tabId=tab.id)
    listed = await call(quick, "list_tabs")
    assert tab.page is not None
    cdp = await tab.page.context.new_cdp_session(tab.page)
    history = await cdp.send("Page.getNavigationHistory")
    await cdp.detach()
    seen = repr((result, shot, listed, history, requests.seen, people.events, tab.page.url))
    for form in {secret, quote(secret), quote_plus(secret), quote(secret, safe="")}:
        assert form not in seen
        assert form.lower() not in seen.lower()


@pytest.mark.parametrize("by", sorted(BARE_FORM_NEW_WINDOW))
async def test_a_form_aimed_at_a_new_window_is_sent_in_its_tab_and_stopped(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests], by: str
) -> None:
    site, requests = sign_in
    quick = dataclasses.replace(
        desk_context, settings=dataclasses.replace(FAST, secret_submit_wait=0.5)
    )
    secret = "s3cret-popup-pass"
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    path = f"/bare-form-{by}"
    tab = await open_on(quick, site.url(path))
    result = await call(quick, "fill_from_vault", **_vault_args(tab, item.id, "input"))
    # No popup took the submit past the tab's route: it was stopped in the tab.
    assert requests.of(path) == ["GET"]
    assert (result["status"], result["code"]) == ("takeover", "entryFailed"), result
    listed = await call(quick, "list_tabs")
    assert [t["tabId"] for t in listed["tabs"]] == [tab.id]
    assert secret not in repr((result, listed, requests.seen))


async def test_a_post_sign_in_with_a_spaced_password_is_sent_as_before(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    secret = "pa ss&w+rd=1"
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    tab = await open_on(desk_context, site.url("/signin"))
    args = _vault_args(tab, item.id, "input[type=password]")
    args["submit"] = {"kind": "css", "selector": "button"}
    result = await call(desk_context, "fill_from_vault", **args)
    assert (result["status"], result["page"]) == ("entered", "new"), result
    assert requests.of("/signin") == ["GET", "POST"]
    assert requests.of("/welcome") == ["GET"]
    body = next(body for m, p, body in requests.seen if m == "POST")
    assert f"password={quote_plus(secret)}" in body
    assert not holds_secret(tab)


def _quick(context: ToolContext) -> ToolContext:
    """``context`` with a short wait after a submit, for a page that answers at once."""
    return dataclasses.replace(context, settings=dataclasses.replace(FAST, secret_submit_wait=1))


async def test_a_redirect_that_puts_the_secret_in_the_address_goes_to_a_person(
    desk_context: ToolContext,
    people: People,
    sign_in: tuple[Site, Requests],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    site, requests = sign_in
    secret = "pa ss&w+rd=Ü~1"
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    tab = await open_on(desk_context, site.url("/signin-redirect"))
    args = _vault_args(tab, item.id, "input[type=password]")
    args["submit"] = {"kind": "css", "selector": "button"}
    result = await call(desk_context, "fill_from_vault", **args)
    # The POST went, and the site sent the browser to an address that carries the secret:
    # the new page keeps protection and its values, and a person takes it over.
    assert requests.of("/signin-then-redirect") == ["POST"]
    assert (result["status"], result["code"]) == ("takeover", "entryFailed"), result
    assert "address" in result["reason"]
    assert tab.protection is Protection.TAKEOVER
    protection = protection_of(tab)
    assert protection is not None
    assert protection.address_held
    assert not protection.released.is_set()
    assert secret in protection.secrets
    assert any(isinstance(e, BrowserTakeoverRequested) for e in people.events)
    shot = await call(desk_context, "snapshot", tabId=tab.id)
    assert shot["error"]["code"] == "pageShowsSecret"
    listed = await call(desk_context, "list_tabs")
    [held] = [t for t in listed["tabs"] if t["tabId"] == tab.id]
    assert "withheld" in held["url"]
    ran = await call(desk_context, "run_script", tabId=tab.id, script="return 1")
    assert "withheld" in ran["url"], ran
    # Were its page to go (asleep, crashed, the host stopped), the tab keeps its site alone.
    assert kept_address(tab) == site.url("/")
    # The host's log lines, their fields included (the site's own access log aside).
    logged = [vars(r) for r in caplog.records if r.name.startswith("server.")]
    seen = repr((result, shot, listed, ran, people.events, logged))
    for form in {secret, quote(secret), quote_plus(secret), quote(secret, safe="")}:
        assert form not in seen
        assert form.lower() not in seen.lower()
    # The next new document ends protection, and the address leaves the history with it.
    await call(desk_context, "navigate", tabId=tab.id, url=site.url("/welcome"))
    await asyncio.wait_for(protection.released.wait(), 10)
    assert not holds_secret(tab)
    assert tab.page is not None
    cdp = await tab.page.context.new_cdp_session(tab.page)
    history = await cdp.send("Page.getNavigationHistory")
    await cdp.detach()
    assert [e["url"] for e in history["entries"]] == [site.url("/welcome")]


async def test_a_stopped_fetch_is_not_the_submit_and_a_short_code_stops_no_beacon(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/spa-code"))
    running = start_submit(_quick(desk_context), tab, "input")
    await answer_with(people, "493817")
    result = await running
    assert tab.page is not None
    await tab.page.wait_for_function("document.getElementById('step').textContent !== ''")
    # The code went with the POST; the beacon, which holds it among other digits, went too;
    # the check by GET carried it whole and was stopped. The sign-in went on in place.
    assert (result["status"], result["page"]) == ("entered", "kept"), result
    assert requests.of("/api/login") == ["POST"]
    assert requests.of("/api/beacon") == ["GET"]
    assert requests.of("/api/verify") == []
    protection = protection_of(tab)
    assert protection is not None
    assert (protection.stopped, protection.navigations_stopped) == (1, 0)
    assert tab.protection is Protection.KEPT


async def test_a_window_a_script_opens_with_the_secret_in_its_address_is_stopped(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    """A page's script may open a new window at an address it builds from the typed
    secret: the popup's first request is stopped as the tab's own would be, and neither
    the site, nor the popup, nor any list of tabs gets the secret."""
    site, requests = sign_in
    secret = "s3cret-window-pass"
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    tab = await open_on(desk_context, site.url("/spa-popup"))
    result = await call(desk_context, "fill_from_vault", **_vault_args(tab, item.id, "input"))
    assert tab.page is not None
    await tab.page.wait_for_function("document.getElementById('step').textContent !== ''")
    # The page went on to open the window, whose address was stopped: a person takes the
    # tab, as after a form that sends the secret in an address.
    assert (result["status"], result["code"]) == ("takeover", "entryFailed"), result
    assert tab.protection is Protection.TAKEOVER
    assert requests.of("/api/login") == ["POST"]
    assert requests.of("/api/verify") == []
    protection = protection_of(tab)
    assert protection is not None
    assert (protection.stopped, protection.navigations_stopped) == (1, 1)
    listed = await call(desk_context, "list_tabs")
    pages = [page.url for page in tab.page.context.pages]
    addresses = [path for _method, path, _body in requests.seen]
    for form in (secret, quote(secret), quote_plus(secret)):
        assert form not in repr((result, listed, pages, addresses))


async def test_a_service_workers_own_request_with_the_secret_in_its_address_is_stopped(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    """The page hands the typed secret to its service worker, whose own fetch puts it in an
    address: that request is stopped too (the worker's requests go through the context)."""
    site, requests = sign_in
    secret = "s3cret-worker-pass"
    item = await people.vault.create_item(
        TEAM, "login", {"name": "Shop", "sites": [site.base], "password": secret}
    )
    tab = await open_on(desk_context, site.url("/sw-sign-in"))
    assert tab.page is not None
    await tab.page.wait_for_function("document.getElementById('ready').textContent !== ''")
    result = await call(desk_context, "fill_from_vault", **_vault_args(tab, item.id, "input"))
    await tab.page.wait_for_function("document.getElementById('step').textContent !== ''")
    assert (result["status"], result["page"]) == ("entered", "kept"), result
    assert await tab.page.text_content("#step") == "stopped"
    assert requests.of("/api/login") == ["POST"]
    assert requests.of("/api/verify") == []
    protection = protection_of(tab)
    assert protection is not None
    assert (protection.stopped, protection.navigations_stopped) == (1, 0)


async def test_a_contacts_phone_goes_with_a_get_form(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    phone = "+44 20 7946 0000"
    item = await people.vault.create_item(TEAM, "contact", {"name": "Me", "phone": phone})
    tab = await open_on(desk_context, site.url("/find-by-phone"))
    args = _vault_args(tab, item.id, "input", "phone")
    args["submit"] = {"kind": "css", "selector": "button"}
    result = await call(desk_context, "fill_from_vault", **args)
    # A phone number is no secret: the form sends it where it sends it, the address too.
    assert (result["status"], result["page"]) == ("entered", "new"), result
    assert requests.of("/welcome") == ["GET"]
    assert tab.url == site.url("/welcome?" + urlencode({"phone": phone}))
    assert not holds_secret(tab)


async def test_a_field_the_agent_calls_a_user_name_is_held_unless_it_reads_as_one(
    desk_context: ToolContext, people: People, sign_in: tuple[Site, Requests]
) -> None:
    site, requests = sign_in
    tab = await open_on(desk_context, site.url("/echo"))
    field = {"target": {"kind": "css", "selector": "input"}, "kind": "username"}
    running = asyncio.create_task(
        call(_quick(desk_context), "submit_secret", tabId=tab.id, fields=[field], purpose="x")
    )
    await answer_with(people, PASSWORD)
    result = await running
    # A password field, whatever the agent called it: the page echoed what went in, so it
    # was loaded again and the agent reads none of it.
    assert (result["status"], result["page"]) == ("entered", "reloaded"), result
    assert requests.of("/api/login") == ["POST"]
    assert tab.page is not None
    assert PASSWORD not in await tab.page.content()

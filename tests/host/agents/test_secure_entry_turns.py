"""Secure entry in full agent turns: a real host and Chromium, a local sign-in site, the
fake Anthropic API, and members on real WebRTC peers who watch the tab live and answer.

The password and card number go from a member's answer (or the vault) into the page and
nowhere else: not to the provider, a log line, the database file, a Team API answer, an
event or a live-view frame.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from peer.connection import HostConnection
from peer.live_view import LiveView, ViewClosed, open_view
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.protection import TabProtection, protection_of
from server.host.browser.tabs import Tab
from server.host.tools.context import Unattended
from server.logs import JsonFormatter, TextFormatter
from tests.host.agents.test_turns import (
    EVENT_SECONDS,
    Follow,
    TurnsHost,
    answer,
    drained,
    files_holding,
    last_tool_result,
    make_agent,
    refused,
    send,
    start_thread,
)
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.openai import FakeChatCompletions
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.hub_server import hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Posted, serving, sign_in_app

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANTHROPIC_KEY = "sk-ant-entry-" + secrets.token_hex(16)
PASSWORD = "pw-" + secrets.token_hex(12)
CARD = "4111111111111111"


@dataclass
class EntryHost:
    turns: TurnsHost
    posted: Posted


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def entry(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EntryHost]:
    folder = tmp_path_factory.mktemp("entry")
    posted = Posted()
    async with (
        scratch_database("sqlite", folder) as database,
        serving(sign_in_app(posted)) as site,
        FakeAnthropic(api_key=ANTHROPIC_KEY) as anthropic,
        FakeChatCompletions(api_key="sk-unused-0123456789") as openai,
        running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        await server.invite(owner, team_id, "member@example.com", "member")
        host_id = await wait_linked(server)
        members = [
            await peer_member(server, email, folder)
            for email in ("owner@example.com", "member@example.com")
        ]
        admin, member = [await m.connect(host_id) for m in members]
        await admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        await admin.call("providers-v1/set_key", {"provider": "anthropic", "key": ANTHROPIC_KEY})
        turns = TurnsHost(
            server, team_id, admin, member, anthropic, openai, site, folder / "crewhost.db"
        )
        yield EntryHost(turns, posted)
        for connection in (admin, member):
            await connection.close()
        for m in members:
            await m.hub.close()


async def open_on(host: TurnsHost, path: str, agent_id: str, thread_id: str) -> str:
    engine = await host.services.browser.engine()
    tab = await engine.open_tab(
        host.team_id,
        Partition.shared(),
        url=host.site.url(path),
        owner_agent_id=agent_id,
        owner_thread_id=thread_id,
    )
    return tab.id


async def watchable_tab(host: TurnsHost, tab_id: str) -> tuple[Tab, TabProtection]:
    """The agent's tab in secure entry, open to the view of the person who takes it."""
    engine = await host.services.browser.engine()
    tab = engine.get_tab(host.team_id, tab_id)
    protection = protection_of(tab)
    assert protection is not None
    assert tab.protection.watchable
    return tab, protection


async def only_the_holder_watches(host: TurnsHost, tab_id: str) -> LiveView:
    """A teammate watching without taking the tab is refused; the member takes it and
    watches."""
    with pytest.raises(ViewClosed) as closed:
        await open_view(host.admin, tab_id)
    assert closed.value.code == "tabHoldsSecret"
    view = await open_view(host.member, tab_id, take=True)
    assert (await view.expect("held"))["byYou"] is True
    return view


async def agent_on(host: TurnsHost, path: str) -> tuple[str, Follow, str]:
    """A new agent, a thread of the member's with it, and a tab of that thread on ``path``."""
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    return agent_id, follow, await open_on(host, path, agent_id, follow.thread_id)


def asks_for_secret(tab_id: str, *selectors: str) -> MessageEvents:
    """The model's turn that calls submit_secret for the fields ``selectors`` find."""
    fields = [{"target": {"kind": "css", "selector": selector}} for selector in selectors]
    arguments = {"tabId": tab_id, "fields": fields, "purpose": "sign in"}
    return MessageEvents().tool_use("toolu_secret", "submit_secret", arguments).stop("tool_use")


def said(*replies: MessageEvents) -> list[StreamReply]:
    return [reply.reply() for reply in replies]


def everything_seen(
    host: TurnsHost, follow: Follow, answers: list[Any], caplog: pytest.LogCaptureFixture
) -> str:
    """The provider's recorded requests, the answers and events the peers got, every log
    record as both log formats write it: one text to search."""
    logged = []
    for formatter in (JsonFormatter(), TextFormatter()):
        logged += [formatter.format(record) for record in caplog.records]
    requests = [json.dumps(r.body) for r in host.anthropic.requests]
    return "\n".join([*requests, json.dumps(answers), json.dumps(follow.seen), *logged])


async def test_a_member_hands_a_secret_to_a_single_page_sign_in(
    entry: EntryHost, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    host = entry.turns
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_on(host, "/spa", agent_id, follow.thread_id)
    view = await open_view(host.member, tab_id)
    await view.next_frame()
    field_arg = {"target": {"kind": "css", "selector": "input[type=password]"}}
    host.anthropic.script(
        *said(
            MessageEvents()
            .tool_use(
                "toolu_secret",
                "submit_secret",
                {"tabId": tab_id, "fields": [field_arg], "purpose": "sign in to the shop"},
            )
            .stop("tool_use"),
            MessageEvents().text("I am at the next step.").stop(),
        )
    )

    await send(follow, "Sign in to the shop")
    asked = await follow.until("attention-requested")
    assert asked["kind"] == "secret"
    assert asked["secret"]["origin"] == host.site.base
    assert asked["secret"]["fields"] == [{"label": "Password", "kind": "password"}]
    listed = await host.member.call("attention-v1/list")
    shown = next(r for r in listed["requests"] if r["id"] == asked["id"])
    assert shown["secret"] == asked["secret"]
    # The secret is never a chat message or a consent answer; saving needs an admin.
    approve = {"id": asked["id"], "approve": True}
    assert await refused(host.member, "attention-v1/answer", approve) == "secretRequestKind"
    save = {"id": asked["id"], "values": [PASSWORD]}
    assert await refused(host.member, "browser-secret-vault-v1/submit", save) == "forbidden"
    wrong = {"id": asked["id"], "values": [PASSWORD, PASSWORD]}
    assert await refused(host.member, "browser-secret-handoff-v1/submit", wrong) == (
        "invalidArgument"
    )
    answers: list[Any] = [
        await host.member.call(
            "browser-secret-handoff-v1/submit", {"id": asked["id"], "values": [PASSWORD]}
        )
    ]
    await asyncio.wait_for(view.closed.wait(), 15)
    assert view.close_code == "tabHoldsSecret"
    finished = await follow.until("turn-finished")
    assert finished["status"] == "done"

    result = last_tool_result(host.anthropic.requests[-1])
    assert (result["status"], result["page"]) == ("entered", "kept")
    assert entry.posted.bodies[-1] == ("/api/login", PASSWORD)
    # Watching stays refused while the kept page is protected...
    with pytest.raises(ViewClosed) as closed:
        await open_view(host.member, tab_id)
    assert closed.value.code == "tabHoldsSecret"
    engine = await host.services.browser.engine()
    tab = engine.get_tab(host.team_id, tab_id)
    protection = protection_of(tab)
    assert protection is not None
    assert await tab.page.eval_on_selector("input", "el => el.value") == ""  # type: ignore[union-attr]
    # ...until a new document ends protection.
    await engine.navigate(
        host.team_id, tab_id, Caller.agent(agent_id, follow.thread_id), host.site.url("/welcome")
    )
    await asyncio.wait_for(protection.released.wait(), 15)
    again = await open_view(host.member, tab_id)
    again.close()

    frames: list[bytes] = []
    while not view.frames.empty():
        frames.append(view.frames.get_nowait().jpeg)
    answers.append(await host.member.call("attention-v1/list"))
    answers.append(await host.member.call("threads-v1/get", {"threadId": follow.thread_id}))
    answers.append(await drained(host.member))
    seen = everything_seen(host, follow, answers, caplog)
    assert PASSWORD not in seen
    assert not [frame for frame in frames if PASSWORD.encode() in frame]
    assert (
        await asyncio.to_thread(files_holding, host.database_file.parent, PASSWORD.encode()) == []
    )


async def test_an_agent_signs_in_from_the_vault_after_consent(
    entry: EntryHost, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    host = entry.turns
    login = await host.admin.call(
        "vault-v1/create",
        {
            "item": {
                "kind": "login",
                "name": "Shop",
                "sites": [host.site.base],
                "username": "ada@example.com",
                "password": PASSWORD,
            }
        },
    )
    card = await host.admin.call(
        "vault-v1/create",
        {"item": {"kind": "card", "name": "Team card", "number": CARD, "securityCode": "737"}},
    )
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_on(host, "/signin", agent_id, follow.thread_id)

    def fill_the_login(request: RecordedRequest) -> bytes:
        listed = last_tool_result(request)["items"]
        item_id = next(i["id"] for i in listed if i["name"] == "Shop")
        fields = [
            {"target": {"kind": "css", "selector": "input[type=email]"}, "field": "username"},
            {"target": {"kind": "css", "selector": "input[type=password]"}, "field": "password"},
        ]
        arguments = {"tabId": tab_id, "itemId": item_id, "fields": fields}
        return (
            MessageEvents()
            .tool_use("toolu_fill", "fill_from_vault", arguments)
            .stop("tool_use")
            .body()
        )

    host.anthropic.script(
        MessageEvents().tool_use("toolu_list", "list_vault_items", {}).stop("tool_use").reply(),
        StreamReply(fill_the_login),
        MessageEvents().text("Signed in.").stop().reply(),
    )
    await send(follow, "Sign in with the team's login")
    asked = await follow.until("attention-requested")
    assert (asked["kind"], asked["tool"]) == ("consent", "fill_from_vault")
    assert entry.posted.bodies == [] or entry.posted.bodies[-1][0] != "/signin"
    await answer(follow, asked["id"], approve=True)
    finished = await follow.until("turn-finished")
    assert finished["status"] == "done"
    result = last_tool_result(host.anthropic.requests[-1])
    assert (result["status"], result["page"]) == ("entered", "new")
    assert entry.posted.bodies[-1][0] == "/signin"
    assert PASSWORD in entry.posted.bodies[-1][1]

    answers: list[Any] = []
    for connection, route, args in (
        (host.admin, "vault-v1/list", {}),
        (host.admin, "vault-v1/read", {"itemId": login["id"]}),
        (host.admin, "vault-v1/read", {"itemId": card["id"]}),
        (host.member, "vault-v1/list_names", {}),
        (host.member, "attention-v1/list", {}),
        (host.member, "threads-v1/get", {"threadId": follow.thread_id}),
    ):
        answers.append(await connection.call(route, args))
    assert await refused(host.member, "vault-v1/read", {"itemId": login["id"]}) == "forbidden"
    answers += [login, card, await drained(host.member), await drained(host.admin)]
    seen = everything_seen(host, follow, answers, caplog)
    for secret in (PASSWORD, CARD):
        assert secret not in seen
        assert (
            await asyncio.to_thread(files_holding, host.database_file.parent, secret.encode()) == []
        )
    # The same search finds what is stored in the clear: it looks in the right places.
    assert "ada@example.com" in seen


async def test_owners_save_a_secret_and_add_a_requested_item_members_cannot(
    entry: EntryHost,
) -> None:
    host = entry.turns
    _agent_id, follow, tab_id = await agent_on(host, "/signin")
    host.anthropic.script(
        *said(
            asks_for_secret(tab_id, "input[type=email]", "input[type=password]"),
            MessageEvents()
            .tool_use(
                "toolu_item",
                "request_vault_item",
                {"kind": "card", "reason": "to pay for the order", "name": "Order card"},
            )
            .stop("tool_use"),
            MessageEvents().text("Done.").stop(),
        )
    )
    # The owner started this thread's agent but the member's thread: share it.
    await host.member.call("threads-v1/share", {"threadId": follow.thread_id, "shared": True})
    await send(follow, "Sign in and get a card")
    asked = await follow.until("attention-requested")
    assert asked["secret"]["vaultOffered"]
    values = ["grace@example.com", PASSWORD]
    saved = await host.admin.call(
        "browser-secret-vault-v1/submit", {"id": asked["id"], "values": values, "name": "Shop"}
    )
    assert (saved["item"]["name"], saved["item"]["passwordSet"]) == ("Shop", True)
    assert saved["item"]["sites"] == [host.site.base]
    assert PASSWORD not in json.dumps(saved)
    vault = host.services.vault
    assert await vault.open_secret(host.team_id, saved["item"]["id"], "password") == PASSWORD

    wanted = await follow.until("attention-requested")
    assert (wanted["kind"], wanted["vaultItem"]["kind"]) == ("vaultItem", "card")
    assert wanted["vaultItem"]["prefill"] == {"name": "Order card"}
    item = {"id": wanted["id"], "name": "Order card", "number": CARD, "securityCode": "737"}
    assert await refused(host.member, "browser-secret-vault-v1/add_item", item) == "forbidden"
    added = await host.admin.call("browser-secret-vault-v1/add_item", item)
    finished = await follow.until("turn-finished")
    assert finished["status"] == "done"
    result = last_tool_result(host.anthropic.requests[-1])
    assert result["item"] == {"id": added["item"]["id"], "kind": "card", "name": "Order card"}
    for request in host.anthropic.requests:
        assert PASSWORD not in json.dumps(request.body)
        assert CARD not in json.dumps(request.body)


async def test_a_failed_entry_is_emptied_and_left_to_the_person_who_takes_it_over(
    entry: EntryHost,
) -> None:
    host = entry.turns
    _agent_id, follow, tab_id = await agent_on(host, "/stubborn")
    host.anthropic.script(
        *said(
            asks_for_secret(tab_id, "input[name=password]", "input[name=code]"),
            MessageEvents()
            .tool_use("toolu_eval", "evaluate", {"tabId": tab_id, "expression": "1"})
            .stop("tool_use"),
            MessageEvents().text("A person has the tab.").stop(),
        )
    )
    await send(follow, "Sign in")
    asked = await follow.until("attention-requested")
    await host.member.call(
        "browser-secret-handoff-v1/submit", {"id": asked["id"], "values": [PASSWORD, "123456"]}
    )
    wanted = await follow.until("browser-takeover-requested")
    assert "focus" in wanted["reason"]
    consent = await follow.until("attention-requested")
    await answer(follow, consent["id"], approve=True)
    await follow.until("turn-finished")
    results = [last_tool_result(r) for r in host.anthropic.requests[-2:]]
    assert results[0]["status"] == "takeover"
    assert results[1]["error"]["code"] == "tabHoldsSecret"  # agent scripts stay refused

    tab, protection = await watchable_tab(host, tab_id)
    assert tab.page is not None
    # Nothing secret stays on screen: the field the host filled is empty again.
    for name in ("password", "code"):
        assert await tab.page.eval_on_selector(f"input[name={name}]", "el => el.value") == ""
    # A teammate's plain view is refused; the person who takes it over watches and steers it.
    view = await only_the_holder_watches(host, tab_id)
    assert tab.held_by is not None
    frame = await view.next_frame()
    box = await tab.page.locator("input[name=password]").bounding_box()
    assert box is not None
    view.click((box["x"] + box["width"] / 2) / frame.width, (box["y"] + 8) / frame.height)
    view.insert_text("typed by a person")
    await tab.page.wait_for_function(
        "document.querySelector('input[name=password]').value !== ''", timeout=15_000
    )
    assert await tab.page.eval_on_selector("input[name=password]", "el => el.value") == (
        "typed by a person"
    )
    # While the member holds it, a teammate is refused, taking or not.
    for take in (False, True):
        with pytest.raises(ViewClosed) as closed:
            await open_view(host.admin, tab_id, take=take)
        assert closed.value.code == "tabHoldsSecret"
    # Letting go ends the holder's view too; taking it again opens one.
    view.send({"type": "release"})
    await asyncio.wait_for(view.closed.wait(), 15)
    assert view.close_code == "tabHoldsSecret"
    view = await open_view(host.member, tab_id, take=True)
    frames = [(await view.next_frame()).jpeg]
    # A main-frame navigation ends protection: everyone may watch again.
    await host.member.call(
        "browser-control-v1/navigate", {"tabId": tab_id, "url": host.site.url("/welcome")}
    )
    await asyncio.wait_for(protection.released.wait(), 15)
    watcher = await open_view(host.admin, tab_id)
    watcher.close()
    view.close()
    assert not [jpeg for jpeg in frames if PASSWORD.encode() in jpeg]
    assert all(PASSWORD not in json.dumps(r.body) for r in host.anthropic.requests)


async def agent_fills_the_card(host: TurnsHost, path: str) -> tuple[Follow, str]:
    """An agent's fill_from_vault of a team card on ``path``, approved; the turn's end."""
    card = await host.admin.call(
        "vault-v1/create",
        {"item": {"kind": "card", "name": "Order card", "number": CARD, "securityCode": "737"}},
    )
    _agent_id, follow, tab_id = await agent_on(host, path)
    fields = [
        {"target": {"kind": "css", "selector": "input[name=cc]"}, "field": "number"},
        {"target": {"kind": "css", "selector": "input[name=csc]"}, "field": "securityCode"},
    ]
    arguments = {"tabId": tab_id, "itemId": card["id"], "fields": fields}
    host.anthropic.script(
        *said(
            MessageEvents().tool_use("toolu_card", "fill_from_vault", arguments).stop("tool_use"),
            MessageEvents().text("A person confirms the payment.").stop(),
        )
    )
    await send(follow, "Pay with the team card")
    await answer(follow, (await follow.until("attention-requested"))["id"], approve=True)
    wanted = await follow.until("browser-takeover-requested")
    assert wanted["code"] == "paymentConfirmation"
    await follow.until("turn-finished")
    result = last_tool_result(host.anthropic.requests[-1])
    assert (result["status"], result["code"]) == ("takeover", "paymentConfirmation")
    return follow, tab_id


async def test_the_person_who_confirms_a_filled_card_sees_it_masked_and_pays(
    entry: EntryHost,
) -> None:
    host = entry.turns
    _follow, tab_id = await agent_fills_the_card(host, "/checkout")
    tab, protection = await watchable_tab(host, tab_id)
    assert tab.page is not None
    # The fields keep the card, for the form to send, and show dots for it.
    for name, value in (("cc", CARD), ("csc", "737")):
        field = tab.page.locator(f"input[name={name}]")
        assert await field.input_value() == value
        shown = await field.evaluate("el => getComputedStyle(el).webkitTextSecurity")
        assert shown == "disc"
    view = await only_the_holder_watches(host, tab_id)
    frame = await view.next_frame()

    async def click(selector: str) -> None:
        assert tab.page is not None
        box = await tab.page.locator(selector).bounding_box()
        assert box is not None
        middle = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        view.click(middle[0] / frame.width, middle[1] / frame.height)

    # Nothing of it leaves by the clipboard, even from the person holding the tab.
    await click("input[name=cc]")
    await tab.page.wait_for_function("document.activeElement.name === 'cc'", timeout=15_000)
    view.send({"type": "select-all"})
    copied = await view.copy()
    assert copied["type"] == "error", copied
    assert copied["code"] == "tabHoldsSecret"
    # The person confirms: the form sends the card, and the new page ends protection.
    await click("button[type=submit]")
    await asyncio.wait_for(protection.released.wait(), 15)
    assert entry.posted.bodies[-1][0] == "/pay"
    assert f"cc={CARD}" in entry.posted.bodies[-1][1]
    view.close()


async def test_a_card_the_page_echoes_stays_closed_to_every_view(entry: EntryHost) -> None:
    host = entry.turns
    _follow, tab_id = await agent_fills_the_card(host, "/checkout-preview")
    engine = await host.services.browser.engine()
    tab = engine.get_tab(host.team_id, tab_id)
    protection = protection_of(tab)
    assert protection is not None
    assert not tab.protection.watchable
    for connection in (host.member, host.admin):
        with pytest.raises(ViewClosed) as closed:
            await open_view(connection, tab_id, take=True)
        assert closed.value.code == "tabHoldsSecret"


async def until_asked(connection: HostConnection, thread_id: str) -> dict[str, Any]:
    """The first request of the thread's that ``connection``'s member is asked, once it is."""
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await connection.events.get()
            if event["event"] == "attention-requested":
                listed = (await connection.call("attention-v1/list"))["requests"]
                found = [r for r in listed if r["threadId"] == thread_id]
                if found:
                    return dict(found[0])


async def test_a_routines_secret_request_goes_to_its_approvers_for_its_time(
    entry: EntryHost,
) -> None:
    """A secret asked in a routine's run, which nobody sits in, goes to the routine's
    approvers only and waits as long as the routine's other requests, as a consent does."""
    host = entry.turns
    agent_id = await make_agent(host)
    member_id = (await host.member.call("host-v1/whoami"))["accountId"]
    routine = await host.admin.call(
        "routines-v1/create",
        {
            "agentId": agent_id,
            "name": "Nightly sign-in",
            "message": "Sign in",
            "schedule": {"kind": "every", "everySeconds": 86_400},
            "approvers": [member_id],
            "approvalSeconds": 3_600,
        },
    )
    follow = await start_thread(host, agent_id, host.admin)
    tab_id = await open_on(host, "/spa", agent_id, follow.thread_id)
    host.anthropic.script(
        *said(
            asks_for_secret(tab_id, "input[type=password]"),
            MessageEvents().text("Nobody gave the password.").stop(),
        )
    )
    admin_id = (await host.admin.call("host-v1/whoami"))["accountId"]
    await host.services.threads.start_unattended(
        host.team_id,
        agent_id,
        account_id=admin_id,
        text="Sign in",
        title="Nightly sign-in",
        shared=False,
        thread_id=follow.thread_id,
        unattended=Unattended((member_id,), 3_600.0, routine["id"]),
    )

    asked = await until_asked(host.member, follow.thread_id)
    assert asked["kind"] == "secret"
    assert asked["expiresAt"] == pytest.approx(host.server.hub.clock.now() + 3_600, abs=0.01)
    # The admin sees the thread but is no approver of the routine: not theirs to answer.
    listed = (await host.admin.call("attention-v1/list"))["requests"]
    assert asked["id"] not in [r["id"] for r in listed]
    await host.member.call("attention-v1/answer", {"id": asked["id"], "approve": False})
    finished = await follow.until("turn-finished")
    assert finished["status"] == "done"
    assert last_tool_result(host.anthropic.requests[-1])["status"] == "declined"

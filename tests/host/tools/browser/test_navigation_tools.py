"""Tab tools against real Chromium: open, navigate, list_tabs, close_tab, handle_dialog,
set_environment and request_takeover."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from playwright.async_api import Page

from server.common.protocol.events import HostEvent
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import AGENT, TEAM, call, open_page
from tests.support.sites import Site

OTHER_AGENT = Caller.agent("b" * 32, "thread-2")


async def test_open_loads_an_address_and_returns_its_snapshot(
    context: ToolContext, site: Site
) -> None:
    opened = await call(context, "open", url=site.url("/behind-check.html"))
    assert opened["resolvedAs"] == "url"
    assert opened["url"] == site.url("/behind-check.html")
    assert 'heading "Fares"' in opened["tree"]
    tab = context.engine.get_tab(TEAM, opened["tabId"])
    assert (tab.owner_agent_id, tab.owner_thread_id) == (AGENT.agent_id, AGENT.thread_id)


async def test_open_without_an_address_gives_a_blank_tab(context: ToolContext) -> None:
    opened = await call(context, "open")
    assert opened["url"] == "about:blank"
    assert [t.id for t in context.engine.list_tabs(TEAM)] == [opened["tabId"]]


async def test_open_uses_the_agents_partition(context: ToolContext, site: Site) -> None:
    asked: list[tuple[str, str]] = []

    async def own_partition(team_id: str, agent_id: str) -> Partition:
        asked.append((team_id, agent_id))
        return Partition.for_agent(agent_id)

    agent = dataclasses.replace(context, partition_for_agent=own_partition)
    opened = await call(agent, "open", url=site.url("/behind-check.html"))
    assert asked == [(TEAM, AGENT.agent_id)]
    tab = context.engine.get_tab(TEAM, opened["tabId"])
    assert tab.partition == Partition.for_agent(str(AGENT.agent_id))


@pytest.mark.parametrize(
    ("url", "code"),
    [("mailto:ana@example.com", "externalAppRefused"), ("file:///etc/passwd", "addressRefused")],
)
async def test_open_refuses_before_any_tab_exists(
    context: ToolContext, url: str, code: str
) -> None:
    refused = await call(context, "open", url=url)
    assert refused["error"]["code"] == code
    assert context.engine.list_tabs(TEAM) == []


async def test_navigate_resolves_like_an_address_bar(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    host = site.base.removeprefix("http://")
    typed = await call(context, "navigate", tabId=tab.id, url=f"{host}/confirm-dialog.html")
    assert (typed["resolvedAs"], typed["url"]) == ("url", site.url("/confirm-dialog.html"))
    searching = dataclasses.replace(
        context,
        settings=dataclasses.replace(
            context.settings, search_url=site.url("/search.html?q={query}")
        ),
    )
    searched = await call(searching, "navigate", tabId=tab.id, url="night trains to Vienna")
    assert searched["resolvedAs"] == "search"
    assert searched["url"] == site.url("/search.html?q=night+trains+to+Vienna")
    assert 'text "night trains to Vienna"' in searched["tree"]


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("javascript:document.title='x'", "addressRefused"),
        ("data:text/html,<title>x</title>", "addressRefused"),
        ("chrome://settings", "addressRefused"),
        ("tel:+351000000", "externalAppRefused"),
    ],
)
async def test_navigate_refuses_and_leaves_the_page(
    context: ToolContext, site: Site, url: str, code: str
) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    refused = await call(context, "navigate", tabId=tab.id, url=url)
    assert refused["error"]["code"] == code
    assert tab.page is not None
    assert (tab.page.url, await tab.page.title()) == (site.url("/behind-check.html"), "Fares")


async def test_a_failed_load_names_the_network_error_only(context: ToolContext) -> None:
    opened = await call(context, "open")
    failed = await call(context, "navigate", tabId=opened["tabId"], url="http://127.0.0.1:9/x")
    assert failed["error"]["code"] == "navigationFailed"
    assert "ERR_" in failed["error"]["message"]
    assert "127.0.0.1" not in json.dumps(failed)
    # open keeps the tab it made, and says the load failed.
    kept = await call(context, "open", url="http://127.0.0.1:9/x")
    assert kept["loadError"]["code"] == "navigationFailed"
    assert context.engine.get_tab(TEAM, kept["tabId"]).url == "about:blank"


async def test_a_refused_address_names_the_rule(context: ToolContext, site: Site) -> None:
    # The tests allow the site's 127.0.0.1, not the name localhost nor link-local addresses.
    opened = await call(context, "open")
    url = f"http://localhost:{site.port}/behind-check.html"
    refused = await call(context, "navigate", tabId=opened["tabId"], url=url)
    assert refused["error"] == {
        "code": "addressRefused",
        "message": f"Crewhost refused {url}: loopback addresses are blocked for browsers on "
        "this host (setting browser_allowed_hosts)",
        "rule": "loopback",
    }
    kept = await call(context, "open", url="169.254.169.254/latest/meta-data/")
    assert kept["loadError"]["code"] == "addressRefused"
    assert "link-local addresses (cloud metadata among them)" in kept["loadError"]["message"]
    assert site.requests == []


async def test_another_agents_tab_is_unknown(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    other = dataclasses.replace(context, caller=OTHER_AGENT)
    for name, args in [
        ("navigate", {"tabId": tab.id, "url": site.url("/")}),
        ("close_tab", {"tabId": tab.id}),
        ("get_tab_content", {"tabId": tab.id}),
        ("request_takeover", {"tabId": tab.id, "reason": "x"}),
    ]:
        refused = await call(other, name, **args)
        assert refused["error"]["code"] == "tabNotFound", name
    assert (await call(other, "list_tabs"))["tabs"] == []


async def test_open_refuses_the_cookie_banner_of_its_first_page(
    context: ToolContext, site: Site
) -> None:
    opened = await call(context, "open", url=site.url("/consent-banner.html?delay=0"))
    tab = context.engine.get_tab(TEAM, opened["tabId"])
    await context.engine.run(
        TEAM, tab.id, AGENT, lambda p: p.wait_for_function("document.title === 'rejected'")
    )


async def test_list_and_close_tabs(context: ToolContext, site: Site) -> None:
    first = await call(context, "open", url=site.url("/behind-check.html"))
    second = await call(context, "open", url=site.url("/search.html"))
    listed = await call(context, "list_tabs")
    assert [(t["tabId"], t["title"]) for t in listed["tabs"]] == [
        (first["tabId"], "Fares"),
        (second["tabId"], "Search results"),
    ]
    closed = await call(context, "close_tab", tabId=first["tabId"])
    assert closed == {"closed": True, "tabId": first["tabId"]}
    assert [t["tabId"] for t in (await call(context, "list_tabs"))["tabs"]] == [second["tabId"]]


async def open_dialog(context: ToolContext, site: Site) -> str:
    tab = await open_page(context, site, "/confirm-dialog.html")
    done = await context.engine.run(
        TEAM, tab.id, AGENT, lambda p: p.click("#ask"), input_action=True
    )
    assert done.dialog is not None
    return tab.id


async def test_handle_dialog_answers_and_returns_the_page(context: ToolContext, site: Site) -> None:
    tab_id = await open_dialog(context, site)
    listed = await call(context, "list_tabs")
    dialog = listed["tabs"][0]["dialog"]
    assert (dialog["type"], dialog["message"]) == ("confirm", "Delete the draft?")
    wrong = await call(context, "handle_dialog", tabId=tab_id, accept=True, dialogId="nope")
    assert wrong["error"]["code"] == "dialogClosed"
    answered = await call(
        context, "handle_dialog", tabId=tab_id, accept=False, dialogId=dialog["id"]
    )
    assert (answered["answered"], answered["title"]) == (True, "kept")
    again = await call(context, "handle_dialog", tabId=tab_id, accept=True)
    assert again["error"]["code"] == "dialogClosed"


async def test_a_dialog_an_answer_opens_is_the_answers_result(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/two-dialogs.html")
    done = await context.engine.run(
        TEAM, tab.id, AGENT, lambda p: p.click("#ask"), input_action=True
    )
    assert done.dialog is not None
    assert done.dialog.message == "Saved."
    answered = await call(context, "handle_dialog", tabId=tab.id, accept=True)
    assert (answered["dialog"]["type"], answered["dialog"]["message"]) == (
        "confirm",
        "Send it too?",
    )
    last = await call(context, "handle_dialog", tabId=tab.id, accept=False)
    assert (last["answered"], last["title"]) == (True, "kept")


async def test_set_environment_changes_what_the_page_sees(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    result = await call(
        context,
        "set_environment",
        tabId=tab.id,
        viewport={"width": 800, "height": 600},
        locale="de-DE",
        timezone="Asia/Tokyo",
    )
    assert result["ok"] is True

    async def seen(page: Page) -> Any:
        return await page.evaluate(
            "[innerWidth, innerHeight, navigator.language, new Date(0).getHours(),"
            " Intl.DateTimeFormat().resolvedOptions().timeZone]"
        )

    facts = (await context.engine.run(TEAM, tab.id, AGENT, seen)).value
    assert facts is not None
    width, height, language, hour, zone = facts
    assert (width, height, language, zone) == (800, 600, "de-DE", "Asia/Tokyo")
    assert hour == 9  # midnight UTC is nine in the morning in Tokyo
    # The languages hold for the next document too.
    await call(context, "navigate", tabId=tab.id, url=site.url("/search.html"))
    languages = await context.engine.run(
        TEAM, tab.id, AGENT, lambda p: p.evaluate("navigator.languages")
    )
    assert languages.value == ["de-DE", "de"]


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"timezone": "Mars/Olympus"},
        {"timezone": "Asia"},
        {"locale": "not a locale"},
        {"viewport": {"width": 5, "height": 5}},
    ],
)
async def test_set_environment_refuses_what_it_cannot_set(
    context: ToolContext, site: Site, args: dict[str, Any]
) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    refused = await call(context, "set_environment", tabId=tab.id, **args)
    assert refused["error"]["code"] == "invalidArguments"


async def test_request_takeover_tells_the_team_and_returns_at_once(
    context: ToolContext, site: Site
) -> None:
    told: list[tuple[str, HostEvent]] = []
    agent = dataclasses.replace(context, announce=lambda *event: told.append(event))
    tab = await open_page(context, site, "/human-phrase.html")
    asked = await call(agent, "request_takeover", tabId=tab.id, reason="Solve the check")
    assert asked["status"] == "requested"
    assert [(team, event.message().model_dump()) for team, event in told] == [
        (
            TEAM,
            {
                "event": "browser-takeover-requested",
                "data": {
                    "tabId": tab.id,
                    "agentId": AGENT.agent_id,
                    "threadId": AGENT.thread_id,
                    "reason": "Solve the check",
                    "code": None,
                },
            },
        )
    ]
    context.engine.take_control(TEAM, tab.id, "account-1")
    held = await call(agent, "request_takeover", tabId=tab.id, reason="Solve the check")
    assert held["status"] == "held"
    assert len(told) == 1

"""list_tabs filters, open in an existing tab or without waiting, activate_tab, and
get_tab_content's prompt, against real Chromium."""

from __future__ import annotations

import dataclasses

from server.host.tools.context import ToolContext
from tests.host.tools.conftest import TEAM, call, open_page
from tests.support.sites import Site


class Summaries:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, prompt: str, content: str) -> str:
        self.asked.append((prompt, content))
        return "a short summary"


async def test_list_tabs_filters_by_address_title_and_active(
    context: ToolContext, site: Site
) -> None:
    tea = await open_page(context, site, "/article.html")
    forms = await open_page(context, site, "/forms.html")
    listed = await call(context, "list_tabs")
    assert {t["tabId"]: t["title"] for t in listed["tabs"]} == {
        tea.id: "Tea guide",
        forms.id: "forms",
    }
    assert all(t["active"] is False for t in listed["tabs"])
    by_url = await call(context, "list_tabs", urlPattern=r"forms\.html$")
    assert [t["tabId"] for t in by_url["tabs"]] == [forms.id]
    by_title = await call(context, "list_tabs", titlePattern="^tea")
    assert [t["tabId"] for t in by_title["tabs"]] == [tea.id]
    assert (await call(context, "list_tabs", active=True))["tabs"] == []
    activated = await call(context, "activate_tab", tabId=forms.id)
    assert activated == {"tabId": forms.id, "url": site.url("/forms.html"), "active": True}
    assert context.engine.active_tab_id(TEAM) == forms.id
    only = await call(context, "list_tabs", active=True)
    assert [t["tabId"] for t in only["tabs"]] == [forms.id]
    rest = await call(context, "list_tabs", active=False)
    assert [t["tabId"] for t in rest["tabs"]] == [tea.id]
    await call(context, "close_tab", tabId=forms.id)
    assert context.engine.active_tab_id(TEAM) is None


async def test_a_bad_or_oversize_pattern_is_refused(context: ToolContext, site: Site) -> None:
    await open_page(context, site, "/article.html")
    bad = await call(context, "list_tabs", urlPattern="(unclosed")
    assert bad["error"]["code"] == "invalidPattern"
    huge = await call(context, "list_tabs", titlePattern="a" * 201)
    assert huge["error"]["code"] == "invalidArguments"


async def test_activate_tab_needs_a_reachable_tab(context: ToolContext) -> None:
    missing = await call(context, "activate_tab", tabId="no-such-tab")
    assert missing["error"]["code"] == "tabNotFound"


async def test_open_navigates_an_existing_tab_and_may_skip_the_wait(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/article.html")
    moved = await call(context, "open_tab", url=site.url("/forms.html"), tabId=tab.id)
    assert moved["tabId"] == tab.id
    assert "tree" in moved
    assert [t.id for t in context.engine.list_tabs(TEAM)] == [tab.id]
    quick = await call(
        context, "open_tab", url=site.url("/long-article.html"), waitUntilLoaded=False, active=True
    )
    assert quick["url"] == site.url("/long-article.html")
    assert "tree" not in quick
    assert context.engine.active_tab_id(TEAM) == quick["tabId"]
    needs_url = await call(context, "open_tab", tabId=tab.id)
    assert needs_url["error"]["code"] == "invalidArguments"
    # ``open`` keeps its rule: it always opens a new tab, whatever tabId it is given.
    kept = await call(context, "open", url=site.url("/forms.html"), tabId=tab.id)
    assert kept["tabId"] not in (tab.id, quick["tabId"])


async def test_get_tab_content_with_a_prompt_is_distilled(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/article.html")
    summaries = Summaries()
    context = dataclasses.replace(context, summarize=summaries)
    result = await call(context, "get_tab_content", tabId=tab.id, prompt="what tea?")
    assert result["content"] == "a short summary"
    assert result["usedSelector"] is None
    assert result["title"] == "Tea guide"
    [(prompt, content)] = summaries.asked
    assert prompt == "what tea?"
    assert "Tea" in content

"""get_tab_content: the rendered page as Markdown, with selectors for what was read."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.async_api import Page

from server.host.tools.context import ToolContext
from server.host.tools.results import MAX_RESULT_CHARS
from tests.host.tools.conftest import AGENT, TEAM, call, open_page
from tests.support.sites import Site


async def test_the_page_reads_as_markdown(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/article.html")
    read = await call(context, "get_tab_content", tabId=tab.id)
    content = read["content"]
    assert (read["title"], read["url"], read["truncated"]) == (
        "Tea guide",
        site.url("/article.html"),
        False,
    )
    assert "# Tea guide" in content
    assert "## Kinds" in content
    assert (
        f"Tea comes in **many** kinds; see [the fares]({site.url('/behind-check.html')})."
        in content
    )
    assert "- Green\n  - Sencha\n- Black" in content
    assert "| Tea | Price |\n| --- | --- |\n| Sencha | 3.20 |\n| Assam | 2.90 |" in content
    assert "Brewed at 80 degrees." in content  # from an open shadow root
    assert "[field: Email]" in content
    assert "[password: Password]" in content
    assert "[button: Sign in]" in content
    for absent in (
        "hunter2",
        "ana@example.com",
        "Hidden text",
        "Undisplayed text",
        "customElements",
    ):
        assert absent not in content


async def test_each_annotation_names_one_element_that_reads_back(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/article.html")
    content = (await call(context, "get_tab_content", tabId=tab.id))["content"]
    selectors = re.findall(r"<!-- css: (.+?) -->", content)
    assert "#prices" in selectors
    assert "section:nth-of-type(3)" in selectors
    for selector in selectors:

        async def matches(p: Page, s: str = selector) -> Any:
            return await p.evaluate("s => document.querySelectorAll(s).length", s)

        count = await context.engine.run(TEAM, tab.id, AGENT, matches)
        assert count.value == 1, selector
    part = await call(context, "get_tab_content", tabId=tab.id, selector="section:nth-of-type(3)")
    assert (part["usedSelector"], part["content"]) == (
        "section:nth-of-type(3)",
        "<!-- css: section:nth-of-type(3) -->\n\nNote one.",
    )


async def test_a_selector_must_match_exactly_one_element(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/article.html")
    for selector, code in [
        ("section.note", "targetAmbiguous"),
        ("#nowhere", "targetNotFound"),
        ("p[", "invalidSelector"),
    ]:
        refused = await call(context, "get_tab_content", tabId=tab.id, selector=selector)
        assert refused["error"]["code"] == code, selector


async def test_a_long_page_is_cut_and_flagged(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/long-article.html")
    read = await call(context, "get_tab_content", tabId=tab.id)
    assert read["truncated"] is True
    assert len(json.dumps(read)) <= MAX_RESULT_CHARS
    assert read["content"].startswith("<!-- css: #main -->\n\nParagraph 0 of")
    short = await call(context, "get_tab_content", tabId=tab.id, maxLength=500)
    assert short["truncated"] is True
    assert len(short["content"]) <= 500

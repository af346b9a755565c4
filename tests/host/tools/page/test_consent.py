"""Cookie banners in agents' tabs: one reject button is clicked; nothing is ever accepted."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

import pytest
from playwright.async_api import Page

from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from server.host.tools.page.consent import dismiss_consent, take_refusals, watch_consent
from tests.host.tools.conftest import AGENT, TEAM, open_page
from tests.support.sites import Site
from tests.support.waiting import eventually


async def agent_tab(context: ToolContext) -> Tab:
    """An agent's blank tab whose documents are watched for banners from the start."""
    tab = await open_page_blank(context)
    watch_consent(context, tab)
    return tab


async def open_page_blank(context: ToolContext) -> Tab:
    return await context.engine.open_tab(
        TEAM, Partition.shared(), owner_agent_id=AGENT.agent_id, owner_thread_id=AGENT.thread_id
    )


async def title_becomes(context: ToolContext, tab: Tab, title: str) -> None:
    expression = f"document.title === {title!r}"
    await context.engine.run(
        TEAM, tab.id, AGENT, lambda p: p.wait_for_function(expression, timeout=10_000)
    )


async def title_of(context: ToolContext, tab: Tab) -> str:
    return str((await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.title())).value)


async def dismiss(context: ToolContext, tab: Tab) -> str | None:
    async def run(page: Page) -> str | None:
        return await dismiss_consent(context, tab, page)

    return (await context.engine.run(TEAM, tab.id, AGENT, run)).value


async def test_a_banner_is_refused_on_each_new_document(context: ToolContext, site: Site) -> None:
    tab = await agent_tab(context)
    refused: list[str] = []

    def recorded(count: int) -> bool:
        refused.extend(take_refusals(tab))
        return len(refused) >= count

    await context.engine.navigate(TEAM, tab.id, AGENT, site.url("/consent-banner.html"))
    await title_becomes(context, tab, "rejected")
    await eventually(lambda: recorded(1))
    await context.engine.navigate(
        TEAM, tab.id, AGENT, site.url("/consent-banner.html?label=Decline%20all")
    )
    await title_becomes(context, tab, "rejected")
    await eventually(lambda: recorded(2))
    assert refused == ["reject all", "decline all"]
    assert take_refusals(tab) == []


@pytest.mark.parametrize(
    "label",
    [
        "Only necessary",
        "Alle ablehnen",
        "Tout refuser",
        "Rechazar todo",
        "Rifiuta tutto",
        "Alles weigeren",
        "Nur notwendige Cookies",
        "Solo necesarias",
    ],
)
async def test_refusing_labels_in_several_languages(
    context: ToolContext, site: Site, label: str
) -> None:
    tab = await agent_tab(context)
    url = site.url(f"/consent-banner.html?label={quote(label)}")
    await context.engine.navigate(TEAM, tab.id, AGENT, url)
    await title_becomes(context, tab, "rejected")


async def test_a_banner_in_an_open_shadow_root_is_refused(context: ToolContext, site: Site) -> None:
    tab = await agent_tab(context)
    await context.engine.navigate(TEAM, tab.id, AGENT, site.url("/consent-shadow.html"))
    await title_becomes(context, tab, "rejected")


async def test_a_consent_platform_button_is_known_by_its_id(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/consent-platform.html")
    assert await dismiss(context, tab) == "OneTrust: no thanks"
    assert await title_of(context, tab) == "rejected"


async def test_a_banner_that_only_accepts_stays(context: ToolContext, site: Site) -> None:
    short = dataclasses.replace(
        context, settings=dataclasses.replace(context.settings, consent_window=0.5)
    )
    tab = await open_page(context, site, "/consent-accept-only.html")
    assert await dismiss(short, tab) is None
    assert await title_of(context, tab) == "Blog"


async def test_a_decline_button_outside_a_cookie_box_is_left(
    context: ToolContext, site: Site
) -> None:
    short = dataclasses.replace(
        context, settings=dataclasses.replace(context.settings, consent_window=0.5)
    )
    tab = await open_page(context, site, "/decline-dialog.html")
    assert await dismiss(short, tab) is None
    assert await title_of(context, tab) == "Invitation"


async def test_a_persons_tab_keeps_its_banner(context: ToolContext, site: Site) -> None:
    tab = await context.engine.open_tab(
        TEAM, Partition.shared(), url=site.url("/consent-banner.html?delay=0")
    )
    watch_consent(context, tab)
    await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.wait_for_selector("#banner button"))
    assert await dismiss(context, tab) is None
    assert await title_of(context, tab) == "News"


async def test_a_tab_a_person_holds_is_left_alone(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/consent-banner.html?delay=0")
    await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.wait_for_selector("#banner button"))
    page = tab.page
    assert page is not None
    context.engine.take_control(TEAM, tab.id, "account-1")
    assert await dismiss_consent(context, tab, page) is None
    assert await page.title() == "News"


async def test_a_page_first_seen_with_a_document_is_searched_at_once(
    context: ToolContext, site: Site
) -> None:
    # Like a popup: the tab already shows the page when the tools first meet it.
    tab = await open_page(context, site, "/consent-banner.html?delay=0")
    watch_consent(context, tab)
    await title_becomes(context, tab, "rejected")


async def test_the_page_cannot_hide_its_banner_from_the_search(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/consent-hostile.html")
    assert await dismiss(context, tab) == "reject all"
    assert await title_of(context, tab) == "rejected"

"""Bot checks: each status of the ``challenge`` field, on local pages shaped like the real ones."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from playwright.async_api import FloatRect, Page

from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from server.host.tools.page.challenge import CHECKBOX_OFFSET, detect_challenge
from tests.host.tools.conftest import AGENT, TEAM, open_page
from tests.support.sites import Site


async def detect(
    context: ToolContext, tab: Tab, wait_limit: float | None = None
) -> dict[str, Any] | None:
    async def read(page: Page) -> dict[str, Any] | None:
        return await detect_challenge(context, tab, page, wait_limit=wait_limit)

    return (await context.engine.run(TEAM, tab.id, AGENT, read)).value


async def page_text(context: ToolContext, tab: Tab) -> str:
    result = await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.inner_text("body"))
    return str(result.value)


async def test_a_page_without_a_check_has_no_challenge(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/behind-check.html")
    assert await detect(context, tab) is None


async def test_a_check_that_passes_by_itself_is_waited_for_and_cleared(
    context: ToolContext, site: Site
) -> None:
    # The check passes a second after the page loads: late enough for the first read to
    # find it on a busy machine, and well inside a wait this long.
    patient = dataclasses.replace(
        context, settings=dataclasses.replace(context.settings, challenge_budget=10.0)
    )
    tab = await open_page(patient, site, "/cf-interstitial.html?pass=1000")
    challenge = await detect(patient, tab)
    assert challenge is not None
    assert (challenge["status"], challenge["vendor"]) == ("cleared", "Cloudflare")
    assert "Lisbon to Porto" in await page_text(patient, tab)


async def test_a_short_read_reports_checking_and_leaves_the_rest_of_the_wait(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/cf-interstitial.html")
    first = await detect(context, tab, wait_limit=0.2)
    assert first is not None
    assert first["status"] == "checking"
    assert "snapshot" in first["next"]
    assert "Do not" in first["next"]
    # The next read spends the rest of the document's budget, then asks for a person.
    second = await detect(context, tab)
    assert second is not None
    assert second["status"] == "needs-user"
    assert "request_takeover" in second["next"]
    # Once the budget is spent, later reads say so at once.
    third = await detect(context, tab)
    assert third is not None
    assert (third["status"], third["wait"]) == ("needs-user", 0.0)


async def test_a_block_page_is_blocked(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/cf-blocked.html")
    challenge = await detect(context, tab)
    assert challenge is not None
    assert (challenge["status"], challenge["vendor"]) == ("blocked", "Cloudflare")
    assert "Report" in challenge["next"]


async def test_a_visible_puzzle_needs_a_person(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/recaptcha-puzzle.html")
    challenge = await detect(context, tab)
    assert challenge is not None
    assert (challenge["status"], challenge["vendor"]) == ("needs-user", "reCAPTCHA")


async def test_a_verify_phrase_on_a_short_page_needs_a_person(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/human-phrase.html")
    challenge = await detect(context, tab)
    assert challenge is not None
    assert challenge["status"] == "needs-user"


async def test_a_long_page_that_mentions_a_captcha_is_no_check(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/captcha-article.html")
    assert await detect(context, tab) is None


async def widget_box(context: ToolContext, tab: Tab) -> FloatRect:
    async def box(page: Page) -> FloatRect:
        frame = next(f for f in page.frames if "challenge-platform" in f.url)
        found = await (await frame.frame_element()).bounding_box()
        assert found is not None
        return found

    value = (await context.engine.run(TEAM, tab.id, AGENT, box)).value
    assert value is not None
    return value


async def click_at(context: ToolContext, tab: Tab, point: dict[str, float]) -> None:
    await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.mouse.click(point["x"], point["y"]))


async def test_a_widget_offers_one_click_at_its_checkbox_then_clears(
    context: ToolContext, site: Site
) -> None:
    fast = dataclasses.replace(context.settings, challenge_token_wait=0.3)
    context = dataclasses.replace(context, settings=fast)
    tab = await open_page(context, site, "/turnstile.html")
    offered = await detect(context, tab)
    assert offered is not None
    assert (offered["status"], offered["vendor"]) == ("click-once", "Cloudflare Turnstile")
    box = await widget_box(context, tab)
    assert offered["point"] == {
        "x": round(box["x"] + CHECKBOX_OFFSET, 1),
        "y": round(box["y"] + box["height"] / 2, 1),
    }
    await click_at(context, tab, offered["point"])
    after = await detect(context, tab)
    assert after is not None
    assert after["status"] == "cleared"


async def test_a_click_that_does_not_pass_needs_a_person_and_is_not_offered_again(
    context: ToolContext, site: Site
) -> None:
    fast = dataclasses.replace(context.settings, challenge_token_wait=0.3, challenge_click_wait=0.5)
    context = dataclasses.replace(context, settings=fast)
    tab = await open_page(context, site, "/turnstile.html?mode=stuck")
    offered = await detect(context, tab)
    assert offered is not None
    assert offered["status"] == "click-once"
    await click_at(context, tab, offered["point"])
    after_click = await detect(context, tab)
    assert after_click is not None
    assert after_click["status"] == "needs-user"
    again = await detect(context, tab)
    assert again is not None
    assert again["status"] == "needs-user"
    assert "point" not in again


async def test_a_widget_that_passes_by_itself_is_never_offered(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/turnstile.html?mode=auto")
    challenge = await detect(context, tab)
    # Either the token came before the first read, or the read waited for it.
    assert challenge is None or challenge["status"] == "cleared"


VENDOR_PAGES = {
    "DataDome": (
        "<iframe src='https://geo.captcha-delivery.com/captcha/?initialCid=x'></iframe>",
        "needs-user",
    ),
    "PerimeterX": ("<div id='px-captcha'></div><p>Press &amp; Hold</p>", "needs-user"),
    "Imperva": ("<p>Request unsuccessful. Incapsula incident ID: 1-2</p>", "blocked"),
    "Akamai": (
        "<title>Access Denied</title><h1>Access Denied</h1>"
        "<p>You don't have permission to access this server.</p><p>Reference #18.1</p>",
        "blocked",
    ),
    "AWS WAF": (
        "<div id='captcha-container'><awswaf-captcha></awswaf-captcha></div>",
        "needs-user",
    ),
}


@pytest.mark.parametrize("vendor", sorted(VENDOR_PAGES))
async def test_vendor_pages_are_recognised(context: ToolContext, site: Site, vendor: str) -> None:
    markup, status = VENDOR_PAGES[vendor]
    tab = await open_page(context, site, "/behind-check.html")
    await context.engine.run(TEAM, tab.id, AGENT, lambda p: p.set_content(markup))
    challenge = await detect(context, tab)
    assert challenge is not None
    assert (challenge["vendor"], challenge["status"]) == (vendor, status)

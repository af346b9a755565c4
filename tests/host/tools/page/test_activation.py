"""The gate judges what an action activates, not only the element it aims at.

``activation.html`` holds forms that send their own path to the site, so each test
counts what reached it: every refused action must send nothing. The controls at the
end show that the same clicks, done by the page itself, do submit.
"""

from __future__ import annotations

import pytest

from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import TEAM, call, open_page
from tests.support.sites import Site
from tests.support.waiting import eventually

PAGE = "/activation.html"


def _css(selector: str) -> dict[str, str]:
    return {"kind": "css", "selector": selector}


def _sent(site: Site) -> list[str]:
    return [path for path, _ in site.requests if path.startswith("/sent/")]


async def _after_all_requests(context: ToolContext, tab: Tab) -> None:
    """Sends a marker from the page and waits for its answer: anything an action set off left
    before it."""
    marker = await call(
        context, "evaluate", tabId=tab.id, expression="fetch('/marker').then(r => r.status)"
    )
    assert marker["value"] == 404, marker


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ("#span-label", "the span holding a submit button's label"),
        ("#icon", "the icon inside a submit button named Next"),
        ("#l-next", "a label naming a submit button"),
        ("#order-img", "the image inside a button whose onclick places an order"),
        ("#pay-span", "the text inside an element with the button role"),
        ("#slotted", "text slotted into a shadow root's button"),
        ("#boxed", "an element with a checkbox's role inside a submit button"),
    ],
)
async def test_a_click_is_judged_by_the_control_it_activates(
    context: ToolContext, site: Site, selector: str, why: str
) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(context, "click", tabId=tab.id, target=_css(selector))
    assert result.get("error", {}).get("code") == "gatedAction", (why, result)
    await _after_all_requests(context, tab)
    assert _sent(site) == []


async def test_a_point_click_on_a_submit_buttons_text_is_refused(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PAGE)
    box = await call(
        context,
        "evaluate",
        tabId=tab.id,
        expression=(
            "(() => { const r = document.getElementById('span-label').getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        ),
    )
    x, y = box["value"]
    result = await call(context, "click", tabId=tab.id, target={"kind": "point", "x": x, "y": y})
    assert result.get("error", {}).get("code") == "gatedAction", result
    await _after_all_requests(context, tab)
    assert _sent(site) == []


async def test_a_click_inside_a_harmless_button_still_works(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(context, "click", tabId=tab.id, target=_css("#menu-span"))
    assert result.get("changed"), result
    assert "the title changed" in result["reasons"]


@pytest.mark.parametrize(
    ("selector", "key", "why"),
    [
        ("#agree", "Enter", "Enter on a checkbox in a form with a submit button"),
        ("#level", "Enter", "Enter on a range input in a form with a submit button"),
        ("#alone", "Enter", "Enter in a form's only text field"),
        ("#alone", "Shift+Enter", "Shift+Enter in a form's only text field"),
        ("#b-next", "Enter", "Enter on a submit button"),
        ("#b-next", "Space", "Space on a submit button"),
        ("#d-pay", "Space", "Space on an element with the button role that pays"),
        ("#alone", "\n", "a newline, which Playwright presses as Enter"),
        ("#alone", "\r", "a carriage return, which Playwright presses as Enter"),
        ("#alone", "Enter+Shift", "a chord that presses Enter first"),
        ("#b-next", "Enter+a", "a chord with Enter on a submit button"),
        ("#b-next", "\n", "a newline on a submit button"),
    ],
)
async def test_a_key_that_would_submit_or_press_a_commit_control_is_refused(
    context: ToolContext, site: Site, selector: str, key: str, why: str
) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(context, "press", tabId=tab.id, target=_css(selector), key=key)
    assert result.get("error", {}).get("code") == "gatedAction", (why, result)
    await _after_all_requests(context, tab)
    assert _sent(site) == []


async def test_enter_on_whatever_has_focus_is_judged_the_same(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PAGE)
    await call(
        context, "evaluate", tabId=tab.id, expression="document.getElementById('agree').focus()"
    )
    result = await call(context, "press", tabId=tab.id, key="Enter")
    assert result.get("error", {}).get("code") == "gatedAction", result
    await _after_all_requests(context, tab)
    assert _sent(site) == []


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ("#agree-off", "the form's submit button is disabled"),
        ("#first", "the form has two text fields and no submit button"),
    ],
)
async def test_enter_that_submits_nothing_is_allowed(
    context: ToolContext, site: Site, selector: str, why: str
) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(context, "press", tabId=tab.id, target=_css(selector), key="Enter")
    assert "error" not in result, (why, result)
    await _after_all_requests(context, tab)
    assert _sent(site) == []


@pytest.mark.parametrize(
    ("script", "path"),
    [
        ("document.getElementById('span-label').click()", "/sent/span"),
        ("document.getElementById('icon').click()", "/sent/icon"),
        ("document.getElementById('l-next').click()", "/sent/label"),
        ("document.getElementById('order-img').click()", "/sent/onclick"),
        ("document.getElementById('pay-span').click()", "/sent/div"),
        ("document.getElementById('slotted').click()", "/sent/shadow"),
        ("document.getElementById('b-switch').click()", "/sent/switch"),
        ("document.getElementById('boxed').click()", "/sent/boxed"),
    ],
)
async def test_the_page_really_submits_on_those_clicks(
    context: ToolContext, site: Site, script: str, path: str
) -> None:
    """The control: each refused click, done by the page itself, does send."""
    tab = await open_page(context, site, PAGE)
    await call(context, "evaluate", tabId=tab.id, expression=script)
    await eventually(lambda: path in _sent(site), seconds=5)


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ("#b-switch", "a switch that is its form's submit button"),
        ("#boxed", "a checkbox drawn inside a submit button"),
    ],
)
async def test_setting_a_drawn_switch_that_would_submit_a_form_is_refused(
    context: ToolContext, site: Site, selector: str, why: str
) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(context, "set_checked", tabId=tab.id, target=_css(selector), checked=True)
    assert result.get("error", {}).get("code") == "gatedAction", (why, result)
    await _after_all_requests(context, tab)
    assert _sent(site) == []


async def test_a_drawn_switch_outside_a_form_is_set(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, PAGE)
    result = await call(
        context, "set_checked", tabId=tab.id, target=_css("#b-compact"), checked=True
    )
    assert result == {"ok": True, "changed": True, "checked": True}


@pytest.mark.parametrize(
    ("selector", "key", "path"),
    [
        ("#agree", "Enter", "/sent/checkbox"),
        ("#level", "Enter", "/sent/checkbox"),
        ("#alone", "Enter", "/sent/alone"),
        ("#b-next", "Space", "/sent/button"),
    ],
)
async def test_the_page_really_submits_on_those_keys(
    context: ToolContext, site: Site, selector: str, key: str, path: str
) -> None:
    """The control: each refused key, pressed by a person, does send."""
    tab = await open_page(context, site, PAGE)
    page = await context.engine.view_page(TEAM, tab.id)
    await page.focus(selector)
    await page.keyboard.press(key)
    await eventually(lambda: path in _sent(site), seconds=5)

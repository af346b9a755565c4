"""Page actions under the safety contract: refusals before any effect, then verification."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web

from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import SITE_FOLDER, call, open_page, ref_of
from tests.support.sites import Site, serving


async def _page(context: ToolContext, site: Site, path: str) -> tuple[Tab, dict[str, Any]]:
    tab = await open_page(context, site, path)
    return tab, await call(context, "snapshot", tabId=tab.id)


def _ref(snap: dict[str, Any], line_part: str) -> dict[str, str]:
    return {"kind": "ref", "ref": ref_of(snap, line_part)}


async def _js(context: ToolContext, tab: Tab, expression: str) -> Any:
    result = await call(context, "evaluate", tabId=tab.id, expression=expression)
    assert "error" not in result, result
    return result["value"]


# -- click: verification ------------------------------------------------------------------


async def test_a_click_that_changes_the_page_says_how(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    more = await call(context, "click", tabId=tab.id, target=_ref(snap, "Show more"))
    assert more["ok"]
    assert more["changed"]
    assert any("text length" in reason for reason in more["reasons"])
    menu = await call(context, "click", tabId=tab.id, target=_ref(snap, 'button "Menu"'))
    assert "something expanded or collapsed" in menu["reasons"]
    rename = await call(context, "click", tabId=tab.id, target=_ref(snap, "Rename"))
    assert "the title changed" in rename["reasons"]


async def test_a_click_that_changes_nothing_is_not_verified(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, "Does nothing"))
    assert result["ok"] is False
    assert result["changed"] is False
    assert result["note"].startswith("NOT VERIFIED")


async def test_a_click_that_navigates_reports_the_new_address(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, "Go to forms"))
    assert result["changed"], result
    after = await call(context, "snapshot", tabId=tab.id)
    assert after["url"] == site.url("/forms.html")


async def test_a_click_that_opens_a_popup_names_the_new_tab(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, "new tab"))
    assert "a new tab opened" in result["reasons"]
    [popup] = result["newTabIds"]
    assert context.engine.get_tab(context.team_id, popup).opener_tab_id == tab.id


async def test_a_dialog_from_a_click_goes_to_the_agent(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, "Ask me"))
    assert result["dialog"]["type"] == "confirm"
    assert result["dialog"]["message"] == "Sure?"
    await context.engine.handle_dialog(context.team_id, tab.id, True, caller=context.caller)
    assert await _js(context, tab, "document.title") == "true"


# -- click: refusals ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["Place order", "Pay now", 'button "Send"', "Checkout", "Confirm", 'button "Submit"']
)
async def test_commit_actions_are_refused_before_the_page_is_touched(
    context: ToolContext, site: Site, label: str
) -> None:
    tab, snap = await _page(context, site, "/commit.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, label))
    assert result["error"]["code"] == "gatedAction"
    assert "person" in result["error"]["message"]
    assert await _js(context, tab, "window.touched") == []


async def test_a_button_that_would_submit_its_form_is_refused(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/commit.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, 'button "Save"'))
    assert result["error"]["code"] == "gatedAction"
    assert "submit a form" in result["error"]["message"]
    assert await _js(context, tab, "[document.title, window.touched]") == ["checkout", []]


async def test_a_plain_button_inside_a_form_may_be_clicked(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/commit.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, "Add row"))
    assert result["changed"], result
    assert "visible fields went from 1 to 2" in result["reasons"]


@pytest.mark.parametrize(
    ("label", "code"),
    [('textbox "City"', "targetDisabled"), ('textbox "Password"', "passwordField")],
)
async def test_disabled_and_password_targets_are_not_clicked(
    context: ToolContext, site: Site, label: str, code: str
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(context, "click", tabId=tab.id, target=_ref(snap, label))
    assert result["error"]["code"] == code
    assert await _js(context, tab, "window.touched") == []


# -- targets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ({"kind": "css", "selector": ".open"}, "targetAmbiguous"),
        ({"kind": "css", "selector": "#missing"}, "targetNotFound"),
        ({"kind": "css", "selector": "button[["}, "invalidSelector"),
        ({"kind": "text", "text": "Open"}, "targetAmbiguous"),
        ({"kind": "role", "role": "link"}, "targetNotFound"),
        ({"kind": "ref", "ref": "not-a-ref"}, "invalidArguments"),
    ],
)
async def test_a_target_must_match_exactly_one_element(
    context: ToolContext, site: Site, target: dict[str, str], code: str
) -> None:
    tab, _ = await _page(context, site, "/ambiguous.html")
    result = await call(context, "click", tabId=tab.id, target=target)
    assert result["error"]["code"] == code


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "css", "selector": "#only"},
        {"kind": "text", "text": "only one"},
        {"kind": "role", "role": "button", "name": "Only one"},
    ],
)
async def test_one_match_is_acted_on(
    context: ToolContext, site: Site, target: dict[str, str]
) -> None:
    tab, _ = await _page(context, site, "/ambiguous.html")
    result = await call(context, "click", tabId=tab.id, target=target)
    assert "error" not in result, result


async def test_a_css_selector_reaches_into_open_shadow_roots(
    context: ToolContext, site: Site
) -> None:
    tab, _ = await _page(context, site, "/shadow.html")
    result = await call(
        context, "click", tabId=tab.id, target={"kind": "css", "selector": "#inner"}
    )
    assert result["changed"], result
    after = await call(context, "snapshot", tabId=tab.id)
    assert 'button "Pressed"' in after["tree"]


# -- type -----------------------------------------------------------------------------------


async def test_typed_text_is_read_back(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "type", tabId=tab.id, target=_ref(snap, 'textbox "Name"'), text="Grace"
    )
    assert result == {"ok": True, "field": "Name", "value": "Grace"}
    appended = await call(
        context,
        "type",
        tabId=tab.id,
        target=_ref(snap, 'textbox "Name"'),
        text=" Hopper",
        mode="append",
    )
    assert appended["value"] == "Grace Hopper"


async def test_a_value_the_page_rewrites_is_a_mismatch(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "type", tabId=tab.id, target=_ref(snap, 'textbox "Shout"'), text="quiet"
    )
    assert result["ok"] is False
    assert result["value"] == "QUIET"
    assert result["note"].startswith("MISMATCH")


@pytest.mark.parametrize(
    ("label", "text", "code"),
    [
        ('textbox "City"', "Rome", "targetDisabled"),
        ('textbox "Member code"', "M-99", "targetReadOnly"),
        ('textbox "Password"', "guess", "passwordField"),
        ('textbox "Zip"', "123456", "textTooLong"),
        ('textbox "Name"', "Ada \u2014 Countess", "dashInText"),
        ('textbox "Name"', "1815\u20131852", "dashInText"),
        ('textbox "Name"', "", "emptyText"),
        ('textbox "Name"', "x\ud800", "invalidArguments"),
        ('checkbox "Newsletter"', "yes", "notEditable"),
    ],
)
async def test_typing_refusals_fire_before_the_field_is_touched(
    context: ToolContext, site: Site, label: str, text: str, code: str
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(context, "type", tabId=tab.id, target=_ref(snap, label), text=text)
    assert result["error"]["code"] == code
    assert await _js(context, tab, "window.touched") == []


async def test_appending_past_maxlength_is_refused(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    zip_code = _ref(snap, 'textbox "Zip"')
    assert (await call(context, "type", tabId=tab.id, target=zip_code, text="123"))["ok"]
    result = await call(context, "type", tabId=tab.id, target=zip_code, text="456", mode="append")
    assert result["error"]["code"] == "textTooLong"
    assert await _js(context, tab, "document.getElementById('zip').value") == "123"


async def test_typing_stops_when_the_page_moves_focus(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "type", tabId=tab.id, target=_ref(snap, 'textbox "Focus thief"'), text="mine"
    )
    assert result["error"]["code"] == "focusLost"
    values = "['thief', 'elsewhere'].map((id) => document.getElementById(id).value)"
    assert await _js(context, tab, values) == ["", ""]


async def test_typing_into_a_contenteditable_is_read_back(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "type", tabId=tab.id, target=_ref(snap, 'textbox "Bio"'), text="Mathematician"
    )
    assert result == {"ok": True, "field": "Bio", "value": "Mathematician"}


async def test_a_click_the_page_hangs_on_says_it_was_sent(context: ToolContext, site: Site) -> None:
    """A handler that holds the page's main thread past the action's timeout: the click was
    delivered, so it is not reported as a control that could not be used."""
    tab, snap = await _page(context, site, "/moving.html")
    hurried = replace(context, settings=replace(context.settings, action_timeout=0.3))
    result = await call(hurried, "click", tabId=tab.id, target=_ref(snap, "Recalculate"))
    assert result["error"]["code"] == "pageNotResponding", result
    assert "do not repeat it" in result["error"]["message"]


# -- press, hover, scroll ---------------------------------------------------------------------


async def test_enter_in_a_form_field_is_refused(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/commit.html")
    result = await call(
        context, "press", tabId=tab.id, key="Enter", target=_ref(snap, 'textbox "Quantity"')
    )
    assert result["error"]["code"] == "gatedAction"
    assert await _js(context, tab, "[document.title, window.touched]") == ["checkout", []]


async def test_enter_on_a_button_presses_it(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "press", tabId=tab.id, key="Enter", target=_ref(snap, "Show more"))
    assert result["changed"], result


async def test_enter_is_judged_by_the_field_focused_inside_a_frame(
    context: ToolContext, site: Site
) -> None:
    """Focus in a same-origin frame is followed to the element the key reaches; a frame
    of another origin cannot be read, so Enter or Space into it is refused."""
    folder = web.Application()
    folder.router.add_static("/", SITE_FOLDER)
    async with serving(folder) as other:
        framed = "/frame-form.html?other=" + other.url("/frame-form-child.html")
        tab = await open_page(context, site, framed)
        await call(context, "snapshot", tabId=tab.id)
        field = "document.getElementById('same').contentDocument.getElementById('amount')"
        await _js(context, tab, f"{field}.focus(); 1")
        focused = await call(context, "press", tabId=tab.id, key="Enter")
        same = {"kind": "css", "selector": "#same"}
        framed_target = await call(context, "press", tabId=tab.id, key="Enter", target=same)
        await _js(context, tab, f"{field}.focus(); 1")
        other_frame = {"kind": "css", "selector": "#other"}
        cross = await call(context, "press", tabId=tab.id, key=" ", target=other_frame)
        # A key that only follows a link in the frame changes the frame, not the main page.
        link = "document.getElementById('same').contentDocument.getElementById('next')"
        await _js(context, tab, f"{link}.focus(); 1")
        followed = await call(context, "press", tabId=tab.id, key="Enter")
    assert focused["error"]["code"] == "gatedAction", focused
    assert framed_target["error"]["code"] == "gatedAction", framed_target
    assert cross["error"]["code"] == "gatedAction", cross
    assert "another site" in cross["error"]["message"]
    assert "in the frame: the address changed" in followed["reasons"], followed
    assert not [path for path, _ in site.requests + other.requests if "sent=" in path]


async def test_a_key_that_changes_nothing_is_not_verified(context: ToolContext, site: Site) -> None:
    tab, _ = await _page(context, site, "/changes.html")
    result = await call(context, "press", tabId=tab.id, key="Shift")
    assert result["note"].startswith("NOT VERIFIED")


async def test_an_unknown_key_is_refused(context: ToolContext, site: Site) -> None:
    tab, _ = await _page(context, site, "/changes.html")
    result = await call(context, "press", tabId=tab.id, key="NoSuchKey")
    assert result["error"]["code"] == "invalidArguments"


async def test_hover_points_at_one_element(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/changes.html")
    result = await call(context, "hover", tabId=tab.id, target=_ref(snap, "Show more"))
    assert result["ok"] is True
    assert await _js(context, tab, "document.querySelector('#more').matches(':hover')")


async def test_scroll_moves_the_page_and_says_when_it_cannot(
    context: ToolContext, site: Site
) -> None:
    tab, _ = await _page(context, site, "/big.html?n=300")
    down = await call(context, "scroll", tabId=tab.id, direction="down")
    assert down["moved"] is True
    assert down["y"] > 0
    await call(context, "scroll", tabId=tab.id, direction="up", pixels=100_000)
    top = await call(context, "scroll", tabId=tab.id, direction="up")
    assert top["moved"] is False
    assert "nothing moved" in top["note"]


# -- select_option and set_checked --------------------------------------------------------------


async def test_an_option_is_chosen_by_label_or_value(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    colour = _ref(snap, 'combobox "Colour"')
    by_label = await call(context, "select_option", tabId=tab.id, target=colour, value="green")
    assert by_label == {"ok": True, "selected": "Green"}
    by_value = await call(context, "select_option", tabId=tab.id, target=colour, value="r")
    assert by_value == {"ok": True, "selected": "Red"}


@pytest.mark.parametrize(
    ("label", "value", "code"),
    [
        ('combobox "Colour"', "Blue", "targetDisabled"),
        ('combobox "Colour"', "Purple", "optionNotFound"),
        ('textbox "Name"', "Red", "notSelect"),
    ],
)
async def test_select_refusals(
    context: ToolContext, site: Site, label: str, value: str, code: str
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "select_option", tabId=tab.id, target=_ref(snap, label), value=value
    )
    assert result["error"]["code"] == code
    if code == "optionNotFound":
        assert "Red (r), Green (g), Blue (b)" in result["error"]["message"]


async def test_checkboxes_and_switches_are_set_and_read_back(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    news = _ref(snap, 'checkbox "Newsletter"')
    assert await call(context, "set_checked", tabId=tab.id, target=news, checked=True) == {
        "ok": True,
        "changed": True,
        "checked": True,
    }
    again = await call(context, "set_checked", tabId=tab.id, target=news, checked=True)
    assert again["changed"] is False
    dark = await call(
        context, "set_checked", tabId=tab.id, target=_ref(snap, "Dark mode"), checked=True
    )
    assert dark["checked"] is True


@pytest.mark.parametrize(
    ("label", "checked", "code"),
    [
        ('checkbox "Locked"', True, "targetDisabled"),
        ('radio "Small"', False, "invalidArguments"),
        ('textbox "Name"', True, "notCheckable"),
    ],
)
async def test_set_checked_refusals(
    context: ToolContext, site: Site, label: str, checked: bool, code: str
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await call(
        context, "set_checked", tabId=tab.id, target=_ref(snap, label), checked=checked
    )
    assert result["error"]["code"] == code

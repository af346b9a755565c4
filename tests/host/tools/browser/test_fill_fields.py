"""fill_fields: the whole set checked before any input, each field confirmed, no submit."""

from __future__ import annotations

from typing import Any

import pytest

from server.host.browser.tabs import Tab
from server.host.tools.catalog import call_tool, describe_call
from server.host.tools.context import ToolContext
from server.host.tools.page.approval import Approval
from tests.host.tools.conftest import call, open_page, ref_of
from tests.support.sites import Site

_VALUES = "[...document.querySelectorAll('input, textarea')].map((el) => el.value)"


async def _page(context: ToolContext, site: Site, path: str) -> tuple[Tab, dict[str, Any]]:
    tab = await open_page(context, site, path)
    return tab, await call(context, "snapshot", tabId=tab.id)


async def _values(context: ToolContext, tab: Tab) -> list[str]:
    result = await call(context, "evaluate", tabId=tab.id, expression=_VALUES)
    return list(result["value"])


async def _fill(
    context: ToolContext, tab: Tab, snap: dict[str, Any], *fields: tuple[str, str]
) -> dict[str, Any]:
    return await call(
        context,
        "fill_fields",
        tabId=tab.id,
        revision=snap["revision"],
        fields=[{"ref": ref_of(snap, label), "text": text} for label, text in fields],
    )


async def test_every_field_is_filled_confirmed_and_nothing_is_submitted(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/fill.html")
    result = await _fill(
        context,
        tab,
        snap,
        ('textbox "Last name"', "Lovelace"),
        ('searchbox "Search"', "engines"),
        ('textbox "Phone"', "+44 20 7946 0000"),
        ('textbox "Web site"', "https://example.org"),
        ('textbox "About"', "Wrote the first program.\nNotes on the engine."),
    )
    assert result["status"] == "filled"
    assert result["confirmed"] == [0, 1, 2, 3, 4]
    assert result["partial"] is False
    assert result["inputCompleted"] is True
    assert 'value="Lovelace"' in result["snapshot"]["tree"]
    assert await _values(context, tab) == [
        "",
        "Lovelace",
        "",
        "engines",
        "+44 20 7946 0000",
        "https://example.org",
        "Wrote the first program.\nNotes on the engine.",
    ]
    title = await call(context, "evaluate", tabId=tab.id, expression="document.title")
    assert title["value"] == "fill"


async def test_one_refused_field_refuses_the_whole_set_before_any_input(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    before = await _values(context, tab)
    result = await _fill(
        context, tab, snap, ('textbox "Name"', "Grace"), ('textbox "Password"', "guess")
    )
    assert result["error"]["code"] == "passwordField"
    assert result["error"]["index"] == 1
    assert await _values(context, tab) == before
    touched = await call(context, "evaluate", tabId=tab.id, expression="window.touched")
    assert touched["value"] == []


@pytest.mark.parametrize(
    ("label", "code"),
    [
        ('textbox "City"', "targetDisabled"),
        ('textbox "Member code"', "targetReadOnly"),
        ('textbox "One-time code"', "secretField"),
        ('textbox "Card number"', "secretField"),
        ('textbox "Bio"', "notNativeField"),
        ('spinbutton "Age"', "notTextField"),
        ('combobox "Colour"', "notTextField"),
    ],
)
async def test_fields_fill_fields_refuses(
    context: ToolContext, site: Site, label: str, code: str
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await _fill(context, tab, snap, (label, "text"))
    assert result["error"]["code"] == code


async def test_frames_are_refused(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/frames.html")
    result = await _fill(context, tab, snap, ('textbox "Inner field"', "text"))
    assert result["error"]["code"] == "inFrame"


async def test_request_level_refusals(context: ToolContext, site: Site) -> None:
    tab, snap = await _page(context, site, "/fill.html")
    last = ref_of(snap, 'textbox "Last name"')
    duplicate = await call(
        context,
        "fill_fields",
        tabId=tab.id,
        revision=snap["revision"],
        fields=[{"ref": last, "text": "a"}, {"ref": last, "text": "b"}],
    )
    assert duplicate["error"]["code"] == "duplicateRef"
    too_big = await _fill(context, tab, snap, ('textbox "About"', "x" * (16 * 1024 + 1)))
    assert too_big["error"]["code"] == "tooMuchText"
    dash = await _fill(context, tab, snap, ('textbox "Last name"', "Byron\u2014Lovelace"))
    assert dash["error"]["code"] == "dashInText"
    too_many = await call(
        context,
        "fill_fields",
        tabId=tab.id,
        revision=snap["revision"],
        fields=[{"ref": last, "text": "a"}] * 17,
    )
    assert too_many["error"]["code"] == "invalidArguments"
    assert await _values(context, tab) == ["", "", "", "", "", "", ""]


async def test_refs_of_an_older_snapshot_are_refused(context: ToolContext, site: Site) -> None:
    tab, old = await _page(context, site, "/fill.html")
    await call(context, "snapshot", tabId=tab.id)
    result = await _fill(context, tab, old, ('textbox "Last name"', "Lovelace"))
    assert result["error"]["code"] == "staleRef"
    assert await _values(context, tab) == ["", "", "", "", "", "", ""]


async def test_a_value_the_page_rewrites_is_uncertain_and_stops_the_fill(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await _fill(
        context,
        tab,
        snap,
        ('textbox "Name"', "Grace"),
        ('textbox "Shout"', "quiet"),
        ('textbox "Email"', "grace@example.org"),
    )
    assert result["status"] == "stopped"
    assert result["confirmed"] == [0]
    assert result["uncertainIndex"] == 1
    assert result["partial"] is True
    email = await call(
        context, "evaluate", tabId=tab.id, expression="document.getElementById('email').value"
    )
    assert email["value"] == ""


async def test_a_field_the_page_changed_meanwhile_fails_without_input(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/fill.html")
    result = await _fill(
        context,
        tab,
        snap,
        ('textbox "First name"', "Ada"),
        ('textbox "Copy of first"', "mine"),
    )
    assert result["confirmed"] == [0]
    assert result["failedIndex"] == 1
    assert result["reason"] == "valueChanged"
    assert result["partial"] is True
    assert (await _values(context, tab))[2] == "from Ada"


async def test_a_field_that_loses_focus_fails_without_input(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/forms.html")
    result = await _fill(context, tab, snap, ('textbox "Focus thief"', "mine"))
    assert result["failedIndex"] == 0
    assert result["reason"] == "focusLost"
    assert result["partial"] is False


async def test_an_approved_fill_types_only_into_the_fields_its_card_named(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _page(context, site, "/fill.html")
    args = {
        "tabId": tab.id,
        "revision": snap["revision"],
        "fields": [{"ref": ref_of(snap, 'textbox "Last name"'), "text": "Lovelace"}],
    }
    approval = Approval()
    card = await describe_call(context, "fill_fields", args, approval)
    assert (card or "").startswith("Fill “Last name”")
    # The page renames the field the card named before the person's answer comes back.
    rename = "document.getElementById('last').setAttribute('aria-label', 'Recipient IBAN'); 1"
    assert "error" not in await call(context, "evaluate", tabId=tab.id, expression=rename)
    refused = await call_tool(context, "fill_fields", args, approval)
    assert refused["error"]["code"] == "targetChanged", refused
    assert "Lovelace" not in await _values(context, tab)
    # Asked about the page as it is now, the same call fills.
    again = Approval()
    await describe_call(context, "fill_fields", args, again)
    filled = await call_tool(context, "fill_fields", args, again)
    assert filled["status"] == "filled", filled
    assert "Lovelace" in await _values(context, tab)

"""A page that patches the DOM in its own world cannot change what the safety reads see.

``hostile.html`` makes ``getAttribute``, ``querySelectorAll``, the input ``value`` and
``type`` getters, ``getBoundingClientRect``, ``checkVisibility`` and ``getComputedStyle``
lie in the page's main world. The snapshot, the facts a refusal reads (inspect), the
before/after state of an action and the CSS search run in the tools' isolated world, so
they still see the page as it is; and the handle an action gets is the element they saw.
"""

from __future__ import annotations

from typing import Any

import pytest

from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import call, open_page, ref_of
from tests.support.sites import Site


async def _hostile(context: ToolContext, site: Site) -> tuple[Tab, dict[str, Any]]:
    tab = await open_page(context, site, "/hostile.html")
    return tab, await call(context, "snapshot", tabId=tab.id)


async def test_the_snapshot_shows_true_names_values_and_boxes(
    context: ToolContext, site: Site
) -> None:
    _, snap = await _hostile(context, site)
    tree = snap["tree"]
    assert 'button "Place order"' in tree
    assert 'textbox "Name" value="Ada"' in tree
    assert 'textbox "PIN" [password: value hidden]' in tree
    assert "Harmless" not in tree
    assert "fake" not in tree


async def test_refusals_read_the_true_name_and_type(context: ToolContext, site: Site) -> None:
    tab, snap = await _hostile(context, site)
    order = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(snap, "Place order")}
    )
    assert order["error"]["code"] == "gatedAction"
    pin = await call(context, "type", tabId=tab.id, target=_css("#pin"), text="1234")
    assert pin["error"]["code"] == "passwordField"


async def test_a_css_target_is_found_although_the_page_hides_its_matches(
    context: ToolContext, site: Site
) -> None:
    tab, _ = await _hostile(context, site)
    result = await call(context, "click", tabId=tab.id, target=_css("#plain"))
    assert result["changed"], result
    assert "the title changed" in result["reasons"]


async def test_a_change_is_seen_although_the_page_hides_field_values(
    context: ToolContext, site: Site
) -> None:
    tab, snap = await _hostile(context, site)
    result = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(snap, "Fill in")}
    )
    assert result["changed"], result
    assert "a field value changed" in result["reasons"]
    typed = await call(context, "type", tabId=tab.id, target=_css("#name"), text="Hopper")
    assert typed == {"ok": True, "field": "Name", "value": "Hopper"}


async def test_an_action_never_lands_on_an_element_the_page_swapped_in(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/hostile-mark.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    result = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(snap, "Real")}
    )
    assert result["error"]["code"] == "staleRef", result
    title = await call(context, "evaluate", tabId=tab.id, expression="document.title")
    assert title["value"] == "hostile-mark"


def _css(selector: str) -> dict[str, str]:
    return {"kind": "css", "selector": selector}


# ``hostile-prototypes.html`` lies in its main world about every fact a refusal reads:
# input values, types, disabled, read-only and autocomplete; a button's form and type; text
# content; attribute reads, matches, closest and searches; MutationObserver, JSON, Array.from.
PROTOTYPES = "/hostile-prototypes.html"


def _sent(site: Site) -> list[str]:
    return [path for path, _ in site.requests if path.startswith("/sent/")]


async def test_the_snapshot_never_shows_a_prefilled_password(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    tree = (await call(context, "snapshot", tabId=tab.id))["tree"]
    assert "hunter2" not in tree
    assert 'textbox "Secret" [password: value hidden]' in tree
    assert 'button "Place order"' in tree
    assert 'textbox "User" value="ada"' in tree
    assert "Continue" not in tree


@pytest.mark.parametrize(
    ("selector", "code"),
    [
        ("#secret", "passwordField"),
        ("#code", "secretField"),
        ("#locked", "targetDisabled"),
        ("#frozen", "targetReadOnly"),
    ],
)
async def test_typing_is_refused_by_the_true_facts(
    context: ToolContext, site: Site, selector: str, code: str
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    result = await call(context, "type", tabId=tab.id, target=_css(selector), text="1234")
    assert result.get("error", {}).get("code") == code, result
    tree = (await call(context, "snapshot", tabId=tab.id))["tree"]
    assert "1234" not in tree


async def test_fill_fields_refuses_the_true_password_before_typing_anything(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    snap = await call(context, "snapshot", tabId=tab.id)
    result = await call(
        context,
        "fill_fields",
        tabId=tab.id,
        revision=snap["revision"],
        fields=[
            {"ref": ref_of(snap, 'textbox "User"'), "text": "grace"},
            {"ref": ref_of(snap, 'textbox "Secret"'), "text": "guess"},
        ],
    )
    assert result["error"]["code"] == "passwordField", result
    tree = (await call(context, "snapshot", tabId=tab.id))["tree"]
    assert 'textbox "User" value="ada"' in tree


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "css", "selector": "#place"},
        {"kind": "css", "selector": "#next-outside"},
        {"kind": "role", "role": "button", "name": "Place order"},
    ],
)
async def test_no_commit_passes_the_gate(
    context: ToolContext, site: Site, target: dict[str, str]
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    await call(context, "snapshot", tabId=tab.id)
    result = await call(context, "click", tabId=tab.id, target=target)
    assert result.get("error", {}).get("code") == "gatedAction", result
    marker = await call(
        context, "evaluate", tabId=tab.id, expression="fetch('/marker').then(r => r.status)"
    )
    assert marker["value"] == 404
    assert _sent(site) == []


async def test_a_ref_goes_stale_when_the_page_swaps_its_element(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    snap = await call(context, "snapshot", tabId=tab.id)
    ref = ref_of(snap, 'button "Harmless"')
    swap = (
        "(() => { const old = [...document.getElementsByTagName('button')]"
        ".find((b) => b.id === 'harmless'); old.replaceWith(old.cloneNode(true)); })()"
    )
    await call(context, "evaluate", tabId=tab.id, expression=swap)
    result = await call(context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref})
    assert result.get("error", {}).get("code") == "staleRef", result
    title = await call(context, "evaluate", tabId=tab.id, expression="document.title")
    assert title["value"] == "hostile-prototypes"


async def test_a_rewritten_value_is_a_mismatch_although_the_page_denies_it(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, PROTOTYPES)
    result = await call(context, "type", tabId=tab.id, target=_css("#shout"), text="quiet")
    assert result["ok"] is False, result
    assert result["value"] == "QUIET"
    assert result["note"].startswith("MISMATCH")

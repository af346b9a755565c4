"""A page that patches the DOM in its own world cannot change what the safety reads see.

``hostile.html`` makes ``getAttribute``, ``querySelectorAll``, the input ``value`` and
``type`` getters, ``getBoundingClientRect``, ``checkVisibility`` and ``getComputedStyle``
lie in the page's main world. The snapshot, the facts a refusal reads (inspect), the
before/after state of an action and the CSS search run in the tools' isolated world, so
they still see the page as it is; and the handle an action gets is the element they saw.
"""

from __future__ import annotations

from typing import Any

from server.host.browser.tabs import Tab
from server.host.tools.base import ToolContext
from tests.host.tools.conftest import Site, call, open_page, ref_of


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
    assert typed == {"ok": True, "value": "Hopper"}


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

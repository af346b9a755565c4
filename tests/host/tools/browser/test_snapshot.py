"""The snapshot: a compact tree with refs that resolve, in shadow roots and frames too."""

from __future__ import annotations

import json

from server.host.browser.partitions import Partition
from server.host.tools.context import ToolContext
from server.host.tools.results import MAX_RESULT_CHARS
from tests.host.tools.conftest import AGENT, TEAM, call, open_page, ref_of
from tests.support.sites import Site


async def test_the_tree_shows_roles_names_values_and_states(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/forms.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    tree = snap["tree"]
    assert 'heading "Profile" [level=1]' in tree
    assert 'textbox "Name" value="Ada"' in tree
    assert 'textbox "City" value="Paris" [disabled]' in tree
    assert 'textbox "Member code" value="M-17" [readonly]' in tree
    assert 'textbox "Zip" [maxlength=5]' in tree
    assert 'combobox "Colour" value="Red"' in tree
    assert 'checkbox "Newsletter" [unchecked]' in tree
    assert 'radio "Small" [checked]' in tree
    assert 'switch "Dark mode" [unchecked]' in tree
    assert snap["url"] == site.url("/forms.html")
    assert snap["title"] == "forms"
    assert ref_of(snap, 'textbox "Name"') == f"{snap['revision']}:main:1"


async def test_password_values_never_show(context: ToolContext, site: Site) -> None:
    forms = await call(
        context, "snapshot", tabId=(await open_page(context, site, "/forms.html")).id
    )
    shadow = await call(
        context, "snapshot", tabId=(await open_page(context, site, "/shadow.html")).id
    )
    assert 'textbox "Password" [password: value hidden]' in forms["tree"]
    assert "hunter2" not in json.dumps(forms)
    assert "pw-in-shadow" not in json.dumps(shadow)


async def test_the_revision_moves_on_every_snapshot(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    first = await call(context, "snapshot", tabId=tab.id)
    second = await call(context, "snapshot", tabId=tab.id)
    assert second["revision"] == first["revision"] + 1
    assert ref_of(second, 'button "Show more"').startswith(f"{second['revision']}:")


async def test_open_shadow_roots_are_walked_and_their_refs_work(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/shadow.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    deep = ref_of(snap, 'textbox "Deep field"')
    typed = await call(
        context, "type", tabId=tab.id, target={"kind": "ref", "ref": deep}, text="from a ref"
    )
    assert typed["ok"], typed
    read = await call(
        context,
        "evaluate",
        tabId=tab.id,
        expression=(
            "document.querySelector('login-box').shadowRoot.querySelector('inner-box')"
            ".shadowRoot.querySelector('#deep').value"
        ),
    )
    assert read["value"] == "from a ref"


async def test_same_origin_frames_are_walked_and_their_refs_work(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/frames.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    assert 'iframe "Child frame"' in snap["tree"]
    button = ref_of(snap, 'button "Frame button"')
    assert ":f1:" in button
    clicked = await call(context, "click", tabId=tab.id, target={"kind": "ref", "ref": button})
    assert clicked["changed"], clicked
    after = await call(context, "snapshot", tabId=tab.id)
    assert 'text "clicked in frame"' in after["tree"]


async def test_a_data_address_is_withheld(context: ToolContext) -> None:
    tab = await context.engine.open_tab(
        TEAM,
        Partition.shared(),
        url="data:text/html,<title>inline</title><p>secret inline page</p>",
        owner_agent_id=AGENT.agent_id,
    )
    snap = await call(context, "snapshot", tabId=tab.id)
    assert snap["url"] == "data: (address withheld)"
    assert "secret inline page" in snap["tree"]  # the page is shown; its address is not


async def test_a_ref_of_a_changed_page_is_stale(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    old = await call(context, "snapshot", tabId=tab.id)
    beta = ref_of(old, 'button "Beta"')
    await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(old, "Rebuild list")}
    )
    await call(context, "snapshot", tabId=tab.id)
    refused = await call(context, "click", tabId=tab.id, target={"kind": "ref", "ref": beta})
    assert refused["error"]["code"] == "staleRef"
    assert "new snapshot" in refused["error"]["message"]


async def test_a_ref_of_an_unchanged_page_survives_a_newer_snapshot(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/changes.html")
    old = await call(context, "snapshot", tabId=tab.id)
    await call(context, "snapshot", tabId=tab.id)
    clicked = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(old, "Show more")}
    )
    assert clicked["changed"], clicked


async def test_a_ref_after_navigation_is_stale(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    await context.engine.navigate(TEAM, tab.id, AGENT, site.url("/forms.html"))
    refused = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(snap, "Show more")}
    )
    assert refused["error"]["code"] == "staleRef"


async def test_a_ref_from_no_snapshot_is_refused(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    refused = await call(context, "click", tabId=tab.id, target={"kind": "ref", "ref": "1:main:1"})
    assert refused["error"]["code"] == "staleRef"


async def test_a_large_page_is_cut_and_flagged(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/big.html?n=3000")
    snap = await call(context, "snapshot", tabId=tab.id)
    assert snap["truncated"] is True
    assert len(json.dumps(snap)) <= MAX_RESULT_CHARS
    assert "the snapshot stops here" in snap["tree"]
    # The refs that were shown still work.
    typed = await call(
        context,
        "type",
        tabId=tab.id,
        target={"kind": "ref", "ref": ref_of(snap, 'textbox "Field 3"')},
        text="three",
    )
    assert typed["ok"], typed


async def test_an_open_dialog_is_reported_instead_of_the_page(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/changes.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    clicked = await call(
        context, "click", tabId=tab.id, target={"kind": "ref", "ref": ref_of(snap, "Alert me")}
    )
    assert clicked["dialog"]["message"] == "Saved!"
    again = await call(context, "snapshot", tabId=tab.id)
    assert again["dialog"]["type"] == "alert"
    assert "handle_dialog" in again["next"]

"""Each gated call described for a person by the host: the target by its accessible name
on the page now, the page by its title and site, read from real pages in real Chromium."""

from __future__ import annotations

from typing import Any

from server.host.tools.catalog import CATALOG, call_tool, describe_call
from server.host.tools.context import ToolContext
from server.host.tools.page.approval import Approval
from tests.host.tools.conftest import call, open_page, ref_of
from tests.support.sites import Site
from tests.support.waiting import eventually


def _site(site: Site) -> str:
    return site.url("/").split("/")[2]


def _ref(snap: dict[str, Any], line_part: str) -> dict[str, str]:
    return {"kind": "ref", "ref": ref_of(snap, line_part)}


def test_every_gated_tool_describes_its_calls() -> None:
    assert [t.name for t in CATALOG.values() if t.gated and t.describe is None] == []


async def test_page_actions_name_their_target_and_page(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/forms.html")
    snap = await call(context, "snapshot", tabId=tab.id)
    on = f"on forms ({_site(site)})"

    email = _ref(snap, 'textbox "Email"')
    typed = await describe_call(
        context, "type", {"tabId": tab.id, "target": email, "text": "a@b.c"}
    )
    assert typed == f"Type into “Email” {on}"
    news = _ref(snap, 'checkbox "Newsletter"')
    checked = await describe_call(
        context, "set_checked", {"tabId": tab.id, "target": news, "checked": True}
    )
    assert checked == f"Check “Newsletter” {on}"
    # The agent's own words stand in for what the page cannot name now.
    stale = {"kind": "role", "role": "button", "name": "Nowhere"}
    assert await describe_call(context, "click", {"tabId": tab.id, "target": stale}) == (
        f"Click “Nowhere” {on}"
    )
    # Typed text never appears in a description, even of a call the tool cannot read.
    broken = await describe_call(context, "type", {"tabId": tab.id, "text": "hunter2"})
    assert broken is not None
    assert "hunter2" not in broken


async def test_tab_and_script_calls_say_where_and_what(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/forms.html")
    await eventually(lambda: tab.title == "forms")  # as the tab list shows it
    url = site.url("/article.html")
    assert await describe_call(context, "open", {"url": url}) == f"Open {url} in a new tab"
    assert await describe_call(context, "navigate", {"tabId": tab.id, "url": url}) == (
        f"Go to {url} in the tab forms ({_site(site)})"
    )
    script = "return document.title;\n// and nothing else"
    assert await describe_call(context, "evaluate", {"tabId": tab.id, "expression": script}) == (
        f"Run a script on forms ({_site(site)}): return document.title; // and nothing else"
    )
    assert await describe_call(context, "snapshot", {"tabId": tab.id}) is None


async def test_a_long_address_still_shows_its_whole_host(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/forms.html")
    await eventually(lambda: tab.title == "forms")
    host = "login.mybank.com.secure-session-verification-" + "0" * 40 + ".attacker.example"
    lookalike = f"https://{host}/x"
    long_path = "https://shop.example/" + "a" * 100 + "?q=1"
    for tool, arguments in [
        ("open", {}),
        ("navigate", {"tabId": tab.id}),
        ("open_tab", {}),
        ("open_tab", {"tabId": tab.id}),
    ]:
        shown = await describe_call(context, tool, {**arguments, "url": lookalike})
        assert shown is not None
        assert f"https://{host}/" in shown, (tool, shown)
        # The host stays whole; only the path and query are cut.
        cut = await describe_call(context, tool, {**arguments, "url": long_path})
        assert cut is not None
        assert "https://shop.example/aaa" in cut, (tool, cut)
        assert "?q=1" not in cut, (tool, cut)
        assert "…" in cut, (tool, cut)
    # A short address, a scheme-less one and a search phrase read as typed.
    short = site.url("/article.html")
    assert await describe_call(context, "open_tab", {"url": short}) == f"Open {short} in a new tab"
    assert await describe_call(context, "open_tab", {"tabId": tab.id, "url": "example.com"}) == (
        f"Go to example.com in the tab forms ({_site(site)})"
    )
    assert await describe_call(context, "open", {"url": "weather in paris"}) == (
        "Open weather in paris in a new tab"
    )


async def test_an_asked_call_acts_only_on_the_element_its_card_named(
    context: ToolContext, site: Site
) -> None:
    """The page moves things between the card and the answer: the approved call refuses
    rather than act on what now sits at its point or matches its selector; a call nobody
    was asked about acts on what its target resolves to."""
    tab = await open_page(context, site, "/moving.html")
    await call(context, "snapshot", tabId=tab.id)
    point = {"tabId": tab.id, "target": {"kind": "point", "x": 60, "y": 20}}
    css = {"tabId": tab.id, "target": {"kind": "css", "selector": ".field"}, "text": "hello"}
    clicking, typing = Approval(), Approval()
    card = await describe_call(context, "click", point, clicking)
    assert card is not None
    assert card.startswith("Click “Keep my data”")
    assert (await describe_call(context, "type", css, typing) or "").startswith(
        "Type into “Search”"
    )
    move = (
        "document.getElementById('keep').style.top = '200px';"
        "document.getElementById('search').className = '';"
        "document.getElementById('iban').className = 'field'; 1"
    )
    assert "error" not in await call(context, "evaluate", tabId=tab.id, expression=move)

    clicked = await call_tool(context, "click", point, clicking)
    typed = await call_tool(context, "type", css, typing)
    assert clicked["error"]["code"] == "targetChanged", clicked
    assert typed["error"]["code"] == "targetChanged", typed
    assert "changed after the approval" in typed["error"]["message"]
    state = "[document.title, document.getElementById('iban').value]"
    assert (await call(context, "evaluate", tabId=tab.id, expression=state))["value"] == [
        "moving",
        "",
    ]
    # Asked about the page as it is now, the same calls run, and typing names its field.
    again = Approval()
    await describe_call(context, "type", css, again)
    assert await call_tool(context, "type", css, again) == {
        "ok": True,
        "field": "Recipient IBAN",
        "value": "hello",
    }
    assert (await call_tool(context, "click", point))["ok"]

"""The words a person reads before a gated call runs: what it will do, to what, on which page.

Each gated tool describes its calls in its own module with these pieces: the page as
``Title (host)``, an element by its accessible name as the page gives it now, read
without touching the page (for a call that asks, that element is the one approved). A
piece that cannot be read (a tab gone, a stale ref) falls back to what the agent wrote,
so a description never fails.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Page

from server.common.errors import CrewhostError
from server.host.browser.tabs import Tab
from server.host.browser.typed_address import TypedAddressRefused, resolve_typed_address
from server.host.tools.args import CssTarget, PointTarget, RefTarget, RoleTarget, Target, TextTarget
from server.host.tools.context import ToolContext
from server.host.tools.page import approval
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.page.targets import inspect, resolve_target

# The most of a name, an address or a script a description shows.
NAME_SHOWN = 80
SCRIPT_SHOWN = 100


def shortened(text: str, limit: int = NAME_SHOWN) -> str:
    """``text`` on one line, cut with an ellipsis past ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def quoted(name: str) -> str:
    """A name as a description quotes it: “Empty basket”."""
    return f"“{shortened(name)}”"


def site_of(url: str) -> str:
    """The host (and port) of an address, as a person recognises the site."""
    parts = urlsplit(url)
    return parts.netloc.rpartition("@")[2] or url


# The least of an address's path and query a description shows after a long host.
REST_SHOWN = 24


def described_url(typed: str, search_url: str) -> str:
    """An address an agent typed, as a description shows it: whole when it is short, else
    its scheme and whole host (and port) with the rest cut, so a long address never hides
    the site it leads to. A search phrase or an address the browser refuses is shown as
    typed, shortened."""
    line = " ".join(typed.split())
    try:
        address = resolve_typed_address(typed, search_url)
    except TypedAddressRefused:
        return shortened(line)
    if address.kind != "url":
        return shortened(line)
    # A browser reads a backslash in a web address as a slash: split it the same way.
    url = address.url.replace("\\", "/")
    parts = urlsplit(url)
    if not parts.netloc:
        return shortened(line)
    if len(line) <= NAME_SHOWN and "@" not in parts.netloc:
        return line
    origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    rest = url.partition("//")[2][len(parts.netloc) :]
    if not rest:
        return origin
    return origin + shortened(rest, max(NAME_SHOWN - len(origin), REST_SHOWN))


def page_name(tab: Tab) -> str:
    """``Title (host)``, or the host alone for a page without a title."""
    title = shortened(tab.title)
    site = site_of(tab.url)
    if not title:
        return site or "a blank page"
    return f"{title} ({site})" if site else title


def tab_of(context: ToolContext, tab_id: str | None) -> Tab | None:
    """The tab the call names if the agent may use it; None otherwise."""
    if tab_id is None:
        return None
    try:
        return reachable_tab(context, tab_id)
    except CrewhostError:
        return None


def on_page(context: ToolContext, tab_id: str | None) -> str:
    """`` on Title (host)``, or nothing when the tab cannot be read."""
    tab = tab_of(context, tab_id)
    return f" on {page_name(tab)}" if tab is not None else ""


def written_target(target: Target) -> str:
    """A target as the agent wrote it, for when the page cannot name it."""
    match target:
        case RoleTarget(role=role, name=name):
            return quoted(name) if name else f"the {role}"
        case TextTarget(text=text):
            return quoted(text)
        case CssTarget(selector=selector):
            return f"the element {shortened(selector)}"
        case RefTarget(ref=ref):
            return f"the element {ref}"
        case PointTarget(x=x, y=y):
            return f"the point ({x:g}, {y:g})"


async def element_name(context: ToolContext, tab_id: str, target: Target) -> str:
    """The target as a person names it: its accessible name on the page now, quoted; what
    the agent wrote when the page cannot say (the read never acts on the page)."""
    tab = tab_of(context, tab_id)
    if tab is None:
        return written_target(target)

    async def read(page: Page) -> tuple[str | None, dict[str, Any]]:
        resolved = await resolve_target(tab, page, target)
        return resolved.pick, await inspect(resolved)

    try:
        done = await context.engine.run(context.team_id, tab.id, context.caller, read)
    except CrewhostError:
        return written_target(target)
    pick, facts = done.value or (None, {})
    # A call that asks acts only on the element this card names (see ``approval``).
    approval.record(target, pick, facts)
    name = approval.shown_name(facts)
    return quoted(name) if name is not None else written_target(target)


def script_summary(code: str) -> str:
    """The start of a script on one line: what a person reads before its Details."""
    return shortened(code, SCRIPT_SHOWN)


# Arguments a description never quotes: what an agent types into a page.
_TYPED = ("text", "value", "values", "fields")


def arguments_line(arguments: dict[str, Any]) -> str:
    """Arguments on one short line, typed text hidden (a call the tool cannot describe)."""
    shown = {k: ("…" if k in _TYPED else v) for k, v in arguments.items()}
    return shortened(json.dumps(shown, ensure_ascii=False), SCRIPT_SHOWN)

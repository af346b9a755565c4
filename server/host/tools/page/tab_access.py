"""Which tabs a tool call may reach: the rules of ``browser.access`` in a tool's terms."""

from __future__ import annotations

from server.common.protocol.events import BrowserTakeoverRequested
from server.host.browser.access import agent_reaches, holds_secret, require_tool_reach
from server.host.browser.tabs import Tab
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure

__all__ = [
    "announce_takeover",
    "holds_secret",
    "reachable_tab",
    "reachable_tabs",
    "refuse_secret_tab",
]


def announce_takeover(context: ToolContext, tab: Tab, reason: str, code: str | None = None) -> None:
    """Tells the team that a person is asked to take ``tab`` over, and why (``code`` names a
    case the host found)."""
    if context.announce is not None:
        context.announce(
            context.team_id,
            BrowserTakeoverRequested(
                tab_id=tab.id,
                agent_id=context.caller.agent_id,
                thread_id=context.caller.thread_id,
                reason=reason,
                code=code,
            ),
        )


def refuse_secret_tab(tab: Tab) -> None:
    """Page scripts and reads of a tab in secure entry are refused until a new document."""
    if holds_secret(tab):
        raise ToolFailure(
            "tabHoldsSecret",
            "this tab is in secure entry: scripts and page reads are refused on it until it "
            "loads a new page; take a snapshot instead",
        )


def reachable_tab(context: ToolContext, tab_id: str) -> Tab:
    """The tab ``tab_id`` if the caller may use it; ``tabNotFound`` otherwise."""
    tab = context.engine.get_tab(context.team_id, tab_id)
    require_tool_reach(context.caller, tab)
    return tab


def reachable_tabs(context: ToolContext) -> list[Tab]:
    """Every tab of the team the caller may use."""
    return [
        t for t in context.engine.list_tabs(context.team_id) if agent_reaches(context.caller, t)
    ]

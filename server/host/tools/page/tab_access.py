"""Which tabs a tool call may reach: the rules of ``browser.access`` in a tool's terms."""

from __future__ import annotations

from server.host.browser.access import agent_reaches, holds_secret, require_tool_reach
from server.host.browser.tabs import Tab
from server.host.tools.base import ToolContext

__all__ = ["holds_secret", "reachable_tab", "reachable_tabs"]


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

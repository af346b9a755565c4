"""Which tabs a tool call may reach.

An agent reaches the tabs of its own thread (a tab a person opened in that thread
included), or, called outside a thread, the tabs it owns. Another agent's tab is
as unknown to it as a missing one, so a wrong id reveals nothing.
"""

from __future__ import annotations

from server.host.browser.tabs import Tab
from server.host.tools.base import ToolContext, ToolFailure


def holds_secret(tab: Tab) -> bool:
    """Whether the tab is in secure entry (``tool_state["secret"]``, set by secure entry):
    no script of ours reads or touches such a tab."""
    return bool(tab.tool_state.get("secret"))


def can_reach(context: ToolContext, tab: Tab) -> bool:
    """Whether the caller of ``context`` may use ``tab``."""
    caller = context.caller
    if not caller.is_agent:
        return True
    if caller.thread_id is not None and tab.owner_thread_id is not None:
        return tab.owner_thread_id == caller.thread_id
    return tab.owner_agent_id == caller.agent_id


def reachable_tab(context: ToolContext, tab_id: str) -> Tab:
    """The tab ``tab_id`` if the caller may use it; ``tabNotFound`` otherwise."""
    tab = context.engine.get_tab(context.team_id, tab_id)
    if not can_reach(context, tab):
        raise ToolFailure("tabNotFound", "no such tab; list_tabs shows yours")
    return tab


def reachable_tabs(context: ToolContext) -> list[Tab]:
    """Every tab of the team the caller may use."""
    return [t for t in context.engine.list_tabs(context.team_id) if can_reach(context, t)]

"""Who may read, steer, view or close a tab: the one place that decides.

Every way in asks here: the agent tools, the members' browser-control routes and
the live view. The rules:

- a tab belongs to its team; another team's tab is as unknown as a missing one;
- an agent reaches the tabs of its own thread (a tab a person opened in that
  thread included) or, called outside a thread, the tabs it owns; another
  agent's tab is as unknown to it as a missing one;
- a private sign-in tab is nobody's to list, steer or watch but the person who
  opened it (and the tools of secure entry);
- a tab in secure entry (it holds a secret) is never read by our scripts nor
  shown in a live view, but to the one person who holds it once no secret shows
  (a takeover after a failed entry);
- while a person holds a tab, agents are refused on it, and so is any other
  person; a page dialog waiting for an answer refuses agents too.
"""

from __future__ import annotations

from typing import Any, Protocol

from server.common.errors import Conflict, Forbidden, NotFound
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.protection_state import Protection


class TabFacts(Protocol):
    """What the rules read of a tab."""

    @property
    def partition(self) -> Partition: ...
    @property
    def owner_agent_id(self) -> str | None: ...
    @property
    def owner_thread_id(self) -> str | None: ...
    @property
    def opened_by(self) -> str | None: ...
    @property
    def held_by(self) -> str | None: ...
    @property
    def dialog(self) -> Any: ...
    @property
    def protection(self) -> Protection: ...
    @property
    def closed(self) -> bool: ...


def holds_secret(tab: TabFacts) -> bool:
    """Whether the tab is in secure entry: the question every reader of a tab asks. The state
    (``Tab.protection``) is ``browser.protection``'s alone to set and clear."""
    return tab.protection.holds_secret


def secret_view_allowed(tab: TabFacts, account_id: str, *, taking: bool = False) -> bool:
    """Whether ``account_id`` may watch and steer a tab that holds a secret: only once its
    page shows none (protection ``watchable``), and only the person who holds the tab (or
    takes it as the view opens, when nobody does)."""
    if not tab.protection.watchable:
        return False
    return tab.held_by == account_id or (taking and tab.held_by is None)


def is_private(tab: TabFacts) -> bool:
    """A private sign-in tab: a sign-in in progress that nobody else lists or watches."""
    return tab.partition.kind == "private"


def agent_reaches(caller: Caller, tab: TabFacts) -> bool:
    """Whether ``caller`` may use ``tab`` through the tools (a person's tool call may)."""
    if not caller.is_agent:
        return True
    if caller.thread_id is not None and tab.owner_thread_id is not None:
        return tab.owner_thread_id == caller.thread_id
    return tab.owner_agent_id == caller.agent_id


def require_tool_reach(caller: Caller, tab: TabFacts) -> None:
    if not agent_reaches(caller, tab):
        raise NotFound("no such tab; list_tabs shows yours", code="tabNotFound")


def member_sees(tab: TabFacts, account_id: str) -> bool:
    """Whether the member ``account_id`` lists and steers ``tab`` (browser control): every
    tab of the team but another person's private sign-in."""
    return not is_private(tab) or tab.opened_by == account_id


def require_member_reach(tab: TabFacts, account_id: str) -> None:
    if not member_sees(tab, account_id):
        raise NotFound("no such tab", code="tabNotFound")


def require_viewable(tab: TabFacts, account_id: str, *, taking: bool = False) -> None:
    """A live view opens only on a tab the member sees that holds no secret, or for the
    person who holds (or, ``taking``, takes) a protected tab that shows none."""
    require_member_reach(tab, account_id)
    if holds_secret(tab) and not secret_view_allowed(tab, account_id, taking=taking):
        raise Forbidden(
            "this tab is in secure entry; only the person who takes it over may watch it "
            "until it loads a new page",
            code="tabHoldsSecret",
        )


def require_turn(tab: TabFacts, caller: Caller, *, dialog_ok: bool = False) -> None:
    """Refuses an agent on a held tab or one with a dialog open (unless ``dialog_ok``), and a
    person on a tab someone else holds, and anyone on a tab closed meanwhile. Checked when a
    call queues and again when it runs."""
    if tab.closed:
        raise NotFound("no such tab; it was closed", code="tabNotFound")
    if not caller.is_agent:
        if tab.held_by not in (None, caller.account_id):
            raise Conflict("another person has control of this tab", code="tabHeld")
        return
    if tab.held_by is not None:
        raise Conflict("a person has control of this tab", code="tabHeldByPerson")
    if tab.dialog is not None and not dialog_ok:
        whom = "answer it with handle_dialog" if tab.dialog.agent_id else "a person must answer it"
        raise Conflict(f"a page dialog is open: {whom}", code="dialogOpen")

"""The tabs of every team by id, and the one place their listed state changes.

What peers list of a tab (that it exists, its address, title and icon, its opener, who holds
it and whether it is loaded) changes only through the methods here, and each of them
announces the change to the tab's team exactly once, when something really changed.
Nobody assigns those fields and then has to remember to tell the team.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from playwright.async_api import Page

from server.common.clock import Clock
from server.common.errors import Conflict, NotFound
from server.host.browser.page_facts import TabIcon
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.signals import Signals


@dataclass(frozen=True, slots=True)
class TabsChanged:
    """The team's tab list changed: a tab opened, closed, moved, was held or let go."""

    team_id: str


class TabRegistry:
    """Every team's tabs; each change of a team's tab list publishes ``TabsChanged``.

    A tab that is not (or no longer) registered changes silently: no peer lists it.
    """

    def __init__(self, clock: Clock, signals: Signals) -> None:
        self._clock = clock
        self._signals = signals
        self._tabs: dict[str, Tab] = {}
        # Each team's active tab: the one its viewers see first.
        self._active: dict[str, str] = {}

    # -- reading ------------------------------------------------------------------------

    def get(self, team_id: str, tab_id: str) -> Tab:
        """The team's tab ``tab_id``; another team's tab is as unknown as a missing one."""
        tab = self._tabs.get(tab_id)
        if tab is None or tab.team_id != team_id:
            raise NotFound("no such tab", code="tabNotFound")
        return tab

    def of_team(self, team_id: str) -> list[Tab]:
        """Only this team's tabs, oldest first."""
        return [t for t in self._tabs.values() if t.team_id == team_id]

    def __iter__(self) -> Iterator[Tab]:
        return iter(list(self._tabs.values()))

    def __contains__(self, tab: object) -> bool:
        return isinstance(tab, Tab) and self._tabs.get(tab.id) is tab

    def has_id(self, tab_id: str) -> bool:
        return tab_id in self._tabs

    def teams(self) -> set[str]:
        return {t.team_id for t in self._tabs.values()}

    def popups_of(self, tab: Tab) -> list[Tab]:
        """The tabs ``tab`` opened that are still open."""
        return [t for t in self._tabs.values() if t.opener_tab_id == tab.id]

    def holds(self, tab: Tab, account_id: str, view_id: str) -> bool:
        """Whether ``account_id`` holds the tab through its live view ``view_id``."""
        return tab._held_by == account_id and view_id in tab._holding_views

    def uses(self, team_id: str, partition: Partition, *, loaded: bool = False) -> bool:
        """Whether a tab (a loaded one, if ``loaded``) of the team is in ``partition``."""
        return any(
            t.team_id == team_id and t.partition == partition and (t.loaded or not loaded)
            for t in self._tabs.values()
        )

    # -- changing: each method announces one change -------------------------------------

    def add(self, *tabs: Tab) -> None:
        """Lists new tabs (several when restored from a state file): one change per team."""
        for tab in tabs:
            self._tabs[tab.id] = tab
        for team_id in dict.fromkeys(t.team_id for t in tabs):
            self._announce_to(team_id)

    def forget(self, tab: Tab) -> Page | None:
        """Takes the tab off the list with its page, which it gives back to be closed.

        Its popups stay, without an opener.
        """
        if tab not in self:
            return None
        del self._tabs[tab.id]
        tab.closed = True
        if self._active.get(tab.team_id) == tab.id:
            del self._active[tab.team_id]
        page, tab._page, tab.identity_session = tab._page, None, None
        for other in self._tabs.values():
            if other._opener_tab_id == tab.id:
                other._opener_tab_id = None
        self._announce_to(tab.team_id)
        return page

    def activate(self, tab: Tab) -> Tab:
        """Makes ``tab`` its team's active tab; the team hears of a change."""
        if self._active.get(tab.team_id) != tab.id:
            self._active[tab.team_id] = tab.id
            self._announce_to(tab.team_id)
        return tab

    def active_id(self, team_id: str) -> str | None:
        return self._active.get(team_id)

    def attach_page(self, tab: Tab, page: Page) -> None:
        """The tab has a new page (it woke, loaded again after a crash, or is a new popup)."""
        tab._page, tab.crashed = page, False
        self._changed(tab)

    def detach_page(self, tab: Tab) -> Page | None:
        """The tab goes to sleep: it keeps the address its page was at (unless the page
        crashed) and gives the page back to be closed."""
        page = tab._page
        if page is None:
            return None
        tab._page, tab.identity_session, tab.facts_session = None, None, None
        if not tab.crashed:
            tab._url = page.url or tab._url
        self._changed(tab)
        return page

    def record_url(self, tab: Tab, url: str) -> None:
        """The tab's page is at ``url`` now (its main frame navigated)."""
        if url != tab._url:
            tab._url = url
            self._changed(tab)

    def record_title(self, tab: Tab, title: str) -> None:
        """The tab's document has the title ``title`` (read once it loaded)."""
        if title != tab._title:
            tab._title = title
            self._changed(tab)

    def record_icon(self, tab: Tab, icon: TabIcon | None) -> None:
        """The tab's document shows ``icon`` (None: it has none the browser could load)."""
        if (icon.digest if icon else None) != (tab._icon.digest if tab._icon else None):
            tab._icon = icon
            self._changed(tab)

    def take_control(
        self, team_id: str, tab_id: str, account_id: str, view_id: str | None = None
    ) -> Tab:
        """A person takes the tab (through their live view ``view_id``, if given): agents
        are refused on it until ``release``. A person holding it already holds it through
        this view too."""
        tab = self.get(team_id, tab_id)
        if tab._held_by is not None and tab._held_by != account_id:
            raise Conflict("another person has control of this tab", code="tabHeld")
        views = frozenset({view_id} if view_id is not None else ())
        if tab._held_by is None:
            tab._held_by, tab._person_held, tab._holding_views = account_id, True, views
            self._changed(tab)
        else:
            tab._holding_views |= views
        return tab

    def release(self, team_id: str, tab_id: str, account_id: str) -> Tab:
        """The holder gives the tab back to its agent."""
        tab = self.get(team_id, tab_id)
        if tab._held_by != account_id:
            raise Conflict("you do not have control of this tab", code="tabNotHeld")
        tab._held_by, tab._holding_views = None, frozenset()
        tab.last_used = self._clock.now()
        self._changed(tab)
        return tab

    def hand_over(
        self, team_id: str, tab_id: str, holder: str, to: str, view_id: str | None = None
    ) -> Tab:
        """The holder gives the tab straight to another person (a request for control it
        granted), who holds it through their live view ``view_id``, if given; agents stay
        refused throughout."""
        tab = self.get(team_id, tab_id)
        if tab._held_by != holder:
            raise Conflict("you do not have control of this tab", code="tabNotHeld")
        if to != holder:
            tab._held_by = to
            tab._holding_views = frozenset({view_id} if view_id is not None else ())
            self._changed(tab)
        return tab

    def _changed(self, tab: Tab) -> None:
        if tab in self:
            self._announce_to(tab.team_id)

    def _announce_to(self, team_id: str) -> None:
        self._signals.publish(TabsChanged(team_id))

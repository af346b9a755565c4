"""Members' own hands on the team's tabs: list, open, navigate, step through history, close.

A member sees every tab of the team except another person's private sign-in tabs
(``browser.access``) and acts as a person: a tab another person holds is theirs alone.
What a member types as an address is resolved as a browser's address bar does
(``browser.typed_address``), and a page that fails to load shows its error page at that
address.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.common.errors import InvalidArgument, NotFound
from server.host.browser.access import member_sees, require_member_reach
from server.host.browser.callers import Caller
from server.host.browser.engine import HistoryStep as HistoryStep  # the routes name it
from server.host.browser.engine import Visit
from server.host.browser.page_facts import TabIcon
from server.host.browser.partitions import Partition
from server.host.browser.runtime import BrowserRuntime
from server.host.browser.tabs import Tab
from server.host.browser.typed_address import BLANK, TypedAddressRefused, resolve_typed_address
from server.host.services.profiles import BrowserProfileService


@dataclass(frozen=True, slots=True)
class TabSummary:
    """A tab as members see it, with its profile's name and colour."""

    tab: Tab
    partition_label: str
    hue: int | None


class TabService:
    """Browser control for members, through the engine's queues and the access rules."""

    def __init__(
        self, browser: BrowserRuntime, profiles: BrowserProfileService, search_url: str
    ) -> None:
        self._browser = browser
        self._profiles = profiles
        self._search_url = search_url

    async def list_tabs(self, team_id: str, account_id: str) -> list[TabSummary]:
        """The tabs this member sees; the team's active tab (an agent's ``activate_tab``)
        first."""
        engine = await self._browser.restored()  # asleep tabs are listed without Chromium
        active = engine.active_tab_id(team_id)
        tabs = [t for t in engine.list_tabs(team_id) if member_sees(t, account_id)]
        tabs.sort(key=lambda t: t.id != active)  # stable: the rest keep their order
        return await self._summaries(team_id, tabs)

    async def new_tab(
        self,
        team_id: str,
        account_id: str,
        typed: str,
        profile_id: str | None = None,
        *,
        private: bool = False,
    ) -> tuple[TabSummary, Visit]:
        """A tab in the team's shared profile, in the named profile ``profile_id`` or, when
        ``private``, in a private sign-in of its own (storage in memory, gone with the tab,
        seen by this member only), at the address ``typed``; a page that fails to load
        leaves the tab at its error page."""
        url = self._resolve(typed)
        partition = Partition.shared()
        if private:
            if profile_id is not None:
                raise InvalidArgument(
                    "a private sign-in opens in a profile of its own; leave the profile out",
                    field="profileId",
                )
            partition = Partition.private()
        elif profile_id is not None:
            if not await self._profiles.profile_exists(team_id, profile_id):
                raise NotFound("no such browser profile", code="browserProfileNotFound")
            partition = Partition.profile(profile_id)
        engine = await self._browser.engine()
        tab = await engine.open_tab(team_id, partition, opened_by=account_id)
        visit = Visit(BLANK)
        if url != BLANK:
            try:
                visit = await engine.visit(team_id, tab.id, Caller.person(account_id), url)
            except BaseException:
                await engine.close_tab(team_id, tab.id, Caller.person(account_id))
                raise
        return (await self._summaries(team_id, [tab]))[0], visit

    async def navigate(self, team_id: str, account_id: str, tab_id: str, typed: str) -> Visit:
        """Load the address ``typed``; answers where the tab ended, and the network error of
        a page that did not load (the tab shows its error page)."""
        url = self._resolve(typed)
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, account_id, tab_id)
        return await engine.visit(team_id, tab.id, Caller.person(account_id), url)

    def _resolve(self, typed: str) -> str:
        try:
            return resolve_typed_address(typed, self._search_url).url
        except TypedAddressRefused as refused:
            raise InvalidArgument(refused.message, field="url") from None

    async def step(self, team_id: str, account_id: str, tab_id: str, step: HistoryStep) -> str:
        """Back, forward or reload; answers the address the tab ended at."""
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, account_id, tab_id)
        return await engine.step_history(team_id, tab.id, Caller.person(account_id), step)

    async def close_tab(self, team_id: str, account_id: str, tab_id: str) -> None:
        """Close the tab and its dependent popups."""
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, account_id, tab_id)
        await engine.close_tab(team_id, tab.id, Caller.person(account_id))

    async def icon(self, team_id: str, account_id: str, tab_id: str) -> TabIcon | None:
        """The icon of a tab the member sees (None when its page has none)."""
        return (await self._member_tab(team_id, account_id, tab_id)).icon

    async def _member_tab(self, team_id: str, account_id: str, tab_id: str) -> Tab:
        engine = await self._browser.restored()
        tab = engine.get_tab(team_id, tab_id)
        require_member_reach(tab, account_id)
        return tab

    async def _summaries(self, team_id: str, tabs: list[Tab]) -> list[TabSummary]:
        profiles = {p.id: p for p in await self._profiles.list_profiles(team_id)}
        summaries = []
        for tab in tabs:
            profile = profiles.get(tab.partition.key) if tab.partition.kind == "profile" else None
            summaries.append(
                TabSummary(
                    tab,
                    profile.name if profile else tab.partition.label,
                    profile.hue if profile else None,
                )
            )
        return summaries

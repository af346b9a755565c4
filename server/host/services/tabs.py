"""Members' own hands on the team's tabs: list, open, navigate, step through history, close.

A member sees every tab of the team except private sign-in tabs (``browser.access``)
and acts as a person: a tab another person holds is theirs alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from server.host.browser.access import member_sees, require_member_reach
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.runtime import BrowserRuntime
from server.host.browser.tabs import Tab
from server.host.services.profiles import BrowserProfileService

HistoryStep = Literal["back", "forward", "reload"]


@dataclass(frozen=True, slots=True)
class TabSummary:
    """A tab as members see it, with its profile's name and colour."""

    tab: Tab
    partition_label: str
    hue: int | None


class TabService:
    """Browser control for members, through the engine's queues and the access rules."""

    def __init__(self, browser: BrowserRuntime, profiles: BrowserProfileService) -> None:
        self._browser = browser
        self._profiles = profiles

    async def list_tabs(self, team_id: str) -> list[TabSummary]:
        engine = await self._browser.engine()
        return await self._summaries(
            team_id, [t for t in engine.list_tabs(team_id) if member_sees(t)]
        )

    async def new_tab(self, team_id: str, url: str) -> TabSummary:
        """A tab in the team's shared profile."""
        engine = await self._browser.engine()
        tab = await engine.open_tab(team_id, Partition.shared(), url=url)
        return (await self._summaries(team_id, [tab]))[0]

    async def navigate(self, team_id: str, account_id: str, tab_id: str, url: str) -> str:
        """Load ``url``; answers the address the tab ended at."""
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, tab_id)
        result = await engine.navigate(team_id, tab.id, Caller.person(account_id), url)
        return str(result.value)

    async def step(self, team_id: str, account_id: str, tab_id: str, step: HistoryStep) -> str:
        """Back, forward or reload; answers the address the tab ended at."""
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, tab_id)

        async def act(page: Any) -> str:
            if step == "back":
                await page.go_back()
            elif step == "forward":
                await page.go_forward()
            else:
                await page.reload()
            return str(page.url)

        result = await engine.run(team_id, tab.id, Caller.person(account_id), act)
        return str(result.value)

    async def close_tab(self, team_id: str, account_id: str, tab_id: str) -> None:
        """Close the tab and its dependent popups."""
        engine = await self._browser.engine()
        tab = await self._member_tab(team_id, tab_id)
        await engine.close_tab(team_id, tab.id, Caller.person(account_id))

    async def _member_tab(self, team_id: str, tab_id: str) -> Tab:
        engine = await self._browser.engine()
        tab = engine.get_tab(team_id, tab_id)
        require_member_reach(tab)
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

"""The browser engine: the one façade over Chromium, the partitions and every team's tabs.

It composes the parts, each in its own module: the team folders, the context pool
(``contexts``), the tab registry (where tab changes are announced), the tabs' pages
and their events, and the saved tabs. Every tab call goes through the tab's queue
(``TabQueue.run``), which is where takeover, dialogs and deadlines are enforced.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, TypeVar

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.common.browser_address_policy import AddressPolicy, AddressRefused
from server.common.clock import Clock, SystemClock
from server.common.errors import NotFound
from server.host.browser.address_guard import AddressGuard
from server.host.browser.callers import Caller
from server.host.browser.contexts import ContextPool
from server.host.browser.identity import BrowserIdentity
from server.host.browser.lifetime import IdlePolicy, system_memory_low
from server.host.browser.page_events import PageEvents
from server.host.browser.pages import LoadWait, TabPages
from server.host.browser.partitions import Partition
from server.host.browser.proxied import ProxiedPartitions
from server.host.browser.saved_tabs import SavedTabs
from server.host.browser.tab_dialogs import answer_dialog, run_input_action
from server.host.browser.tab_registry import TabRegistry
from server.host.browser.tabs import BLANK, Tab, TabResult
from server.host.browser.team_folders import TeamFolders
from server.host.proxies.launcher import ProxyLauncher
from server.host.proxies.marks import ProxyMarks
from server.host.signals import Signals

T = TypeVar("T")

# How Chromium names a load that failed (ERR_CONNECTION_REFUSED, ERR_NAME_NOT_RESOLVED, …).
_NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")


# What a toolbar or a context menu does to a tab's history.
HistoryStep = Literal["back", "forward", "reload"]


@dataclass(frozen=True, slots=True)
class Visit:
    """Where a person's load ended, and Chromium's network error when the page failed."""

    url: str
    load_error: str | None = None


def _any_profile(_team_id: str, _profile_id: str) -> bool:
    return True


def _unproxied(signals: Signals) -> ProxiedPartitions:
    marks = ProxyMarks(signals)
    return ProxiedPartitions(ProxyLauncher(marks), marks)


class BrowserEngine:
    """Owns Playwright, Chromium, every partition's context and every team's tabs."""

    def __init__(
        self,
        data_dir: Path,
        *,
        chromium: str | None = None,
        clock: Clock | None = None,
        locale: str = "en-GB",
        deadline: float = 30.0,
        idle_policy: IdlePolicy | None = None,
        memory_low: Callable[[], bool] = system_memory_low,
        profile_exists: Callable[[str, str], bool] = _any_profile,
        dialog_settle: float = 0.2,
        address_policy: AddressPolicy | None = None,
        host_map: Mapping[str, str] | None = None,
        proxied: ProxiedPartitions | None = None,
        signals: Signals | None = None,
        cpu_nice: int = 0,
    ) -> None:
        self._clock = clock or SystemClock()
        self.deadline = deadline
        self._policy = idle_policy or IdlePolicy()
        self._memory_low = memory_low
        self._settle = dialog_settle
        # What the browsers may reach (by default not the host's own loopback); ``host_map``
        # gives names addresses in Chromium's resolver, as DNS would (tests).
        self._guard = AddressGuard(address_policy or AddressPolicy(), host_map)
        self._folders = TeamFolders(data_dir)
        # Hears ``TabsChanged`` and ``PageAttached``.
        self.signals = signals or Signals()
        self._tabs = TabRegistry(self._clock, self.signals)
        self._contexts = ContextPool(
            self._folders,
            self._tabs,
            self._guard,
            self._clock,
            chromium=chromium,
            locale=locale,
            profile_exists=profile_exists,
            proxied=proxied or _unproxied(self.signals),
            cpu_nice=cpu_nice,
        )
        self._saved = SavedTabs(self._folders, self._tabs, self._clock, profile_exists)
        self._events = PageEvents(
            self._tabs,
            self._clock,
            identity=lambda: self.identity,
            deadline=deadline,
            forget=self._forget,
            save=self._saved.save,
        )
        self._pages = TabPages(self._contexts, self._events, self._tabs, self.signals)

    # -- start and stop ---------------------------------------------------------------

    async def __aenter__(self) -> BrowserEngine:
        self._contexts.locate_chromium()
        await self._guard.__aenter__()
        try:
            await self._contexts.start()
            await self.restore_saved_tabs()
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        await self._saved.save_all()
        self._pages.close()
        await self._events.close()
        await self._contexts.stop()
        await self._guard.__aexit__(None, None, None)

    @property
    def identity(self) -> BrowserIdentity:
        return self._contexts.identity

    @property
    def running(self) -> bool:
        return self._contexts.running

    def team_folder(self, team_id: str) -> Path:
        """The team's browser folder; refuses an id that could name a path elsewhere."""
        return self._folders.of(team_id)

    # -- tabs ---------------------------------------------------------------------------

    async def open_tab(
        self,
        team_id: str,
        partition: Partition,
        *,
        url: str = BLANK,
        owner_agent_id: str | None = None,
        owner_thread_id: str | None = None,
        opened_by: str | None = None,
    ) -> Tab:
        """A new tab in ``partition``, loaded at ``url``; ``opened_by`` is the person who
        opened it (the only one who sees it when it is a private sign-in)."""
        self.team_folder(team_id)
        self._contexts.check_profile(team_id, partition)
        tab = Tab(
            id=str(uuid.uuid4()),
            team_id=team_id,
            partition=partition,
            owner_agent_id=owner_agent_id,
            owner_thread_id=owner_thread_id,
            opener_tab_id=None,
            url=url,
            last_used=self._clock.now(),
            opened_by=opened_by,
        )
        self._tabs.add(tab)
        try:
            async with asyncio.timeout(self.deadline):
                await self._pages.load(tab)
        except BaseException:
            await self._forget(tab)
            raise
        self._saved.save_soon(team_id)
        return tab

    async def open_tab_beside(self, team_id: str, tab_id: str, url: str) -> Tab:
        """A new tab in the same partition and ownership as ``tab_id`` (a context menu's
        "open link in new tab")."""
        source = self.get_tab(team_id, tab_id)
        return await self.open_tab(
            team_id,
            source.partition,
            url=url,
            owner_agent_id=source.owner_agent_id,
            owner_thread_id=source.owner_thread_id,
            opened_by=source.opened_by,
        )

    def get_tab(self, team_id: str, tab_id: str) -> Tab:
        """The team's tab ``tab_id``; another team's tab is as unknown as a missing one."""
        return self._tabs.get(team_id, tab_id)

    def list_tabs(self, team_id: str) -> list[Tab]:
        """Only this team's tabs."""
        return self._tabs.of_team(team_id)

    def tab_states(self) -> dict[str, int]:
        """How many tabs of every team are held by a person, loaded, or asleep."""
        counts = {"held": 0, "loaded": 0, "asleep": 0}
        for tab in self._tabs:
            state = "held" if tab.held_by else "loaded" if tab.loaded else "asleep"
            counts[state] += 1
        return counts

    def activate_tab(self, team_id: str, tab_id: str) -> Tab:
        """Makes ``tab_id`` the team's active tab: the one its viewers see first."""
        return self._tabs.activate(self.get_tab(team_id, tab_id))

    def active_tab_id(self, team_id: str) -> str | None:
        """The team's active tab, if one was chosen and is still open."""
        return self._tabs.active_id(team_id)

    async def run(
        self,
        team_id: str,
        tab_id: str,
        caller: Caller,
        operation: Callable[[Page], Awaitable[T]],
        *,
        input_action: bool = False,
        deadline: float | None = None,
    ) -> TabResult[T]:
        """Runs ``operation`` on the tab's page in the tab's queue.

        A sleeping tab loads first; a crashed one loads again and the result says
        ``stale_refs``. During an agent's ``input_action`` a dialog the page opens
        ends the action and comes back in the result.
        """
        tab = self.get_tab(team_id, tab_id)

        async def step() -> TabResult[T]:
            tab.last_used = self._clock.now()
            stale = tab.crashed
            page = await self._pages.ready(tab)
            try:
                if input_action and caller.agent_id is not None:
                    return await run_input_action(
                        tab, caller.agent_id, page, operation, stale=stale, settle=self._settle
                    )
                return TabResult(await operation(page), stale_refs=stale)
            finally:
                tab.last_used = self._clock.now()

        result = await tab.queue.run(caller, step, deadline=deadline or self.deadline)
        self._saved.save_soon(team_id)
        return result

    async def navigate(
        self, team_id: str, tab_id: str, caller: Caller, url: str, *, wait_until: LoadWait = "load"
    ) -> TabResult[str]:
        """Loads ``url`` in the tab and gives the address it ended at (``wait_until`` as
        ``PageLoader.goto`` takes it).

        Raises ``AddressRefused`` when the address policy refused the page or a redirect
        on the way; the tab shows the refusal.
        """

        async def go(page: Page) -> str:
            try:
                response = await self._pages.goto(
                    self.get_tab(team_id, tab_id), page, url, wait_until=wait_until
                )
            except PlaywrightError:
                rule = await self._guard.explain(url)
                if rule is None:
                    raise
                raise AddressRefused(url, rule) from None
            if response is not None:
                rule = self._guard.rule_of(
                    response.url, await response.server_addr(), response.headers
                )
                if rule is not None:
                    raise AddressRefused(response.url, rule)
            return page.url

        return await self.run(team_id, tab_id, caller, go)

    async def step_history(
        self, team_id: str, tab_id: str, caller: Caller, step: HistoryStep
    ) -> str:
        """Back, forward or reload, in the tab's queue (a member's toolbar, a live view's
        context menu); gives the address the tab ended at."""

        async def act(page: Page) -> str:
            if step == "back":
                await page.go_back()
            elif step == "forward":
                await page.go_forward()
            else:
                await page.reload()
            return page.url

        result = await self.run(team_id, tab_id, caller, act)
        return str(result.value)

    async def visit(self, team_id: str, tab_id: str, caller: Caller, url: str) -> Visit:
        """A person's load from the address bar: like ``navigate``, but a page that does not
        load is no error, as in a browser. The tab shows Chromium's error page and lists the
        address that failed; the answer names the network error."""
        try:
            result = await self.navigate(team_id, tab_id, caller, url)
        except PlaywrightError as exc:
            found = _NET_ERROR.search(str(exc))
            if found is None:
                raise
            if found.group(1) == "ERR_ABORTED":
                # No error page: the load was cut short and the tab stayed where it was.
                return Visit(self.get_tab(team_id, tab_id).url, found.group(1))
            return Visit(url, found.group(1))
        return Visit(str(result.value))

    async def close_tab(self, team_id: str, tab_id: str, caller: Caller) -> None:
        """Closes the tab and its dependent popups; works with a dialog open, not while held."""
        tab = self.get_tab(team_id, tab_id)

        async def close() -> None:
            await self._close(tab)

        await tab.queue.run(caller, close, deadline=self.deadline, dialog_ok=True)
        self._saved.save_soon(team_id)

    async def _close(self, tab: Tab) -> None:
        if tab not in self._tabs:
            return  # closing is idempotent
        for popup in self._tabs.popups_of(tab):
            if popup.dependent:
                await self._close(popup)
        await self._forget(tab)  # the other popups stay, without an opener

    async def _forget(self, tab: Tab) -> None:
        await self._pages.close_page(self._tabs.forget(tab))
        await self._contexts.drop_private(tab.team_id, tab.partition)

    # -- live view ----------------------------------------------------------------------

    async def view_page(self, team_id: str, tab_id: str) -> Page:
        """The tab's page for watching, loaded if it slept; outside the tab's queue."""
        tab = self.get_tab(team_id, tab_id)
        page = await self._pages.ready(tab)
        tab.last_used = self._clock.now()
        return page

    # -- closing and clearing partitions ------------------------------------------------

    async def close_partition(self, team_id: str, partition: Partition) -> None:
        """Close every tab of the partition, held or not (an admin's change wins), and its context.

        A stopped engine has nothing open; the partition's saved tabs are forgotten instead
        (and those listed asleep before it started).
        """
        self.team_folder(team_id)
        if not self.running:
            self._forget_asleep(team_id, lambda tab: tab.partition == partition)
            await self._saved.forget_partition(team_id, partition)
            return
        for tab in self.list_tabs(team_id):
            if tab.partition == partition:
                await self._close(tab)
        await self._contexts.close(team_id, partition)
        await self._saved.save(team_id)

    async def close_agent_tabs(self, team_id: str, agent_id: str) -> None:
        """Close every tab an agent owns (its profile changed, or it was deleted)."""
        self.team_folder(team_id)
        if not self.running:
            self._forget_asleep(team_id, lambda tab: tab.owner_agent_id == agent_id)
            await self._saved.forget_agent(team_id, agent_id)
            return
        for tab in self.list_tabs(team_id):
            if tab.owner_agent_id == agent_id:
                await self._close(tab)
        await self._saved.save(team_id)

    def _forget_asleep(self, team_id: str, chosen: Callable[[Tab], bool]) -> None:
        """Drops the chosen tabs restored before the engine started: asleep, with no page."""
        for tab in self.list_tabs(team_id):
            if chosen(tab):
                self._tabs.forget(tab)

    async def clear_partition(self, team_id: str, partition: Partition) -> None:
        """Close the partition, then remove its cookies, storage and cache from disk."""
        await self.close_partition(team_id, partition)
        await self._contexts.clear(team_id, partition)

    def open_partitions(self, team_id: str) -> list[Partition]:
        """The team's partitions whose browser context is running now."""
        return self._contexts.open_partitions(team_id)

    # -- takeover -----------------------------------------------------------------------

    def take_control(
        self, team_id: str, tab_id: str, account_id: str, view_id: str | None = None
    ) -> Tab:
        """A person takes the tab (through a live view): agents are refused on it until
        ``release``."""
        return self._tabs.take_control(team_id, tab_id, account_id, view_id)

    def holds(self, team_id: str, tab_id: str, account_id: str, view_id: str) -> bool:
        """Whether the person holds the tab through their live view ``view_id`` (a closed
        tab is held by nobody)."""
        try:
            tab = self._tabs.get(team_id, tab_id)
        except NotFound:
            return False
        return self._tabs.holds(tab, account_id, view_id)

    def release(self, team_id: str, tab_id: str, account_id: str) -> Tab:
        """The holder gives the tab back to its agent."""
        return self._tabs.release(team_id, tab_id, account_id)

    def hand_over(
        self, team_id: str, tab_id: str, holder: str, to: str, view_id: str | None = None
    ) -> Tab:
        """The holder passes the tab to the person ``to`` (to their live view ``view_id``);
        agents stay refused."""
        return self._tabs.hand_over(team_id, tab_id, holder, to, view_id)

    # -- dialogs ------------------------------------------------------------------------

    async def handle_dialog(
        self,
        team_id: str,
        tab_id: str,
        accept: bool,
        text: str | None = None,
        *,
        caller: Caller,
    ) -> TabResult[None]:
        """Answers the tab's dialog: an agent only its own, a person any. A dialog the page
        opens as an agent's answer goes to that agent, as one its click opened would."""
        tab = self.get_tab(team_id, tab_id)

        async def answer() -> TabResult[None]:
            try:
                if caller.agent_id is not None and tab.page is not None:
                    return await run_input_action(
                        tab,
                        caller.agent_id,
                        tab.page,
                        lambda _page: answer_dialog(tab, caller, accept, text),
                        stale=False,
                        settle=self._settle,
                    )
                await answer_dialog(tab, caller, accept, text)
                return TabResult(None)
            finally:
                tab.last_used = self._clock.now()

        return await tab.queue.run(caller, answer, deadline=self.deadline, dialog_ok=True)

    # -- lifetime and saved tabs --------------------------------------------------------

    async def tick(self) -> list[str]:
        """Puts idle tabs to sleep by the idle policy; gives the ids it unloaded."""
        now = self._clock.now()
        chosen = self._policy.tabs_to_unload(self._tabs, now, memory_low=self._memory_low())
        for tab in chosen:
            await self._pages.unload(tab)
        await self._contexts.close_idle()
        return [t.id for t in chosen]

    async def restore_saved_tabs(self) -> None:
        """Every team's saved tabs, asleep: at the start, or before it to list them (a tab
        restored already is left as it is)."""
        await self._saved.restore_all()

    async def restore(self, team_id: str) -> list[Tab]:
        """The team's saved tabs, asleep in their own partitions; bad entries are dropped."""
        return await self._saved.restore(team_id)

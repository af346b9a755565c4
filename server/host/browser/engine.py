"""The browser engine: one Playwright, one Chromium per persistent partition, managed tabs.

Partition folders live under ``<data_dir>/browser/<team_id>/``, so two teams never
share a profile. Every tab call goes through the tab's queue (``TabQueue.run``),
which is where takeover, dialogs and deadlines are enforced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from playwright.async_api import (
    Browser,
    BrowserContext,
    Dialog,
    Frame,
    Page,
    Playwright,
    Response,
    async_playwright,
)
from playwright.async_api import (
    Error as PlaywrightError,
)

from server.common.addresses import AddressPolicy, AddressRefused
from server.common.clock import Clock, SystemClock
from server.common.errors import Conflict, InvalidArgument, NotFound, Unavailable
from server.host.browser.address_guard import AddressGuard
from server.host.browser.callers import Caller
from server.host.browser.dialogs import PendingDialog
from server.host.browser.identity import BrowserIdentity
from server.host.browser.lifetime import IdlePolicy, system_memory_low
from server.host.browser.partitions import Partition
from server.host.browser.state import SavedTab, read_state, write_state
from server.host.browser.tabs import Tab, TabResult
from server.host.chromium import CLOSED_NETWORK_FLAGS, find_chromium
from server.host.page.scripts import page_script

log = logging.getLogger(__name__)

T = TypeVar("T")
_TEAM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_BLANK = "about:blank"
# Closing a page whose renderer is gone must not hang the tab.
_CLOSE_LIMIT = 5.0


def _any_profile(_team_id: str, _profile_id: str) -> bool:
    return True


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
    ) -> None:
        self._root = data_dir / "browser"
        self._configured_chromium = chromium
        self._clock = clock or SystemClock()
        self._locale = locale
        self.deadline = deadline
        self._policy = idle_policy or IdlePolicy()
        self._memory_low = memory_low
        self._profile_exists = profile_exists
        self._dialog_settle = dialog_settle
        # What the browsers may reach (by default not the host's own loopback); ``host_map``
        # gives names addresses in Chromium's resolver, as DNS would (tests).
        self._guard = AddressGuard(address_policy or AddressPolicy(), host_map)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._executable: Path | None = None
        self._identity: BrowserIdentity | None = None
        self._contexts: dict[tuple[str, Partition], BrowserContext] = {}
        self._context_locks: dict[tuple[str, Partition], asyncio.Lock] = {}
        self._tabs: dict[str, Tab] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._save_lock = asyncio.Lock()
        self._closing = False
        # Told the team whenever its tab list changes (a tab opened, closed, moved or held).
        self.tabs_changed: Callable[[str], None] = lambda _team_id: None
        # Told when a tab has a new page, loaded (woken from sleep, reloaded after a crash).
        self.page_attached: Callable[[Tab], None] = lambda _tab: None

    # -- start and stop ---------------------------------------------------------------

    async def __aenter__(self) -> BrowserEngine:
        self._executable = find_chromium(self._configured_chromium)
        if self._executable is None:
            raise Unavailable(
                "no Chromium found: install Debian's chromium package or set CREWHOST_CHROMIUM",
                code="browserMissing",
            )
        await self._guard.__aenter__()
        try:
            self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self._executable, headless=True, args=self._args()
            )
            self._identity = BrowserIdentity(self._browser.version, self._locale)
            await self._restore_all()
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
        for team_id in {t.team_id for t in self._tabs.values()}:
            await self._save(team_id)
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        for context in list(self._contexts.values()):
            with contextlib.suppress(PlaywrightError):
                await context.close()  # a persistent context flushes its profile here
        self._contexts.clear()
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError):
                await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()
        self._browser = self._playwright = None
        await self._guard.__aexit__(None, None, None)

    def _args(self) -> list[str]:
        args = list(CLOSED_NETWORK_FLAGS)
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root
        return args + self._guard.chromium_args()

    @property
    def identity(self) -> BrowserIdentity:
        if self._identity is None:
            raise Unavailable("the browser engine is not running", code="browserStopped")
        return self._identity

    # -- partitions ---------------------------------------------------------------------

    def team_folder(self, team_id: str) -> Path:
        """The team's browser folder; refuses an id that could name a path elsewhere."""
        if not _TEAM_ID.fullmatch(team_id):
            raise InvalidArgument("malformed team id", code="invalidTeamId")
        return self._root / team_id

    def _check_profile(self, team_id: str, partition: Partition) -> None:
        if partition.kind == "profile" and not self._profile_exists(team_id, partition.key):
            raise NotFound("this browser profile no longer exists", code="browserProfileMissing")

    async def _context(self, team_id: str, partition: Partition) -> BrowserContext:
        """The partition's context, created on first use."""
        key = (team_id, partition)
        context = self._contexts.get(key)
        if context is not None:
            return context
        # One lock per partition: starting one partition's browser never holds up another's tabs.
        lock = self._context_locks.setdefault(key, asyncio.Lock())
        async with lock:
            context = self._contexts.get(key)
            if context is not None:
                return context
            if self._playwright is None or self._browser is None or self._executable is None:
                raise Unavailable("the browser engine is not running", code="browserStopped")
            options = self.identity.context_options()
            if partition.persistent:
                folder = self.team_folder(team_id) / partition.folder
                await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
                context = await self._playwright.chromium.launch_persistent_context(
                    folder,
                    executable_path=self._executable,
                    headless=True,
                    args=self._args(),
                    **options,
                )
                # The blank page a persistent launch opens is no tab of ours.
                for page in list(context.pages):
                    await page.close()
            else:
                context = await self._browser.new_context(**options)
            self._contexts[key] = context
            return context

    async def _drop_private_context(self, team_id: str, partition: Partition) -> None:
        """A private partition's storage goes with its last tab."""
        if partition.persistent:
            return
        if any(t.team_id == team_id and t.partition == partition for t in self._tabs.values()):
            return
        context = self._contexts.pop((team_id, partition), None)
        if context is not None:
            with contextlib.suppress(PlaywrightError):
                await context.close()

    # -- pages --------------------------------------------------------------------------

    async def _load(self, tab: Tab) -> None:
        """Gives a sleeping (or crashed) tab a fresh page in its partition at its URL."""
        context = await self._context(tab.team_id, tab.partition)
        page = await context.new_page()
        await self._attach(tab, page)
        if tab.url != _BLANK:
            await self._goto(tab, page, tab.url)
        self.page_attached(tab)

    async def _goto(self, tab: Tab, page: Page, url: str) -> Response | None:
        """Loads ``url``; a dialog the page opens while loading ends the wait (load is blocked).

        Gives the main document's response, if the load ended with one.
        """
        tab.any_dialog.clear()
        loading = asyncio.ensure_future(page.goto(url))
        waiter = asyncio.ensure_future(tab.any_dialog.wait())
        try:
            await asyncio.wait({loading, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not loading.done():
                loading.cancel()
                with contextlib.suppress(BaseException):
                    await loading
        if loading.done() and not loading.cancelled():
            return loading.result()
        return None

    async def _attach(self, tab: Tab, page: Page) -> None:
        tab.page = page
        tab.crashed = False
        page.on("crash", lambda _page: self._on_crash(tab, page))
        page.on("dialog", lambda dialog: self._on_dialog(tab, page, dialog))
        page.on("popup", lambda popup: self._on_popup(tab, popup))
        page.on("close", lambda _page: self._on_close(tab, page))
        page.on("framenavigated", lambda frame: self._on_navigated(tab, page, frame))
        tab.identity_session = await self.identity.apply(page)

    async def _unload(self, tab: Tab) -> None:
        """Closes the tab's page but keeps the tab and its URL; the next call loads it again."""
        page, tab.page, tab.identity_session = tab.page, None, None
        if page is None:
            return
        if not tab.crashed:
            tab.url = page.url or tab.url
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(_CLOSE_LIMIT):
                await page.close()

    def _on_crash(self, tab: Tab, page: Page) -> None:
        if tab.page is page:
            log.info("renderer of tab %s crashed; it reloads on the next call", tab.id)
            tab.crashed = True

    def _on_navigated(self, tab: Tab, page: Page, frame: Frame) -> None:
        if tab.page is page and frame.parent_frame is None and frame.url:
            tab.url = frame.url
            self.tabs_changed(tab.team_id)

    def _on_close(self, tab: Tab, page: Page) -> None:
        # A page that closed itself (a popup's window.close()) ends its tab.
        if self._closing or tab.page is not page or tab.id not in self._tabs:
            return
        tab.page = None
        self._spawn(self._forget(tab))

    def _on_dialog(self, tab: Tab, page: Page, dialog: Dialog) -> None:
        # With a listener Playwright leaves the dialog open: it waits for the agent or a person.
        if tab.page is not page:
            return
        tab.dialog = PendingDialog(dialog, agent_id=tab.input_agent_id)
        tab.any_dialog.set()
        if tab.input_agent_id is not None and tab.dialog_opened is not None:
            tab.dialog_opened.set()

    def _on_popup(self, opener: Tab, page: Page) -> None:
        if self._closing or opener.id not in self._tabs:
            return
        popup = Tab(
            id=str(uuid.uuid4()),
            team_id=opener.team_id,
            partition=opener.partition,
            owner_agent_id=opener.owner_agent_id,
            owner_thread_id=opener.owner_thread_id,
            opener_tab_id=opener.id,
            page=None,
            url=page.url or _BLANK,
            last_used=self._clock.now(),
            dependent=True,
        )
        self._tabs[popup.id] = popup
        self._spawn(self._adopt(popup, page))

    async def _adopt(self, popup: Tab, page: Page) -> None:
        await self._attach(popup, page)
        # Playwright names an opener even for noopener pages; the page itself knows better.
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(self.deadline):
                popup.dependent = not await page.evaluate(page_script("opener"))
        await self._save(popup.team_id)
        self.tabs_changed(popup.team_id)

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await coroutine
            except PlaywrightError as exc:
                log.debug("background browser step failed: %s", exc)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- tabs ---------------------------------------------------------------------------

    async def open_tab(
        self,
        team_id: str,
        partition: Partition,
        *,
        url: str = _BLANK,
        owner_agent_id: str | None = None,
        owner_thread_id: str | None = None,
    ) -> Tab:
        """A new tab in ``partition``, loaded at ``url``."""
        self.team_folder(team_id)
        self._check_profile(team_id, partition)
        tab = Tab(
            id=str(uuid.uuid4()),
            team_id=team_id,
            partition=partition,
            owner_agent_id=owner_agent_id,
            owner_thread_id=owner_thread_id,
            opener_tab_id=None,
            page=None,
            url=url,
            last_used=self._clock.now(),
        )
        self._tabs[tab.id] = tab
        try:
            async with asyncio.timeout(self.deadline):
                await self._load(tab)
        except BaseException:
            await self._forget(tab)
            raise
        await self._save(team_id)
        self.tabs_changed(team_id)
        return tab

    def get_tab(self, team_id: str, tab_id: str) -> Tab:
        """The team's tab ``tab_id``; another team's tab is as unknown as a missing one."""
        tab = self._tabs.get(tab_id)
        if tab is None or tab.team_id != team_id:
            raise NotFound("no such tab", code="tabNotFound")
        return tab

    def list_tabs(self, team_id: str) -> list[Tab]:
        """Only this team's tabs."""
        return [t for t in self._tabs.values() if t.team_id == team_id]

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
            if tab.crashed:
                await self._unload(tab)
            if tab.page is None:
                await self._load(tab)
            page = tab.page
            assert page is not None
            try:
                if input_action and caller.agent_id is not None:
                    return await self._run_input(tab, caller.agent_id, page, operation, stale)
                return TabResult(await operation(page), stale_refs=stale)
            finally:
                tab.last_used = self._clock.now()

        result = await tab.queue.run(caller, step, deadline=deadline or self.deadline)
        await self._save(team_id)
        return result

    async def _run_input(
        self,
        tab: Tab,
        agent_id: str,
        page: Page,
        operation: Callable[[Page], Awaitable[T]],
        stale: bool,
    ) -> TabResult[T]:
        """Runs an agent's input action; a dialog it opens ends it and goes to that agent."""
        opened = asyncio.Event()
        tab.input_agent_id, tab.dialog_opened = agent_id, opened
        action = asyncio.ensure_future(operation(page))
        waiter = asyncio.ensure_future(opened.wait())
        try:
            await asyncio.wait({action, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not opened.is_set() and action.exception() is None:
                # A dialog may come just after the action (a handler on a timer): settle briefly.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(opened.wait(), self._dialog_settle)
        finally:
            tab.input_agent_id, tab.dialog_opened = None, None
            waiter.cancel()
            if not action.done():
                action.cancel()  # the click waits on the dialog; the dialog is the answer
                with contextlib.suppress(BaseException):
                    await action
        if opened.is_set():
            return TabResult(None, stale_refs=stale, dialog=tab.dialog)
        return TabResult(action.result(), stale_refs=stale)

    async def navigate(self, team_id: str, tab_id: str, caller: Caller, url: str) -> TabResult[str]:
        """Loads ``url`` in the tab and gives the address it ended at.

        Raises ``AddressRefused`` when the address policy refused the page or a redirect
        on the way; the tab shows the refusal.
        """

        async def go(page: Page) -> str:
            try:
                response = await self._goto(self.get_tab(team_id, tab_id), page, url)
            except PlaywrightError:
                rule = await self._guard.explain(url)
                if rule is None:
                    raise
                raise AddressRefused(url, rule) from None
            if response is not None:
                rule = self._guard.rule_of(await response.server_addr())
                if rule is not None:
                    raise AddressRefused(response.url, rule)
            return page.url

        return await self.run(team_id, tab_id, caller, go)

    async def close_tab(self, team_id: str, tab_id: str, caller: Caller) -> None:
        """Closes the tab and its dependent popups; works with a dialog open, not while held."""
        tab = self.get_tab(team_id, tab_id)

        async def close() -> None:
            await self._close(tab)

        await tab.queue.run(caller, close, deadline=self.deadline, dialog_ok=True)
        await self._save(team_id)

    async def _close(self, tab: Tab) -> None:
        if tab.id not in self._tabs:
            return  # closing is idempotent
        for other in list(self._tabs.values()):
            if other.opener_tab_id != tab.id:
                continue
            if other.dependent:
                await self._close(other)
            else:
                other.opener_tab_id = None
        await self._forget(tab)

    async def _forget(self, tab: Tab) -> None:
        if self._tabs.pop(tab.id, None) is not None:
            self.tabs_changed(tab.team_id)
        await self._unload(tab)
        for other in self._tabs.values():
            if other.opener_tab_id == tab.id:
                other.opener_tab_id = None
        await self._drop_private_context(tab.team_id, tab.partition)

    # -- live view ----------------------------------------------------------------------

    async def view_page(self, team_id: str, tab_id: str) -> Page:
        """The tab's page for watching, loaded if it slept; outside the tab's queue."""
        tab = self.get_tab(team_id, tab_id)
        if tab.crashed:
            await self._unload(tab)
        if tab.page is None:
            await self._load(tab)
        assert tab.page is not None
        tab.last_used = self._clock.now()
        return tab.page

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
        )

    # -- clearing partitions ------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._browser is not None

    async def close_partition(self, team_id: str, partition: Partition) -> None:
        """Close every tab of the partition, held or not (an admin's change wins), and its context.

        A stopped engine has nothing open; the partition's saved tabs are forgotten instead.
        """
        folder = self.team_folder(team_id)
        if not self.running:
            await asyncio.to_thread(_forget_saved, folder, partition)
            return
        for tab in [t for t in self._tabs.values() if t.team_id == team_id]:
            if tab.partition == partition:
                await self._close(tab)
        async with self._context_locks.setdefault((team_id, partition), asyncio.Lock()):
            context = self._contexts.pop((team_id, partition), None)
        if context is not None:
            with contextlib.suppress(PlaywrightError):
                await context.close()
        await self._save(team_id)

    async def close_agent_tabs(self, team_id: str, agent_id: str) -> None:
        """Close every tab an agent owns (its profile changed, or it was deleted)."""
        folder = self.team_folder(team_id)
        if not self.running:
            await asyncio.to_thread(_forget_saved_of_agent, folder, agent_id)
            return
        for tab in [t for t in self._tabs.values() if t.team_id == team_id]:
            if tab.owner_agent_id == agent_id:
                await self._close(tab)
        await self._save(team_id)

    async def clear_partition(self, team_id: str, partition: Partition) -> None:
        """Close the partition, then remove its cookies, storage and cache from disk."""
        await self.close_partition(team_id, partition)
        if partition.persistent:
            folder = self.team_folder(team_id) / partition.folder
            await asyncio.to_thread(shutil.rmtree, folder, True)

    # -- takeover -----------------------------------------------------------------------

    def take_control(self, team_id: str, tab_id: str, account_id: str) -> Tab:
        """A person takes the tab: agents are refused on it until ``release``."""
        tab = self.get_tab(team_id, tab_id)
        if tab.held_by is not None and tab.held_by != account_id:
            raise Conflict("another person has control of this tab", code="tabHeld")
        if tab.held_by is None:
            tab.held_by = account_id
            self.tabs_changed(team_id)
        return tab

    def release(self, team_id: str, tab_id: str, account_id: str) -> Tab:
        """The holder gives the tab back to its agent."""
        tab = self.get_tab(team_id, tab_id)
        if tab.held_by != account_id:
            raise Conflict("you do not have control of this tab", code="tabNotHeld")
        tab.held_by = None
        tab.last_used = self._clock.now()
        self.tabs_changed(team_id)
        return tab

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
        """Answers the tab's dialog: an agent only its own, a person any."""
        tab = self.get_tab(team_id, tab_id)

        async def answer() -> TabResult[None]:
            pending = tab.dialog
            if pending is None:
                raise Conflict("this dialog is closed", code="dialogClosed")
            if caller.is_agent and pending.agent_id != caller.agent_id:
                raise Conflict("a person must answer this dialog", code="dialogForPerson")
            tab.dialog = None
            if accept:
                await pending.dialog.accept(*([text] if text is not None else []))
            else:
                await pending.dialog.dismiss()
            tab.last_used = self._clock.now()
            return TabResult(None)

        return await tab.queue.run(caller, answer, deadline=self.deadline, dialog_ok=True)

    # -- lifetime -----------------------------------------------------------------------

    async def tick(self) -> list[str]:
        """Puts idle tabs to sleep by the idle policy; gives the ids it unloaded."""
        now = self._clock.now()
        chosen = self._policy.tabs_to_unload(
            self._tabs.values(), now, memory_low=self._memory_low()
        )
        for tab in chosen:
            await self._unload(tab)
        await self._close_idle_contexts()
        return [t.id for t in chosen]

    def open_partitions(self, team_id: str) -> list[Partition]:
        """The team's partitions whose browser context is running now."""
        return [partition for (team, partition) in self._contexts if team == team_id]

    async def _close_idle_contexts(self) -> None:
        """A persistent partition with no loaded tab stops its browser; its data stays on disk."""
        in_use = {(t.team_id, t.partition) for t in self._tabs.values() if t.loaded}
        for key in [k for k in self._contexts if k not in in_use and k[1].persistent]:
            async with self._context_locks.setdefault(key, asyncio.Lock()):
                if any((t.team_id, t.partition) == key and t.loaded for t in self._tabs.values()):
                    continue  # a tab loaded while this waited
                context = self._contexts.pop(key, None)
            if context is not None:
                with contextlib.suppress(PlaywrightError):
                    await context.close()
                log.info("closed an idle browser partition")

    # -- state file ---------------------------------------------------------------------

    async def _save(self, team_id: str) -> None:
        saved = [
            SavedTab(t.id, t.partition, t.url, t.owner_agent_id, t.owner_thread_id)
            for t in self.list_tabs(team_id)
            if t.partition.persistent
        ]
        async with self._save_lock:
            await asyncio.to_thread(write_state, self.team_folder(team_id), saved)

    async def _restore_all(self) -> None:
        teams = await asyncio.to_thread(self._saved_teams)
        for team_id in teams:
            await self.restore(team_id)

    def _saved_teams(self) -> list[str]:
        if not self._root.is_dir():
            return []
        return [
            p.name
            for p in self._root.iterdir()
            if _TEAM_ID.fullmatch(p.name) and (p / "tabs.json").is_file()
        ]

    async def restore(self, team_id: str) -> list[Tab]:
        """The team's saved tabs, asleep in their own partitions; bad entries are dropped."""
        restored: list[Tab] = []
        for saved in await asyncio.to_thread(read_state, self.team_folder(team_id)):
            if saved.id in self._tabs:
                continue
            if saved.partition.kind == "profile" and not self._profile_exists(
                team_id, saved.partition.key
            ):
                log.info("dropped a saved tab of a deleted browser profile")
                continue
            tab = Tab(
                id=saved.id,
                team_id=team_id,
                partition=saved.partition,
                owner_agent_id=saved.owner_agent_id,
                owner_thread_id=saved.owner_thread_id,
                opener_tab_id=None,
                page=None,
                url=saved.url,
                last_used=self._clock.now(),
            )
            self._tabs[tab.id] = tab
            restored.append(tab)
        await self._save(team_id)
        return restored


def _forget_saved(team_folder: Path, partition: Partition) -> None:
    saved = read_state(team_folder)
    kept = [t for t in saved if t.partition != partition]
    if len(kept) != len(saved):
        write_state(team_folder, kept)


def _forget_saved_of_agent(team_folder: Path, agent_id: str) -> None:
    saved = read_state(team_folder)
    kept = [t for t in saved if t.owner_agent_id != agent_id]
    if len(kept) != len(saved):
        write_state(team_folder, kept)

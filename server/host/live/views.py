"""Every live view of this host: opening a ``view:`` channel, and what follows its close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from server.common.errors import Conflict, CrewhostError
from server.common.protocol.view import Closed, Opened, ViewError, parse_view_label
from server.common.tasks import BackgroundTasks
from server.common.tokens import new_id
from server.config import HostSettings
from server.host.browser.access import require_viewable
from server.host.browser.pages import PageAttached
from server.host.browser.per_tab import PerTab
from server.host.browser.protection import ProtectionChanged
from server.host.browser.protection_state import Protection
from server.host.browser.runtime import BrowserRuntime
from server.host.browser.tab_registry import TabsChanged
from server.host.live.screencast import BACKLOG_BYTES, TabScreencast
from server.host.live.session import ViewSession
from server.host.live.steps import ReadPress, StepRecorder
from server.host.metrics import HostMetrics
from server.host.signals import Signals

if TYPE_CHECKING:
    from playwright.async_api import Page

    from server.host.rtc.team_api import PeerIdentity

log = logging.getLogger(__name__)

_FOLLOW_ATTEMPTS = 3
PAGE_CRASHED = "pageCrashed"
_CRASHED_MESSAGE = "the page stopped working; reload the tab to bring it back"

TAB_HOLDS_SECRET = "tabHoldsSecret"  # noqa: S105 - a close code, not a secret
# How long a view refused at open stays open for its peer to read why and close it.
REFUSED_CLOSE_SECONDS = 2.0
_HELD_REASON = "this tab is in secure entry; it can be watched again once it loads a new page"
_CLOSED_TAB = "the tab was closed"
# View channels one peer may have open at once (each may hold ``INBOX_BYTES`` waiting).
MAX_VIEWS_PER_PEER = 16
VIEW_LIMIT = "viewLimit"

# The page whose size an agent set (``set_environment``): a live view leaves it as it is.
AGENT_VIEWPORT: PerTab[Page] = PerTab("agent viewport")


class LiveViews:
    """Opens views under the access rules and runs one screencast per watched tab."""

    def __init__(
        self,
        browser: BrowserRuntime,
        settings: HostSettings,
        read_press: ReadPress,
        metrics: HostMetrics,
        signals: Signals,
    ) -> None:
        self._browser = browser
        self._frame_counts = metrics.frame_counts
        self._settings = settings
        self._screencasts: dict[tuple[str, str], TabScreencast] = {}
        self._sessions: dict[tuple[str, str], list[ViewSession]] = {}
        # The view channels of each peer, by peer id, until they close or their view ends.
        self._peer_views: dict[str, set[Any]] = {}
        self._tasks = BackgroundTasks("live views")
        # What people holding agents' tabs do, as steps (learn from my browsing, teaching).
        self.steps = StepRecorder(read_press, signals)
        metrics.table_sources.append(self.table_sizes)

    def table_sizes(self) -> dict[str, int]:
        """The views and screencasts held now: none outlives its last viewer."""
        return {
            "views": sum(len(s) for s in self._sessions.values()),
            "view_tabs": len(self._sessions),
            "view_peers": len(self._peer_views),
            "screencasts": len(self._screencasts),
            "view_tasks": len(self._tasks),
        }

    def screencast(self, team_id: str, tab_id: str) -> TabScreencast | None:
        return self._screencasts.get((team_id, tab_id))

    def sessions(self, team_id: str, tab_id: str) -> list[ViewSession]:
        """The open views of a tab."""
        return list(self._sessions.get((team_id, tab_id), []))

    def tabs_changed(self, signal: TabsChanged) -> None:
        """A team's tabs changed (one may have been taken, released or handed over, or
        closed): each of its views whose holding changed hears it at once, and the views
        of a tab that closed end, saying so."""
        open_tabs = {tab.id for tab in self._browser.engine_as_is.list_tabs(signal.team_id)}
        for (team_id, tab_id), sessions in list(self._sessions.items()):
            if team_id != signal.team_id:
                continue
            if tab_id not in open_tabs:
                self._tasks.start(self.end_views(team_id, tab_id, "tabNotFound", _CLOSED_TAB))
                continue
            for session in list(sessions):
                session.holding_may_have_changed()

    def page_attached(self, signal: PageAttached) -> None:
        """A watched tab got a new page (reloaded after a crash): the views follow it."""
        tab = signal.tab
        key = (tab.team_id, tab.id)
        screencast = self._screencasts.get(key)
        if screencast is not None and tab.page is not None and screencast.page is not tab.page:
            self._tasks.start(self._follow(key, tab.page))

    def _screencast_of(self, key: tuple[str, str], page: Page) -> TabScreencast:
        """A new screencast of ``page`` for the tab ``key``; its viewers hear if it crashes."""
        screencast = TabScreencast(
            page,
            quality=self._settings.live_view_quality,
            max_fps=self._settings.live_view_max_fps,
        )
        self._screencasts[key] = screencast
        page.once("crash", lambda _page: self._crashed(key, page))
        return screencast

    def _crashed(self, key: tuple[str, str], page: Page) -> None:
        screencast = self._screencasts.get(key)
        if screencast is None or screencast.page is not page:
            return
        for session in self._sessions.get(key, []):
            session.send(ViewError(code=PAGE_CRASHED, message=_CRASHED_MESSAGE))

    async def _follow(self, key: tuple[str, str], page: Page) -> None:
        old = self._screencasts.get(key)
        if old is None or old.page is page:
            return
        await old.stop()
        for _attempt in range(_FOLLOW_ATTEMPTS):
            new = self._screencast_of(key, page)
            new.own_size = old.own_size
            try:
                for session in self._sessions.get(key, []):
                    session.follow(new)
                    await new.add(session.viewer)
                await self._apply_viewport(key)
                return
            except PlaywrightError as exc:
                # The page may still be swapping renderers (a reload right after the load):
                # start again once it has a document.
                log.info("live view could not follow the new page yet: %s", exc)
                await new.stop()
                with contextlib.suppress(PlaywrightError):
                    await page.wait_for_load_state("domcontentloaded")
        log.warning("live view gave up following tab %s to its new page", key[1])

    def open(self, peer: PeerIdentity, channel: Any) -> None:
        """A peer opened a ``view:`` channel; it is served or refused with a close reason.
        A peer with ``MAX_VIEWS_PER_PEER`` of them open already is refused (``viewLimit``)."""
        peer_id = peer.peer_id
        if len(self._peer_views.get(peer_id, ())) >= MAX_VIEWS_PER_PEER:
            reason = f"a connection may have at most {MAX_VIEWS_PER_PEER} live views open"
            _refuse(channel, code=VIEW_LIMIT, reason=reason)
            return
        self._peer_views.setdefault(peer_id, set()).add(channel)
        channel.on("close", lambda: self._forget_channel(peer_id, channel))
        self._tasks.start(self._open(peer, channel))

    def _forget_channel(self, peer_id: str, channel: Any) -> None:
        """The channel closed, or the host ended its view (a peer that is gone never
        finishes the close): it counts no more against its peer's views."""
        channels = self._peer_views.get(peer_id)
        if channels is not None:
            channels.discard(channel)
            if not channels:
                del self._peer_views[peer_id]

    async def _open(self, peer: PeerIdentity, channel: Any) -> None:
        try:
            options = parse_view_label(channel.label)
            engine = await self._browser.engine()
            tab = engine.get_tab(peer.team_id, options.tab_id)
            require_viewable(tab, peer.account_id, taking=options.take)
        except CrewhostError as exc:
            _refuse(channel, exc.code, exc.message)
            return
        taken = options.take and tab.held_by is None
        view_id = new_id()

        def let_go() -> None:
            """Undo this opening's own take (a hold the member had already stays)."""
            if taken:
                with contextlib.suppress(CrewhostError):
                    engine.release(peer.team_id, tab.id, peer.account_id)

        try:
            if options.take:
                # Held before the first frame: a tab in secure entry shows only to its holder.
                engine.take_control(peer.team_id, tab.id, peer.account_id, view_id)
            page = await engine.view_page(peer.team_id, tab.id)
        except CrewhostError as exc:
            let_go()
            _refuse(channel, exc.code, exc.message)
            return
        except PlaywrightError as exc:  # an asleep tab whose address no longer loads
            log.info("live view could not load tab %s: %s", tab.id, exc)
            let_go()
            _refuse(channel, "pageUnavailable", "the tab's page did not load")
            return
        key = (peer.team_id, tab.id)
        screencast = self._screencasts.get(key)
        if screencast is not None and screencast.page is not page:
            await screencast.stop()  # the tab slept or crashed since: follow its new page
            screencast = None
        # While the page loaded, the viewer may have gone (its channel's close came before
        # there was a view to end), or the tab may have started holding a secret (its
        # views were ended before this one was one): neither leaves a view or a hold.
        if channel.readyState != "open":
            let_go()
            return
        try:
            require_viewable(tab, peer.account_id, taking=options.take)
        except CrewhostError as exc:
            let_go()
            _refuse(channel, exc.code, exc.message)
            return
        if screencast is None:
            screencast = self._screencast_of(key, page)
        session = ViewSession(
            engine,
            peer,
            options,
            channel,
            screencast,
            self._resized,
            self._frame_counts,
            self.steps,
            view_id,
        )
        self._sessions.setdefault(key, []).append(session)
        tab.viewers += 1
        channel.bufferedAmountLowThreshold = BACKLOG_BYTES // 2
        channel.on("bufferedamountlow", session.viewer.drained)
        channel.on("message", session.on_message)
        channel.on("close", lambda: self._tasks.spawn(self._closed(session)))
        await screencast.add(session.viewer)
        await self._apply_viewport(key)
        session.start()
        session.send(Opened(tab_id=tab.id))
        if options.take:
            session.holding_may_have_changed()

    async def _closed(self, session: ViewSession) -> None:
        key = (session.team_id, session.tab_id)
        sessions = self._sessions.get(key, [])
        if session not in sessions:
            return
        sessions.remove(session)
        self._forget_channel(session.peer.peer_id, session.channel)
        await session.close()
        engine = await self._browser.engine()
        with contextlib.suppress(CrewhostError):  # the tab may have closed
            engine.get_tab(*key).viewers -= 1
        screencast = self._screencasts.get(key)
        if screencast is None:
            return
        if session.options.viewport:
            await self._apply_viewport(key)
        await screencast.remove(session.viewer)
        # A view that opened while this one closed holds the screencast (and restarts it).
        if not screencast.running and not self._sessions.get(key):
            if self._screencasts.get(key) is screencast:
                del self._screencasts[key]
            self._sessions.pop(key, None)

    async def _resized(self, session: ViewSession) -> None:
        """A viewer's panel changed size: its size is now the newest one asked for."""
        key = (session.team_id, session.tab_id)
        sessions = self._sessions.get(key, [])
        if session in sessions:
            sessions.remove(session)
            sessions.append(session)
            await self._apply_viewport(key)

    async def _apply_viewport(self, key: tuple[str, str]) -> None:
        """The newest open view that asked for a size sets it; with none, the page's own
        size (the one it had before any view resized it) comes back. A page whose size an
        agent set keeps it.

        The size goes through Playwright, not the screencast's CDP session: Chromium drops
        a session's overrides when the session ends.
        """
        screencast = self._screencasts.get(key)
        if screencast is None:
            return
        page = screencast.page
        if self._agent_sized(key, page):
            # The agent's size stands, also over one a view set before it: none to give back.
            screencast.own_size = None
            return
        sized = [s for s in self._sessions.get(key, []) if s.options.viewport]
        if sized:
            if screencast.own_size is None:
                own = page.viewport_size
                screencast.own_size = (own["width"], own["height"]) if own else (0, 0)
            width, height = sized[-1].options.viewport or (0, 0)
        elif screencast.own_size is not None:
            (width, height), screencast.own_size = screencast.own_size, None
            if not width:
                return
        else:
            return
        await page.set_viewport_size({"width": width, "height": height})
        await screencast.refresh()

    def _agent_sized(self, key: tuple[str, str], page: Page) -> bool:
        """Whether an agent set this page's size (``set_environment``)."""
        try:
            tab = self._browser.engine_as_is.get_tab(*key)
        except CrewhostError:  # the tab closed
            return False
        return AGENT_VIEWPORT.get(tab) is page

    async def hand_over(self, team_id: str, tab_id: str, holder: str, to: str) -> None:
        """The holder's control of the tab passes to ``to``, who must be watching it: holding
        lasts as long as a view, so control never goes to someone without one."""
        sessions = self.sessions(team_id, tab_id)
        receiving = [s for s in sessions if s.peer.account_id == to]
        if not receiving:
            raise Conflict(
                "the member who asked is no longer watching this tab", code="askerNotWatching"
            )
        engine = await self._browser.engine()
        # The registry announces the change: every view of the tab hears what it means for it.
        engine.hand_over(team_id, tab_id, holder, to, receiving[-1].view_id)

    async def give_control(self, team_id: str, tab_id: str, to: str) -> None:
        """``to`` holds the tab from now on, in their newest view of it; refused when they do
        not watch it or another person holds it."""
        receiving = [s for s in self.sessions(team_id, tab_id) if s.peer.account_id == to]
        if not receiving:
            raise Conflict("open a live view of the tab first", code="teachNotWatching")
        engine = await self._browser.engine()
        tab = engine.get_tab(team_id, tab_id)
        if tab.held_by not in (None, to):
            raise Conflict("another person has control of this tab", code="tabHeld")
        if not any(s.holding for s in receiving):
            engine.take_control(team_id, tab_id, to, receiving[-1].view_id)
            receiving[-1].holding_may_have_changed()

    async def protection_changed(self, signal: ProtectionChanged) -> None:
        """A tab entering a secret shows it to nobody: its views end before the secret goes
        in (``protect`` waits for this)."""
        if signal.protection is Protection.ENTERING:
            await self.end_views(signal.team_id, signal.tab_id, TAB_HOLDS_SECRET, _HELD_REASON)

    async def end_views(self, team_id: str, tab_id: str, code: str, reason: str) -> None:
        """End every view of a tab at once (it started holding a secret, or it closed)."""
        for session in list(self._sessions.get((team_id, tab_id), [])):
            _close_with(session.channel, code, reason)
            await self._closed(session)

    async def close_all(self) -> None:
        for key in list(self._sessions):
            await self.end_views(*key, code="hostStopping", reason="the host is shutting down")
        await self._tasks.close()
        await self.steps.close()


def _refuse(channel: Any, code: str, reason: str) -> None:
    """A view refused as it opens: the peer reads why and closes the channel itself. The
    host closes it only after ``REFUSED_CLOSE_SECONDS``: a browser told to close a channel
    it has not yet seen open may end it without handing on the reason sent before."""
    if channel.readyState == "open":
        channel.send(Closed(code=code, reason=reason).model_dump_json())
    asyncio.get_running_loop().call_later(REFUSED_CLOSE_SECONDS, channel.close)


def _close_with(channel: Any, code: str, reason: str) -> None:
    if channel.readyState == "open":
        channel.send(Closed(code=code, reason=reason).model_dump_json())
    channel.close()

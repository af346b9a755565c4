"""The protection state of a tab in secure entry: the host's, and changed only here.

While a tab holds a secret (``access.holds_secret``) its live views are closed and
refused, remote input is refused, snapshots show no field values, and page scripts
(``evaluate``, ``run_script``, ``get_tab_content``) are refused on it. Protection
starts before a secret reaches the page and ends only with a new main-frame document
(a cross-document navigation, which also clears the tab's history): not after a
same-document navigation, not after an uncertain submit, not when a takeover ends.

Once the page shows no secret (the filled fields emptied and the document scanned, after a
kept submit or a failed entry), protection is ``watchable``: the one person who holds the
tab may watch and steer it (``access.secret_view_allowed``); everyone else's view and every
agent script stay refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.tabs import Tab

log = logging.getLogger(__name__)

# Where ``access.holds_secret`` looks: the one key of ``tool_state`` this module owns.
STATE_KEY = "secret"

Phase = Literal["entering", "kept", "takeover"]


@dataclass(eq=False)
class TabProtection:
    """A tab's protection: ``entering`` while a secret goes in and is submitted, ``kept``
    once the page stays after a submit (evaluation blocked until a new document),
    ``takeover`` once a failed entry left the page emptied of the secret for a person."""

    tab: Tab
    page: Page
    origin: str
    phase: Phase = "entering"
    released: asyncio.Event = field(default_factory=asyncio.Event)
    _session: CDPSession | None = None
    _releasing: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def session(self) -> CDPSession | None:
        """The tab's CDP session while protected (None if it could not be opened)."""
        return self._session

    @property
    def watchable(self) -> bool:
        """Whether the person holding the tab may watch and steer it: no secret shows."""
        return self.phase != "entering"

    def keep(self) -> None:
        """The submit left the document in place and no value shows: the page stays."""
        self.phase = "kept"

    def hand_to_person(self) -> None:
        """Entry failed and the page was emptied of the secret: a person takes it over."""
        self.phase = "takeover"

    def _navigated(self, params: dict[str, Any]) -> None:
        if params.get("frame", {}).get("parentId") is None:
            self._release_soon()

    def _release_soon(self) -> None:
        if not self._releasing and not self.released.is_set():
            task = asyncio.get_running_loop().create_task(release(self.tab))
            self._releasing.add(task)
            task.add_done_callback(self._releasing.discard)


def protection_of(tab: Tab) -> TabProtection | None:
    held = tab.tool_state.get(STATE_KEY)
    return held if isinstance(held, TabProtection) else None


async def protect(tab: Tab, page: Page, origin: str) -> TabProtection:
    """Puts the tab under protection for an entry (or gives the protection it is under,
    shut again to every view: a secret goes in)."""
    held = protection_of(tab)
    if held is not None:
        held.phase = "entering"
        return held
    protection = TabProtection(tab, page, origin)
    tab.tool_state[STATE_KEY] = protection
    # A page that closes (the tab sleeps, crashes or closes) takes its document with it: the
    # next one is new.
    page.once("close", lambda _page: protection._release_soon())
    page.once("crash", lambda _page: protection._release_soon())
    try:
        session = await page.context.new_cdp_session(page)
        # Page.frameNavigated comes for cross-document navigations only: a pushState or a
        # fragment is navigatedWithinDocument, and keeps protection.
        session.on("Page.frameNavigated", protection._navigated)
        await session.send("Page.enable")
        protection._session = session
    except PlaywrightError:
        log.info("secure entry could not watch the tab's navigations", extra={"tab_id": tab.id})
    return protection


async def release(tab: Tab) -> None:
    """A new document replaced the protected one (or its page went): protection ends, and
    the tab's history is cleared."""
    protection = protection_of(tab)
    if protection is None:
        return
    session = protection._session
    if session is not None:
        with contextlib.suppress(PlaywrightError):
            await session.send("Page.resetNavigationHistory")
        with contextlib.suppress(PlaywrightError):
            await session.detach()
    protection.released.set()
    if protection_of(tab) is protection:
        del tab.tool_state[STATE_KEY]
    log.info("secure entry ended with a new document", extra={"tab_id": tab.id})

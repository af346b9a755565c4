"""The protection state of a tab in secure entry: the host's, and changed only here.

A tab's phase is ``Tab.protection`` (``protection_state.Protection``), set only here; each
change publishes ``ProtectionChanged``, on which the live views of a tab entering a secret
close. While a tab holds a secret (``access.holds_secret``) its live views are refused,
remote input is refused, snapshots show no field values, and page scripts (``evaluate``,
``run_script``, ``get_tab_content``) are refused on it. Protection starts before a secret
reaches the page and ends only with a new main-frame document (a cross-document
navigation, which also clears the tab's history): not after a same-document navigation,
not after an uncertain submit, not when a takeover ends.

Once the page shows no secret (the filled fields emptied and the document scanned, after a
kept submit or a failed entry), protection is ``KEPT`` or ``TAKEOVER`` (``watchable``): the
one person who holds the tab may watch and steer it (``access.secret_view_allowed``);
everyone else's view and every agent script stay refused. A new document whose address
carries a secret is ``TAKEOVER`` too (a person's to settle; the address shows it).

While protection lasts, no request of the tab (its frames' and its navigations included)
whose address carries one of the secrets leaves the browser: a form with no method is sent
with GET, into the next page's address, where an agent, the history and the site's logs
would read it. Such a request is stopped (``TabProtection.stopped`` counts them); the
route that stops it is the page's context's, there only while protection lasts, so a
window the page's script opens is stopped at its first request too, and so is a service
worker's own fetch; the tab's service worker is bypassed meanwhile (it would read the
page's request before any route). A new
document whose address carries a secret (a site's redirect, which no route sees) does not
end protection: the values stay, and the tab is a person's (``address_held``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from playwright.async_api import CDPSession, Page, Route
from playwright.async_api import Error as PlaywrightError

from server.common.tasks import BackgroundTasks
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from server.host.signals import Signals

log = logging.getLogger(__name__)

# Asking Chromium to clear a tab's history again, until it shows one entry.
HISTORY_TRIES = 20
HISTORY_RETRY_SECONDS = 0.1
# The charsets a page may percent-encode a form's text in: UTF-8, and the web's default
# for a page that declares none.
_ADDRESS_CHARSETS = ("utf-8", "windows-1252")
# A value shorter than this is matched only whole (a parameter's value, a path segment): a
# card's "737" is inside many an unrelated address (a timestamp, an id), but a form sends it
# whole. A longer one is matched anywhere in the address.
WHOLE_ONLY_BELOW = 8


def _readings(text: str) -> set[str]:
    """``text`` as typed and percent-decoded every way a browser or a script encodes it
    (escapes of either case, UTF-8 or windows-1252, a space as ``+`` or ``%20``)."""
    readings = {text}
    for charset in _ADDRESS_CHARSETS:
        readings.add(unquote(text, charset, "replace"))
        readings.add(unquote_plus(text, charset, "replace"))
    return readings


def _address_parts(url: str) -> set[str]:
    """What of ``url`` a value may be sent as, whole and decoded: its path segments, the
    values of its query's and fragment's parameters (an item with no ``=`` whole), and the
    query and fragment themselves."""
    split = urlsplit(url)
    parts: set[str] = set()
    for segment in split.path.split("/"):
        parts |= _readings(segment)
    for component in (split.query, split.fragment):
        parts |= _readings(component)
        for item in component.split("&"):
            name, equals, value = item.partition("=")
            parts |= _readings(value if equals else name)
    return parts


def address_carries(url: str, values: tuple[str, ...]) -> bool:
    """Whether ``url`` holds one of ``values``, as typed or percent-encoded (see
    ``_readings``): a value of ``WHOLE_ONLY_BELOW`` characters or more anywhere in it, a
    shorter one as a whole part of it (``_address_parts``), the shape a form sends it in."""
    if not values:
        return False
    long = [value for value in values if len(value) >= WHOLE_ONLY_BELOW]
    if long and any(value in reading for reading in _readings(url) for value in long):
        return True
    short = {value for value in values if len(value) < WHOLE_ONLY_BELOW}
    return bool(short) and not short.isdisjoint(_address_parts(url))


@dataclass(frozen=True, slots=True)
class ProtectionChanged:
    """The tab's protection moved to ``protection``."""

    team_id: str
    tab_id: str
    protection: Protection


@dataclass(eq=False)
class TabProtection:
    """The record of an entry under way in ``tab``: its CDP session and the event set when
    a new document released the tab. The phase itself is ``tab.protection``."""

    tab: Tab
    page: Page
    origin: str
    signals: Signals
    released: asyncio.Event = field(default_factory=asyncio.Event)
    # The secrets that went into the page, while it is the same document: what the page
    # shows an agent (a snapshot, a title) is held to them, for a page that echoes one
    # after the entry's own scan. Never logged, never shown.
    values: tuple[str, ...] = field(default=(), repr=False)
    # The secrets among them (``secure_entry`` says which): no address the tab sends, or a
    # new document of it lands on, may carry one. Never logged, never shown.
    secrets: tuple[str, ...] = field(default=(), repr=False)
    # Requests stopped because their address carried a secret (see the module's docstring),
    # and how many of them were navigations (a form's submit is one; a page's fetch is not).
    stopped: int = 0
    navigations_stopped: int = 0
    # A new main-frame document whose address carried a secret: protection stays, for a
    # person. ``landed`` is set by the first new main-frame document, held or released.
    address_held: bool = False
    landed: asyncio.Event = field(default_factory=asyncio.Event)
    _session: CDPSession | None = None
    _releasing: BackgroundTasks = field(default_factory=lambda: BackgroundTasks("secure entry"))

    def shows(self, text: str) -> bool:
        """Whether ``text`` (what an agent would read of the page) holds one of the values
        that went in, as typed or percent-encoded (an address) or, for one of digits, with
        its digits spaced or dashed."""
        digits = "".join(ch for ch in text if ch.isdigit())
        # An address in the text may carry a value percent-encoded.
        readings = _readings(text) if "%" in text or "+" in text else {text}
        for value in self.values:
            if any(value in reading for reading in readings):
                return True
            if value.isdigit() and len(value) >= 4 and value in digits:
                return True
        return False

    @property
    def session(self) -> CDPSession | None:
        """The tab's CDP session while protected (None if it could not be opened)."""
        return self._session

    def keep(self) -> None:
        """The submit left the document in place and no value shows: the page stays."""
        _move(self.tab, Protection.KEPT, self.signals)

    def hand_to_person(self) -> None:
        """Entry failed and the page was emptied of the secret: a person takes it over."""
        _move(self.tab, Protection.TAKEOVER, self.signals)

    def _carried(self, url: str) -> bool:
        return address_carries(url, self.secrets)

    async def _stop(self, route: Route) -> None:
        """Stops a request whose address carries a secret. ``aborted``, as a navigation the
        page cancels: the tab keeps its document, and no error page shows the address."""
        self.stopped += 1
        navigation = route.request.is_navigation_request()
        if navigation:
            self.navigations_stopped += 1
        # The tab and the kind of request only: the address holds the secret.
        log.warning(
            "secure entry stopped a request that carried a secret in its address",
            extra={"tab_id": self.tab.id, "navigation": navigation},
        )
        with contextlib.suppress(PlaywrightError):
            await route.abort("aborted")

    def _navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if frame.get("parentId") is not None:
            return
        address = f"{frame.get('url', '')}{frame.get('urlFragment', '')}"
        if address_carries(address, self.secrets):
            self._hold_address()
        else:
            self._release_soon()

    def _hold_address(self) -> None:
        """A new document whose address carries a secret (a redirect no route sees): the
        values stay, and so does protection, with the tab a person's. Only a person settles
        it: no agent script or snapshot reads the page, and its address leaves the history
        only when a new document that carries none releases the tab."""
        self.address_held = True
        self.landed.set()
        # The tab only: the address holds the secret.
        log.warning(
            "secure entry kept a new page whose address carries a secret",
            extra={"tab_id": self.tab.id},
        )
        self.hand_to_person()

    def _release_soon(self) -> None:
        if not self._releasing and not self.released.is_set():
            self._releasing.start(release(self.tab))


def _move(tab: Tab, protection: Protection, signals: Signals) -> bool:
    """Sets the tab's phase; publishes ``ProtectionChanged`` when it really changed."""
    if tab._protection is protection:
        return False
    tab._protection = protection
    signals.publish(ProtectionChanged(tab.team_id, tab.id, protection))
    return True


def protection_of(tab: Tab) -> TabProtection | None:
    """The record of the entry under way in ``tab``; None when it holds no secret."""
    held = tab._protection_record
    return held if isinstance(held, TabProtection) else None


async def protect(tab: Tab, page: Page, origin: str, signals: Signals) -> TabProtection:
    """Puts the tab under protection for an entry (or gives the protection it is under,
    shut again to every view: a secret goes in). Returns once the tab's subscribers (its
    live views) have heard: no view shows the page when the secret goes in."""
    held = protection_of(tab)
    tab._protection = Protection.ENTERING  # before any await: every reader sees it at once
    if held is None:
        held = TabProtection(tab, page, origin, signals)
        tab._protection_record = held
        # A page that closes (the tab sleeps, crashes or closes) takes its document with it:
        # the next one is new.
        page.once("close", lambda _page: held._release_soon())
        page.once("crash", lambda _page: held._release_soon())
        # Before any value reaches the page; it holds none yet, so nothing is stopped now.
        # The context's route, not the page's: it sees the first request of a window the
        # page's script opens too, which no route of the page does.
        await page.context.route(held._carried, held._stop)
        try:
            session = await page.context.new_cdp_session(page)
            # Page.frameNavigated comes for cross-document navigations only: a pushState or
            # a fragment is navigatedWithinDocument, and keeps protection.
            session.on("Page.frameNavigated", held._navigated)
            await session.send("Page.enable")
            held._session = session
        except PlaywrightError:
            log.info("secure entry could not watch the tab's navigations", extra={"tab_id": tab.id})
        else:
            await _bypass_service_worker(session, tab.id)
    # Told even when it was entering already: a view opened meanwhile closes too.
    await signals.deliver(ProtectionChanged(tab.team_id, tab.id, Protection.ENTERING))
    return held


async def _bypass_service_worker(session: CDPSession, tab_id: str) -> None:
    """Sends the page's requests to the network, where the route sees them, not to a service
    worker that controls it: the worker would read the address, and could keep it or answer
    it from its cache, before any route. Undone as the session detaches (``release``)."""
    try:
        # No bodies kept, no POST data in the events: the typed secret stays in the page.
        await session.send(
            "Network.enable",
            {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 0},
        )
        await session.send("Network.setBypassServiceWorker", {"bypass": True})
    except PlaywrightError:
        log.warning(
            "secure entry could not bypass the tab's service worker", extra={"tab_id": tab_id}
        )


async def _clear_history(session: CDPSession, tab_id: str) -> None:
    """Leave the tab its current entry only, checked in the browser's own history:
    Chromium refuses to prune while a navigation is still pending, so it is asked again
    (for two seconds at most) until one entry is left."""
    for _ in range(HISTORY_TRIES):
        with contextlib.suppress(PlaywrightError):
            await session.send("Page.resetNavigationHistory")
            history = await session.send("Page.getNavigationHistory")
            if len(history.get("entries", [])) <= 1:
                return
        await asyncio.sleep(HISTORY_RETRY_SECONDS)
    log.warning(
        "the tab's history could not be cleared after secure entry", extra={"tab_id": tab_id}
    )


def kept_address(tab: Tab) -> str:
    """The address a tab keeps for its next page (a wake, a restart): the one it is at, but
    only its site while it is protected at an address that carries a secret."""
    held = protection_of(tab)
    if held is not None and address_carries(tab.url, held.secrets):
        return _site_of(tab.url)
    return tab.url


def _site_of(url: str) -> str:
    split = urlsplit(url)
    return f"{split.scheme}://{split.netloc}/"


async def release(tab: Tab) -> None:
    """A new document replaced the protected one (or its page went): protection ends, and
    the tab's history is cleared. A page that went (it slept, crashed or closed) at an
    address that carries a secret leaves the tab its site alone, so no wake sends it."""
    protection = protection_of(tab)
    if protection is None:
        return
    tab._url = kept_address(tab)
    session = protection._session
    if session is not None:
        await _clear_history(session, tab.id)
        with contextlib.suppress(PlaywrightError):
            await session.detach()
    with contextlib.suppress(PlaywrightError):
        await protection.page.context.unroute(protection._carried, protection._stop)
    protection.released.set()
    protection.landed.set()
    protection.values = ()
    protection.secrets = ()
    if protection_of(tab) is protection:
        tab._protection_record = None
        _move(tab, Protection.NONE, protection.signals)
    log.info("secure entry ended with a new document", extra={"tab_id": tab.id})

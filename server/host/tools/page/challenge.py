"""Bot checks: what a snapshot tells the agent about a check standing between it and a page.

Without this, an agent clicks "I am human", reloads and retries, and spends many
turns on a check only a person can pass. Each snapshot reads the main frame (in an
isolated world) for vendor interstitials and block pages (Cloudflare, DataDome,
PerimeterX, Imperva, Akamai, AWS WAF) and, on a short page only, captcha frames and
phrases such as "verify you are human". The result is a ``challenge`` field:

* ``checking``: a check that passes by itself is still running: the read waits,
  re-reading every second, for up to ``challenge_budget`` seconds shared by all reads
  of one document; a read with a shorter timeout leaves the rest for the next read;
* ``cleared``: the check passed while the read waited (the page below is the real one);
* ``click-once``: a checkbox widget that often passes with one click: its ``point``,
  28 px from the widget's left edge, offered once per document;
* ``needs-user``: a puzzle, a check that outlasted its wait, or one the click did not
  pass: a person must take the tab;
* ``blocked``: the site refused this browser.

Every ``next`` tells the agent not to solve, reload or retry the check. The host never
solves a puzzle and sends no page data anywhere.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.tools.context import ToolContext, ToolSettings
from server.host.tools.page.tab_access import holds_secret

# The checkbox of the common widgets sits this far from the frame's left edge.
CHECKBOX_OFFSET = 28
# A widget "of the normal size" (compact and invisible widgets are not offered).
NORMAL_WIDTH = (250.0, 420.0)
NORMAL_HEIGHT = (55.0, 100.0)
_DONT = "Do not try to solve, reload or retry the check."

_FRAME_KINDS = (
    (re.compile(r"/cdn-cgi/challenge-platform/.*turnstile"), "Cloudflare Turnstile", "checkbox"),
    (re.compile(r"/recaptcha/(api2|enterprise)/anchor"), "reCAPTCHA", "checkbox"),
    (re.compile(r"/recaptcha/(api2|enterprise)/bframe"), "reCAPTCHA", "puzzle"),
    (re.compile(r"hcaptcha.*[#&?]frame=checkbox"), "hCaptcha", "checkbox"),
    (re.compile(r"hcaptcha.*[#&?]frame=challenge"), "hCaptcha", "puzzle"),
)


@dataclass(frozen=True)
class _Widget:
    """A visible captcha frame: its vendor, ``checkbox`` or ``puzzle``, and its box."""

    vendor: str
    role: str
    x: float
    y: float
    width: float
    height: float

    @property
    def normal_checkbox(self) -> bool:
        return (
            self.role == "checkbox"
            and NORMAL_WIDTH[0] <= self.width <= NORMAL_WIDTH[1]
            and NORMAL_HEIGHT[0] <= self.height <= NORMAL_HEIGHT[1]
        )

    def point(self) -> dict[str, float]:
        return {"x": round(self.x + CHECKBOX_OFFSET, 1), "y": round(self.y + self.height / 2, 1)}


@dataclass(frozen=True)
class _Reading:
    """One read of the page for a check."""

    document: float
    vendor: str | None
    kind: str | None  # the vendor page's: checking, interactive or blocked
    passed: bool
    turnstile_pending: bool
    phrase: bool
    short: bool
    widgets: tuple[_Widget, ...]

    @property
    def checkbox(self) -> _Widget | None:
        return next((w for w in self.widgets if w.normal_checkbox), None)

    @property
    def puzzle(self) -> bool:
        return any(w.role == "puzzle" for w in self.widgets)

    @property
    def present(self) -> bool:
        """Whether the page shows a check at all."""
        if self.kind is not None:
            return True
        if self.passed or not self.short:
            return False  # a passed widget, or a long page that only mentions one
        return bool(self.widgets) or self.phrase

    @property
    def shown_vendor(self) -> str:
        if self.vendor is not None:
            return self.vendor
        return self.widgets[0].vendor if self.widgets else "unknown"


@dataclass
class _DocumentChecks:
    """What the reads of one document have spent and offered."""

    document: float
    spent: float = 0.0
    click_offered: bool = False
    click_waited: bool = False


@dataclass
class _TabChecks:
    documents: dict[float, _DocumentChecks] = field(default_factory=dict)
    # The last read reported a check; the next read without one says it cleared.
    unresolved: bool = False

    def of(self, document: float) -> _DocumentChecks:
        found = self.documents.get(document)
        if found is None:
            self.documents = {document: _DocumentChecks(document)}  # older documents are gone
            found = self.documents[document]
        return found


_CHECKS: PerTab[_TabChecks] = PerTab("challenge", _TabChecks)


def _tab_checks(tab: Tab) -> _TabChecks:
    return _CHECKS.get_or_create(tab)


async def _captcha_frames(page: Page, viewport: dict[str, Any]) -> tuple[_Widget, ...]:
    """Visible captcha frames in the viewport, found through the browser, so a frame in a
    closed shadow root (where Turnstile puts its own) counts too."""
    found: list[_Widget] = []
    for frame in page.frames:
        if frame is page.main_frame:
            continue
        kind = next(((v, r) for p, v, r in _FRAME_KINDS if p.search(frame.url)), None)
        if kind is None:
            continue
        box = await _frame_box(frame)
        if box is None:
            continue
        x, y, width, height = box
        inside = x + width > 0 and y + height > 0
        inside = inside and x < viewport["width"] and y < viewport["height"]
        if inside:
            found.append(_Widget(kind[0], kind[1], x, y, width, height))
    return tuple(found)


async def _frame_box(frame: Frame) -> tuple[float, float, float, float] | None:
    try:
        owner = await frame.frame_element()
        if not await owner.is_visible():
            return None
        box = await owner.bounding_box()
    except PlaywrightError:
        return None
    if box is None or box["width"] <= 0 or box["height"] <= 0:
        return None
    return box["x"], box["y"], box["width"], box["height"]


async def _read(page: Page) -> _Reading:
    raw = await evaluate_isolated(page, "challenge")
    return _Reading(
        document=float(raw["document"]),
        vendor=raw["vendor"],
        kind=raw["kind"],
        passed=bool(raw["passed"]),
        turnstile_pending=bool(raw["turnstilePending"]),
        phrase=bool(raw["phrase"]),
        short=bool(raw["short"]),
        widgets=await _captcha_frames(page, raw["viewport"]),
    )


class _Watch:
    """Re-reads one tab's page while a read waits, and stops when the tab is not the
    agent's to wait on any more."""

    def __init__(self, tab: Tab, page: Page, settings: ToolSettings) -> None:
        self._tab = tab
        self._page = page
        self._settings = settings
        self._loop = asyncio.get_running_loop()
        self.started = self._loop.time()

    @property
    def waited(self) -> float:
        return self._loop.time() - self.started

    def interrupted(self) -> bool:
        tab, page = self._tab, self._page
        return tab.held_by is not None or holds_secret(tab) or page.is_closed()

    async def until(self, seconds: float, done: Any) -> _Reading | None:
        """Re-reads every ``challenge_poll`` seconds until ``done(reading)`` or ``seconds``
        pass; the last reading, or None when the wait had to stop."""
        end = self._loop.time() + seconds
        while True:
            left = end - self._loop.time()
            if left <= 0 or self.interrupted():
                return None
            await asyncio.sleep(min(self._settings.challenge_poll, left))
            try:
                reading = await _read(self._page)
            except (PlaywrightError, IsolatedScriptError):
                continue  # the page is between documents
            if done(reading):
                return reading


def _result(status: str, vendor: str, waited: float, **extra: Any) -> dict[str, Any]:
    return {
        "status": status,
        "vendor": vendor,
        "wait": round(waited, 1),
        "next": _NEXT[status],
        **extra,
    }


_NEXT = {
    "cleared": "The check passed; the page below is the one behind it.",
    "checking": (
        "The site is still checking this browser by itself. Take a snapshot to read the "
        f"page again. {_DONT}"
    ),
    "click-once": (
        f"Click the checkbox once with the click tool at `point`, then take a snapshot. {_DONT}"
    ),
    "needs-user": (
        "A person must pass this check: call request_takeover with this tab (in a run "
        f"without a person, report that the site asks for one). {_DONT}"
    ),
    "blocked": (
        "The site refused this browser. Report that to the user and stop working on this "
        f"site. {_DONT}"
    ),
}


async def detect_challenge(
    context: ToolContext, tab: Tab, page: Page, *, wait_limit: float | None = None
) -> dict[str, Any] | None:
    """The ``challenge`` field of a snapshot of ``page``, or None when no check shows.

    Call it before reading the page: it may wait for a check that passes by itself, and
    the page read afterwards is then the page behind it. ``wait_limit`` bounds this read's
    wait (the document's shared budget bounds all of them).
    """
    if holds_secret(tab):
        return None  # no script of ours reads a tab that holds a secret
    settings = context.settings
    checks = _tab_checks(tab)
    try:
        reading = await _read(page)
    except (PlaywrightError, IsolatedScriptError):
        return None
    if not reading.present:
        if checks.unresolved:
            checks.unresolved = False
            return _result("cleared", "unknown", 0.0)
        return None
    watch = _Watch(tab, page, settings)
    result = await _classify(settings, checks, reading, watch, wait_limit)
    checks.unresolved = result["status"] != "cleared"
    return result


def _gone_or_decided(reading: _Reading) -> bool:
    return not reading.present or reading.kind == "blocked" or reading.puzzle


async def _classify(
    settings: ToolSettings,
    checks: _TabChecks,
    reading: _Reading,
    watch: _Watch,
    wait_limit: float | None,
) -> dict[str, Any]:
    document = checks.of(reading.document)
    vendor = reading.shown_vendor
    if reading.kind == "blocked":
        return _result("blocked", vendor, 0.0)
    if reading.puzzle:
        return _result("needs-user", vendor, 0.0)
    if document.click_offered:
        if document.click_waited:
            return _result("needs-user", vendor, 0.0)
        # The one read after the offered click waits for the widget to pass.
        document.click_waited = True
        after = await watch.until(settings.challenge_click_wait, _gone_or_decided)
        return _settled(after or reading, vendor, watch, "needs-user")
    checkbox = reading.checkbox
    if checkbox is None and reading.kind == "checking":
        left = settings.challenge_budget - document.spent
        if left <= 0:
            return _result("needs-user", vendor, 0.0)
        limit = left if wait_limit is None else min(left, wait_limit)

        def changed(r: _Reading) -> bool:
            return _gone_or_decided(r) or r.checkbox is not None

        after = await watch.until(limit, changed)
        document.spent += watch.waited
        if after is None:
            if document.spent >= settings.challenge_budget - 1e-3:
                return _result("needs-user", vendor, watch.waited)
            return _result("checking", vendor, watch.waited)
        if after.checkbox is None:
            return _settled(after, vendor, watch, "needs-user")
        reading, checkbox = after, after.checkbox
    if checkbox is not None:
        if reading.turnstile_pending:
            # Turnstile often passes by itself in a second or two; an early click looks robotic.
            after = await watch.until(settings.challenge_token_wait, _gone_or_decided)
            document.spent += watch.waited
            if after is not None:
                return _settled(after, vendor, watch, "needs-user")
        document.click_offered = True
        return _result("click-once", vendor, watch.waited, point=checkbox.point())
    return _result("needs-user", vendor, watch.waited)


def _settled(reading: _Reading, vendor: str, watch: _Watch, otherwise: str) -> dict[str, Any]:
    """The status after a wait ended on ``reading``."""
    if not reading.present:
        return _result("cleared", vendor, watch.waited)
    if reading.kind == "blocked":
        return _result("blocked", vendor, watch.waited)
    return _result(otherwise, vendor, watch.waited)


async def person_check(page: Page) -> str | None:
    """The vendor of a check only a person passes that the page shows now (a puzzle, a
    vendor's interactive page), read without waiting; None when there is none."""
    try:
        reading = await _read(page)
    except (PlaywrightError, IsolatedScriptError):
        return None
    if reading.present and (reading.puzzle or reading.kind == "interactive"):
        return reading.shown_vendor
    return None

"""Waiting, before a read, for a page that is still drawing itself.

Without it an agent reads placeholders (skeleton bars, a busy region) or an empty
young document, and spends a turn on a second snapshot. Two waits, both in the page:

* a visible loading marker (``aria-busy="true"``, a class holding ``skeleton`` or
  ``shimmer``): wait until the markers are gone and the DOM has been quiet for
  ``settle_quiet``, at most ``settle_max``. A document whose markers outlast the
  full wait is not waited for again;
* a young document with no controls: wait for its first change, at most
  ``young_document`` while it loads and only until ``young_after_load`` after its
  load event once loaded. A document waits for this once.

Each wait ends one second before the caller's own timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.host.page.isolated import IsolatedScriptError, PerDocument, evaluate_isolated
from server.host.tools.context import ToolSettings

# The caller needs this much of its timeout left for the read itself.
READ_MARGIN = 1.0


@dataclass
class _SettleMemo:
    """What one document already waited for."""

    busy_outlasted_wait: bool = False
    waited_for_first_change: bool = False


@dataclass(frozen=True)
class _Probe:
    """The page as the first read found it; times in seconds since the document started."""

    document: float
    age: float
    loaded: bool
    load_end: float
    busy: bool
    scripted: bool
    controls: bool

    @classmethod
    def from_page(cls, raw: dict[str, Any]) -> _Probe:
        return cls(
            document=float(raw["document"]),
            age=float(raw["age"]) / 1000,
            loaded=bool(raw["loaded"]),
            load_end=float(raw["loadEnd"]) / 1000,
            busy=bool(raw["busy"]),
            scripted=bool(raw["scripted"]),
            controls=bool(raw["controls"]),
        )

    def first_change_limit(self, settings: ToolSettings) -> float:
        """Seconds this document waits for its first change (0: it does not wait)."""
        if self.controls or self.age >= settings.young_document_age:
            return 0.0
        if not self.loaded:
            return settings.young_document
        if not self.scripted:
            return 0.0  # nothing left that could draw it
        return settings.young_after_load - (self.age - self.load_end)


_memos = PerDocument(_SettleMemo)


async def settle(page: Page, settings: ToolSettings, *, read_limit: float | None = None) -> None:
    """Waits for the page's placeholders to go or a young empty document to draw, if needed.

    ``read_limit`` is the caller's own limit for its whole read. A page that navigates away
    while this waits ends the wait.
    """
    budget = settings.settle_max
    if read_limit is not None:
        budget = min(budget, read_limit - READ_MARGIN)
    if budget <= 0:
        return
    try:
        probe = _Probe.from_page(await evaluate_isolated(page, "settle-probe"))
        memo = _memos.get(page, probe.document)
        if probe.busy:
            if memo.busy_outlasted_wait:
                return
            options = {"quiet": settings.settle_quiet * 1000, "limit": budget * 1000}
            if not await evaluate_isolated(page, "settle-quiet", options):
                memo.busy_outlasted_wait = True
            return
        limit = min(probe.first_change_limit(settings), budget)
        if limit > 0 and not memo.waited_for_first_change:
            memo.waited_for_first_change = True
            await evaluate_isolated(page, "settle-first-change", {"limit": limit * 1000})
    except (PlaywrightError, IsolatedScriptError):
        return  # the document went away: the next read sees the new one

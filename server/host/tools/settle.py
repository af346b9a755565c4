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

from server.host.tools.base import ToolSettings
from server.host.tools.isolated import IsolatedScriptError, PerDocument, evaluate_isolated

# The caller needs this much of its timeout left for the read itself.
READ_MARGIN = 1.0

_ROOTS = """
  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    const walker = document.createTreeWalker(roots[i], NodeFilter.SHOW_ELEMENT);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
    }
  }
"""
_VISIBLE = """
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    if (box.width <= 0 || box.height <= 0) return false;
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none' && style.opacity !== '0';
  };
  const MARKERS = '[aria-busy="true"], [class*="skeleton" i], [class*="shimmer" i]';
  const busy = (roots) => roots.some((root) =>
    Array.from(root.querySelectorAll(MARKERS)).some(visible));
"""
_PROBE = (
    "() => {"
    + _ROOTS
    + _VISIBLE
    + """
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, '
    + '[role="button"], [role="link"], [contenteditable=""], [contenteditable="true"]';
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    document: performance.timeOrigin,
    age: performance.now(),
    loaded: document.readyState === 'complete',
    loadEnd: nav ? nav.loadEventEnd : 0,
    busy: busy(roots),
    scripted: document.scripts.length > 0,
    controls: roots.some((root) =>
      Array.from(root.querySelectorAll(CONTROLS)).some(visible)),
  };
}"""
)
_WAIT_UNTIL_QUIET = (
    "({quiet, limit}) => new Promise((resolve) => {"
    + _ROOTS
    + _VISIBLE
    + """
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  const options = {subtree: true, childList: true, attributes: true, characterData: true};
  roots.forEach((root) => observer.observe(root, options));
  const tick = () => {
    const now = performance.now();
    if (now - last >= quiet && !busy(roots)) { observer.disconnect(); resolve(true); return; }
    if (now - start >= limit) { observer.disconnect(); resolve(false); return; }
    setTimeout(tick, 25);
  };
  tick();
})"""
)
_WAIT_FOR_FIRST_CHANGE = """({limit}) => new Promise((resolve) => {
  const done = (changed) => { observer.disconnect(); clearTimeout(timer); resolve(changed); };
  const observer = new MutationObserver(() => done(true));
  observer.observe(document, {subtree: true, childList: true, characterData: true});
  const timer = setTimeout(() => done(false), limit);
})"""


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
        probe = _Probe.from_page(await evaluate_isolated(page, _PROBE))
        memo = _memos.get(page, probe.document)
        if probe.busy:
            if memo.busy_outlasted_wait:
                return
            options = {"quiet": settings.settle_quiet * 1000, "limit": budget * 1000}
            if not await evaluate_isolated(page, _WAIT_UNTIL_QUIET, options):
                memo.busy_outlasted_wait = True
            return
        limit = min(probe.first_change_limit(settings), budget)
        if limit > 0 and not memo.waited_for_first_change:
            memo.waited_for_first_change = True
            await evaluate_isolated(page, _WAIT_FOR_FIRST_CHANGE, {"limit": limit * 1000})
    except (PlaywrightError, IsolatedScriptError):
        return  # the document went away: the next read sees the new one

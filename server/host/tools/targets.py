"""Turning a tool's target into exactly one element, or a refusal.

A target matching no element is ``targetNotFound``, one matching two or more is
``targetAmbiguous``: the tools never guess. Refs resolve through the snapshot's
in-page registries; CSS selectors search the page, its open shadow roots and
its same-origin frames.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import ElementHandle, Frame, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.tabs import Tab
from server.host.tools.base import (
    CssTarget,
    PointTarget,
    RefTarget,
    RoleTarget,
    Target,
    TextTarget,
    ToolFailure,
)
from server.host.tools.scripts import page_script
from server.host.tools.snapshot import FrameRegistry, ref_failure, snapshot_state

_REF = re.compile(r"(\d+):([A-Za-z0-9]+):(\d+)")


@dataclass
class Resolved:
    """One element (or, for a point target, one viewport point) a tool acts on."""

    frame: Frame
    element: ElementHandle | None
    point: tuple[float, float] | None
    label: str


def parse_ref(ref: str) -> tuple[int, str, int]:
    """``(revision, frame key, n)`` of a ref such as ``4:main:12``."""
    match = _REF.fullmatch(ref.strip())
    if match is None:
        raise ToolFailure(
            "invalidArguments", f"{ref!r} is not a ref; refs look like 4:main:12 (from a snapshot)"
        )
    return int(match.group(1)), match.group(2), int(match.group(3))


async def _resolve_ref(tab: Tab, target: RefTarget) -> Resolved:
    revision, key, n = parse_ref(target.ref)
    if target.revision is not None and target.revision != revision:
        raise ToolFailure(
            "invalidArguments",
            f"the ref {target.ref} is from revision {revision}, not {target.revision}",
        )
    state = snapshot_state(tab)
    if state.revision == 0:
        raise ToolFailure("staleRef", "no snapshot of this tab yet; take one and use its refs")
    if revision > state.revision:
        raise ref_failure(f"revision {revision} is newer than this tab's snapshots")
    parts = state.registries.get(revision)
    if parts is None:
        raise ref_failure(f"the ref {target.ref} is from an old snapshot")
    part = parts.get(key)
    if part is None:
        raise ToolFailure("targetNotFound", f"snapshot {revision} has no frame {key!r}")
    current = revision == state.revision
    try:
        if part.frame.is_detached():
            raise ref_failure(f"the frame of {target.ref} is gone")
        handle = await part.registry.evaluate_handle(
            """(r, [n, current]) => {
              const el = r.elements[n];
              if (!el || !r.info[n]) return 'missing';
              if (!el.isConnected || r.doc !== document) return 'gone';
              if (!current && r.mutations() > 0) return 'changed';
              return el;
            }""",
            [n, current],
        )
    except PlaywrightError:
        raise ref_failure(f"the page of {target.ref} has changed") from None
    element = handle.as_element()
    if element is None:
        status = await handle.json_value()
        if status == "missing":
            raise ToolFailure("targetNotFound", f"snapshot {revision} has no ref {target.ref}")
        raise ref_failure(f"the element of {target.ref} is no longer on the page")
    return Resolved(part.frame, element, None, target.ref)


def _same_origin(frame: Frame, page: Page) -> bool:
    url = frame.url
    if url in ("", "about:blank", "about:srcdoc"):
        return True
    here, main = urlsplit(url), urlsplit(page.url)
    return (here.scheme, here.netloc) == (main.scheme, main.netloc)


async def _resolve_css(page: Page, target: CssTarget) -> Resolved:
    found: list[tuple[Frame, ElementHandle]] = []
    total = 0
    for frame in page.frames:
        if frame.is_detached() or not _same_origin(frame, page):
            continue
        try:
            result = await frame.evaluate_handle(page_script("find"), target.selector)
            invalid, count = await result.evaluate("r => [r.invalid, r.count]")
        except PlaywrightError:
            continue  # a frame that went away while searching
        if invalid:
            raise ToolFailure(
                "invalidSelector",
                f"{target.selector!r} is not a CSS selector the page accepts",
            )
        total += count
        if count == 1:
            element = (await result.evaluate_handle("r => r.matches[0]")).as_element()
            if element is not None:
                found.append((frame, element))
        await result.dispose()
    if total == 0:
        raise ToolFailure("targetNotFound", f"no element matches {target.selector!r}")
    if total > 1 or len(found) != 1:
        raise ToolFailure(
            "targetAmbiguous",
            f"{total} elements match {target.selector!r}; use a ref from a snapshot "
            "or a selector that matches one element",
        )
    frame, element = found[0]
    return Resolved(frame, element, None, target.selector)


async def _resolve_from_snapshot(tab: Tab, role: str | None, name: str, label: str) -> Resolved:
    """The one element of the newest snapshot with this role and/or accessible name."""
    state = snapshot_state(tab)
    if state.revision == 0:
        raise ToolFailure("staleRef", "no snapshot of this tab yet; take one first")
    matches: list[tuple[FrameRegistry, ElementHandle]] = []
    total = 0
    for part in state.current().values():
        try:
            result = await part.registry.evaluate_handle(
                """(r, [role, name]) => {
                  const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
                  const hits = [];
                  r.info.forEach((item, n) => {
                    if (!item || !r.elements[n].isConnected) return;
                    if (role !== null && item[0] !== role) return;
                    if (name !== null && norm(item[1]) !== norm(name)) return;
                    hits.push(r.elements[n]);
                  });
                  return hits;
                }""",
                [role, name or None],
            )
            count: int = await result.evaluate("hits => hits.length")
        except PlaywrightError:
            raise ref_failure("the page has changed since the last snapshot") from None
        total += count
        if count == 1:
            element = (await result.evaluate_handle("hits => hits[0]")).as_element()
            if element is not None:
                matches.append((part, element))
    if total == 0:
        raise ToolFailure("targetNotFound", f"the last snapshot shows no {label}")
    if total > 1 or len(matches) != 1:
        raise ToolFailure(
            "targetAmbiguous", f"the last snapshot shows {total} of {label}; use a ref instead"
        )
    part, element = matches[0]
    return Resolved(part.frame, element, None, label)


async def resolve_target(tab: Tab, page: Page, target: Target) -> Resolved:
    """Exactly one element for ``target`` (or its point), else a ``ToolFailure``."""
    if isinstance(target, RefTarget):
        return await _resolve_ref(tab, target)
    if isinstance(target, CssTarget):
        return await _resolve_css(page, target)
    if isinstance(target, RoleTarget):
        label = f'{target.role} "{target.name}"' if target.name else target.role
        return await _resolve_from_snapshot(tab, target.role.lower(), target.name or "", label)
    if isinstance(target, TextTarget):
        return await _resolve_from_snapshot(tab, None, target.text, f'"{target.text}"')
    assert isinstance(target, PointTarget)
    element = await page.main_frame.evaluate_handle(
        "([x, y]) => document.elementFromPoint(x, y)", [target.x, target.y]
    )
    return Resolved(
        page.main_frame, element.as_element(), (target.x, target.y), f"({target.x}, {target.y})"
    )


async def inspect(resolved: Resolved) -> dict[str, Any]:
    """The facts the safety checks need about the target, read without changing the page."""
    if resolved.element is None:
        return {"tag": "", "iframe": False, "connected": False}
    try:
        facts: dict[str, Any] = await resolved.element.evaluate(page_script("inspect"))
    except PlaywrightError:
        raise ref_failure(f"{resolved.label} went away before it could be checked") from None
    return facts

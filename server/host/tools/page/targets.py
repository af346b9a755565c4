"""Turning a tool's target into exactly one element, or a refusal.

A target matching no element is ``targetNotFound``, one matching two or more is
``targetAmbiguous``: the tools never guess. Targets resolve in the tools' isolated
world (a page's patched DOM cannot swap or hide an element): refs through the
snapshot's registries there, CSS selectors across the page, its open shadow roots
and its same-origin frames. The element's facts are read there too; only an action
that needs a Playwright handle gets one, after the checks (``element_of``).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any

from playwright.async_api import ElementHandle, Page
from playwright.async_api import Error as PlaywrightError

from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.tools.args import CssTarget, PointTarget, RefTarget, RoleTarget, Target, TextTarget
from server.host.tools.page.snapshots import ref_failure, snapshot_state
from server.host.tools.results import ToolFailure

_REF = re.compile(r"(\d+):([A-Za-z0-9]+):(\d+)")
# The attribute handle-mark.js puts on the target (and the frames holding it) for a moment.
_MARK = "data-crewhost-target"


@dataclass
class Resolved:
    """One element (or, for a point target, one viewport point) a tool acts on.

    ``pick`` names the element in the tools' isolated world (None: nothing at the point);
    its facts and read-backs go there. ``element`` is its Playwright handle, found by
    ``element_of`` when an action needs one.
    """

    page: Page
    pick: str | None
    point: tuple[float, float] | None
    label: str
    element: ElementHandle | None = None


def parse_ref(ref: str) -> tuple[int, str, int]:
    """``(revision, frame key, n)`` of a ref such as ``4:main:12``."""
    match = _REF.fullmatch(ref.strip())
    if match is None:
        raise ToolFailure(
            "invalidArguments", f"{ref!r} is not a ref; refs look like 4:main:12 (from a snapshot)"
        )
    return int(match.group(1)), match.group(2), int(match.group(3))


async def _isolated(page: Page, script: str, argument: Any, gone: str) -> Any:
    """``evaluate_isolated``, with a page that changed mid-read as the stale ref ``gone``."""
    try:
        return await evaluate_isolated(page, script, argument)
    except (PlaywrightError, IsolatedScriptError):
        raise ref_failure(gone) from None


async def _resolve_ref(tab: Tab, page: Page, target: RefTarget) -> Resolved:
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
    keys = state.frames.get(revision)
    if keys is None:
        raise ref_failure(f"the ref {target.ref} is from an old snapshot")
    if key not in keys:
        raise ToolFailure("targetNotFound", f"snapshot {revision} has no frame {key!r}")
    changed = f"the page of {target.ref} has changed"
    found = await _isolated(
        page,
        "resolve-ref",
        {"revision": revision, "key": key, "n": n, "current": revision == state.revision},
        changed,
    )
    status = found["status"]
    if status == "ok":
        return Resolved(page, str(found["pick"]), None, target.ref)
    if status == "frameGone":
        raise ref_failure(f"the frame of {target.ref} is gone")
    if status == "pageChanged":
        raise ref_failure(changed)
    if status == "missing":
        raise ToolFailure("targetNotFound", f"snapshot {revision} has no ref {target.ref}")
    raise ref_failure(f"the element of {target.ref} is no longer on the page")


async def _resolve_css(page: Page, target: CssTarget) -> Resolved:
    try:
        found = await evaluate_isolated(page, "find", target.selector)
    except (PlaywrightError, IsolatedScriptError):
        found = {"invalid": False, "count": 0, "pick": None}  # the page went away mid-search
    if found["invalid"]:
        raise ToolFailure(
            "invalidSelector",
            f"{target.selector!r} is not a CSS selector the page accepts",
        )
    if found["count"] == 0:
        raise ToolFailure("targetNotFound", f"no element matches {target.selector!r}")
    if found["pick"] is None:
        raise ToolFailure(
            "targetAmbiguous",
            f"{found['count']} elements match {target.selector!r}; use a ref from a snapshot "
            "or a selector that matches one element",
        )
    return Resolved(page, str(found["pick"]), None, target.selector)


async def _resolve_from_snapshot(
    tab: Tab, page: Page, role: str | None, name: str, label: str
) -> Resolved:
    """The one element of the newest snapshot with this role and/or accessible name."""
    state = snapshot_state(tab)
    if state.revision == 0:
        raise ToolFailure("staleRef", "no snapshot of this tab yet; take one first")
    changed = "the page has changed since the last snapshot"
    found = await _isolated(
        page,
        "resolve-named",
        {"revision": state.revision, "role": role, "name": name or None},
        changed,
    )
    if found["status"] != "ok":
        raise ref_failure(changed)
    if found["count"] == 0:
        raise ToolFailure("targetNotFound", f"the last snapshot shows no {label}")
    if found["pick"] is None:
        raise ToolFailure(
            "targetAmbiguous",
            f"the last snapshot shows {found['count']} of {label}; use a ref instead",
        )
    return Resolved(page, str(found["pick"]), None, label)


async def resolve_target(tab: Tab, page: Page, target: Target) -> Resolved:
    """Exactly one element for ``target`` (or its point), else a ``ToolFailure``."""
    if isinstance(target, RefTarget):
        return await _resolve_ref(tab, page, target)
    if isinstance(target, CssTarget):
        return await _resolve_css(page, target)
    if isinstance(target, RoleTarget):
        label = f'{target.role} "{target.name}"' if target.name else target.role
        return await _resolve_from_snapshot(
            tab, page, target.role.lower(), target.name or "", label
        )
    if isinstance(target, TextTarget):
        return await _resolve_from_snapshot(tab, page, None, target.text, f'"{target.text}"')
    assert isinstance(target, PointTarget)
    label = f"({target.x}, {target.y})"
    pick = await _isolated(page, "element-at", [target.x, target.y], f"the page at {label} changed")
    return Resolved(page, pick, (target.x, target.y), label)


async def focused_element(page: Page, within: Resolved | None = None) -> Resolved | None:
    """The element a key goes to: the focused one through open shadow roots and same-origin
    frames, if it is not the body; with ``within`` (a frame element), the one focused inside
    that frame. A frame element itself when focus is in a frame of another origin."""
    argument = within.pick if within is not None else None
    pick = await _isolated(page, "active-element", argument, "the page changed")
    return Resolved(page, pick, None, "the focused element") if pick is not None else None


async def inspect(resolved: Resolved) -> dict[str, Any]:
    """The facts the safety checks need about the target, read without changing the page."""
    if resolved.pick is None:
        return {"tag": "", "iframe": False, "connected": False}
    facts: dict[str, Any] | None = await _isolated(
        resolved.page,
        "inspect",
        resolved.pick,
        f"{resolved.label} went away before it could be checked",
    )
    if facts is None:
        raise ref_failure(f"{resolved.label} went away before it could be checked")
    return facts


async def run_on_element(resolved: Resolved, script: str, **extra: Any) -> Any:
    """Runs the isolated-world script ``script`` on the target: its argument is the pick,
    or ``{id: pick, **extra}``. A script answers null for an element its world forgot."""
    if resolved.pick is None:
        raise ToolFailure("targetNotFound", f"nothing on the page at {resolved.label}")
    gone = f"{resolved.label} went away"
    argument = {"id": resolved.pick, **extra} if extra else resolved.pick
    result = await _isolated(resolved.page, script, argument, gone)
    if result is None:
        raise ref_failure(gone)
    return result


async def element_of(resolved: Resolved) -> ElementHandle:
    """The target's Playwright handle, for an action; found once, after the checks.

    The isolated world marks the element (and each frame element holding it) with a
    one-time attribute, Playwright's selector engine (isolated too) finds it, and the
    world takes the mark off again and confirms nobody moved or copied it meanwhile.
    """
    if resolved.element is not None:
        return resolved.element
    if resolved.pick is None:
        raise ToolFailure("targetNotFound", f"nothing on the page at {resolved.label}")
    page, mark = resolved.page, secrets.token_hex(8)
    gone = f"{resolved.label} went away before it could be used"
    depth = await _isolated(page, "handle-mark", {"id": resolved.pick, "mark": mark}, gone)
    if depth is None:
        raise ref_failure(gone)
    element: ElementHandle | None = None
    try:
        frame = page.main_frame
        for level in range(depth):
            owner = await frame.query_selector(f'[{_MARK}="{mark}:{level}"]')
            inner = await owner.content_frame() if owner is not None else None
            if inner is None:
                break
            frame = inner
        else:
            element = await frame.query_selector(f'[{_MARK}="{mark}:{depth}"]')
    except PlaywrightError:
        element = None
    finally:
        kept = await _isolated(
            page, "handle-unmark", {"id": resolved.pick, "mark": mark, "depth": depth}, gone
        )
    if element is None or not kept:
        raise ref_failure(f"the page changed while {resolved.label} was being found")
    resolved.element = element
    return element

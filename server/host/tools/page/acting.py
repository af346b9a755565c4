"""What every page action shares: the input queue, focus, and reading back what changed.

Each action runs as an input action in the tab's queue, so a dialog it opens ends it
and comes back to the agent, and a person holding the tab refuses it. Every action
resolves its target to exactly one element, reads the element's facts, applies the
refusals of ``safety`` and only then touches the page; afterwards it reads back what
it did (``changed`` / NOT VERIFIED, or MISMATCH).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from server.host.browser.tabs import Tab
from server.host.tools.args import Target
from server.host.tools.context import ToolContext
from server.host.tools.page.approval import ApprovedElement, require_approved
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.page.targets import (
    Resolved,
    inspect,
    resolve_target,
    run_on_element,
)
from server.host.tools.page.verify import NOT_VERIFIED, observe_change, page_state
from server.host.tools.results import ToolFailure

VALUE_SHOWN = 500
# The step of a Playwright action's call log that dispatches its input to the page: a
# timeout after it came when the page had the input.
_DISPATCHED = "performing click action"


Operation = Callable[[Tab, Page], Awaitable[dict[str, Any]]]


async def run_input(context: ToolContext, tab_id: str, operation: Operation) -> dict[str, Any]:
    """Runs ``operation`` as the agent's input action on the tab; a dialog it opens is the
    result."""
    tab = reachable_tab(context, tab_id)
    done = await context.engine.run(
        context.team_id,
        tab.id,
        context.caller,
        lambda page: operation(tab, page),
        input_action=True,
    )
    if done.dialog is not None:
        return {
            "ok": True,
            "changed": True,
            "reasons": ["the page opened a dialog"],
            "dialog": done.dialog.to_wire(),
            "next": "answer the dialog with handle_dialog; the tab takes nothing else until then",
        }
    return dict(done.value or {})


def changed_result(reasons: list[str], new_tabs: list[str]) -> dict[str, Any]:
    if not reasons:
        return {"ok": False, "changed": False, "note": NOT_VERIFIED}
    result: dict[str, Any] = {"ok": True, "changed": True, "reasons": reasons}
    if new_tabs:
        result["newTabIds"] = new_tabs
    return result


def require_found(resolved: Resolved) -> None:
    if resolved.pick is None:
        raise ToolFailure("targetNotFound", f"nothing on the page at {resolved.label}")


async def resolve_approved(
    tab: Tab, page: Page, target: Target, approved: ApprovedElement | None
) -> tuple[Resolved, dict[str, Any]]:
    """The one element ``target`` names and its facts; refused (``targetChanged``) when a
    person approved the call for another element (``approved``, None when nobody was asked)."""
    resolved = await resolve_target(tab, page, target)
    require_found(resolved)
    facts = await inspect(resolved)
    await require_approved(approved, resolved, facts)
    return resolved, facts


async def hold_focus(resolved: Resolved, typed: bool) -> None:
    """Refuses to go on when the page moved focus away from the target."""
    try:
        held = await run_on_element(resolved, "focus")
    except ToolFailure:
        held = False
    if not held:
        already = "some of the text is already in the field" if typed else "nothing was typed"
        raise ToolFailure(
            "focusLost", f"the page moved focus away from the target ({already}); take a snapshot"
        )


def not_actionable(label: str, exc: PlaywrightTimeout) -> ToolFailure:
    """A timeout of a Playwright action on ``label``: before its input reached the page the
    element could not be used; after, the page took the input and stopped answering, and
    the action must not be repeated."""
    if _DISPATCHED in str(exc):
        return ToolFailure(
            "pageNotResponding",
            f"the action on {label} was sent to the page, which then stopped responding; it "
            "may have taken effect: do not repeat it; take a snapshot once the page answers",
        )
    return ToolFailure(
        "targetNotActionable",
        f"{label} could not be used: it stayed hidden, moving or covered by another element",
    )


async def observed(
    context: ToolContext,
    tab: Tab,
    page: Page,
    resolved: Resolved | None,
    act: Callable[[], Awaitable[None]],
) -> tuple[list[str], list[str]]:
    """Runs ``act`` between two page states; ``(reasons, new tab ids)``."""
    pick = resolved.pick if resolved is not None else None
    before = await page_state(page, pick)
    tabs_before = {t.id for t in context.engine.list_tabs(context.team_id)}
    await act()
    return await observe_change(
        context.engine, tab, page, pick, before, tabs_before, context.settings.click_observe
    )


TARGET_HELP = (
    " The target is usually {kind: 'ref', ref} with a ref from the latest snapshot; a CSS "
    "selector ({kind: 'css', selector}) must match exactly one element."
)

"""``fill_fields``: type into up to 16 ordinary text fields of one fresh snapshot in one call.

The whole set is checked before any input (preflight): one refused field
refuses the call, and nothing is typed; a call a person approved fills only the
elements its card named. Then each field is checked again just before its input
(same element, same document, same value as at preflight, still editable, tab not
held by a person) and confirmed by reading its value back.
The first field that fails stops the call: ``failedIndex`` when nothing was sent
to it, ``uncertainIndex`` when text was sent but not confirmed. ``partial`` says
earlier fields stay changed. Nothing is submitted and nothing is retried.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.tools.args import RefTarget, TabArgs, ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.approval import ApprovedElement, approved_element, require_approved
from server.host.tools.page.descriptions import element_name, on_page
from server.host.tools.page.snapshots import MAIN_FRAME, read_snapshot, snapshot_state
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.page.targets import (
    Resolved,
    element_of,
    inspect,
    parse_ref,
    resolve_target,
    run_on_element,
)
from server.host.tools.results import ToolFailure

MAX_FIELDS = 16


MAX_TOTAL_BYTES = 16 * 1024


# The fill's own deadline fires first, so its result (not the queue's) says what happened.
_QUEUE_MARGIN = 2.0


class FillField(ToolArgs):
    """One field and its text."""

    ref: str = Field(description="The field's ref from the snapshot named by revision.")
    text: str = Field(description="The text the field should hold (it replaces the old text).")


class FillFieldsArgs(TabArgs):
    """Input of ``fill_fields``."""

    revision: int = Field(description="The revision of the latest snapshot, which gave the refs.")
    fields: list[FillField] = Field(min_length=1, max_length=MAX_FIELDS)


@dataclass
class _Planned:
    """A field that passed preflight: its target and what it held then."""

    index: int
    target: Resolved
    text: str
    original: str


class _Stop(Exception):
    """Ends the fill at one field, with the reason code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _check_request(tab: Tab, args: FillFieldsArgs) -> list[tuple[int, str]]:
    """Request-level refusals; gives each field's ``(n, text)`` in the main frame."""
    total = sum(len(f.text.encode("utf-8")) for f in args.fields)
    if total > MAX_TOTAL_BYTES:
        raise ToolFailure(
            "tooMuchText", f"the texts add up to {total} bytes; fill_fields takes 16 KiB at most"
        )
    current = snapshot_state(tab).revision
    if args.revision != current:
        raise ToolFailure(
            "staleRef",
            f"fill_fields needs refs of the latest snapshot (revision {current}); "
            "take a new snapshot and use its refs",
        )
    seen: set[str] = set()
    planned: list[tuple[int, str]] = []
    for index, field in enumerate(args.fields):
        revision, frame, _ = parse_ref(field.ref)
        if revision != args.revision:
            raise ToolFailure(
                "staleRef",
                f"field {index}: {field.ref} is not from revision {args.revision}",
                index=index,
            )
        if frame != MAIN_FRAME:
            raise ToolFailure(
                "inFrame", f"field {index}: fill_fields fills main-frame fields only", index=index
            )
        if field.ref in seen:
            raise ToolFailure(
                "duplicateRef", f"field {index}: {field.ref} is listed twice", index=index
            )
        seen.add(field.ref)
        try:
            safety.check_text(field.text)
        except ToolFailure as failure:
            raise ToolFailure(
                failure.code, f"field {index}: {failure.message}", index=index
            ) from None
        planned.append((index, field.text))
    return planned


def _target(args: FillFieldsArgs, index: int) -> RefTarget:
    """The target of field ``index``, as the call's description names it."""
    return RefTarget(ref=args.fields[index].ref, revision=args.revision)


async def _preflight(
    tab: Tab, page: Page, args: FillFieldsArgs, approved: list[ApprovedElement | None]
) -> list[_Planned]:
    """Resolves and checks every field before any input; each must be the element a person
    approved (``approved``, by field; None where nobody was asked)."""
    planned: list[_Planned] = []
    for index, text in _check_request(tab, args):
        ref = args.fields[index].ref
        try:
            resolved = await resolve_target(tab, page, _target(args, index))
            facts = await inspect(resolved)
            await require_approved(approved[index], resolved, facts)
        except ToolFailure as failure:
            raise ToolFailure(
                failure.code, f"field {index}: {failure.message}", index=index
            ) from None
        reason = safety.check_fillable(facts)
        if reason is not None:
            raise ToolFailure(
                reason, f"field {index} ({ref}) cannot be filled: {reason}", index=index
            )
        limit = int(facts.get("maxLength", -1))
        if limit >= 0 and len(text.encode("utf-16-le")) // 2 > limit:
            raise ToolFailure(
                "textTooLong", f"field {index} takes at most {limit} characters", index=index
            )
        planned.append(_Planned(index, resolved, text, str(facts.get("value") or "")))
    return planned


async def _recheck(tab: Tab, page: Page, document_url: str, field: _Planned) -> None:
    """The same field, document and value as at preflight, still editable, tab not held."""
    if tab.held_by is not None:
        raise _Stop("tabHeld")
    if page.url != document_url:
        raise _Stop("documentChanged")
    try:
        facts = await inspect(field.target)
    except ToolFailure:
        raise _Stop("targetGone") from None
    reason = safety.check_fillable(facts)
    if reason is not None:
        raise _Stop(reason)
    if str(facts.get("value") or "") != field.original:
        raise _Stop("valueChanged")


async def _fill_one(page: Page, field: _Planned) -> bool:
    """Fills one rechecked field; True when it reads back; ``_Stop`` when no text was sent."""
    try:
        await (await element_of(field.target)).focus()
        focused = await run_on_element(field.target, "focus")
        if focused:
            await run_on_element(field.target, "caret", replace=True)
            focused = await run_on_element(field.target, "focus")
    except (PlaywrightError, ToolFailure):
        raise _Stop("targetGone") from None
    if not focused:
        raise _Stop("focusLost")
    await page.keyboard.insert_text(field.text)
    await run_on_element(field.target, "blur")
    return bool(await run_on_element(field.target, "field-value") == field.text)


async def _fill(
    context: ToolContext,
    tab: Tab,
    page: Page,
    args: FillFieldsArgs,
    approved: list[ApprovedElement | None],
) -> dict[str, Any]:
    planned = await _preflight(tab, page, args, approved)
    document_url = page.url
    confirmed: list[int] = []
    result: dict[str, Any] = {}
    current: _Planned | None = None
    sent = False
    try:
        async with asyncio.timeout(context.settings.fill_deadline):
            for field in planned:
                current, sent = field, False
                try:
                    await _recheck(tab, page, document_url, field)
                except _Stop as stop:
                    result.update(failedIndex=field.index, reason=stop.reason)
                    break
                sent = True
                try:
                    ok = await _fill_one(page, field)
                except _Stop as stop:
                    result.update(failedIndex=field.index, reason=stop.reason)
                    break
                if not ok:
                    result.update(uncertainIndex=field.index, reason="valueNotConfirmed")
                    break
                confirmed.append(field.index)
    except TimeoutError:
        if current is not None:
            key = "uncertainIndex" if sent else "failedIndex"
            result.update({key: current.index, "reason": "deadline"})
    except (PlaywrightError, ToolFailure):
        if current is not None:
            key = "uncertainIndex" if sent else "failedIndex"
            result.update({key: current.index, "reason": "pageError"})
    complete = len(confirmed) == len(planned)
    result.update(
        status="filled" if complete else "stopped",
        confirmed=confirmed,
        partial=bool(confirmed) and not complete,
        inputCompleted=complete,
    )
    try:
        result["snapshot"] = await read_snapshot(context, tab, page)
    except (PlaywrightError, ToolFailure):
        result["status"] = "snapshot_failed"
    result["next"] = (
        "nothing was submitted; check the snapshot, then ask a person to submit"
        if complete
        else "the fill stopped; earlier fields may have changed: read the page before going on"
    )
    return result


async def fill_fields(context: ToolContext, args: FillFieldsArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    approved = [approved_element(_target(args, i)) for i in range(len(args.fields))]
    done = await context.engine.run(
        context.team_id,
        tab.id,
        context.caller,
        lambda page: _fill(context, tab, page, args, approved),
        deadline=context.settings.fill_deadline + _QUEUE_MARGIN,
    )
    return dict(done.value or {})


async def describe(context: ToolContext, args: FillFieldsArgs) -> str:
    names = [
        await element_name(context, args.tab_id, _target(args, i)) for i in range(len(args.fields))
    ]
    return f"Fill {', '.join(names)}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="fill_fields",
    description=(
        "Fill 1 to 16 ordinary text inputs or textareas of the main page in one call, each "
        "with its text (replacing the old text). All refs must come from the latest "
        "snapshot, given as revision. Everything is checked before any typing; password, "
        "one-time-code and card fields, hidden, disabled and read-only fields, frames and "
        "contenteditable are refused. Never submits. The result lists confirmed indices "
        "and, if it stopped, failedIndex (not typed) or uncertainIndex (typed, not "
        "confirmed); partial means earlier fields stay changed."
    ),
    args=FillFieldsArgs,
    gated=True,
    run=fill_fields,
    describe=describe,
)

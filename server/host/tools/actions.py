"""The page actions: click, type, press, hover, scroll, select_option and set_checked.

Each runs as an input action in the tab's queue, so a dialog it opens ends it and
comes back to the agent, and a person holding the tab refuses it. Every action
resolves its target to exactly one element, reads the element's facts, applies
the refusals of ``safety`` and only then touches the page; afterwards it reads
back what it did (``changed`` / NOT VERIFIED, or MISMATCH).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from playwright.async_api import ElementHandle, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field

from server.host.browser.tabs import Tab
from server.host.page.scripts import page_script
from server.host.tools import safety
from server.host.tools.base import TabArgs, Target, Tool, ToolContext, ToolFailure
from server.host.tools.tab_access import reachable_tab
from server.host.tools.targets import (
    Resolved,
    element_of,
    focused_element,
    inspect,
    resolve_target,
    run_on_element,
)
from server.host.tools.verify import NOT_VERIFIED, observe_change, page_state

_ENTER_KEYS = frozenset({"Enter", "NumpadEnter"})
_ACTIVATE_KEYS = frozenset({"Enter", "NumpadEnter", " ", "Space"})
_VALUE_SHOWN = 500

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


def _changed_result(reasons: list[str], new_tabs: list[str]) -> dict[str, Any]:
    if not reasons:
        return {"ok": False, "changed": False, "note": NOT_VERIFIED}
    result: dict[str, Any] = {"ok": True, "changed": True, "reasons": reasons}
    if new_tabs:
        result["newTabIds"] = new_tabs
    return result


def _found(resolved: Resolved) -> None:
    if resolved.pick is None:
        raise ToolFailure("targetNotFound", f"nothing on the page at {resolved.label}")


async def _hold_focus(resolved: Resolved, typed: bool) -> None:
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


def _not_actionable(label: str, exc: PlaywrightTimeout) -> ToolFailure:
    return ToolFailure(
        "targetNotActionable",
        f"{label} could not be used: it stayed hidden, moving or covered by another element",
    )


async def _observed(
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


# -- click ----------------------------------------------------------------------------------


class ClickArgs(TabArgs):
    """Input of ``click``."""

    target: Target = Field(description="The element to click: a ref from the latest snapshot.")


async def click(context: ToolContext, args: ClickArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        _found(resolved)
        facts = await inspect(resolved)
        # A point on another site's frame (a bot-check box a snapshot offered) has no facts here.
        if resolved.point is None or not facts.get("iframe"):
            safety.check_clickable(facts)
        timeout = context.settings.action_timeout * 1000
        element = await element_of(resolved) if resolved.point is None else None

        async def act() -> None:
            try:
                if element is not None:
                    await element.click(timeout=timeout)
                elif resolved.point is not None:
                    await page.mouse.click(*resolved.point)
            except PlaywrightTimeout as exc:
                raise _not_actionable(resolved.label, exc) from None

        return _changed_result(*await _observed(context, tab, page, resolved, act))

    return await run_input(context, args.tab_id, operation)


# -- type -----------------------------------------------------------------------------------


class TypeArgs(TabArgs):
    """Input of ``type``."""

    target: Target = Field(description="The text field: a ref from the latest snapshot.")
    text: str = Field(description="The text to type. No em or en dashes.")
    mode: Literal["replace", "append"] = Field(
        default="replace", description="replace the field's text, or add to its end"
    )
    blur: bool = Field(
        default=True,
        description=(
            "leave the field after typing (the page sees a change event); false keeps focus, "
            "for a suggestion list"
        ),
    )


async def type_text(context: ToolContext, args: TypeArgs) -> dict[str, Any]:
    append = args.mode == "append"

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        _found(resolved)
        facts = await inspect(resolved)
        safety.check_typable(facts, args.text, append=append)
        await (await element_of(resolved)).focus()
        await _hold_focus(resolved, typed=False)
        await run_on_element(resolved, "caret", replace=not append)
        await _hold_focus(resolved, typed=False)
        await page.keyboard.insert_text(args.text)
        if args.blur:
            await run_on_element(resolved, "blur")
        value = str(await run_on_element(resolved, "field-value"))
        expected = (str(facts.get("value") or "") + args.text) if append else args.text
        if facts.get("contentEditable"):
            same = value.strip() == expected.strip()
        else:
            same = value == expected
        if same:
            return {"ok": True, "value": value[:_VALUE_SHOWN]}
        return {
            "ok": False,
            "value": value[:_VALUE_SHOWN],
            "note": (
                "MISMATCH: the field does not hold the text typed; the page rewrote or dropped it. "
                "Check the value before going on"
            ),
        }

    return await run_input(context, args.tab_id, operation)


# -- press ----------------------------------------------------------------------------------


class PressArgs(TabArgs):
    """Input of ``press``."""

    key: str = Field(
        min_length=1,
        description="A key or chord as Playwright names it: Enter, Escape, ArrowDown, Control+A.",
    )
    target: Target | None = Field(
        default=None, description="Focus this element first; without it the key goes to focus."
    )


def _check_key(key: str, facts: dict[str, Any]) -> None:
    """Refuses a key that would submit a form or press a commit control."""
    last = key.split("+")[-1]
    if facts.get("password"):
        safety.refuse_password(facts)
    implicit_submit = facts.get("textInput") and facts.get("tag") == "INPUT" and facts.get("inForm")
    if last in _ENTER_KEYS and implicit_submit:
        raise ToolFailure(
            "gatedAction",
            "Enter in this field would submit its form: a person must do this step",
        )
    if last in _ACTIVATE_KEYS and not facts.get("textInput"):
        safety.refuse_commit(facts)


async def press(context: ToolContext, args: PressArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved: Resolved | None = None
        if args.target is not None:
            resolved = await resolve_target(tab, page, args.target)
            _found(resolved)
            facts = await inspect(resolved)
            safety.refuse_gone(facts)
            safety.refuse_disabled(facts)
        else:
            active = await focused_element(page)
            facts = await inspect(active) if active is not None else {}
        _check_key(args.key, facts)
        if resolved is not None:
            await (await element_of(resolved)).focus()
            await _hold_focus(resolved, typed=False)

        async def act() -> None:
            try:
                await page.keyboard.press(args.key)
            except PlaywrightError as exc:
                if "Unknown key" in str(exc):
                    raise ToolFailure("invalidArguments", f"unknown key {args.key!r}") from None
                raise

        return _changed_result(*await _observed(context, tab, page, resolved, act))

    return await run_input(context, args.tab_id, operation)


# -- hover and scroll -----------------------------------------------------------------------


class HoverArgs(TabArgs):
    """Input of ``hover``."""

    target: Target = Field(description="The element to point at: a ref from the latest snapshot.")


async def hover(context: ToolContext, args: HoverArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        element: ElementHandle | None = None
        if resolved.point is None:
            safety.refuse_gone(await inspect(resolved))
            element = await element_of(resolved)

        async def act() -> None:
            try:
                if element is not None:
                    await element.hover(timeout=context.settings.action_timeout * 1000)
                elif resolved.point is not None:
                    await page.mouse.move(*resolved.point)
            except PlaywrightTimeout as exc:
                raise _not_actionable(resolved.label, exc) from None

        reasons, _ = await _observed(context, tab, page, resolved, act)
        return {"ok": True, "changed": bool(reasons), "reasons": reasons}

    return await run_input(context, args.tab_id, operation)


class ScrollArgs(TabArgs):
    """Input of ``scroll``."""

    target: Target | None = Field(
        default=None, description="Scroll until this element is in view (direction is ignored)."
    )
    direction: Literal["down", "up", "left", "right"] = "down"
    pixels: int | None = Field(
        default=None, ge=1, le=100_000, description="How far; one viewport when left out."
    )


async def scroll(context: ToolContext, args: ScrollArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        if args.target is not None:
            resolved = await resolve_target(tab, page, args.target)
            safety.refuse_gone(await inspect(resolved))
            element = await element_of(resolved)
            try:
                await element.scroll_into_view_if_needed(
                    timeout=context.settings.action_timeout * 1000
                )
            except PlaywrightTimeout as exc:
                raise _not_actionable(resolved.label, exc) from None
            return {"ok": True, "inView": True}
        size = await page.evaluate(page_script("viewport-size"))
        step = args.pixels or int(size[1 if args.direction in ("down", "up") else 0] * 0.9)
        dx = {"left": -step, "right": step}.get(args.direction, 0)
        dy = {"up": -step, "down": step}.get(args.direction, 0)
        moved: dict[str, Any] = await page.evaluate(page_script("scroll"), [dx, dy])
        result: dict[str, Any] = {"ok": True, **moved}
        if not moved["moved"]:
            result["note"] = "nothing moved: the page (or the part at its middle) is at its end"
        return result

    return await run_input(context, args.tab_id, operation)


# -- select_option and set_checked ----------------------------------------------------------


class SelectOptionArgs(TabArgs):
    """Input of ``select_option``."""

    target: Target = Field(description="The <select>: a ref from the latest snapshot.")
    value: str = Field(min_length=1, description="The option's value or its label (any case).")


async def select_option(context: ToolContext, args: SelectOptionArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        _found(resolved)
        facts = await inspect(resolved)
        safety.refuse_gone(facts)
        if not facts.get("select"):
            raise ToolFailure("notSelect", "the target is not a <select>; click it instead")
        safety.refuse_disabled(facts)
        found: dict[str, Any] = await run_on_element(resolved, "options", wanted=args.value)
        if found["index"] < 0:
            listed = ", ".join(found["options"]) + (
                f" and {found['more']} more" if found["more"] else ""
            )
            raise ToolFailure(
                "optionNotFound",
                f"no option has the value or label {args.value!r}; it has {listed}",
            )
        if found["disabled"]:
            raise ToolFailure("targetDisabled", f"the option {args.value!r} is disabled")
        await (await element_of(resolved)).select_option(
            index=found["index"], timeout=context.settings.action_timeout * 1000
        )
        chosen = await run_on_element(resolved, "selected-option")
        if chosen[0] != found["index"]:
            return {
                "ok": False,
                "selected": chosen[1],
                "note": "MISMATCH: the page changed the selection back; check it before going on",
            }
        return {"ok": True, "selected": chosen[1]}

    return await run_input(context, args.tab_id, operation)


class SetCheckedArgs(TabArgs):
    """Input of ``set_checked``."""

    target: Target = Field(description="The checkbox, radio button or switch: a ref.")
    checked: bool = Field(description="true to check it, false to clear it")


async def set_checked(context: ToolContext, args: SetCheckedArgs) -> dict[str, Any]:
    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved = await resolve_target(tab, page, args.target)
        _found(resolved)
        facts = await inspect(resolved)
        safety.refuse_gone(facts)
        if not facts.get("checkable"):
            raise ToolFailure(
                "notCheckable", "the target is not a checkbox, radio button or switch"
            )
        safety.refuse_disabled(facts)
        safety.refuse_read_only(facts)
        if bool(facts.get("checked")) == args.checked:
            return {"ok": True, "changed": False, "checked": args.checked, "note": "it already was"}
        if not args.checked and (facts.get("type") == "radio" or facts.get("role") == "radio"):
            raise ToolFailure(
                "invalidArguments", "a radio button is cleared by checking another one"
            )
        timeout = context.settings.action_timeout * 1000
        element = await element_of(resolved)
        try:
            if facts.get("type") in ("checkbox", "radio"):
                await element.set_checked(args.checked, timeout=timeout)
            else:
                await element.click(timeout=timeout)
        except PlaywrightTimeout as exc:
            raise _not_actionable(resolved.label, exc) from None
        except PlaywrightError:
            pass  # the page undid the change: the read-back below says so
        now = bool((await inspect(resolved)).get("checked"))
        if now != args.checked:
            return {
                "ok": False,
                "checked": now,
                "note": "MISMATCH: the page kept the old state; check it before going on",
            }
        return {"ok": True, "changed": True, "checked": now}

    return await run_input(context, args.tab_id, operation)


_TARGET_HELP = (
    " The target is usually {kind: 'ref', ref} with a ref from the latest snapshot; a CSS "
    "selector ({kind: 'css', selector}) must match exactly one element."
)

TOOLS = [
    Tool(
        name="click",
        description=(
            "Click one element. Refused for disabled controls, password fields, controls whose "
            "text reads like a commit (submit, pay, send, confirm, place order...) and buttons "
            "that would submit a form: those are for a person. The result says what changed, "
            "or NOT VERIFIED when nothing did." + _TARGET_HELP
        ),
        args=ClickArgs,
        gated=True,
        run=click,
    ),
    Tool(
        name="type",
        description=(
            "Type text into one text field (replace its text, or append). Refused for password, "
            "disabled and read-only fields, text longer than the field's maxlength, and em or "
            "en dashes. The value is read back: MISMATCH when the page changed it." + _TARGET_HELP
        ),
        args=TypeArgs,
        gated=True,
        run=type_text,
    ),
    Tool(
        name="press",
        description=(
            "Press a key or chord, on a target or on whatever has focus. Enter that would "
            "submit a form is refused. The result says what changed, or NOT VERIFIED."
        ),
        args=PressArgs,
        gated=True,
        run=press,
    ),
    Tool(
        name="hover",
        description="Move the pointer over one element (menus, tooltips)." + _TARGET_HELP,
        args=HoverArgs,
        gated=False,
        run=hover,
    ),
    Tool(
        name="scroll",
        description=(
            "Scroll the page (or the scrollable part at its middle) by a viewport or some "
            "pixels, or bring one element into view."
        ),
        args=ScrollArgs,
        gated=False,
        run=scroll,
    ),
    Tool(
        name="select_option",
        description=(
            "Choose an option of a <select> by its value or label; the choice is read back."
            + _TARGET_HELP
        ),
        args=SelectOptionArgs,
        gated=True,
        run=select_option,
    ),
    Tool(
        name="set_checked",
        description=(
            "Check or clear a checkbox, radio button or switch; the state is read back."
            + _TARGET_HELP
        ),
        args=SetCheckedArgs,
        gated=True,
        run=set_checked,
    ),
]

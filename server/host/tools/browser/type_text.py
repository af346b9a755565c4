"""The ``type`` tool: text into one text field, read back (MISMATCH when the page changed it)."""

from __future__ import annotations

from typing import Any, Literal

from playwright.async_api import Page
from pydantic import Field, field_validator

from server.host.browser.tabs import Tab
from server.host.tools.args import TabArgs, Target
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page import safety
from server.host.tools.page.acting import (
    TARGET_HELP,
    VALUE_SHOWN,
    hold_focus,
    resolve_approved,
    run_input,
)
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page
from server.host.tools.page.targets import element_of, run_on_element


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

    @field_validator("text")
    @classmethod
    def whole_characters(cls, text: str) -> str:
        """Text a page can hold: no lone half of a UTF-16 surrogate pair."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                "the text holds a lone surrogate (half of a UTF-16 pair); send whole characters"
            ) from None
        return text


async def type_text(context: ToolContext, args: TypeArgs) -> dict[str, Any]:
    append = args.mode == "append"
    approved = approved_element(args.target)

    async def operation(tab: Tab, page: Page) -> dict[str, Any]:
        resolved, facts = await resolve_approved(tab, page, args.target, approved)
        safety.check_typable(facts, args.text, append=append)
        await (await element_of(resolved)).focus()
        await hold_focus(resolved, typed=False)
        await run_on_element(resolved, "caret", replace=not append)
        await hold_focus(resolved, typed=False)
        await page.keyboard.insert_text(args.text)
        if args.blur:
            await run_on_element(resolved, "blur")
        value = str(await run_on_element(resolved, "field-value"))
        expected = (str(facts.get("value") or "") + args.text) if append else args.text
        if facts.get("contentEditable"):
            same = value.strip() == expected.strip()
        else:
            same = value == expected
        # The field typed into, named as a snapshot shows it.
        field = str(facts.get("name") or resolved.label)
        if same:
            return {"ok": True, "field": field, "value": value[:VALUE_SHOWN]}
        return {
            "ok": False,
            "field": field,
            "value": value[:VALUE_SHOWN],
            "note": (
                "MISMATCH: the field does not hold the text typed; the page rewrote or dropped it. "
                "Check the value before going on"
            ),
        }

    return await run_input(context, args.tab_id, operation)


async def describe(context: ToolContext, args: TypeArgs) -> str:
    name = await element_name(context, args.tab_id, args.target)
    verb = "Type into" if args.mode == "replace" else "Add text to"
    return f"{verb} {name}{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="type",
    description=(
        "Type text into one text field (replace its text, or append). Refused for password, "
        "disabled and read-only fields, text longer than the field's maxlength, and em or "
        "en dashes. The value is read back: MISMATCH when the page changed it." + TARGET_HELP
    ),
    args=TypeArgs,
    gated=True,
    run=type_text,
    describe=describe,
)

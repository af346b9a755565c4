"""The ``handle_dialog`` tool: accept or dismiss the alert, confirm or prompt a page opened."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.browser.list_tabs import title_of
from server.host.tools.context import ToolContext
from server.host.tools.page.descriptions import on_page
from server.host.tools.page.snapshots import shown_tab_url
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.results import ToolFailure


class HandleDialogArgs(TabArgs):
    accept: bool = Field(description="true for OK, false for Cancel.")
    text: Annotated[str, StringConstraints(max_length=2000)] | None = Field(
        default=None, description="The answer to a prompt() dialog; only with accept."
    )
    dialog_id: str | None = Field(
        default=None, description="The dialog's id as the last result showed it."
    )


async def handle_dialog(context: ToolContext, args: HandleDialogArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    pending = tab.dialog
    if pending is None or (args.dialog_id is not None and args.dialog_id != pending.id):
        raise ToolFailure("dialogClosed", "this dialog is closed; take a snapshot")
    if args.text is not None and (not args.accept or pending.type != "prompt"):
        raise ToolFailure("invalidArguments", "text answers a prompt() dialog, with accept")
    await context.engine.handle_dialog(
        context.team_id, tab.id, args.accept, args.text, caller=context.caller
    )
    if tab.dialog is not None:
        return {"answered": True, "tabId": tab.id, "dialog": tab.dialog.to_wire()}
    return {
        "answered": True,
        "tabId": tab.id,
        "url": shown_tab_url(tab),
        "title": await title_of(tab),
    }


async def describe(context: ToolContext, args: HandleDialogArgs) -> str:
    verb = "Answer OK to" if args.accept else "Cancel"
    return f"{verb} the dialog{on_page(context, args.tab_id)}"


TOOL = Tool(
    name="handle_dialog",
    description=(
        "Answer the page's alert, confirm or prompt dialog: accept (OK) or not (Cancel), "
        "with `text` for a prompt. Until it is answered no other tool works on the tab."
    ),
    args=HandleDialogArgs,
    gated=True,
    run=handle_dialog,
    describe=describe,
)

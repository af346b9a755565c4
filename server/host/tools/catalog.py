"""The one tool catalog, and ``call_tool``: the only way the agent runtime runs a tool.

``call_tool`` repairs the argument forms agents write, validates them against
the tool's model, runs the tool and caps its result. Whatever happens it
returns a dict: a failure is ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from pydantic import ValidationError

from server.common.errors import CrewhostError
from server.host.tools.base import Tool, ToolContext, ToolFailure, cap_result
from server.host.tools.browser import (
    click,
    close_tab,
    evaluate,
    fill_fields,
    fill_from_vault,
    get_tab_content,
    handle_dialog,
    hover,
    list_tabs,
    list_vault_items,
    navigate,
    open_tab,
    press,
    request_takeover,
    request_vault_item,
    scroll,
    select_option,
    set_checked,
    set_environment,
    snapshot,
    submit_secret,
    type_text,
    wait_for,
)
from server.host.tools.memory import remember
from server.host.tools.repair import repair_arguments

log = logging.getLogger(__name__)

# Each tool module defines one ``TOOL``; a tool joins the catalog here, in the order
# the model reads them: the snapshot, acting on a page, tabs, reading, then memory.
_TOOLS = (
    snapshot.TOOL,
    click.TOOL,
    type_text.TOOL,
    press.TOOL,
    hover.TOOL,
    scroll.TOOL,
    select_option.TOOL,
    set_checked.TOOL,
    fill_fields.TOOL,
    wait_for.TOOL,
    evaluate.TOOL,
    open_tab.TOOL,
    navigate.TOOL,
    list_tabs.TOOL,
    close_tab.TOOL,
    handle_dialog.TOOL,
    set_environment.TOOL,
    request_takeover.TOOL,
    submit_secret.TOOL,
    list_vault_items.TOOL,
    fill_from_vault.TOOL,
    request_vault_item.TOOL,
    get_tab_content.TOOL,
    remember.TOOL,
)


def _build_catalog() -> dict[str, Tool]:
    catalog: dict[str, Tool] = {}
    for tool in _TOOLS:
        if tool.name in catalog:
            raise RuntimeError(f"two tools are named {tool.name}")
        catalog[tool.name] = tool
    return catalog


CATALOG: dict[str, Tool] = _build_catalog()


def _validation_message(exc: ValidationError) -> str:
    """One readable line per problem, naming the field as the agent wrote it."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems[:8])


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


async def call_tool(context: ToolContext, name: str, raw_args: dict[str, Any]) -> dict[str, Any]:
    """Runs tool ``name`` with ``raw_args``; never raises, and the result is capped."""
    tool = CATALOG.get(name)
    if tool is None:
        return _error("unknownTool", f"there is no tool named {name!r}")
    try:
        if not isinstance(raw_args, dict):
            raise ToolFailure("invalidArguments", "the arguments must be a JSON object")
        repaired = repair_arguments(name, raw_args)
        try:
            args = tool.args.model_validate(repaired)
        except ValidationError as exc:
            raise ToolFailure("invalidArguments", _validation_message(exc)) from None
        result = await tool.run(context, args)
    except CrewhostError as exc:
        return cap_result({"error": exc.to_wire()})
    except Exception as exc:
        # The message of an unknown failure may quote page data or typed text: log where, not what.
        frames = "".join(traceback.format_tb(exc.__traceback__))
        log.error("tool %s failed with %s\n%s", name, type(exc).__name__, frames)
        return _error("toolFailed", f"the {name} tool failed unexpectedly")
    return cap_result(result)

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
from server.host.tools.agents import (
    agent,
    ask_agent,
    create_task,
    delete_task,
    get_task,
    list_agents,
    list_tasks,
    update_task,
)
from server.host.tools.base import Tool
from server.host.tools.browser import (
    activate_tab,
    click,
    close_tab,
    evaluate,
    execute_script,
    fill_fields,
    fill_from_vault,
    get_tab_content,
    handle_dialog,
    hover,
    list_tabs,
    list_vault_items,
    navigate,
    open,
    open_tab,
    press,
    request_takeover,
    request_vault_item,
    run_script,
    scroll,
    select_option,
    set_checked,
    set_environment,
    snapshot,
    submit_secret,
    type_text,
    wait_for,
)
from server.host.tools.context import SubAgentType, ToolContext
from server.host.tools.memory import remember
from server.host.tools.page.approval import Approval, carrying
from server.host.tools.page.descriptions import arguments_line
from server.host.tools.people import ask_user
from server.host.tools.repair import repair_arguments
from server.host.tools.results import ToolFailure, cap_result
from server.host.tools.skills import load_skill, propose_skill, read_skill_file
from server.host.tools.web import web_fetch, web_search
from server.host.tools.workspace import (
    workspace_delete,
    workspace_list,
    workspace_read,
    workspace_write,
)

log = logging.getLogger(__name__)

# Each tool module defines one ``TOOL``; a tool joins the catalog here, in the order
# the model reads them: the snapshot, acting on a page, tabs, reading, the web, memory,
# skills, people, tasks, then files.
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
    run_script.TOOL,
    execute_script.TOOL,
    open.TOOL,
    open_tab.TOOL,
    navigate.TOOL,
    list_tabs.TOOL,
    activate_tab.TOOL,
    close_tab.TOOL,
    handle_dialog.TOOL,
    set_environment.TOOL,
    request_takeover.TOOL,
    submit_secret.TOOL,
    list_vault_items.TOOL,
    fill_from_vault.TOOL,
    request_vault_item.TOOL,
    get_tab_content.TOOL,
    web_fetch.TOOL,
    web_search.TOOL,
    remember.TOOL,
    load_skill.TOOL,
    read_skill_file.TOOL,
    propose_skill.TOOL,
    ask_user.TOOL,
    create_task.TOOL,
    get_task.TOOL,
    update_task.TOOL,
    list_tasks.TOOL,
    delete_task.TOOL,
    agent.TOOL,
    list_agents.TOOL,
    ask_agent.TOOL,
    workspace_list.TOOL,
    workspace_read.TOOL,
    workspace_write.TOOL,
    workspace_delete.TOOL,
)


# What each kind of sub-agent is given; a tool this host lacks (web_search, web_fetch) is
# simply absent. No sub-agent asks people or starts sub-agents of its own.
_RESEARCHER_TOOLS = frozenset(
    {
        "web_search",
        "web_fetch",
        "snapshot",
        "get_tab_content",
        "list_tabs",
        "wait_for",
        "scroll",
        "workspace_read",
        "workspace_list",
    }
)
_NEVER_IN_SUB_AGENTS = frozenset({"ask_user", "agent", "list_agents", "ask_agent"})


def sub_agent_tools(kind: SubAgentType) -> frozenset[str]:
    """The names of the tools a sub-agent of ``kind`` may use: ``researcher`` the read-only
    ones, ``page_operator`` the tab and page tools, ``general`` all but asking (people or
    agents) and spawning."""
    if kind == "researcher":
        names = _RESEARCHER_TOOLS
    elif kind == "page_operator":
        names = _BROWSER_TOOLS
    else:
        names = frozenset(CATALOG)
    return frozenset(name for name in names if name in CATALOG) - _NEVER_IN_SUB_AGENTS


def _build_catalog() -> dict[str, Tool]:
    catalog: dict[str, Tool] = {}
    for tool in _TOOLS:
        if tool.name in catalog:
            raise RuntimeError(f"two tools are named {tool.name}")
        catalog[tool.name] = tool
    return catalog


CATALOG: dict[str, Tool] = _build_catalog()
# The tab and page tools: every tool of the browser family.
_BROWSER_TOOLS = frozenset(
    tool.name for tool in _TOOLS if tool.run.__module__.startswith("server.host.tools.browser.")
)


async def _browser_for(context: ToolContext, name: str) -> None:
    """Starts the host's browser for the first tab or page tool of a turn that has none."""
    if context.start_browser is not None and name in _BROWSER_TOOLS:
        await context.start_browser()


def _validation_message(exc: ValidationError) -> str:
    """One readable line per problem, naming the field as the agent wrote it."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems[:8])


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


async def call_tool(
    context: ToolContext,
    name: str,
    raw_args: dict[str, Any],
    approval: Approval | None = None,
) -> dict[str, Any]:
    """Runs tool ``name`` with ``raw_args``; never raises, and the result is capped.

    ``approval`` is what a person approved of this call (from ``describe_call``): its
    actions then refuse to act on another element than the card named."""
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
        await _browser_for(context, name)
        with carrying(approval):
            result = await tool.run(context, args)
    except CrewhostError as exc:
        return cap_result({"error": exc.to_wire()})
    except Exception as exc:
        # The message of an unknown failure may quote page data or typed text: log where, not what.
        frames = "".join(traceback.format_tb(exc.__traceback__))
        log.error("tool %s failed with %s\n%s", name, type(exc).__name__, frames)
        return _error("toolFailed", f"the {name} tool failed unexpectedly")
    return cap_result(result)


async def describe_call(
    context: ToolContext,
    name: str,
    raw_args: dict[str, Any],
    approval: Approval | None = None,
) -> str | None:
    """What a call of a gated tool will do, in one line for the person asked (the tool's own
    words); None for a tool that does not ask. Arguments the tool would refuse are shown as
    written: the call then fails without acting. Given the ``approval`` of a call that asks,
    it records there the elements the line names, for ``call_tool`` to hold the call to."""
    tool = CATALOG.get(name)
    if tool is None or tool.describe is None:
        return None
    try:
        args = tool.args.model_validate(repair_arguments(name, raw_args))
        await _browser_for(context, name)
        with carrying(approval):
            return await tool.describe(context, args)
    except Exception as exc:
        if not isinstance(exc, (CrewhostError, ValidationError)):
            log.error("describing a %s call failed with %s", name, type(exc).__name__)
        return f"{name} {arguments_line(raw_args)}"

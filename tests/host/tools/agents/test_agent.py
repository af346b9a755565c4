"""The sub-agent tool subsets, and what a sub-agent's context refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.host.browser.engine import BrowserEngine
from server.host.tools.catalog import CATALOG, call_tool, sub_agent_tools
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import AGENT, TEAM


def test_each_type_gets_its_subset() -> None:
    researcher = sub_agent_tools("researcher")
    operator = sub_agent_tools("page_operator")
    general = sub_agent_tools("general")
    assert {"snapshot", "get_tab_content", "list_tabs", "workspace_read"} <= researcher
    assert {"web_search", "web_fetch"} <= researcher
    # Read-only: nothing that acts on a page, opens a tab or writes.
    assert researcher.isdisjoint({"click", "type", "navigate", "open", "evaluate"})
    assert researcher.isdisjoint({"workspace_write", "workspace_delete"})
    assert {"open", "navigate", "click", "type", "list_tabs", "close_tab", "snapshot"} <= operator
    assert operator.isdisjoint({"remember", "workspace_write", "create_task"})
    assert general == set(CATALOG) - {"ask_user", "agent", "list_agents", "ask_agent"}


@pytest.mark.parametrize(
    ("name", "args"),
    [("agent", {"prompt": "Again"}), ("ask_user", {"question": "Which?"})],
)
async def test_a_sub_agent_neither_spawns_nor_asks(
    tmp_path: Path, name: str, args: dict[str, object]
) -> None:
    context = ToolContext(
        engine=BrowserEngine(tmp_path), team_id=TEAM, caller=AGENT, sub_agent=True
    )
    result = await call_tool(context, name, args)
    assert result["error"]["code"] == "notInSubAgent"


async def test_ask_user_checks_its_options(tmp_path: Path) -> None:
    context = ToolContext(engine=BrowserEngine(tmp_path), team_id=TEAM, caller=AGENT)
    for args in (
        {"question": "Which?", "multiple": True},
        {"question": "Which?", "options": ["a", "a"]},
        {"question": "Which?", "options": ["only one"]},
        {"question": "  "},
    ):
        result = await call_tool(context, "ask_user", args)
        assert result["error"]["code"] == "invalidArguments", args
    alone = await call_tool(context, "ask_user", {"question": "Which?"})
    assert alone["error"]["code"] == "nobodyToAsk"

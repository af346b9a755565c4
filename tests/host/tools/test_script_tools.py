"""run_script's steps, its helpers and the catalog name the same tools."""

from __future__ import annotations

from server.host.tools.browser import run_script
from server.host.tools.catalog import CATALOG
from server.host.tools.repair import HELPER_TOOLS, SCRIPT_TOOLS, STEP_ACTIONS


def test_each_script_tool_is_the_catalog_tool_of_that_name() -> None:
    assert set(run_script._TOOLS) == set(SCRIPT_TOOLS)
    for name, tool in run_script._TOOLS.items():
        assert CATALOG[name] is tool


def test_each_helper_runs_a_script_tool_and_each_script_tool_has_a_helper() -> None:
    assert sorted(HELPER_TOOLS.values()) == sorted(SCRIPT_TOOLS)
    assert {"selectOption", "setChecked", "waitFor", "type"} <= set(HELPER_TOOLS)
    assert STEP_ACTIONS["select_option"] == STEP_ACTIONS["selectOption"] == "select_option"

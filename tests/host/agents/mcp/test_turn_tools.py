"""An agent's MCP tools in a turn: every call gated unless an admin let it run unasked (the
server's hints never decide), results labelled and capped, images described, failures
answered to the model as failed calls."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from mcp import types

from server.host.agents.mcp.connections import McpConnections
from server.host.agents.mcp.turn_tools import McpTurnTools, OfferedTool, tool_result
from server.host.tools.results import MAX_RESULT_CHARS, serialize_result
from tests.host.agents.mcp.conftest import stdio_target
from tests.support.fakes.mcp_servers import PIXEL_PNG


async def offered(connections: McpConnections, tmp_path: Path, kind: str) -> McpTurnTools:
    target = stdio_target(kind, tmp_path)
    state = await connections.ready(target)
    assert state.status == "connected", state.reason
    return McpTurnTools(
        connections,
        {t.full_name: OfferedTool(target, t, t.name != "echo") for t in state.tools},
    )


async def test_calls_are_gated_unless_let_run_unasked_and_hints_are_only_shown(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    # list_notes says it is read-only: it is asked for all the same.
    assert tools.asks("mcp__notes__list_notes")
    assert not tools.asks("mcp__notes__echo")
    assert tools.describe("mcp__notes__list_notes", {}) == (
        "Call list_notes on the MCP server notes (read-only, says the server): {}"
    )
    specs = {spec.name: spec for spec in tools.specs()}
    assert specs["mcp__notes__add_note"].input_schema["required"] == ["text"]


async def test_a_result_is_labelled_as_outside_data_and_capped(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    result = await tools.call("mcp__notes__echo", {"text": "x" * 30_000})
    assert result["source"].startswith("data from the MCP server notes, outside the team")
    assert result["truncated"] is True
    assert len(serialize_result(result)) <= MAX_RESULT_CHARS


async def test_an_image_is_described(connections: McpConnections, tmp_path: Path) -> None:
    tools = await offered(connections, tmp_path, "image")
    result = await tools.call("mcp__image__picture", {})
    assert result["content"] == [
        {
            "type": "image",
            "description": f"an image (image/png, {len(PIXEL_PNG)} bytes), not shown",
        },
        {"type": "text", "text": "a one-pixel picture"},
    ]


async def test_a_failed_call_is_a_failed_result_naming_the_server(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    refused = await tools.call("mcp__notes__add_note", {"wrong": 1})
    assert refused["error"]["code"] == "toolFailed"
    assert refused["error"]["message"].startswith("notes: Error executing tool add_note")
    crashed = await offered(connections, tmp_path, "crash")
    gone = await crashed.call("mcp__crash__crash", {})
    assert gone["error"]["message"].startswith("crash: the call failed: the server stopped")


def test_an_error_result_becomes_a_failed_call() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="no such issue")], is_error=True
    )
    assert tool_result("tracker", result) == {
        "error": {"code": "toolFailed", "message": "tracker: no such issue"}
    }


async def test_the_process_runs_with_limits_and_no_new_privileges(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    result = await tools.call("mcp__notes__limits", {})
    assert json.dumps(result["content"]).count("nonewprivs=1") == 1
    text = result["content"][0]["text"]
    assert f"cpu=3600 as={8 * 1024**3} files=256" in text


async def test_stderr_reaches_the_log_capped_and_named(
    connections: McpConnections, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    with caplog.at_level(logging.INFO, logger="server.host.agents.mcp.stdio_transport"):
        await tools.call("mcp__notes__shout", {"text": "hey"})
        await tools.call("mcp__notes__list_notes", {})
    lines = [r.getMessage() for r in caplog.records if "hey" in r.getMessage()]
    assert lines[0] == "mcp server notes: hey 0"
    assert len(lines) == 200
    assert "mcp server notes: further stderr not logged" in caplog.text

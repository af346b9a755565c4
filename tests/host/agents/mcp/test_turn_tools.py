"""An agent's MCP tools in a turn: every call gated unless an admin let it run unasked (the
server's hints never decide), results labelled and capped, images passed (where a provider
takes them) and described, failures answered to the model as failed calls."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import types

from server.host.agents.mcp.connections import McpConnections, ServerTarget
from server.host.agents.mcp.turn_tools import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES,
    McpTurnTools,
    OfferedTool,
    tool_result,
)
from server.host.agents.providers.transcript import ImageBlock
from server.host.tools.results import MAX_RESULT_CHARS, serialize_result
from tests.host.agents.mcp.conftest import stdio_target
from tests.support.fakes.mcp_servers import PIXEL_PNG


@dataclass(frozen=True)
class Unchanged:
    """The servers as each call reads them again: here, as the turn found them."""

    target: ServerTarget

    async def current_target(self, team_id: str, server_id: str, agent_id: str) -> ServerTarget:
        assert (team_id, server_id) == (self.target.team_id, self.target.server_id)
        return self.target


async def offered(connections: McpConnections, tmp_path: Path, kind: str) -> McpTurnTools:
    target = stdio_target(kind, tmp_path)
    state = await connections.ready(target)
    assert state.status == "connected", state.reason
    return McpTurnTools(
        connections,
        {t.full_name: OfferedTool(target, t, t.name != "echo") for t in state.tools},
        "a" * 32,
        Unchanged(target),
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
    result = (await tools.call("mcp__notes__echo", {"text": "x" * 30_000})).result
    assert result["source"].startswith("data from the MCP server notes, outside the team")
    assert result["truncated"] is True
    assert len(serialize_result(result)) <= MAX_RESULT_CHARS


async def test_an_image_goes_with_the_result_and_is_described(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "image")
    answer = await tools.call("mcp__image__picture", {})
    assert answer.result["content"] == [
        {
            "type": "image",
            "image": 1,
            "description": f"an image (image/png, {len(PIXEL_PNG)} bytes), attached to this "
            "result as image 1",
        },
        {"type": "text", "text": "a one-pixel picture"},
    ]
    [image] = answer.images
    assert (image.media_type, base64.b64decode(image.data)) == ("image/png", PIXEL_PNG)
    assert image.sha256 == hashlib.sha256(PIXEL_PNG).hexdigest()


def test_only_a_few_small_images_of_known_types_go_as_images() -> None:
    png = base64.b64encode(PIXEL_PNG).decode()
    big = base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 1)).decode()
    blocks: list[types.ContentBlock] = [
        types.ImageContent(type="image", data=png, mime_type="image/bmp"),
        types.ImageContent(type="image", data=big, mime_type="image/jpeg"),
        types.ImageContent(type="image", data="not base64!", mime_type="image/gif"),
        types.AudioContent(type="audio", data=png, mime_type="audio/wav"),
    ]
    blocks += [
        types.ImageContent(type="image", data=png, mime_type="image/png")
        for _ in range(MAX_IMAGES + 1)
    ]
    images: list[ImageBlock] = []
    result = tool_result("camera", types.CallToolResult(content=blocks), images)
    assert len(images) == MAX_IMAGES
    said = [entry["description"] for entry in result["content"]]
    assert said[0].endswith("not shown (only png, jpeg, gif and webp are)")
    assert said[1].endswith("not shown (over 5 MB)")
    assert said[2].endswith("not shown (not valid base64)")
    assert said[3] == "audio (audio/wav), not played"
    assert said[4].endswith("attached to this result as image 1")
    assert said[-1].endswith(f"not shown (at most {MAX_IMAGES} images of a result are)")
    # A failed result shows no image.
    failed = types.CallToolResult(content=blocks[:1], is_error=True)
    assert "error" in tool_result("camera", failed, [])


async def test_a_failed_call_is_a_failed_result_naming_the_server(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "notes")
    refused = (await tools.call("mcp__notes__add_note", {"wrong": 1})).result
    assert refused["error"]["code"] == "toolFailed"
    assert refused["error"]["message"].startswith("notes: Error executing tool add_note")
    crashed = await offered(connections, tmp_path, "crash")
    gone = (await crashed.call("mcp__crash__crash", {})).result
    assert gone["error"]["message"].startswith("crash: the call failed: the server stopped")


async def test_a_result_that_breaks_the_protocol_is_a_failed_call_and_the_session_lives(
    connections: McpConnections, tmp_path: Path
) -> None:
    tools = await offered(connections, tmp_path, "malformed")
    for name in ("mcp__malformed__count", "mcp__malformed__blob"):
        failed = (await tools.call(name, {})).result
        assert failed["error"]["code"] == "toolFailed"
        assert failed["error"]["message"].startswith("malformed: the server's answer broke")
    echoed = (await tools.call("mcp__malformed__echo", {"text": "still here"})).result
    assert echoed["content"] == [{"type": "text", "text": "still here"}]


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
    result = (await tools.call("mcp__notes__limits", {})).result
    assert json.dumps(result["content"]).count("nonewprivs=1") == 1
    text = result["content"][0]["text"]
    assert f"cpu=3600 data={8 * 1024**3} files=256" in text


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

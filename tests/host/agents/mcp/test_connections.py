"""One live session per server: started when needed, its status announced, its faults
(a hang, garbage, a crash, too many tools) a status and never a crash of the host."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.mcp.connections import (
    McpCallFailed,
    McpConnections,
    ServerTarget,
)
from server.host.agents.mcp.stdio_egress import proxy_environment
from server.host.agents.mcp.stdio_transport import MAX_LINE_BYTES
from tests.host.agents.mcp.conftest import (
    TEAM,
    Heard,
    notes_over_http,
    processes_in,
    stdio_target,
)
from tests.support.fakes.mcp_servers import stdio_sandbox
from tests.support.ports import closed_port
from tests.support.waiting import eventually


async def test_a_stdio_server_starts_when_needed_and_answers_calls(
    connections: McpConnections, heard: Heard, tmp_path: Path
) -> None:
    target = stdio_target("notes", tmp_path, env={"NOTES_LABEL": "from-admin"})
    assert connections.state(TEAM, target.server_id).status == "idle"
    state = await connections.ready(target)
    assert state.status == "connected", state.reason
    assert heard.statuses(target.server_id) == ["starting", "connected"]
    names = {tool.full_name for tool in state.tools}
    assert {"mcp__notes__add_note", "mcp__notes__list_notes", "mcp__notes__echo"} <= names
    read_only = next(t for t in state.tools if t.name == "list_notes")
    assert read_only.hints == ("read-only",)
    assert "read-only" in read_only.description
    result = await connections.call(target, "echo", {"text": "hello"})
    assert result.content[0].text == "hello [from-admin]"  # type: ignore[union-attr]


async def test_a_stdio_server_has_an_empty_environment_and_its_own_folder(
    connections: McpConnections, tmp_path: Path
) -> None:
    target = stdio_target("notes", tmp_path, env={"NOTES_LABEL": "x"})
    result = await connections.call(target, "where", {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert f"cwd={tmp_path / 'mcp' / 'notes'}" in text
    # The admin's variables, PATH, HOME (its folder), PWD (the sandbox's) and the way to its
    # network's proxy; nothing of the host's (CREWHOST_*, the host's HOME, …). Python adds
    # LC_CTYPE where it coerces the C locale.
    names = set(text.rsplit("env=", 1)[1].split(",")) - {"LC_CTYPE"}
    assert names == {"HOME", "NOTES_LABEL", "PATH", "PWD", "PYTHONPATH", *proxy_environment()}


async def test_a_server_that_hangs_in_initialize_shows_an_error(
    heard: Heard, tmp_path: Path
) -> None:
    async with McpConnections(
        heard,
        policy=PublicOnlyPolicy(),
        start_seconds=1.0,
        stdio_teams=("*",),
        sandbox=stdio_sandbox(),
    ) as connections:
        state = await connections.ready(stdio_target("hang", tmp_path))
    assert state.status == "error"
    assert state.reason is not None
    assert "did not start within 1 s" in state.reason


async def test_a_server_that_writes_garbage_shows_an_error(
    connections: McpConnections, tmp_path: Path
) -> None:
    state = await connections.ready(stdio_target("garbage", tmp_path))
    assert state.status == "error"
    assert state.reason is not None
    assert "not JSON-RPC" in state.reason


async def test_ten_thousand_tools_are_refused(connections: McpConnections, tmp_path: Path) -> None:
    state = await connections.ready(stdio_target("many", tmp_path))
    assert state.status == "error"
    assert state.reason is not None
    assert "more than 1000 tools" in state.reason


async def test_a_schema_with_a_ref_cycle_is_not_offered(
    connections: McpConnections, tmp_path: Path
) -> None:
    state = await connections.ready(stdio_target("cycle", tmp_path))
    assert state.status == "connected"
    assert state.tools == ()
    assert len(state.problems) == 1
    assert state.problems[0].startswith("tree: its input schema has a $ref cycle")


async def test_a_crashed_server_says_so_and_starts_again(
    connections: McpConnections, heard: Heard, tmp_path: Path
) -> None:
    target = stdio_target("crash", tmp_path)
    with pytest.raises(McpCallFailed, match="exit status 3"):
        await connections.call(target, "crash", {})
    ended = await heard.status(target.server_id, "error")
    assert ended.reason is not None
    assert "the server stopped (exit status 3)" in ended.reason
    assert "starts again at the next use" in ended.reason
    # A turn starting within the backoff goes on without it; a call waits the backoff out.
    skipped = await connections.ready(target)
    assert (skipped.status, skipped.reason) == ("error", ended.reason)
    result = await connections.call(target, "echo", {"text": "back"})
    assert result.content[0].text == "back"  # type: ignore[union-attr]
    assert connections.state(TEAM, target.server_id).status == "connected"


async def test_a_changed_tool_list_is_picked_up(
    connections: McpConnections, heard: Heard, tmp_path: Path
) -> None:
    target = stdio_target("notes", tmp_path)
    before = await connections.ready(target)
    assert "grown" not in {t.name for t in before.tools}
    await connections.call(target, "grow", {})

    def grown() -> bool:
        return "grown" in {t.name for t in connections.state(TEAM, target.server_id).tools}

    from tests.support.waiting import eventually

    await eventually(grown)
    assert len(heard.statuses(target.server_id)) >= 3


async def test_an_idle_session_ends(heard: Heard, tmp_path: Path) -> None:
    async with McpConnections(
        heard,
        policy=PublicOnlyPolicy(),
        idle_seconds=0.2,
        stdio_teams=("*",),
        sandbox=stdio_sandbox(),
    ) as connections:
        target = stdio_target("notes", tmp_path)
        assert (await connections.ready(target)).status == "connected"
        await heard.status(target.server_id, "idle")
        # The next use starts it again.
        result = await connections.call(target, "list_notes", {})
        assert result.content[0].text == "(no notes)"  # type: ignore[union-attr]


async def test_leaving_ends_every_server_process(heard: Heard, tmp_path: Path) -> None:
    async with McpConnections(
        heard, policy=PublicOnlyPolicy(), stdio_teams=("*",), sandbox=stdio_sandbox()
    ) as connections:
        target = stdio_target("notes", tmp_path)
        await connections.call(target, "pid", {})
        assert processes_in(target)  # running
    await eventually(lambda: not processes_in(target))


async def test_a_child_the_server_left_behind_ends_with_its_session(
    heard: Heard, tmp_path: Path
) -> None:
    """The server ends at the end of its stdin; a process it started that would not is
    ended with it, as the rest of its process group."""
    async with McpConnections(
        heard, policy=PublicOnlyPolicy(), stdio_teams=("*",), sandbox=stdio_sandbox()
    ) as connections:
        target = stdio_target("notes", tmp_path)
        await connections.call(target, "spawn", {})
        assert "sleep" in processes_in(target).values()  # running
    await eventually(lambda: not processes_in(target))


async def test_a_call_that_takes_too_long_ends_at_its_timeout(
    connections: McpConnections, tmp_path: Path
) -> None:
    target = replace(stdio_target("notes", tmp_path), call_timeout=0.5)
    await connections.ready(target)
    with pytest.raises(McpCallFailed, match=r"did not answer within 0.5 s"):
        await connections.call(target, "slow", {"seconds": 30})


async def test_an_http_server_is_reached_when_its_address_is_allowed(
    connections: McpConnections, http_notes: str
) -> None:
    target = ServerTarget(
        TEAM, "srv-http", "remote", "http", 20.0, url=http_notes, headers={"X-Notes-Token": "t0k"}
    )
    state = await connections.ready(target)
    assert state.status == "connected", state.reason
    result = await connections.call(target, "add_note", {"text": "over http"})
    assert result.content[0].text.endswith(": over http")  # type: ignore[union-attr]
    result = await connections.call(target, "token", {})
    assert result.content[0].text == "t0k"  # type: ignore[union-attr]


async def test_a_server_of_the_older_sse_transport_is_reached(
    connections: McpConnections, sse_notes: str
) -> None:
    target = ServerTarget(
        TEAM, "srv-sse", "older", "http", 20.0, url=sse_notes, headers={"X-Notes-Token": "s5e"}
    )
    state = await connections.ready(target)
    assert state.status == "connected", state.reason
    result = await connections.call(target, "echo", {"text": "over sse"})
    assert result.content[0].text == "over sse [-]"  # type: ignore[union-attr]


@pytest.mark.parametrize("answers", ["json", "events"])
# The failed call's ping (is the server still there?) is deprecated in the SDK's newest
# revision, and warns; the host speaks the handshake revision, where it is the rule.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_an_http_answer_longer_than_a_message_may_be_fails_only_its_call(
    connections: McpConnections, json_notes: str, http_notes: str, answers: str
) -> None:
    url = json_notes if answers == "json" else http_notes
    target = ServerTarget(TEAM, f"srv-{answers}", "remote", "http", 20.0, url=url)
    # Longer than the SDK's own cap on an event (1 MiB), shorter than a message's.
    result = await connections.call(target, "big", {"size": 2_000_000})
    assert len(result.content[0].text) == 2_000_000  # type: ignore[union-attr]
    with pytest.raises(McpCallFailed, match=str(MAX_LINE_BYTES)):
        await connections.call(target, "big", {"size": MAX_LINE_BYTES + 1})
    # The session goes on.
    result = await connections.call(target, "echo", {"text": "still here"})
    assert result.content[0].text == "still here [-]"  # type: ignore[union-attr]
    assert connections.state(TEAM, target.server_id).status == "connected"


async def test_an_http_server_that_goes_away_shows_an_error_and_is_reached_again(
    connections: McpConnections, heard: Heard
) -> None:
    port = closed_port()
    target = ServerTarget(
        TEAM, "srv-gone", "gone", "http", 20.0, url=f"http://127.0.0.1:{port}/mcp"
    )
    async with notes_over_http(port):
        assert (await connections.ready(target)).status == "connected"
    with pytest.raises(McpCallFailed, match="the server stopped answering"):
        await connections.call(target, "list_notes", {})
    ended = await heard.status(target.server_id, "error")
    assert ended.reason is not None
    assert ended.reason.startswith("the server stopped answering")
    async with notes_over_http(port):
        result = await connections.call(target, "list_notes", {})
    assert result.content[0].text == "(no notes)"  # type: ignore[union-attr]


async def test_an_http_server_at_a_private_address_is_refused(
    heard: Heard, http_notes: str
) -> None:
    async with McpConnections(
        heard, policy=PublicOnlyPolicy(), stdio_teams=("*",), sandbox=stdio_sandbox()
    ) as connections:
        target = ServerTarget(TEAM, "srv-http", "remote", "http", 20.0, url=http_notes)
        state = await connections.ready(target)
    assert state.status == "error"
    assert state.reason is not None
    assert "address was refused" in state.reason


async def test_sessions_are_per_team(connections: McpConnections, tmp_path: Path) -> None:
    mine = stdio_target("notes", tmp_path)
    theirs = replace(mine, team_id="o" * 32)
    await connections.call(mine, "add_note", {"text": "mine"})
    result = await connections.call(theirs, "list_notes", {})
    assert result.content[0].text == "(no notes)"  # type: ignore[union-attr]


async def test_a_stdio_server_of_a_team_the_host_does_not_allow_never_starts(
    heard: Heard, tmp_path: Path
) -> None:
    target = stdio_target("notes", tmp_path)
    async with McpConnections(
        heard,
        policy=PublicOnlyPolicy.from_entries([]),
        stdio_teams=("another-team",),
        sandbox=stdio_sandbox(),
    ) as denied:
        assert not denied.allows_stdio(TEAM)
        state = await denied.ready(target)
    assert (state.status, state.code) == ("error", "mcpStdioNotAllowed")
    assert state.reason is not None
    assert "CREWHOST_HOST_MCP_STDIO_TEAMS" in state.reason
    assert "starts again" not in state.reason
    assert not (tmp_path / "mcp" / "notes").exists()  # no process ever made its folder

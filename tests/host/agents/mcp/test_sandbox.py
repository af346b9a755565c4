"""The sandbox a stdio MCP server runs in: it sees its own folder, the system's programs and
what the operator lists, never the host's data or processes; without the network it reaches
nothing on the host's loopback; a server it cannot run says why in its status."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.mcp.connections import McpConnections, ServerTarget
from server.host.agents.mcp.sandbox import NOBODY, StdioSandbox
from server.host.agents.mcp.stdio_transport import StdioCommand
from tests.host.agents.mcp.conftest import TEAM, Heard, processes_in, stdio_target
from tests.support.fakes.mcp_servers import SANDBOX_PATHS, stdio_sandbox


@asynccontextmanager
async def sandboxed(sandbox: StdioSandbox) -> AsyncIterator[McpConnections]:
    async with McpConnections(
        Heard(), policy=PublicOnlyPolicy(), stdio_teams=("*",), sandbox=sandbox
    ) as connections:
        yield connections


async def answer(
    connections: McpConnections, target: ServerTarget, tool: str, **args: object
) -> str:
    result = await connections.call(target, tool, dict(args))
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def never_started(sandbox: StdioSandbox, target: ServerTarget) -> str:
    """The reason ``target``'s status gives when it could not start; no process of it ran."""
    async with sandboxed(sandbox) as connections:
        state = await connections.ready(target)
        assert not processes_in(target)
    assert state.status == "error"
    assert state.reason is not None
    return state.reason


async def test_a_server_sees_its_own_folder_and_nothing_of_the_hosts_data(
    tmp_path: Path,
) -> None:
    # Another team's file beside the server's folder, as the host's data folder holds it.
    other = tmp_path / "workspace" / "team-b" / "notes.txt"
    other.parent.mkdir(parents=True)
    other.write_text("another team's notes")
    host_tmp = Path("/tmp") / f"crewhost-sandbox-test-{os.getpid()}"
    host_tmp.write_text("the machine's /tmp")
    target = stdio_target("notes", tmp_path)
    try:
        async with sandboxed(stdio_sandbox()) as connections:
            # Read from the host, the same file is there: the test sees it.
            assert other.read_text() == "another team's notes"
            assert await answer(connections, target, "peek", path=str(other)) == "absent"
            assert await answer(connections, target, "peek", path=str(tmp_path)) == "dir:mcp"
            assert await answer(connections, target, "peek", path=str(host_tmp)) == "absent"
            assert await answer(connections, target, "peek", path="/etc/shadow") == "absent"
            # Its own folder is its home and takes what it writes; the host reads it there.
            assert await answer(connections, target, "keep", name="kept.txt", text="mine") == "kept"
            assert (target.command.cwd / "kept.txt").read_text() == "mine"  # type: ignore[union-attr]
            # The system's programs, read-only.
            assert (await answer(connections, target, "peek", path="/usr/bin")).startswith("dir:")
            written = await answer(connections, target, "keep", name="/usr/bin/planted", text="x")
            assert written.startswith("refused:")
            # Nobody, seeing its own processes alone (the namespace's first process, the
            # server, and the children it runs), where the host's machine runs many.
            who = await answer(connections, target, "whoami")
            uid, gid, seen = (part.split("=")[1] for part in who.split())
            assert (int(uid), int(gid)) == (NOBODY, NOBODY)
            assert int(seen) <= 3 < len([e for e in os.listdir("/proc") if e.isdigit()])
    finally:
        host_tmp.unlink()


async def test_without_the_network_nothing_on_the_hosts_loopback_is_reached(
    tmp_path: Path,
) -> None:
    async def hello(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    listener = await asyncio.start_server(hello, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        async with sandboxed(stdio_sandbox()) as connections:
            target = stdio_target("notes", tmp_path / "with")
            assert await answer(connections, target, "dial", port=port) == "connected"
        async with sandboxed(stdio_sandbox(network=False)) as connections:
            target = stdio_target("notes", tmp_path / "without")
            assert (await answer(connections, target, "dial", port=port)).startswith("refused:")


async def test_a_command_outside_what_the_sandbox_shows_never_starts(tmp_path: Path) -> None:
    program = tmp_path / "tools" / "notes-server"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexec sleep 600\n")
    program.chmod(0o755)
    command = StdioCommand(
        "notes-server", (), {"PATH": str(program.parent)}, tmp_path / "mcp" / "outside"
    )
    target = ServerTarget(TEAM, "srv-outside", "outside", "stdio", 10.0, command=command)
    reason = await never_started(stdio_sandbox(), target)
    assert "outside what the stdio sandbox shows" in reason
    assert "host.mcp_stdio_paths" in reason


async def test_a_machine_without_the_sandbox_starts_no_server_and_says_why(
    tmp_path: Path,
) -> None:
    missing = StdioSandbox(tuple(Path(path) for path in SANDBOX_PATHS), bwrap=None)
    reason = await never_started(missing, stdio_target("notes", tmp_path / "missing"))
    assert "bubblewrap" in reason
    assert "host.mcp_stdio_sandbox" in reason
    # A folder the operator listed that is not there: bwrap's own words say so.
    absent = tmp_path / "no-such-runtime"
    broken = StdioSandbox((*missing.paths, absent))
    target = stdio_target("notes", tmp_path / "broken")
    reason = await never_started(broken, target)
    assert "the stdio sandbox could not start" in reason
    assert str(absent) in reason
    # The failure is not kept: once the folder is there, the next start runs.
    absent.mkdir()
    async with sandboxed(broken) as connections:
        assert await answer(connections, target, "echo", text="back") == "back [-]"


async def test_a_listed_folder_under_tmp_is_shown_read_only(tmp_path: Path) -> None:
    """The sandbox's own /tmp is mounted first: a folder the operator lists under the
    machine's /tmp (a checkout of a server's code) is shown on top of it."""
    listed = Path(tempfile.mkdtemp(prefix="crewhost-runtime-", dir="/tmp"))
    try:
        (listed / "version").write_text("runtime 1")
        sandbox = StdioSandbox((*(Path(path) for path in SANDBOX_PATHS), listed))
        target = stdio_target("notes", tmp_path)
        async with sandboxed(sandbox) as connections:
            shown = await answer(connections, target, "peek", path=str(listed / "version"))
            assert shown == "file:runtime 1"
            kept = await answer(connections, target, "keep", name=str(listed / "x"), text="x")
            assert kept.startswith("refused:")
    finally:
        shutil.rmtree(listed)

"""MCP sessions against the SDK servers of ``tests.support.fakes.mcp_servers``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from server.common.protocol.events import HostEvent, McpServerStatusChanged
from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.mcp.connections import McpConnections, ServerTarget
from server.host.agents.mcp.stdio_transport import StdioCommand
from tests.support.fakes.mcp_servers import stdio_command, stdio_sandbox
from tests.support.ports import closed_port, listening
from tests.support.waiting import eventually

TEAM = "t" * 32
ROOT = Path(__file__).resolve().parents[4]


@dataclass
class Heard:
    """The status events the connections announced, per team."""

    events: list[tuple[str, McpServerStatusChanged]] = field(default_factory=list)

    def __call__(self, team_id: str, event: HostEvent) -> None:
        if isinstance(event, McpServerStatusChanged):
            self.events.append((team_id, event))

    def statuses(self, server_id: str) -> list[str]:
        return [e.status for _, e in self.events if e.server_id == server_id]

    async def status(self, server_id: str, status: str) -> McpServerStatusChanged:
        def seen() -> bool:
            return any(e.server_id == server_id and e.status == status for _, e in self.events)

        await eventually(seen)
        return [e for _, e in self.events if e.server_id == server_id and e.status == status][-1]


def stdio_target(
    kind: str, tmp_path: Path, *, env: dict[str, str] | None = None, timeout: float = 20.0
) -> ServerTarget:
    command, args = stdio_command(kind)
    env = {"PYTHONPATH": str(ROOT), **(env or {})}
    spec = StdioCommand(command, tuple(args), env, tmp_path / "mcp" / kind)
    return ServerTarget(TEAM, f"srv-{kind}", kind, "stdio", timeout, command=spec)


@pytest.fixture
def heard() -> Heard:
    return Heard()


@pytest.fixture
async def connections(heard: Heard) -> AsyncIterator[McpConnections]:
    async with McpConnections(
        heard,
        policy=PublicOnlyPolicy.from_entries(["127.0.0.1"]),
        idle_seconds=600.0,
        start_seconds=20.0,
        stdio_teams=("*",),
        sandbox=stdio_sandbox(),
    ) as opened:
        yield opened


def _serve_notes(*extra: str) -> Iterator[str]:
    port = closed_port()
    process = subprocess.Popen(  # noqa: S603 - our own interpreter
        [sys.executable, "-m", "tests.support.fakes.mcp_servers", "notes", str(port), *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        asyncio.run(listening(port))
        yield f"http://127.0.0.1:{port}/{'sse' if 'sse' in extra else 'mcp'}"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def http_notes() -> Iterator[str]:
    """The notes server over Streamable HTTP on loopback; its address."""
    yield from _serve_notes()


@pytest.fixture(scope="module")
def json_notes() -> Iterator[str]:
    """The notes server over Streamable HTTP answering each request as one JSON body."""
    yield from _serve_notes("json")


@pytest.fixture(scope="module")
def sse_notes() -> Iterator[str]:
    """The notes server over the older HTTP+SSE transport on loopback; its address."""
    yield from _serve_notes("sse")


@contextlib.asynccontextmanager
async def notes_over_http(port: int) -> AsyncIterator[None]:
    """The notes server over Streamable HTTP on ``port`` while the block runs."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.fakes.mcp_servers",
        "notes",
        str(port),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await listening(port)
        yield
    finally:
        process.kill()
        await process.wait()


def processes_in(target: ServerTarget) -> dict[int, str]:
    """The machine's processes (pid: name) that work in ``target``'s folder and still run:
    its server, inside its sandbox or not, and what the server started. A zombie waiting
    for its parent to read it counts as ended."""
    assert target.command is not None
    folder = str(target.command.cwd)
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/cwd") != folder:
                continue
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                head, tail = stat.read().rsplit(")", 1)
        except OSError:
            continue
        if tail.split()[0] != "Z":
            found[int(entry)] = head.split("(", 1)[1]
    return found

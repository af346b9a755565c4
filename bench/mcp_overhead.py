"""MCP client benchmark: the host's overhead on an MCP tool call, stdio and Streamable HTTP.

Run from the repository root with the project venv::

    .venv/bin/python bench/mcp_overhead.py

(Not ``bench/mcp.py``: the scripts of ``bench/`` import their neighbours by bare name, so a
file called ``mcp`` there would hide the SDK's package.)

The server is the ``notes`` SDK server of the tests (``tests/support/fakes/mcp_servers.py``):
over stdio, started twice (once by the host's session manager, once by the SDK's own
stdio client), and over Streamable HTTP on a loopback port (both clients reach the same
process). Each round calls ``echo`` once through the host (``McpTurnTools.call``: the
session lookup, the SDK call, the result as the model reads it, labelled and capped) and
once directly with the SDK's ``Client``, in alternating order, ``--calls`` (500) rounds
after ``--warmup`` (50). The overhead is the host's p95 minus the direct p95, per
transport. Results are printed and written to ``bench/results/mcp_overhead.json``.

Goals: overhead p95 <= 5 ms (HTTP) and <= 3 ms (stdio). The exit status is 1 when a goal
is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from server.common.protocol.events import HostEvent  # noqa: E402
from server.common.public_addresses import PublicOnlyPolicy  # noqa: E402
from server.host.agents.mcp.connections import McpConnections, ServerTarget  # noqa: E402
from server.host.agents.mcp.stdio_transport import StdioCommand  # noqa: E402
from server.host.agents.mcp.turn_tools import McpTurnTools, OfferedTool  # noqa: E402
from tests.support.fakes.mcp_servers import stdio_command, stdio_sandbox  # noqa: E402
from tests.support.ports import closed_port  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "mcp_overhead.json"
GOALS_MS = {"stdio": 3.0, "http": 5.0}
TEAM = "b" * 32


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def _measure(
    tools: McpTurnTools, direct: Client, rounds: int, warmup: int
) -> dict[str, float]:
    host: list[float] = []
    sdk: list[float] = []
    arguments = {"text": "hello"}
    for n in range(rounds + warmup):
        pair = (
            lambda: tools.call("mcp__notes__echo", arguments),
            lambda: direct.call_tool("echo", arguments),
        )
        order = pair if n % 2 == 0 else pair[::-1]
        first = await _timed(order[0])
        second = await _timed(order[1])
        if n < warmup:
            continue
        host_time, sdk_time = (first, second) if n % 2 == 0 else (second, first)
        host.append(host_time)
        sdk.append(sdk_time)
    return {
        "host_p50_ms": _p(host, 50),
        "host_p95_ms": _p(host, 95),
        "direct_p50_ms": _p(sdk, 50),
        "direct_p95_ms": _p(sdk, 95),
        "overhead_p95_ms": _p(host, 95) - _p(sdk, 95),
    }


class _Unchanged:
    """The server as each call reads it again (the service reads its row; here it stays)."""

    def __init__(self, target: ServerTarget) -> None:
        self._target = target

    async def current_target(self, team_id: str, server_id: str, agent_id: str) -> ServerTarget:
        return self._target


async def _tools(connections: McpConnections, target: ServerTarget) -> McpTurnTools:
    state = await connections.ready(target)
    if state.status != "connected":
        raise SystemExit(f"{target.name}: {state.status}: {state.reason}")
    offered = {t.full_name: OfferedTool(target, t, asks=False) for t in state.tools}
    return McpTurnTools(connections, offered, "bench", _Unchanged(target))


async def main(args: argparse.Namespace) -> int:
    def ignore(_team_id: str, _event: HostEvent) -> None:
        return None

    command, argv = stdio_command("notes")
    env = {"PYTHONPATH": str(ROOT)}
    port = closed_port()
    http = await asyncio.create_subprocess_exec(
        command,
        *argv,
        str(port),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    results: dict[str, Any] = {"load_average": os.getloadavg()[0], "calls": args.calls}
    try:
        await _listening(port)
        async with McpConnections(
            ignore,
            policy=PublicOnlyPolicy.from_entries(["127.0.0.1"]),
            stdio_teams=("*",),
            sandbox=stdio_sandbox(),
        ) as connections:
            stdio_target = ServerTarget(
                TEAM,
                "stdio",
                "notes",
                "stdio",
                60.0,
                command=StdioCommand(command, tuple(argv), env, Path(tempfile.mkdtemp())),
            )
            http_target = ServerTarget(TEAM, "http", "notes", "http", 60.0, url=url)
            direct_stdio = Client(
                StdioServerParameters(command=command, args=argv, env=env, cwd=ROOT),
                mode="legacy",
                cache=None,
            )
            async with direct_stdio:
                tools = await _tools(connections, stdio_target)
                results["stdio"] = await _measure(tools, direct_stdio, args.calls, args.warmup)
            async with Client(url, mode="legacy", cache=None) as direct_http:
                tools = await _tools(connections, http_target)
                results["http"] = await _measure(tools, direct_http, args.calls, args.warmup)
    finally:
        http.terminate()
        await http.wait()
    missed = []
    for transport, goal in GOALS_MS.items():
        measured = results[transport]
        print(
            f"{transport:5}  host p50 {measured['host_p50_ms']:.2f} ms  p95 "
            f"{measured['host_p95_ms']:.2f} ms  direct p50 {measured['direct_p50_ms']:.2f} ms  "
            f"p95 {measured['direct_p95_ms']:.2f} ms  overhead p95 "
            f"{measured['overhead_p95_ms']:.2f} ms (goal <= {goal:g} ms)"
        )
        if measured["overhead_p95_ms"] > goal:
            missed.append(transport)
    print(f"load average {results['load_average']:.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 1 if missed else 0


async def _listening(port: int) -> None:
    async with asyncio.timeout(30):
        while True:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=500, help="measured rounds (500)")
    parser.add_argument("--warmup", type=int, default=50, help="rounds not measured (50)")
    return parser


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_parser().parse_args())))

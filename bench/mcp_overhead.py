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

Then the stdio sandbox's network (``host.mcp_stdio_network``): the same server started in a
sandbox with the host's own network and in one with the proxied network, ``--starts`` (5)
times each in turn, each start timed until the session is ready; then ``--fetches`` (200)
rounds of its ``fetch`` tool getting a page of a site on loopback, directly from the first
and through the host's proxy from the second, in alternating order. The proxy's cost is the
p95 of the second minus that of the first (printed, no goal).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import ipaddress
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
from tests.support.resolvers import TableResolver  # noqa: E402
from tests.support.sites import pages_app, serving  # noqa: E402

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
            stdio_target = _notes("stdio")
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
    results["sandbox_network"] = network = await _sandbox_network(args)
    print(
        f"stdio start in the sandbox, p50 of {args.starts}: host's network "
        f"{network['start_host_p50_ms']:.0f} ms, proxied {network['start_proxied_p50_ms']:.0f} ms"
    )
    print(
        f"fetch of a loopback page: direct p50 {network['direct_p50_ms']:.2f} ms  p95 "
        f"{network['direct_p95_ms']:.2f} ms  through the proxy p50 "
        f"{network['proxied_p50_ms']:.2f} ms  p95 {network['proxied_p95_ms']:.2f} ms  "
        f"the proxy's cost p95 {network['proxy_cost_p95_ms']:.2f} ms"
    )
    print(f"load average {results['load_average']:.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 1 if missed else 0


async def _sandbox_network(args: argparse.Namespace) -> dict[str, float]:
    """Starts and fetches of the notes server in a sandbox with the host's own network and
    in one whose way out is the host's proxy."""

    def ignore(_team_id: str, _event: HostEvent) -> None:
        return None

    async with serving(pages_app({"/page": "<p>a page</p>"})) as site:
        allowed = frozenset({(ipaddress.ip_address("127.0.0.1"), site.port)})
        urls = {"host": site.url("/page"), "proxied": f"http://site.test:{site.port}/page"}
        async with (
            McpConnections(
                ignore,
                policy=PublicOnlyPolicy(),
                stdio_teams=("*",),
                sandbox=stdio_sandbox(network="host"),
            ) as shared,
            McpConnections(
                ignore,
                policy=PublicOnlyPolicy(allowed_endpoints=allowed),
                resolver=TableResolver({"site.test": ["127.0.0.1"]}),
                stdio_teams=("*",),
                sandbox=stdio_sandbox(network="proxied"),
            ) as proxied,
        ):
            sandboxes = {"host": shared, "proxied": proxied}
            starts: dict[str, list[float]] = {"host": [], "proxied": []}
            tools: dict[str, McpTurnTools] = {}
            for n in range(args.starts):
                for kind, connections in sandboxes.items():
                    started = time.perf_counter()
                    tools[kind] = await _tools(connections, _notes(f"{kind}-{n}"))
                    starts[kind].append(time.perf_counter() - started)
            fetches: dict[str, list[float]] = {"host": [], "proxied": []}
            for n in range(args.fetches + args.warmup):
                for kind in ("host", "proxied") if n % 2 == 0 else ("proxied", "host"):
                    elapsed = await _timed(functools.partial(_fetch, tools[kind], urls[kind]))
                    if n >= args.warmup:
                        fetches[kind].append(elapsed)
    direct, through = fetches["host"], fetches["proxied"]
    return {
        "start_host_p50_ms": statistics.median(starts["host"]) * 1000,
        "start_proxied_p50_ms": statistics.median(starts["proxied"]) * 1000,
        "direct_p50_ms": _p(direct, 50),
        "direct_p95_ms": _p(direct, 95),
        "proxied_p50_ms": _p(through, 50),
        "proxied_p95_ms": _p(through, 95),
        "proxy_cost_p95_ms": _p(through, 95) - _p(direct, 95),
    }


def _notes(server_id: str) -> ServerTarget:
    """The notes server over stdio, in a folder of its own."""
    command, argv = stdio_command("notes")
    spec = StdioCommand(command, tuple(argv), {"PYTHONPATH": str(ROOT)}, Path(tempfile.mkdtemp()))
    return ServerTarget(TEAM, server_id, "notes", "stdio", 60.0, command=spec)


async def _fetch(tools: McpTurnTools, url: str) -> None:
    result = await tools.call("mcp__notes__fetch", {"url": url})
    if "200:" not in str(result):
        raise SystemExit(f"the fetch of {url} failed: {result}")


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
    parser.add_argument("--starts", type=int, default=5, help="sandbox starts of each kind (5)")
    parser.add_argument("--fetches", type=int, default=200, help="measured fetch rounds (200)")
    return parser


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_parser().parse_args())))

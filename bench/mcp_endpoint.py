"""MCP endpoint benchmark: a snapshot through /v1/mcp against the same tool in the host,
and many sessions at once calling list_tabs.

Run from the repository root with the project venv::

    .venv/bin/python bench/mcp_endpoint.py

A hub and its built-in host run in this process on a fresh SQLite database with a real
Chromium, as ``crewhost serve`` has them; the owner makes a personal access token and
the MCP SDK's own client talks to ``/v1/mcp`` over loopback HTTP.

* ``snapshot``: one session opens a local page of 1,000 elements (its ``open`` approved
  through the attention registry, as the member would); then ``--calls`` (200) rounds,
  each a ``snapshot`` through the endpoint (client → hub → link → host → SDK session →
  ``call_tool`` and back) and the same tool through ``call_tool`` in the host with the
  session's own context, side by side. The overhead is the endpoint's p95 less the
  host's p95.
* ``sessions``: in a client process of its own, ``--sessions`` (50) sessions open
  together, then ``--rounds`` (20)
  rounds in which every session calls ``list_tabs`` at the same moment; each call from
  the client's request to its result. Twice: first with a plain HTTP client (aiohttp,
  the Streamable HTTP wire by hand: the ``initialize`` handshake, the session header,
  a JSON or event-stream answer), whose own CPU time a call is a fraction of the
  server's, so the latencies are the endpoint's (the goal is read here); then with the
  MCP SDK's client, which on this machine takes more CPU a call than the server and so
  sets a round's pace itself. Beside each, the server process's CPU time over the phase
  (opening and closing the sessions included) per timed call: what the machine's other
  work does not change much; the part of it the garbage collector took
  (``gc.callbacks``); and the client process's CPU time over the timed rounds per call.
  As ``crewhost serve`` does once it has started, the server freezes what start-up made
  (``gc.freeze``), and so does the client process once its sessions are open: a full
  collection of the SDK client's 50 sessions took 150 ms, a stall of the load, not of
  the endpoint.

Latencies are n, p50, p95, p99 and max in milliseconds. Results are printed and written
to ``bench/results/mcp_endpoint.json``. Goals: snapshot overhead p95 <= 15 ms; 50
sessions' ``list_tabs`` p99 <= 50 ms. The exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp
import httpx2
from harness import percentile
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from server.host.browser.callers import Caller
from server.host.tools.catalog import call_tool
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.sites import pages_app, serving

RESULTS_FILE = Path(__file__).resolve().parent / "results" / "mcp_endpoint.json"
GOAL_OVERHEAD_P95_MS = 15.0
GOAL_SESSIONS_P99_MS = 50.0


def generated_page(elements: int) -> str:
    rows = [
        f"<div><span>Row {i}</span> <a href='#r{i}'>Link {i}</a> <button>Button {i}</button></div>"
        for i in range(elements // 4)
    ]
    return "<!doctype html><title>generated</title><body>" + "".join(rows) + "</body>"


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": round(percentile(ordered, 0.50), 2),
        "p95": round(percentile(ordered, 0.95), 2),
        "p99": round(percentile(ordered, 0.99), 2),
        "max": round(ordered[-1], 2) if ordered else 0.0,
    }


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


@asynccontextmanager
async def session(url: str, secret: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as opened,
    ):
        await opened.initialize()
        yield opened


async def approving(server: RunningHub, team_id: str, account_id: str, call: Awaitable[Any]) -> Any:
    """Run ``call`` and approve the consent it raises, as its member would."""
    attention = server.builtin.services.attention
    task = asyncio.ensure_future(call)
    while not task.done():
        for request in attention.list_requests(team_id, account_id):
            attention.answer(team_id, account_id, request.id, approve=True)
        await asyncio.sleep(0.01)
    return task.result()


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        async with (
            scratch_database("sqlite", folder) as database,
            serving(pages_app({"/page": generated_page(1_000)})) as site,
            running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
        ):
            if not args.no_gc_freeze:
                gc.freeze()  # as ``crewhost serve`` does once it has started
            if args.gc_threshold:
                gc.set_threshold(args.gc_threshold, *gc.get_threshold()[1:])
            owner = await server.sign_up_owner()
            team_id = await server.first_team_id(owner)
            assert owner.account_id is not None
            host_id = server.builtin.services.host_id
            made = await owner.post(
                f"/v1/teams/{team_id}/access-tokens", {"name": "bench", "hostId": host_id}
            )
            secret = made.body["secret"]
            url = server.url + "/v1/mcp"
            services = server.builtin.services

            async with session(url, secret) as first:
                opened = await approving(
                    server,
                    team_id,
                    owner.account_id,
                    first.call_tool("open", {"url": site.url("/page")}),
                )
                tab_id = json.loads(opened.content[0].text)["tabId"]
                engine = await services.browser.engine()
                owner_id = engine.get_tab(team_id, tab_id).owner_agent_id
                assert owner_id is not None
                context = await services.tool_contexts.for_outside_session(
                    team_id, Caller.agent(owner_id)
                )
                arguments = {"tabId": tab_id}
                for _ in range(10):  # warm-up
                    await first.call_tool("snapshot", arguments)
                    await call_tool(context, "snapshot", arguments)
                endpoint, host = [], []
                for _ in range(args.calls):
                    endpoint.append(await timed(lambda: first.call_tool("snapshot", arguments)))
                    host.append(await timed(lambda: call_tool(context, "snapshot", arguments)))

            # The clients run in a process of their own, so they do not share the server's
            # event loop (nor its CPU time) as the snapshot phase's one client does.
            phases = {
                kind: await sessions_phase(url, secret, kind, args.sessions, args.rounds)
                for kind in ("plain", "sdk")
            }
    snapshot_endpoint, snapshot_host = summary(endpoint), summary(host)
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            # Other work on the machine shares its CPUs: read the numbers with it.
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
        "snapshot": {
            "endpoint": snapshot_endpoint,
            "host": snapshot_host,
            "overhead_p95_ms": round(snapshot_endpoint["p95"] - snapshot_host["p95"], 2),
            "overhead_p50_ms": round(snapshot_endpoint["p50"] - snapshot_host["p50"], 2),
        },
        "sessions": {"sessions": args.sessions, **phases["plain"]},
        "sessions_sdk_client": phases["sdk"],
    }


async def sessions_phase(
    url: str, secret: str, client_kind: str, sessions: int, rounds: int
) -> dict[str, Any]:
    """The sessions phase with one kind of client, in a process of its own: latencies,
    and the CPU time of both sides per timed call."""
    cpu_before = time.process_time()
    collecting = GcTime()
    gc.callbacks.append(collecting.heard)
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--client",
        url,
        "--client-kind",
        client_kind,
        "--sessions",
        str(sessions),
        "--rounds",
        str(rounds),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await client.communicate(secret.encode() + b"\n")
    server_cpu = time.process_time() - cpu_before
    gc.callbacks.remove(collecting.heard)
    clients = json.loads(out)
    together = clients["samples"]
    calls = max(len(together), 1)
    return {
        "client": client_kind,
        "list_tabs": summary(together),
        "server_cpu_ms_per_call": round(server_cpu * 1000 / calls, 2),
        "client_cpu_ms_per_call": round(clients["client_cpu_ms_per_call"], 2),
        "server_gc_ms_per_call": round(collecting.seconds * 1000 / calls, 2),
        "collections": collecting.counts,
        "gc_ms_by_generation": [round(ms, 1) for ms in collecting.by_generation_ms],
    }


class GcTime:
    """The time the garbage collector takes while it is listened to, and its collections
    by generation."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.counts = [0, 0, 0]
        self.by_generation_ms = [0.0, 0.0, 0.0]
        self._started = 0.0

    def heard(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            took = time.perf_counter() - self._started
            self.seconds += took
            self.counts[info["generation"]] += 1
            self.by_generation_ms[info["generation"]] += took * 1000


class PlainSession:
    """An MCP session over plain HTTP: what a client must do on the wire and no more."""

    HEADERS = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Mcp-Protocol-Version": "2025-11-25",
    }

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self._http = http
        self._url = url
        self._headers = dict(self.HEADERS)
        self._ids = 0

    async def initialize(self) -> None:
        await self._request(
            "initialize",
            {
                "protocolVersion": self.HEADERS["Mcp-Protocol-Version"],
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self._http.post(self._url, json=ready, headers=self._headers) as told:
            told.raise_for_status()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self._request("tools/call", {"name": name, "arguments": arguments})

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        async with self._http.post(self._url, json=body, headers=self._headers) as answer:
            answer.raise_for_status()
            if "mcp-session-id" in answer.headers:
                self._headers["Mcp-Session-Id"] = answer.headers["mcp-session-id"]
            if answer.content_type == "application/json":
                message = await answer.json()
            else:  # an event stream: the event that answers this request
                lines = (await answer.text()).splitlines()
                found = [line[5:].strip() for line in lines if line.startswith("data:")]
                data = [json.loads(text) for text in found if text]
                [message] = [m for m in data if m and m.get("id") == self._ids]
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message["result"]


@asynccontextmanager
async def plain_session(url: str, secret: str) -> AsyncIterator[PlainSession]:
    headers = {"Authorization": f"Bearer {secret}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        opened = PlainSession(http, url)
        await opened.initialize()
        yield opened


async def sessions_at_once(
    url: str, secret: str, client_kind: str, count: int, rounds: int
) -> dict[str, Any]:
    """``count`` sessions open together; ``rounds`` times each calls list_tabs at once: the
    latencies, and the client process's CPU time per timed call."""
    async with AsyncExitStack() as stack:
        # Opened one by one: each client's task group ends in the task that began it.
        sessions: list[ClientSession | PlainSession] = []
        for _ in range(count):
            if client_kind == "plain":
                sessions.append(await stack.enter_async_context(plain_session(url, secret)))
            else:
                sessions.append(await stack.enter_async_context(session(url, secret)))
        await asyncio.gather(*(s.call_tool("list_tabs", {}) for s in sessions))
        gc.freeze()
        together: list[float] = []
        cpu_before = time.process_time()
        for _ in range(rounds):
            together.extend(await asyncio.gather(*(list_tabs_timed(s) for s in sessions)))
        cpu = time.process_time() - cpu_before
    return {"samples": together, "client_cpu_ms_per_call": cpu * 1000 / max(len(together), 1)}


async def list_tabs_timed(opened: ClientSession | PlainSession) -> float:
    started = time.perf_counter()
    await opened.call_tool("list_tabs", {})
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--no-gc-freeze", action="store_true", help="leave start-up's objects to the collector"
    )
    parser.add_argument(
        "--gc-threshold", type=int, metavar="N", help="the collector's first threshold (700)"
    )
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--client-kind", choices=("plain", "sdk"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:  # the sessions phase's clients: the secret on stdin, samples on stdout
        secret = sys.stdin.readline().strip()
        samples = asyncio.run(
            sessions_at_once(args.client, secret, args.client_kind, args.sessions, args.rounds)
        )
        print(json.dumps(samples))
        return 0
    results = asyncio.run(bench(args))
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(results, indent=2) + "\n")
    snapshot, sessions = results["snapshot"], results["sessions"]
    sdk = results["sessions_sdk_client"]
    print(f"snapshot through /v1/mcp   {snapshot['endpoint']}")
    print(f"snapshot in the host       {snapshot['host']}")
    print(
        f"overhead                   p50 {snapshot['overhead_p50_ms']} ms, "
        f"p95 {snapshot['overhead_p95_ms']} ms (goal <= {GOAL_OVERHEAD_P95_MS})"
    )
    met = (
        snapshot["overhead_p95_ms"] <= GOAL_OVERHEAD_P95_MS
        and sessions["list_tabs"]["p99"] <= GOAL_SESSIONS_P99_MS
    )
    for phase, client in ((sessions, "a plain HTTP client"), (sdk, "the MCP SDK's client")):
        print(f"{sessions['sessions']} sessions' list_tabs, {client}:")
        goal = f" (goal p99 <= {GOAL_SESSIONS_P99_MS})" if phase is sessions else ""
        print(f"  latency ms                 {phase['list_tabs']}{goal}")
        print(f"  server CPU per call        {phase['server_cpu_ms_per_call']} ms")
        print(f"  client CPU per call        {phase['client_cpu_ms_per_call']} ms")
        print(
            f"  of the server's, collector {phase['server_gc_ms_per_call']} ms "
            f"(collections by generation {phase['collections']}, "
            f"ms {phase['gc_ms_by_generation']})"
        )
    print(f"load average               {results['machine']['load_average']}")
    print("goals met" if met else "goal missed")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""Soak of one host: 1,000 peer connections and 200 live views that come and go.

Run from the repository root with the project venv::

    .venv/bin/python bench/soak.py                # 1,000 connections, 200 views
    .venv/bin/python bench/soak.py --cycles 100 --views 20

It starts ``crewhost serve`` as a separate process on a free loopback port with a
fresh data folder (the hub and its built-in host in one process) and signs up the
owner. This process is the member: every peer is a real aiortc ``RTCPeerConnection``.

* ``connections``: ``--cycles`` times, a new peer connects (ticket, offer, signed
  answer, ``team-api`` open), calls ``capabilities`` and closes; ``--parallel``
  workers do so at once.
* ``views``: on one connection, a tab (a small page this process serves on loopback,
  which the host's browser is let reach) is watched ``--views`` times: the ``view:``
  channel opens, a frame arrives, the channel closes.

Before (after one warm-up round of each, which starts Chromium) and after, once the
host has forgotten the last peer and view (a bounded wait), it reads the server
process's open file descriptors, threads and resident memory from ``/proc``, and its
asyncio tasks and the sizes of the host's tables (peers, channels, Team API sessions
and calls, views, screencasts, background tasks, revocations, ticket nonces) from
``/metrics``; once a second while the cycles run it also notes the most of each.
Tolerance: fds +-8, threads +-2, tasks +-5, RSS +40 MiB, and every
table back to its size before; ticket nonces are kept until their ticket would have
expired (60 s), so they are reported, not held to zero growth. PASS or FAIL is
printed; results go to ``bench/results/soak.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from harness import create_accounts, member_email, read_setup_code, start_server, stop_server
from harness import wait_healthy as wait_server_healthy
from peers import Member, builtin_host_id, sign_in
from prometheus_client.parser import text_string_to_metric_families

from peer.connection import connect_to_host
from peer.live_view import open_view

RESULTS_FILE = Path(__file__).resolve().parent / "results" / "soak.json"
TOLERANCE = {"fds": 8, "threads": 2, "asyncio_tasks": 5, "rss_mib": 40}
BOUNDED_BY_EXPIRY = {"ticket_nonces"}
SETTLE_SECONDS = 60.0
MIB = 1024 * 1024
PAGE = (
    "<!doctype html><title>soak</title><div id=n></div>"
    "<script>let n=0;setInterval(()=>{document.getElementById('n').textContent=n++},100)</script>"
)


@dataclass(frozen=True)
class Resources:
    fds: int
    threads: int
    rss_mib: float
    asyncio_tasks: int
    tables: dict[str, int]


def proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


async def scrape(session: aiohttp.ClientSession, base: str) -> dict[str, dict[str, float]]:
    """The ``/metrics`` gauges this soak reads: {family: {label value or "": value}}."""
    async with session.get(base + "/metrics") as response:
        text = await response.text()
    wanted = {"crewhost_host_table_entries", "crewhost_asyncio_tasks"}
    found: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(text):
        if family.name in wanted:
            found[family.name] = {
                next(iter(s.labels.values()), ""): s.value for s in family.samples
            }
    return found


async def resources(session: aiohttp.ClientSession, base: str, pid: int) -> Resources:
    metrics = await scrape(session, base)
    status = proc_status(pid)
    return Resources(
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(status["Threads"]),
        rss_mib=round(int(status["VmRSS"].split()[0]) * 1024 / MIB, 1),
        asyncio_tasks=int(metrics["crewhost_asyncio_tasks"][""]),
        tables={name: int(size) for name, size in metrics["crewhost_host_table_entries"].items()},
    )


def settled(tables: dict[str, int]) -> bool:
    return not any(
        tables.get(name) for name in ("peers", "views", "screencasts", "peer_tasks", "view_tasks")
    )


async def settle(session: aiohttp.ClientSession, base: str, pid: int) -> Resources:
    """The figures once the host holds no peer, view or task of them (or at the bound)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        figures = await resources(session, base, pid)
        if settled(figures.tables) or time.monotonic() > deadline:
            return figures
        await asyncio.sleep(0.25)


async def sample_peaks(
    session: aiohttp.ClientSession, base: str, pid: int, peaks: dict[str, float]
) -> None:
    """The most of each figure seen while the cycles run, once a second, into ``peaks``."""
    while True:
        figures = await resources(session, base, pid)
        flat = {**{k: v for k, v in asdict(figures).items() if k != "tables"}, **figures.tables}
        for name, size in flat.items():
            peaks[name] = max(peaks.get(name, size), size)
        await asyncio.sleep(1.0)


async def connection_cycles(member: Member, host_id: str, cycles: int, parallel: int) -> float:
    """Connect, call, close ``cycles`` times over ``parallel`` workers; answers seconds taken."""
    numbers = itertools.count()

    async def worker() -> None:
        while next(numbers) < cycles:
            connection = await connect_to_host(
                member.hub, member.team_id, host_id, member.known_hosts, member.account_id
            )
            try:
                await connection.call("capabilities")
            finally:
                await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(parallel)))
    return time.perf_counter() - started


async def view_cycles(member: Member, host_id: str, tab_id: str, views: int) -> float:
    """Open a view, take one frame, close it, ``views`` times on one connection."""
    connection = await connect_to_host(
        member.hub, member.team_id, host_id, member.known_hosts, member.account_id
    )
    started = time.perf_counter()
    try:
        for _ in range(views):
            view = await open_view(connection, tab_id)
            await asyncio.wait_for(view.next_frame(), 30)
            view.close()
    finally:
        await connection.close()
    return time.perf_counter() - started


def verdict(before: Resources, after: Resources) -> dict[str, Any]:
    checks: dict[str, dict[str, Any]] = {}
    for name, allowed in TOLERANCE.items():
        change = getattr(after, name) - getattr(before, name)
        met = change <= allowed if name == "rss_mib" else abs(change) <= allowed
        checks[name] = {"change": round(change, 1), "tolerance": allowed, "met": met}
    for table, size in after.tables.items():
        if table in BOUNDED_BY_EXPIRY:
            continue
        change = size - before.tables.get(table, 0)
        checks[f"table {table}"] = {"change": change, "tolerance": 0, "met": change == 0}
    return {"checks": checks, "pass": all(c["met"] for c in checks.values())}


async def serve_page() -> tuple[web.AppRunner, str]:
    async def page(_request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/"


async def soak(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    data_dir, peers_dir = folder / "server", folder / "peers"
    data_dir.mkdir()
    peers_dir.mkdir()
    page_runner, page_url = await serve_page()
    env = {**os.environ, "CREWHOST_HOST_BROWSER_ALLOWED_HOSTS": "127.0.0.1"}
    server = start_server(data_dir, env)
    try:
        await wait_server_healthy(server)
        await create_accounts(server.base, await read_setup_code(server), 1)
        member = await sign_in(server.base, member_email(0), peers_dir)
        pid = server.process.pid
        async with aiohttp.ClientSession() as session:
            try:
                host_id = await builtin_host_id(member)
                # One round of each first: Chromium starts and every lazy part is made.
                await connection_cycles(member, host_id, 2 * args.parallel, args.parallel)
                tab_connection = await connect_to_host(
                    member.hub, member.team_id, host_id, member.known_hosts, member.account_id
                )
                tab = await tab_connection.call(
                    "browser-control-v1/new_tab", {"url": page_url}, wait_seconds=120
                )
                await tab_connection.close()
                tab_id = str(tab["id"])
                await view_cycles(member, host_id, tab_id, 2)
                before = await settle(session, server.base, pid)
                peaks: dict[str, float] = {}
                sampler = asyncio.ensure_future(sample_peaks(session, server.base, pid, peaks))
                connect_seconds = await connection_cycles(
                    member, host_id, args.cycles, args.parallel
                )
                view_seconds = await view_cycles(member, host_id, tab_id, args.views)
                sampler.cancel()
                after = await settle(session, server.base, pid)
            finally:
                await member.hub.close()
    finally:
        stop_server(server)
        await page_runner.cleanup()
    return {
        "cycles": args.cycles,
        "parallel": args.parallel,
        "views": args.views,
        "connection_cycles_per_second": round(args.cycles / connect_seconds, 1),
        "view_cycles_per_second": round(args.views / view_seconds, 1),
        "peaks_during_run": peaks,
        "before": asdict(before),
        "after": asdict(after),
        **verdict(before, after),
    }


def print_report(report: dict[str, Any]) -> None:
    before, after = report["before"], report["after"]
    print(
        f"{report['cycles']} connect -> call -> close cycles ({report['parallel']} at once, "
        f"{report['connection_cycles_per_second']}/s), {report['views']} view open/close "
        f"cycles ({report['view_cycles_per_second']}/s); load average "
        f"{report['load_average_before']} -> {report['load_average_after']}"
    )
    print(f"{'':28}{'before':>10}{'after':>10}{'change':>10}{'tolerance':>11}  verdict")
    for name, check in report["checks"].items():
        key = name.removeprefix("table ")
        was = before["tables"].get(key) if name.startswith("table ") else before[name]
        now = after["tables"].get(key) if name.startswith("table ") else after[name]
        print(
            f"{name:28}{was:>10}{now:>10}{check['change']:>10}{check['tolerance']:>11}  "
            f"{'ok' if check['met'] else 'OVER'}"
        )
    for table in sorted(BOUNDED_BY_EXPIRY):
        print(
            f"{'table ' + table:28}{before['tables'][table]:>10}{after['tables'][table]:>10}"
            "  (forgotten as tickets expire)"
        )
    peaks = report["peaks_during_run"]
    print("most while running: " + ", ".join(f"{k} {v}" for k, v in sorted(peaks.items())))
    print("PASS" if report["pass"] else "FAIL")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000, help="peer connections (1000)")
    parser.add_argument("--views", type=int, default=200, help="view open/close cycles (200)")
    parser.add_argument("--parallel", type=int, default=4, help="connections at once (4)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = [round(load, 2) for load in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="crewhost-soak-") as folder:
        report = asyncio.run(soak(args, Path(folder)))
    report["load_average_before"] = load_before
    report["load_average_after"] = [round(load, 2) for load in os.getloadavg()]
    print_report(report)
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())

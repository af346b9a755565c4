"""Webhook ingest on a real hub: signed deliveries checked and stored, on SQLite and PostgreSQL.

Run from the repository root with the project venv::

    .venv/bin/python bench/hook_ingest.py --seconds 10
    .venv/bin/python bench/hook_ingest.py --seconds 10 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test

For each database (SQLite, and PostgreSQL with ``--database-url``: a fresh database
``crewhost_bench_<pid>`` made for the run and dropped after it) this starts
``crewhost serve`` as its own process on a free loopback port, adds one webhook trigger
per client to the hub's table of hooks (as a host's link registers them; the host they
name is not linked, so every delivery stays stored and pending, as for a host that is
away), and then runs two phases with ``--clients`` keep-alive clients (one request in
flight each) in a separate process:

* ``healthz``: ``GET /healthz``, one ``SELECT 1``: the baseline of the same server;
* ``hooks``: ``POST /v1/hooks/{hookId}``, each request a new delivery (its own
  ``webhook-id``) signed with the ``standardwebhooks`` package before the clock starts:
  the hub looks the hook up, checks the timestamp and the signature, and commits the
  delivery before it answers 202.

The per-hook rate limit is raised (``CREWHOST_HUB_HOOK_BURST``) so the clients measure
the ingest path, not the limit. After the phase the stored deliveries are counted:
every 202 must be a row. Results are printed, with the load average, and written to
``bench/results/hook_ingest.json``.

Goal: >= 1,000 deliveries/s with p99 <= 50 ms on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import sqlalchemy as sa
from harness import percentile, start_server, stop_server, wait_healthy
from http_load import ClientPlan, WorkerResult, _Client, _run
from hub_http import _cpu_seconds, postgres_database, server_env
from sqlalchemy.ext.asyncio import create_async_engine
from standardwebhooks.webhooks import Webhook

from server.common.protocol.hooks import new_secret
from server.common.tokens import new_id
from server.db.tables import hub_hook_deliveries, hub_hooks

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "hook_ingest.json"
BODY = json.dumps(
    {"type": "build.finished", "timestamp": "2026-12-03T20:00:00Z", "data": {"id": 1, "ok": True}}
).encode()
GOAL_RATE = 1000.0
GOAL_P99_MS = 50.0


@dataclass
class PhaseResult:
    database: str
    phase: str
    clients: int
    requests: int
    per_second: float
    p50_ms: float
    p99_ms: float
    statuses: dict[int, int]
    client_cpu_seconds: float
    server_cpu_seconds: float
    per_server_cpu_second: float
    stored: int | None
    load_average: str


class _SequenceClient(_Client):
    """A client that sends the next of its pre-encoded requests each time."""

    def __init__(self, requests: list[bytes], latencies: list[float], statuses: Counter[int]):
        super().__init__(requests[0], latencies, statuses)
        self._requests = iter(requests)

    def _send(self) -> None:
        self._request = next(self._requests)
        super()._send()


def _signed_requests(base: str, hook_id: str, secret: str, count: int) -> list[bytes]:
    where = urlsplit(base)
    host = f"{where.hostname}:{where.port}"
    signer = Webhook(secret)
    text = BODY.decode()
    made = []
    for _ in range(count):
        webhook_id = "msg_" + new_id()
        now = datetime.now(tz=UTC)
        plan = ClientPlan(
            "POST",
            f"/v1/hooks/{hook_id}",
            {
                "Content-Type": "application/json",
                "webhook-id": webhook_id,
                "webhook-timestamp": str(int(now.timestamp())),
                "webhook-signature": signer.sign(webhook_id, now, text),
            },
            BODY,
        )
        made.append(plan.encode(host))
    return made


async def _run_signed_clients(
    base: str, hooks: Sequence[tuple[str, str]], seconds: float, per_client: int
) -> WorkerResult:
    where = urlsplit(base)
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    clients: list[_SequenceClient] = []
    for hook_id, secret in hooks:
        requests = _signed_requests(base, hook_id, secret, per_client)
        _, client = await loop.create_connection(
            functools.partial(_SequenceClient, requests, latencies, statuses),
            where.hostname or "127.0.0.1",
            where.port or 80,
        )
        clients.append(client)
    try:
        await asyncio.gather(*(client.ready for client in clients))
        started, cpu_started = time.perf_counter(), time.process_time()
        for client in clients:
            client.run_until(started + seconds)
        await asyncio.gather(*(client.finished for client in clients))
        elapsed = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
    finally:
        for client in clients:
            client.close()
    return WorkerResult(latencies, dict(statuses), elapsed, 0.0, cpu_seconds)


def run_signed_worker(
    base: str, hooks: Sequence[tuple[str, str]], seconds: float, per_client: int
) -> WorkerResult:
    """Entry point of the client process."""
    return _run(_run_signed_clients(base, hooks, seconds, per_client))


def run_plain_worker(base: str, path: str, clients: int, seconds: float) -> WorkerResult:
    from http_load import run_worker

    return run_worker(base, [ClientPlan("GET", path)] * clients, time.time() + 1.0, seconds)


async def _add_hooks(database_url: str, host_id: str, count: int) -> list[tuple[str, str]]:
    engine = create_async_engine(database_url)
    made = [(new_id(), new_secret()) for _ in range(count)]
    try:
        async with engine.begin() as conn:
            await conn.execute(
                hub_hooks.insert(),
                [
                    {
                        "id": hook_id,
                        "team_id": "1" * 32,
                        "host_id": host_id,
                        "routine_id": "2" * 32,
                        "secret": secret,
                        "previous_secret": None,
                        "previous_until": None,
                        "filters": "{}",
                        "enabled": True,
                        "updated_at": time.time(),
                    }
                    for hook_id, secret in made
                ],
            )
    finally:
        await engine.dispose()
    return made


async def _count_deliveries(database_url: str) -> int:
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            return int(
                (
                    await conn.execute(sa.select(sa.func.count()).select_from(hub_hook_deliveries))
                ).scalar_one()
            )
    finally:
        await engine.dispose()


def _result(
    database: str,
    phase: str,
    clients: int,
    worker: WorkerResult,
    stored: int | None,
    server_cpu: float,
) -> PhaseResult:
    latencies = sorted(worker.latencies)
    return PhaseResult(
        database=database,
        phase=phase,
        clients=clients,
        requests=len(latencies),
        per_second=len(latencies) / worker.elapsed,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        statuses=worker.statuses,
        client_cpu_seconds=worker.cpu_seconds,
        server_cpu_seconds=server_cpu,
        per_server_cpu_second=len(latencies) / server_cpu if server_cpu else 0.0,
        stored=stored,
        load_average=" ".join(Path("/proc/loadavg").read_text().split()[:3]),
    )


def measure(database: str, database_url: str | None, args: argparse.Namespace) -> list[PhaseResult]:
    with tempfile.TemporaryDirectory(prefix="crewhost-hook-bench-") as folder:
        data_dir = Path(folder)
        env = server_env(database_url, None)
        env["CREWHOST_HUB_HOOK_BURST"] = "1000000000"
        server = start_server(data_dir, env)
        try:
            asyncio.run(wait_healthy(server))
            url = database_url or f"sqlite+aiosqlite:///{data_dir / 'crewhost.db'}"
            hooks = asyncio.run(_add_hooks(url, new_id(), args.clients))
            results = []
            with ProcessPoolExecutor(1) as pool:
                pid = server.process.pid
                cpu = _cpu_seconds(pid)
                plain = pool.submit(
                    run_plain_worker, server.base, "/healthz", args.clients, args.seconds
                ).result()
                cpu = _cpu_seconds(pid) - cpu
                results.append(_result(database, "healthz", args.clients, plain, None, cpu))
                per_client = int(args.max_rate * args.seconds / args.clients) + 2
                before = asyncio.run(_count_deliveries(url))
                # The signing before the clock starts is the client's: it costs the server
                # nothing, so its CPU here is the phase's, and a little idle time.
                cpu = _cpu_seconds(pid)
                signed = pool.submit(
                    run_signed_worker, server.base, hooks, args.seconds, per_client
                ).result()
                cpu = _cpu_seconds(pid) - cpu
                stored = asyncio.run(_count_deliveries(url)) - before
                results.append(_result(database, "hooks", args.clients, signed, stored, cpu))
            return results
        finally:
            stop_server(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument(
        "--max-rate",
        type=float,
        default=6000.0,
        help="requests per second to sign ahead for (a client stops when it runs out)",
    )
    parser.add_argument("--database-url", help="a PostgreSQL server to measure on as well")
    args = parser.parse_args()
    results = measure("SQLite", None, args)
    if args.database_url:
        with postgres_database(args.database_url) as url:
            assert url is not None
            results += measure("PostgreSQL", url, args)
    print(
        f"{'database':<11} {'phase':<8} {'clients':>7} {'req/s':>8} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'req/cpu-s':>9} {'stored':>7}  statuses  load"
    )
    for r in results:
        print(
            f"{r.database:<11} {r.phase:<8} {r.clients:>7} {r.per_second:>8.0f} {r.p50_ms:>7.1f} "
            f"{r.p99_ms:>7.1f} {r.per_server_cpu_second:>9.0f} "
            f"{r.stored if r.stored is not None else '-':>7}  "
            f"{dict(r.statuses)}  {r.load_average}"
        )
    for r in results:
        if r.phase == "hooks":
            met = r.per_second >= GOAL_RATE and r.p99_ms <= GOAL_P99_MS
            # Each client's first request opens its connection before the clock: stored too.
            complete = r.stored == r.statuses.get(202, 0) + r.clients
            print(
                f"{r.database}: goal (>= {GOAL_RATE:.0f}/s, p99 <= {GOAL_P99_MS:.0f} ms) "
                f"{'met' if met else 'NOT met'}; every 202 stored: {complete}"
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

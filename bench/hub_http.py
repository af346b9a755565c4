"""HTTP load benchmark of a real hub: sign-in, an authenticated GET, and a baseline route.

Run from the repository root with the project venv::

    .venv/bin/python bench/hub_http.py --seconds 10
    .venv/bin/python bench/hub_http.py --seconds 10 --client-processes 2
    .venv/bin/python bench/hub_http.py --database-url postgresql://postgres@127.0.0.1:5432/test

It starts ``crewhost serve`` as a separate process on a free loopback port with
a fresh data folder (SQLite by default; with ``--database-url`` a fresh
PostgreSQL database ``crewhost_bench_<pid>`` is created on that server and
dropped afterwards), signs up the first owner with the setup code the server
prints, invites 63 members so there are 64 accounts, and then runs three phases
of ``--seconds`` each, 64 concurrent clients in all (split over
``--client-processes`` processes, each with one aiohttp session):

* ``baseline``: ``GET /healthz``, the cheapest route of the same server (no
  authentication, but one small database read), to show the ceiling beside the
  authenticated GET;
* ``sign-in``: ``POST /v1/sessions`` with email and password (argon2id at the
  production cost, so this is deliberately slow);
* ``teams``: ``GET /v1/teams`` with a bearer token per client.

The sign-in rate limits are raised through ``CREWHOST_SECURITY_SIGNIN_*``
variables so that 64 clients on one loopback address are not refused; the
password hash cost stays at its defaults. Results are printed and written to
``bench/results/hub_http.json``.

Goal: the authenticated ``GET /v1/teams`` serves >= 3,000 requests/s with a p99
latency <= 25 ms on SQLite with 64 concurrent clients on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from harness import (
    CSRF_HEADER,
    PASSWORD,
    Server,
    create_accounts,
    member_email,
    percentile,
    read_setup_code,
    start_server,
    stop_server,
    wait_healthy,
)
from yarl import URL

from server.config import SecuritySettings

CLIENTS = 64
GOAL_REQUESTS_PER_SECOND = 3000.0
GOAL_P99_MS = 25.0
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "hub_http.json"
START_DELAY_SECONDS = 1.0
# Only the sign-in limits change; 64 clients share one loopback address.
RATE_LIMIT_OVERRIDES = {
    "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_BURST": "1000000",
    "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_REFILL_SECONDS": "0.001",
    "CREWHOST_SECURITY_SIGNIN_FAILURES_PER_ACCOUNT_BURST": "1000000",
    "CREWHOST_SECURITY_SIGNIN_FAILURES_ACCOUNT_WIDE_BURST": "1000000",
}


# --- the server under test -----------------------------------------------------------


def server_env(database_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(RATE_LIMIT_OVERRIDES)
    if database_url is not None:
        env["CREWHOST_DATABASE_URL"] = database_url
    return env


# --- a PostgreSQL database of our own ---------------------------------------------------


def _asyncpg_url(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


def bench_database_url(server_url: str, name: str) -> str:
    """The SQLAlchemy URL of database ``name`` on the server of ``server_url``."""
    url = URL(_asyncpg_url(server_url)).with_path(f"/{name}")
    return str(url).replace("postgresql://", "postgresql+asyncpg://", 1)


async def _admin_sql(server_url: str, statement: str) -> None:
    connection = await asyncpg.connect(_asyncpg_url(server_url))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def postgres_database(server_url: str | None) -> Iterator[str | None]:
    """A fresh database for the run (None: SQLite), dropped at the end."""
    if server_url is None:
        yield None
        return
    name = f"crewhost_bench_{os.getpid()}"
    asyncio.run(_admin_sql(server_url, f'CREATE DATABASE "{name}"'))
    try:
        yield bench_database_url(server_url, name)
    finally:
        asyncio.run(_admin_sql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- the load generator (runs in worker processes) -------------------------------------


@dataclass(frozen=True)
class ClientPlan:
    """What one client sends, over and over: a pre-encoded request."""

    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass
class WorkerResult:
    """What one client process measured."""

    latencies: list[float]
    statuses: dict[int, int]
    elapsed: float
    late_start: float


async def _client_loop(
    session: aiohttp.ClientSession, base: str, plan: ClientPlan, deadline: float
) -> tuple[list[float], Counter[int]]:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    url = base + plan.path
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        try:
            async with session.request(
                plan.method, url, headers=plan.headers, data=plan.body
            ) as response:
                await response.read()
                status = response.status
        except aiohttp.ClientError:
            status = 0  # no answer at all; counted as an error
        latencies.append(time.perf_counter() - started)
        statuses[status] += 1
    return latencies, statuses


async def _warm_up(session: aiohttp.ClientSession, base: str) -> None:
    """One untimed request, so each client's keep-alive connection is open before the clock."""
    async with session.get(base + "/healthz") as response:
        await response.read()


async def _run_clients(
    base: str, plans: Sequence[ClientPlan], start_at: float, seconds: float
) -> WorkerResult:
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(_warm_up(session, base) for _ in plans))
        late_start = max(0.0, time.time() - start_at)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        started = time.perf_counter()
        deadline = started + seconds
        outcomes = await asyncio.gather(
            *(_client_loop(session, base, plan, deadline) for plan in plans)
        )
        elapsed = time.perf_counter() - started
    latencies = [latency for per_client, _ in outcomes for latency in per_client]
    statuses: Counter[int] = Counter()
    for _, per_client in outcomes:
        statuses.update(per_client)
    return WorkerResult(latencies, dict(statuses), elapsed, late_start)


def run_worker(
    base: str, plans: Sequence[ClientPlan], start_at: float, seconds: float
) -> WorkerResult:
    """Entry point of a client process."""
    return asyncio.run(_run_clients(base, plans, start_at, seconds))


def _ready() -> bool:
    return True


# --- phases and numbers -------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    name: str
    route: str
    plans: list[ClientPlan]


@dataclass
class PhaseResult:
    name: str
    route: str
    requests: int
    errors: int
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    statuses: dict[str, int]
    late_start_ms: float


def summarise(phase: Phase, results: Sequence[WorkerResult]) -> PhaseResult:
    latencies = sorted(latency for result in results for latency in result.latencies)
    statuses: Counter[int] = Counter()
    for result in results:
        statuses.update(result.statuses)
    errors = sum(count for status, count in statuses.items() if not 200 <= status < 300)
    rate = sum(len(result.latencies) / result.elapsed for result in results if result.elapsed)
    return PhaseResult(
        name=phase.name,
        route=phase.route,
        requests=len(latencies),
        errors=errors,
        requests_per_second=round(rate, 1),
        p50_ms=round(percentile(latencies, 0.50) * 1000, 2),
        p99_ms=round(percentile(latencies, 0.99) * 1000, 2),
        statuses={str(status): count for status, count in sorted(statuses.items())},
        late_start_ms=round(max(result.late_start for result in results) * 1000, 1),
    )


def run_phase(
    pool: ProcessPoolExecutor, base: str, phase: Phase, processes: int, seconds: float
) -> PhaseResult:
    """Every process starts its share of the clients at the same wall-clock moment."""
    start_at = time.time() + START_DELAY_SECONDS
    shares = [phase.plans[index::processes] for index in range(processes)]
    futures = [pool.submit(run_worker, base, share, start_at, seconds) for share in shares]
    return summarise(phase, [future.result() for future in futures])


def build_phases(tokens: Sequence[str]) -> list[Phase]:
    # Sign-in has no token yet, so it carries the CSRF header as a browser's request would.
    json_type = {"Content-Type": "application/json", CSRF_HEADER: "1"}
    sign_ins = [
        ClientPlan(
            "POST",
            "/v1/sessions",
            json_type,
            json.dumps(
                {"email": member_email(index), "password": PASSWORD, "client": "peer"}
            ).encode(),
        )
        for index in range(len(tokens))
    ]
    teams = [ClientPlan("GET", "/v1/teams", {"Authorization": f"Bearer {t}"}) for t in tokens]
    return [
        Phase("baseline", "GET /healthz", [ClientPlan("GET", "/healthz")] * len(tokens)),
        Phase("sign-in", "POST /v1/sessions", sign_ins),
        Phase("teams", "GET /v1/teams", teams),
    ]


# --- report ---------------------------------------------------------------------------------


def describe_setup(args: argparse.Namespace) -> dict[str, Any]:
    security = SecuritySettings()
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "database": "PostgreSQL" if args.database_url else "SQLite (WAL, default)",
        "clients": CLIENTS,
        "client_processes": args.client_processes,
        "seconds_per_phase": args.seconds,
        "password_hash": {
            "time_cost": security.password_hash_time_cost,
            "memory_kib": security.password_hash_memory_kib,
            "parallelism": security.password_hash_parallelism,
            "note": "production defaults, not lowered",
        },
        "rate_limit_overrides": RATE_LIMIT_OVERRIDES,
    }


def goal_met(results: Sequence[PhaseResult]) -> bool:
    teams = next(result for result in results if result.name == "teams")
    return (
        teams.errors == 0
        and teams.requests_per_second >= GOAL_REQUESTS_PER_SECOND
        and teams.p99_ms <= GOAL_P99_MS
    )


def print_report(setup: dict[str, Any], results: Sequence[PhaseResult]) -> None:
    hashing = setup["password_hash"]
    print(f"machine: {setup['cores']} cores, Python {setup['python']}, aiohttp {setup['aiohttp']}")
    print(f"server: crewhost serve (separate process), database {setup['database']}")
    print(
        f"argon2id: time_cost={hashing['time_cost']} memory_kib={hashing['memory_kib']} "
        f"parallelism={hashing['parallelism']} ({hashing['note']})"
    )
    print("sign-in rate limits RAISED for this benchmark (not production values):")
    for name, value in setup["rate_limit_overrides"].items():
        print(f"    {name}={value}")
    print(
        f"load: {setup['clients']} concurrent clients in {setup['client_processes']} client "
        f"process(es), {setup['seconds_per_phase']} s per phase\n"
    )
    header = f"{'phase':<10} {'route':<19} {'requests':>9} {'errors':>7} {'req/s':>9}"
    print(header + f" {'p50 ms':>8} {'p99 ms':>8}")
    for r in results:
        print(
            f"{r.name:<10} {r.route:<19} {r.requests:>9} {r.errors:>7} "
            f"{r.requests_per_second:>9.1f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f}"
        )
    late = max(r.late_start_ms for r in results)
    if late > 0:
        print(f"(a client process started up to {late} ms late; each measured its own window)")
    verdict = "MET" if goal_met(results) else "NOT MET"
    print(
        f"\ngoal for GET /v1/teams: >= {GOAL_REQUESTS_PER_SECOND:,.0f} req/s and "
        f"p99 <= {GOAL_P99_MS:.0f} ms, no errors: {verdict}"
    )


def write_results(setup: dict[str, Any], results: Sequence[PhaseResult]) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "setup": setup,
        "goal": {
            "route": "GET /v1/teams",
            "requests_per_second": GOAL_REQUESTS_PER_SECOND,
            "p99_ms": GOAL_P99_MS,
            "met": goal_met(results),
        },
        "phases": [asdict(result) for result in results],
    }
    RESULTS_FILE.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results written to {RESULTS_FILE}")


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument(
        "--client-processes",
        type=int,
        default=1,
        help=f"processes the {CLIENTS} clients are split over",
    )
    parser.add_argument(
        "--database-url",
        help="a PostgreSQL server to run against (e.g. postgresql://postgres@127.0.0.1:5432/test)"
        "; a fresh database is created there and dropped afterwards. Default: SQLite.",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.client_processes <= CLIENTS:
        parser.error(f"--client-processes must be between 1 and {CLIENTS}")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    return args


async def prepare(server: Server) -> list[str]:
    await wait_healthy(server)
    code = await read_setup_code(server)
    return await create_accounts(server.base, code, CLIENTS)


def run_benchmark(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> None:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.client_processes, mp_context=context) as pool:
        # Start the client processes now, so their start-up is not in any phase.
        for future in [pool.submit(_ready) for _ in range(args.client_processes)]:
            future.result()
        server = start_server(data_dir, server_env(database_url))
        try:
            tokens = asyncio.run(prepare(server))
            print(f"server {server.base} ready; {len(tokens)} accounts signed up\n", flush=True)
            results = []
            for phase in build_phases(tokens):
                results.append(
                    run_phase(pool, server.base, phase, args.client_processes, args.seconds)
                )
        finally:
            stop_server(server)
    setup = describe_setup(args)
    print_report(setup, results)
    write_results(setup, results)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder,
        postgres_database(args.database_url) as database_url,
    ):
        run_benchmark(args, Path(folder), database_url)
    return 0


if __name__ == "__main__":
    sys.exit(main())

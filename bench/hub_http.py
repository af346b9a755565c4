"""HTTP load benchmark of a real hub: a database-bound GET, a cached GET, sign-in, health.

Run from the repository root with the project venv::

    .venv/bin/python bench/hub_http.py --seconds 10
    .venv/bin/python bench/hub_http.py --seconds 10 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test --before main
    .venv/bin/python bench/hub_http.py --phases sign-in --loops uvloop

Each configuration starts ``crewhost serve`` as a separate process on a free
loopback port with a fresh data folder, signs up the first owner with the setup
code the server prints and invites 63 members, so there are 64 accounts, and then
runs each phase for ``--seconds`` with 64 concurrent clients (one keep-alive
connection each, one request in flight), split over ``--client-processes``
processes:

* ``me``: ``GET /v1/me`` with a bearer token per client: the signed-in account,
  read from the database on every request (the session itself comes from the
  hub's session cache). The goal's route;
* ``teams``: ``GET /v1/teams``, answered from the hub's membership cache;
* ``healthz``: ``GET /healthz``, no authentication, one ``SELECT 1``;
* ``sign-in``: ``POST /v1/sessions`` (argon2id at the production cost, so
  deliberately slow; not run unless named in ``--phases``).

The configurations: every ``--loops`` entry (``crewhost serve --loop``) on SQLite,
and again on PostgreSQL with ``--database-url`` (a fresh database
``crewhost_bench_<pid>`` is created on that server for each run and dropped
afterwards). ``--before REV`` adds, first on each database, the code of git
revision ``REV`` (exported with ``git archive`` and put first on ``PYTHONPATH``,
with its own defaults), so a change is measured against what it changed, back to
back in one run.

The clients are raw asyncio protocols on uvloop (``bench/http_load.py``): each
request is encoded once, and an answer is read only as far as its
``Content-Length``. The CPU used by the server process and by the client
processes during each phase is printed beside the numbers, with the load average,
and the requests served per CPU-second of the server: on a loaded machine the
server gets only a share of a core, and that figure compares code fairly.

The sign-in rate limits are raised through ``CREWHOST_SECURITY_SIGNIN_*``
variables so that 64 clients on one loopback address are not refused; the
password hash cost stays at its defaults. Results are printed and written to
``bench/results/hub_http.json``.

Goal: ``GET /v1/me`` serves >= 4,000 requests/s with a p99 latency <= 25 ms, with
64 concurrent clients on a 2-core machine, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
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
from http_load import ClientPlan, WorkerResult, run_worker
from yarl import URL

from server.config import SecuritySettings

CLIENTS = 64
GOAL_ROUTE = "GET /v1/me"
GOAL_REQUESTS_PER_SECOND = 4000.0
GOAL_P99_MS = 25.0
ROOT = Path(__file__).resolve().parents[1]
RESULTS_FILE = ROOT / "bench" / "results" / "hub_http.json"
START_DELAY_SECONDS = 1.0
PHASES = ("me", "teams", "healthz", "sign-in")
DEFAULT_PHASES = ("me", "teams", "healthz")
LOOPS = ("asyncio", "uvloop")
# Only the sign-in limits change; 64 clients share one loopback address.
RATE_LIMIT_OVERRIDES = {
    "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_BURST": "1000000",
    "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_REFILL_SECONDS": "0.001",
    "CREWHOST_SECURITY_SIGNIN_FAILURES_PER_ACCOUNT_BURST": "1000000",
    "CREWHOST_SECURITY_SIGNIN_FAILURES_ACCOUNT_WIDE_BURST": "1000000",
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- what runs: code, loop and database -------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    """One server to measure: this tree or an exported revision, and its event loop."""

    name: str
    loop: str | None  # None: the revision's own default (it may have no --loop)
    source: Path | None  # an exported revision, or None for this tree


def server_env(database_url: str | None, source: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(RATE_LIMIT_OVERRIDES)
    if database_url is not None:
        env["CREWHOST_DATABASE_URL"] = database_url
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    return env


def export_revision(revision: str, into: Path) -> Path:
    """The files of ``revision`` in a folder of their own (``git archive``)."""
    into.mkdir(parents=True)
    archive = subprocess.run(  # noqa: S603 - fixed arguments, our own repository
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision],  # noqa: S607
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)  # noqa: S603, S607
    return into


def configurations(args: argparse.Namespace, work: Path) -> list[Configuration]:
    found = []
    if args.before:
        source = export_revision(args.before, work / "before")
        found.append(Configuration(f"before ({args.before})", None, source))
    found += [Configuration(loop, loop, None) for loop in args.loops]
    return found


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
    asyncio.run(_admin_sql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    asyncio.run(_admin_sql(server_url, f'CREATE DATABASE "{name}"'))
    try:
        yield bench_database_url(server_url, name)
    finally:
        asyncio.run(_admin_sql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- phases and numbers -------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    name: str
    route: str
    plans: list[ClientPlan]


@dataclass
class PhaseResult:
    database: str
    configuration: str
    name: str
    route: str
    requests: int
    errors: int
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    statuses: dict[str, int]
    late_start_ms: float
    server_cpu_percent: float
    requests_per_server_cpu_second: float
    client_cpu_percent: float
    load_average: str


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU of a process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def summarise(
    phase: Phase,
    results: Sequence[WorkerResult],
    server_cpu: float,
    where: tuple[str, str],
) -> PhaseResult:
    latencies = sorted(latency for result in results for latency in result.latencies)
    statuses: Counter[int] = Counter()
    for result in results:
        statuses.update(result.statuses)
    errors = sum(count for status, count in statuses.items() if not 200 <= status < 300)
    rate = sum(len(result.latencies) / result.elapsed for result in results if result.elapsed)
    elapsed = max(result.elapsed for result in results)
    return PhaseResult(
        database=where[0],
        configuration=where[1],
        name=phase.name,
        route=phase.route,
        requests=len(latencies),
        errors=errors,
        requests_per_second=round(rate, 1),
        p50_ms=round(percentile(latencies, 0.50) * 1000, 2),
        p99_ms=round(percentile(latencies, 0.99) * 1000, 2),
        statuses={str(status): count for status, count in sorted(statuses.items())},
        late_start_ms=round(max(result.late_start for result in results) * 1000, 1),
        server_cpu_percent=round(100 * server_cpu / elapsed, 1),
        requests_per_server_cpu_second=round(len(latencies) / server_cpu) if server_cpu else 0,
        client_cpu_percent=round(100 * sum(r.cpu_seconds for r in results) / elapsed, 1),
        load_average=_load_average(),
    )


def run_phase(
    pool: ProcessPoolExecutor,
    server: Server,
    phase: Phase,
    args: argparse.Namespace,
    where: tuple[str, str],
) -> PhaseResult:
    """Every process starts its share of the clients at the same wall-clock moment."""
    processes = args.client_processes
    start_at = time.time() + START_DELAY_SECONDS
    shares = [phase.plans[index::processes] for index in range(processes)]
    futures = [
        pool.submit(run_worker, server.base, share, start_at, args.seconds) for share in shares
    ]
    time.sleep(max(0.0, start_at - time.time()))
    cpu_before = _cpu_seconds(server.process.pid)
    results = [future.result() for future in futures]
    server_cpu = _cpu_seconds(server.process.pid) - cpu_before
    return summarise(phase, results, server_cpu, where)


def build_phases(names: Sequence[str], tokens: Sequence[str]) -> list[Phase]:
    bearer = [{"Authorization": f"Bearer {token}"} for token in tokens]
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
    every = {
        "me": Phase("me", "GET /v1/me", [ClientPlan("GET", "/v1/me", h) for h in bearer]),
        "teams": Phase(
            "teams", "GET /v1/teams", [ClientPlan("GET", "/v1/teams", h) for h in bearer]
        ),
        "healthz": Phase("healthz", "GET /healthz", [ClientPlan("GET", "/healthz")] * len(tokens)),
        "sign-in": Phase("sign-in", "POST /v1/sessions", sign_ins),
    }
    return [every[name] for name in names]


# --- report ---------------------------------------------------------------------------------


def describe_setup(args: argparse.Namespace) -> dict[str, Any]:
    security = SecuritySettings()
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "databases": ["SQLite"] + (["PostgreSQL"] if args.database_url else []),
        "before": args.before,
        "loops": list(args.loops),
        "clients": CLIENTS,
        "client": "raw asyncio protocols on uvloop (bench/http_load.py)",
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


def goal_met(results: Sequence[PhaseResult], database: str, configuration: str) -> bool | None:
    for r in results:
        if r.name == "me" and r.database == database and r.configuration == configuration:
            return (
                r.errors == 0
                and r.requests_per_second >= GOAL_REQUESTS_PER_SECOND
                and r.p99_ms <= GOAL_P99_MS
            )
    return None


def print_report(setup: dict[str, Any], results: Sequence[PhaseResult]) -> None:
    hashing = setup["password_hash"]
    print(
        f"\nmachine: {setup['cores']} cores, Python {setup['python']}, aiohttp {setup['aiohttp']}"
    )
    print("server: crewhost serve (separate process); client: " + setup["client"])
    print(
        f"argon2id: time_cost={hashing['time_cost']} memory_kib={hashing['memory_kib']} "
        f"parallelism={hashing['parallelism']} ({hashing['note']}); sign-in rate limits raised"
    )
    print(
        f"load: {setup['clients']} concurrent clients in {setup['client_processes']} client "
        f"process(es), {setup['seconds_per_phase']} s per phase\n"
    )
    header = f"{'route':<18} {'database':<10} {'server':<18} {'req/s':>9} {'p50 ms':>8}"
    print(
        header + f" {'p99 ms':>8} {'errors':>6} {'srv cpu':>7} {'req/cpu-s':>9} {'cli cpu':>7}"
        "  load avg"
    )
    for route in dict.fromkeys(r.route for r in results):
        for r in (r for r in results if r.route == route):
            print(
                f"{r.route:<18} {r.database:<10} {r.configuration:<18} "
                f"{r.requests_per_second:>9.1f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.errors:>6} "
                f"{r.server_cpu_percent:>6.0f}% {r.requests_per_server_cpu_second:>9.0f} "
                f"{r.client_cpu_percent:>6.0f}%  {r.load_average}"
            )
    late = max(r.late_start_ms for r in results)
    if late > 0:
        print(f"(a client process started up to {late} ms late; each measured its own window)")
    print(
        f"\ngoal for {GOAL_ROUTE}: >= {GOAL_REQUESTS_PER_SECOND:,.0f} req/s and "
        f"p99 <= {GOAL_P99_MS:.0f} ms, no errors:"
    )
    for database in setup["databases"]:
        for configuration in dict.fromkeys(r.configuration for r in results):
            met = goal_met(results, database, configuration)
            if met is not None:
                print(f"    {database:<10} {configuration:<18} {'MET' if met else 'NOT MET'}")


def write_results(setup: dict[str, Any], results: Sequence[PhaseResult]) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "setup": setup,
        "goal": {
            "route": GOAL_ROUTE,
            "requests_per_second": GOAL_REQUESTS_PER_SECOND,
            "p99_ms": GOAL_P99_MS,
        },
        "phases": [asdict(result) for result in results],
    }
    RESULTS_FILE.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results written to {RESULTS_FILE}")


# --- main -----------------------------------------------------------------------------------


def _names(value: str, allowed: Sequence[str]) -> tuple[str, ...]:
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(allowed)}")
    return names


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
        help="also run against this PostgreSQL server (e.g. "
        "postgresql://postgres@127.0.0.1:5432/test); a fresh database is created there for "
        "each run and dropped afterwards. SQLite always runs.",
    )
    parser.add_argument(
        "--phases",
        type=lambda value: _names(value, PHASES),
        default=DEFAULT_PHASES,
        help=f"comma-separated, from {', '.join(PHASES)} (default: {','.join(DEFAULT_PHASES)})",
    )
    parser.add_argument(
        "--loops",
        type=lambda value: _names(value, LOOPS),
        default=LOOPS,
        help="comma-separated event loops of the server (crewhost serve --loop)",
    )
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also measure the code of this git revision, first on each database",
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


def measure(
    pool: ProcessPoolExecutor,
    args: argparse.Namespace,
    configuration: Configuration,
    database: tuple[str, str | None],
    data_dir: Path,
) -> list[PhaseResult]:
    """One server: start it, make its accounts, run every phase, stop it."""
    extra = ["--loop", configuration.loop] if configuration.loop else []
    env = server_env(database[1], configuration.source)
    server = start_server(data_dir, env, extra)
    try:
        tokens = asyncio.run(prepare(server))
        print(
            f"{database[0]}, {configuration.name}: server ready, {len(tokens)} accounts",
            flush=True,
        )
        where = (database[0], configuration.name)
        return [
            run_phase(pool, server, phase, args, where)
            for phase in build_phases(args.phases, tokens)
        ]
    finally:
        stop_server(server)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    context = multiprocessing.get_context("spawn")
    results: list[PhaseResult] = []
    with (
        tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder,
        ProcessPoolExecutor(args.client_processes, mp_context=context) as pool,
    ):
        work = Path(folder)
        # Start the client processes now, so their start-up is not in any phase.
        for future in [pool.submit(time.time) for _ in range(args.client_processes)]:
            future.result()
        servers = configurations(args, work)
        databases: list[tuple[str, str | None]] = [("SQLite", None)]
        if args.database_url:
            databases.append(("PostgreSQL", args.database_url))
        for index, (label, server_url) in enumerate(databases):
            for number, configuration in enumerate(servers):
                with postgres_database(server_url) as database_url:
                    data_dir = work / f"data-{index}-{number}"
                    data_dir.mkdir(mode=0o700)
                    results += measure(pool, args, configuration, (label, database_url), data_dir)
    setup = describe_setup(args)
    print_report(setup, results)
    write_results(setup, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

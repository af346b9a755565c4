"""Usage benchmark: reports over 1,000,000 recorded model requests, and the cost of
recording one.

Run from the repository root with the project venv::

    .venv/bin/python bench/usage.py
    .venv/bin/python bench/usage.py --database-url postgresql://postgres@127.0.0.1:5432/test

For each database (SQLite by default; PostgreSQL in a fresh database of its own when a
server URL is given), in this process:

* setup: ``--requests`` (1,000,000) requests of one team spread over ``--days`` (90)
  days, across 12 agents, 10 members, 4 routines and 3 provider/model pairs, written
  straight into ``model_requests`` (bulk inserts; COPY on PostgreSQL) with the rollups
  they sum to, as recording would have left them;
* ``summary``: ``--calls`` (200) ``UsageService.summary`` calls after 10 for warm-up,
  cycling through the groupings a Usage screen asks for (by agent, member, model,
  routine, agent and model) over the last 30 days, each from the call to its answer;
* ``series``: as many ``UsageService.series`` calls over the 90 days stacked by agent;
* ``record``: ``--records`` (2,000) ``UsageService.record`` calls (each prices its
  request and keeps its row), written by ``flush`` every 20 (the rows and their rollup
  upserts in one transaction), after one burst for warm-up: the wall time of each call,
  the CPU time the event loop's own thread spent in it, the write's time per request of
  its burst, and their sum (``record_ms``), the cost of recording one request.

Results are printed and written to ``bench/results/usage.json``. Goals: summary and
series p95 <= 200 ms; a record p95 <= 1 ms. The exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from harness import percentile
from hub_http import postgres_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.common.clock import SystemClock  # noqa: E402
from server.common.roles import Role  # noqa: E402
from server.db.engine import Database  # noqa: E402
from server.db.tables import model_requests, usage_rollups  # noqa: E402
from server.host.agents.usage import RequestFor, UsageService, day_of  # noqa: E402
from server.host.agents.usage_prices import Tokens, listed_cost, to_micros  # noqa: E402
from server.host.metrics import HostMetrics  # noqa: E402
from server.host.services.workspace import Member  # noqa: E402

GOAL_REPORT_P95_MS = 200.0
GOAL_RECORD_P95_MS = 1.0
MODELS = (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4.1"), ("custom-g", "house"))
GROUPINGS = (["agent"], ["member"], ["model"], ["routine"], ["agent", "model"])
BATCH = 20_000
UTC_ZONE = ZoneInfo("UTC")
BURST = 20


def stats(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(values[-1], 3),
    }


def generated(team_id: str, count: int, days: int, end: float) -> list[dict[str, Any]]:
    """``count`` requests over the ``days`` before ``end``, with their costs."""
    rng = random.Random(36)
    agents = [uuid.uuid4().hex for _ in range(12)]
    members = [uuid.uuid4().hex for _ in range(10)]
    routines = [uuid.uuid4().hex for _ in range(4)]
    costs: dict[tuple[str, str, int, int, int, str], int | None] = {}
    rows = []
    for _ in range(count):
        at = end - rng.random() * days * 86400
        provider, model = rng.choice(MODELS)
        by_routine = rng.random() < 0.2
        tokens = Tokens(
            input=rng.choice((800, 1500, 4000, 12000)),
            output=rng.choice((50, 200, 600)),
            cache_read=rng.choice((0, 0, 500)),
        )
        day = day_of(at, UTC_ZONE)
        key = (provider, model, tokens.input, tokens.output, tokens.cache_read, day)
        if key not in costs:
            cost = listed_cost(provider, model, tokens, at)
            costs[key] = None if cost is None else to_micros(cost)
        rows.append(
            {
                "id": uuid.uuid4().hex,
                "team_id": team_id,
                "agent_id": rng.choice(agents),
                "thread_id": None,
                "turn_id": None,
                "account_id": "" if by_routine else rng.choice(members),
                "routine_id": rng.choice(routines) if by_routine else "",
                "provider_id": provider,
                "model": model,
                "input_tokens": tokens.input,
                "output_tokens": tokens.output,
                "cache_read_tokens": tokens.cache_read,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
                "latency_ms": rng.randint(300, 9000),
                "status": "ok",
                "cost_micros": costs[key],
                "at": at,
                "day": day,
            }
        )
    return rows


def rollups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rollup rows the requests sum to."""
    keys = ("team_id", "day", "agent_id", "account_id", "provider_id", "model", "routine_id")
    summed: dict[tuple[str, ...], dict[str, Any]] = defaultdict(
        lambda: {
            "requests": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "cost_micros": 0,
            "unpriced_requests": 0,
        }
    )
    for row in rows:
        key = tuple(row[k] for k in keys)
        total = summed[key]
        total["requests"] += 1
        for name in ("input_tokens", "output_tokens", "cache_read_tokens"):
            total[name] += row[name]
        if row["cost_micros"] is None:
            total["unpriced_requests"] += 1
        else:
            total["cost_micros"] += row["cost_micros"]
    return [dict(zip(keys, key, strict=True)) | total for key, total in summed.items()]


async def load(db: Database, rows: list[dict[str, Any]]) -> None:
    if db.is_sqlite:
        for start in range(0, len(rows), BATCH):
            async with db.write() as conn:
                await conn.execute(model_requests.insert(), rows[start : start + BATCH])
    else:
        columns = [c.name for c in model_requests.columns]
        async with db.write() as conn:
            raw = (await conn.get_raw_connection()).driver_connection
            assert raw is not None
            await raw.copy_records_to_table(
                "model_requests",
                records=[tuple(r[c] for c in columns) for r in rows],
                columns=columns,
            )
    summed = rollups(rows)
    for start in range(0, len(summed), BATCH):
        async with db.write() as conn:
            await conn.execute(usage_rollups.insert(), summed[start : start + BATCH])
    if not db.is_sqlite:
        async with db.write() as conn:
            await conn.exec_driver_sql("ANALYZE model_requests")
            await conn.exec_driver_sql("ANALYZE usage_rollups")


async def run(url: str, label: str, args: argparse.Namespace) -> dict[str, Any]:
    db = Database(url, pool_size=4)
    await db.migrate()
    try:
        team_id = uuid.uuid4().hex
        end = time.time()
        started = time.perf_counter()
        rows = generated(team_id, args.requests, args.days, end)
        await load(db, rows)
        setup_seconds = time.perf_counter() - started
        del rows
        clock = SystemClock()
        usage = UsageService(db, clock, HostMetrics())
        owner = Member(team_id, uuid.uuid4().hex, Role.OWNER)
        last = day_of(end, UTC_ZONE)
        month_ago = day_of(end - 29 * 86400, UTC_ZONE)
        first = day_of(end - (args.days - 1) * 86400, UTC_ZONE)
        summary_ms, series_ms = [], []
        for n in range(args.calls + 10):
            t0 = time.perf_counter()
            await usage.summary(owner, month_ago, last, GROUPINGS[n % len(GROUPINGS)])
            if n >= 10:
                summary_ms.append((time.perf_counter() - t0) * 1000)
        for n in range(args.calls + 10):
            t0 = time.perf_counter()
            report = await usage.series(owner, first, last, "agent")
            if n >= 10:
                series_ms.append((time.perf_counter() - t0) * 1000)
        series_rows = len(report.totals)
        who = RequestFor(team_id, "b" * 32, None, None, owner.account_id, "", *MODELS[0])
        # Turns record as their requests end; the writer takes what gathered meanwhile
        # (a fifth of a second: a busy host gathers tens). Here every BURST records.
        record_ms, record_loop_ms, written_ms = [], [], []
        for n in range(args.records + BURST):
            t0, cpu0 = time.perf_counter(), time.thread_time()
            await usage.record(who, Tokens(input=1200 + n, output=80), 1.5, ok=True)
            if n >= BURST:
                record_ms.append((time.perf_counter() - t0) * 1000)
                # What the loop's own thread spent: the time no other task could run.
                record_loop_ms.append((time.thread_time() - cpu0) * 1000)
            if (n + 1) % BURST == 0:
                t0 = time.perf_counter()
                await usage.flush()
                if n >= BURST:
                    written_ms.append((time.perf_counter() - t0) * 1000 / BURST)
        await usage.close()
        total = [
            r + w
            for r, w in zip(record_ms, (w for w in written_ms for _ in range(BURST)), strict=False)
        ]
        return {
            "database": label,
            "requests": args.requests,
            "days": args.days,
            "setup_seconds": round(setup_seconds, 1),
            "summary_ms": stats(summary_ms),
            "series_ms": stats(series_ms),
            "series_rows": series_rows,
            "record_call_ms": stats(record_ms),
            "record_loop_cpu_ms": stats(record_loop_ms),
            "write_per_request_ms": stats(written_ms),
            "record_ms": stats(total),
        }
    finally:
        await db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--records", type=int, default=2_000)
    parser.add_argument("--database-url", help="a PostgreSQL server URL; SQLite when not given")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'crewhost.db'}"
        results.append(asyncio.run(run(url, "sqlite", args)))
    if args.database_url:
        with postgres_database(args.database_url) as server_url:
            assert server_url is not None
            results.append(asyncio.run(run(server_url, "postgresql", args)))
    missed = False
    for result in results:
        print(json.dumps(result))
        missed |= result["summary_ms"]["p95"] > GOAL_REPORT_P95_MS
        missed |= result["series_ms"]["p95"] > GOAL_REPORT_P95_MS
        missed |= result["record_ms"]["p95"] > GOAL_RECORD_P95_MS
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "usage.json").write_text(
        json.dumps({"machine": platform.platform(), "results": results}, indent=2)
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

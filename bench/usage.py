"""Usage benchmark: reports over 1,000,000 recorded model requests, and the cost of
recording one.

Run from the repository root with the project venv::

    .venv/bin/python bench/usage.py
    .venv/bin/python bench/usage.py --database-url postgresql://postgres@127.0.0.1:5432/test

For each database (SQLite by default; PostgreSQL in a fresh database of its own when a
server URL is given), in this process:

* setup: ``--requests`` (1,000,000) requests of one team spread over ``--days`` (90)
  days, across 12 agents, 10 members, 4 routines and 3 provider/model pairs (one
  without a price), made by the database itself in one ``INSERT … SELECT`` into
  ``model_requests``, and the rollups they sum to rebuilt from them (as a new time zone
  rebuilds them), as recording would have left them;
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
import sys
import tempfile
import time
import uuid
from decimal import Decimal
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
from server.host.agents.usage import RequestFor, UsageService, day_of  # noqa: E402
from server.host.agents.usage_prices import Tokens, listed_cost  # noqa: E402
from server.host.metrics import HostMetrics  # noqa: E402
from server.host.services.workspace import Member  # noqa: E402
from server.host.storage.usage import UsageRepository  # noqa: E402

GOAL_REPORT_P95_MS = 200.0
GOAL_RECORD_P95_MS = 1.0
MODELS = (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4.1"), ("custom-g", "house"))
GROUPINGS = (["agent"], ["member"], ["model"], ["routine"], ["agent", "model"])
UTC_ZONE = ZoneInfo("UTC")
BURST = 20


def stats(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(values[-1], 3),
    }


def _rates() -> list[tuple[Decimal, Decimal, Decimal]]:
    """USD per token (uncached input, cache read, output) of the two priced benchmark
    models today; the third (a custom provider's) has no price."""
    now = time.time()
    rates = []
    for provider, model in MODELS[:2]:
        per = [
            listed_cost(provider, model, tokens, now)
            for tokens in (
                Tokens(input=1000),
                Tokens(input=1000, cache_read=1000),
                Tokens(output=1000),
            )
        ]
        rates.append(tuple(p / 1000 for p in per if p is not None))
    return rates  # type: ignore[return-value]


def generating_sql(db: Database, team_id: str, count: int, days: int, end: float) -> str:
    """One statement that writes ``count`` requests over the ``days`` before ``end``,
    spread over 12 agents, 10 members, 4 routines (a fifth of the requests) and 3 models,
    with their costs: the database makes the rows, so a million take seconds, not the
    minutes of rows sent from here."""
    if db.is_sqlite:
        numbers = (
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "  # noqa: S608
            f"WHERE i < {count - 1})"
        )

        def pad(expression: str) -> str:
            return f"printf('%032d', {expression})"

        hex_id = "printf('%032x', i)"
        day = "strftime('%Y-%m-%d', at, 'unixepoch')"
    else:
        numbers = f"WITH n(i) AS (SELECT generate_series(0, {count - 1})::bigint)"

        def pad(expression: str) -> str:
            return f"lpad(({expression})::text, 32, '0')"

        hex_id = "lpad(to_hex(i), 32, '0')"
        day = "to_char(to_timestamp(at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
    span_ms = days * 86_400_000
    cost = " ".join(
        f"WHEN {n} THEN CAST(ROUND((input_tokens - cache_read_tokens) * {r[0] * 1000000}"
        f" + cache_read_tokens * {r[1] * 1000000} + output_tokens * {r[2] * 1000000}) AS BIGINT)"
        for n, r in enumerate(_rates())
    )
    providers = " ".join(f"WHEN {n} THEN '{p}'" for n, (p, _) in enumerate(MODELS))
    models = " ".join(f"WHEN {n} THEN '{m}'" for n, (_, m) in enumerate(MODELS))
    # Built from the benchmark's own numbers and names only.
    return f"""
INSERT INTO model_requests (id, team_id, agent_id, thread_id, turn_id, account_id,
  routine_id, provider_id, model, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, reasoning_tokens, latency_ms, status, cost_micros, at, day)
{numbers},
picked AS (
  SELECT i, {end} - ((i * 2654435761) % {span_ms}) / 1000.0 AS at,
    (i * 7) % 12 AS agent, (i * 13) % 10 AS member, (i % 5 = 0) AS by_routine,
    (i * 11) % 4 AS routine, (i * 17) % 3 AS model_n,
    CASE (i * 19) % 4 WHEN 0 THEN 800 WHEN 1 THEN 1500 WHEN 2 THEN 4000 ELSE 12000 END
      AS input_tokens,
    CASE (i * 23) % 3 WHEN 0 THEN 50 WHEN 1 THEN 200 ELSE 600 END AS output_tokens,
    CASE (i * 29) % 3 WHEN 0 THEN 500 ELSE 0 END AS cache_read_tokens
  FROM n
)
SELECT {hex_id}, '{team_id}', {pad("agent")}, NULL, NULL,
  CASE WHEN by_routine THEN '' ELSE {pad("1000 + member")} END,
  CASE WHEN by_routine THEN {pad("2000 + routine")} ELSE '' END,
  CASE model_n {providers} END, CASE model_n {models} END,
  input_tokens, output_tokens, cache_read_tokens, 0, 0, 300 + (i * 31) % 8000, 'ok',
  CASE model_n {cost} ELSE NULL END, at, {day}
FROM picked
"""  # noqa: S608


async def load(db: Database, team_id: str, count: int, days: int, end: float) -> None:
    """The requests, then their rollups summed from them as recording leaves them."""
    async with db.write() as conn:
        await conn.exec_driver_sql(generating_sql(db, team_id, count, days, end))
        await UsageRepository().update_days(conn, team_id, [])
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
        await load(db, team_id, args.requests, args.days, end)
        setup_seconds = time.perf_counter() - started
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

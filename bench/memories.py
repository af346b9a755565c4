"""Memories benchmark: a turn's memory block from 1,000 memories, and a page of the
Memories list over the Team API.

Run from the repository root with the project venv::

    .venv/bin/python bench/memories.py

* ``block``: in this process, a fresh SQLite database (migrated as the host migrates
  it) and the host's ``MemoryService``; one agent keeps ``--memories`` (1,000) memories
  without a site, 40 to 400 characters each, a tenth of them essential. Then
  ``--calls`` (200) turns' blocks one after another, after 10 for warm-up, each timed
  from the call to its answer: the reads, the block within the default budget (2,000
  tokens) and starting the write that counts each carried memory's use (a turn does not
  wait on it; it runs beside the next call). Beside it, the block
  alone from the same memories already read (``memory_block``).
* ``list``: ``crewhost serve`` runs as a separate process on a free loopback port with
  a fresh data folder (SQLite); the owner connects as an aiortc peer from this process,
  makes an agent, and ``--memories`` (1,000) memories are written into the server's
  database (a third with a site). Then ``--calls`` (200) ``agent-memories-v1/list``
  pages of 50 (the default) one after another, cycling through the 20 pages, and as
  many searches for a word, each from the call to its answer on the peer.

Results are printed and written to ``bench/results/memories.json``. Goals: a block p95
<= 5 ms; a list page p95 <= 20 ms over the Team API on loopback. The exit status is 1
when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from harness import (
    create_accounts,
    member_email,
    percentile,
    read_setup_code,
    start_server,
    stop_server,
    wait_healthy,
)
from peers import TEAM_API_OVERRIDES, builtin_host_id, sign_in

from peer.connection import connect_to_host
from server.db.tables import agent_memories

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_BLOCK_P95_MS = 5.0
GOAL_LIST_P95_MS = 20.0
WORDS = [
    "invoice",
    "train",
    "aisle",
    "refund",
    "billing",
    "report",
    "lunch",
    "fares",
    "menu",
    "order",
    "settings",
]


def summary(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(values[-1], 3),
    }


def memory_rows(team_id: str, agent_id: str, count: int, *, sites: bool) -> list[dict[str, Any]]:
    """``count`` memories of plausible lengths and words; every third with a site."""
    rng = random.Random(7)
    rows = []
    for n in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 60))]
        rows.append(
            {
                "id": uuid.uuid4().hex,
                "team_id": team_id,
                "agent_id": agent_id,
                "site": f"site{n % 40}.example.com" if sites and n % 3 == 0 else None,
                "text": f"Memory {n}: " + " ".join(words),
                "created_at": 1_760_000_000.0 + n,
                "active_at": 1_760_000_000.0 + n,
                "pinned": n % 10 == 0,
                "uses": rng.randint(0, 50),
                "source": "review",
                "source_threads": "[]",
            }
        )
    return rows


async def block_phase(folder: Path, memories: int, calls: int) -> dict[str, Any]:
    from server.common.clock import SystemClock
    from server.db.engine import Database
    from server.host.services.memories import MemoryService, memory_block
    from server.host.storage.memories import AgentMemoryRepository

    db = Database(f"sqlite+aiosqlite:///{folder / 'crewhost.db'}", pool_size=4)
    await db.migrate()
    try:
        team_id, agent_id = uuid.uuid4().hex, uuid.uuid4().hex
        async with db.write() as conn:
            await conn.execute(
                agent_memories.insert(), memory_rows(team_id, agent_id, memories, sites=False)
            )
        service = MemoryService(db, SystemClock())
        times, shown = [], 0
        for n in range(calls + 10):
            started = time.perf_counter()
            block = await service.prompt_block(team_id, agent_id, None, 2000)
            if n >= 10:
                times.append((time.perf_counter() - started) * 1000)
                shown = len(block.shown)
        async with db.read() as conn:
            candidates = await AgentMemoryRepository().list_prompt_memories(
                conn, team_id, agent_id, None
            )
        alone = []
        for _ in range(calls):
            started = time.perf_counter()
            memory_block(candidates, 2000)
            alone.append((time.perf_counter() - started) * 1000)
    finally:
        await db.close()
    return {
        "memories": memories,
        "shown_per_block": shown,
        "block_ms": summary(times),
        "block_alone_ms": summary(alone),
    }


async def list_phase(folder: Path, memories: int, calls: int) -> dict[str, Any]:
    data_dir = folder / "server"
    data_dir.mkdir()
    server = start_server(data_dir, {**os.environ, **TEAM_API_OVERRIDES})
    try:
        await wait_healthy(server)
        await create_accounts(server.base, await read_setup_code(server), 1)
        owner = await sign_in(server.base, member_email(0), folder)
        host_id = await builtin_host_id(owner)
        connection = await connect_to_host(
            owner.hub, owner.team_id, host_id, owner.known_hosts, owner.account_id, ice_servers=[]
        )
        try:
            agent_id = str((await connection.call("agents-v1/create", {"name": "Bench"}))["id"])
            rows = memory_rows(owner.team_id, agent_id, memories, sites=True)
            # No route writes memories: straight into the server's database (WAL: it runs).
            engine = sa.create_engine(f"sqlite:///{data_dir / 'crewhost.db'}")
            with engine.begin() as db:
                db.execute(agent_memories.insert(), rows)
            engine.dispose()
            pages = -(-memories // 50)

            async def page(args: dict[str, Any]) -> float:
                started = time.perf_counter()
                await connection.call("agent-memories-v1/list", {"agentId": agent_id, **args})
                return (time.perf_counter() - started) * 1000

            for n in range(10):  # warm-up
                await page({"offset": 50 * (n % pages)})
            listed = [await page({"offset": 50 * (n % pages)}) for n in range(calls)]
            searched = [await page({"text": WORDS[n % len(WORDS)]}) for n in range(calls)]
        finally:
            await connection.close()
            await owner.hub.close()
    finally:
        stop_server(server)
    return {"memories": memories, "page_ms": summary(listed), "search_ms": summary(searched)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-memories-") as tmp:
        folder = Path(tmp)
        report: dict[str, Any] = {
            "setup": {
                "cores": os.cpu_count(),
                "python": platform.python_version(),
                "load_average_before": [round(x, 2) for x in os.getloadavg()],
            }
        }
        (folder / "block").mkdir()
        report["block"] = asyncio.run(block_phase(folder / "block", args.memories, args.calls))
        report["list"] = asyncio.run(list_phase(folder, args.memories, args.calls))
        report["setup"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    goals = {
        "block_p95_ms": (report["block"]["block_ms"]["p95"], GOAL_BLOCK_P95_MS),
        "list_page_p95_ms": (report["list"]["page_ms"]["p95"], GOAL_LIST_P95_MS),
    }
    report["goals"] = {
        name: {"value": value, "goal": goal, "met": value <= goal}
        for name, (value, goal) in goals.items()
    }
    print(json.dumps(report, indent=2))
    out = ROOT / "bench" / "results" / "memories.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(goal["met"] for goal in report["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

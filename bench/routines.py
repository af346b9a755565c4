"""Routines benchmark: 1,000 routines due in the same minute on one host.

Run from the repository root with the project venv::

    .venv/bin/python bench/routines.py

In this process: a fresh SQLite database (migrated as the host migrates it), the host's
``RoutineService`` and ``RoutineScheduler`` on the real clock, and a stand-in for the
thread service that notes the moment each run's turn is asked to start and ends it at
once (the scheduler's work is measured, not a model's). ``--routines`` (1,000) routines
of one agent, each a cron schedule (half in UTC, half in Europe/London) whose next fire
time is the same whole minute, are written, then the scheduler runs until every one has
fired and ten seconds more.

* ``baseline``: one such routine alone, the same way.
* ``one_scheduler``: all of them, one scheduler.
* ``two_schedulers``: all of them, two schedulers over the one database at once (two
  host processes by mistake): each fire time must still run once.

Lateness is from a routine's fire time to its turn's start; ``cpu_s_to_last_start`` is
the process's CPU time over the same span (a measure that a loaded machine does not
stretch). Goals: p95 <= 1 s with
1,000 routines, and no routine run twice. Results are printed and written to
``bench/results/routines.json``; the exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from harness import percentile

from server.common.clock import SystemClock
from server.common.protocol.events import HostEvent
from server.db.engine import Database
from server.host.agents.routine_scheduler import RoutineScheduler
from server.host.agents.routine_schedules import cron_schedule
from server.host.agents.routines import RoutineService
from server.host.signals import Signals
from server.host.storage.agents import Agent
from server.host.storage.routines import Routine, RoutineRepository
from server.host.storage.threads import Turn
from server.host.tools.context import Unattended

ROOT = Path(__file__).resolve().parents[1]

GOAL_LATENESS_P95_S = 1.0
# The fire minute is at least this far ahead, so writing the routines ends before it.
LEAD_SECONDS = 15.0
SETTLE_SECONDS = 10.0
TEAM = uuid.uuid4().hex
AGENT = uuid.uuid4().hex
ZONES = ("UTC", "Europe/London")


class TurnStarts:
    """Stands in for the thread service: notes when each routine's turn is asked for."""

    def __init__(self, expected: int) -> None:
        self.started: list[tuple[str, float]] = []
        self.expected = expected
        self.all_started = asyncio.Event()

    async def start_unattended(
        self,
        team_id: str,
        agent_id: str,
        *,
        account_id: str,
        text: str,
        title: str,
        shared: bool,
        thread_id: str | None = None,
        unattended: Unattended | None = None,
    ) -> Turn:
        now = time.time()
        # The routine's name is its id here, and the title starts with it.
        self.started.append((title.split(" ")[0], now))
        if len(self.started) >= self.expected:
            self.all_started.set()
        thread_id = uuid.uuid4().hex
        return Turn(uuid.uuid4().hex, team_id, thread_id, "running", None, 0, 0, 0, now, None)

    async def ended_turn(self, team_id: str, thread_id: str, turn_id: str) -> Turn | None:
        return Turn(turn_id, team_id, thread_id, "done", None, 0, 0, 0, 0.0, time.time())

    def resumes(self, turn_id: str) -> bool:
        return False


async def get_agent(team_id: str, agent_id: str) -> Agent:
    return Agent(
        agent_id, team_id, "Bench", "", "anthropic", None, {}, None, False, None, 0.0, None
    )


def announce(_team_id: str, _event: HostEvent, _only: object) -> None:
    return None


def next_minute() -> float:
    """The first whole minute at least ``LEAD_SECONDS`` ahead."""
    soon = time.time() + LEAD_SECONDS
    return (int(soon // 60) + 1) * 60.0


def routine_rows(count: int, fire_at: float) -> list[Routine]:
    rows = []
    for n in range(count):
        zone = ZONES[n % len(ZONES)]
        wall = datetime.fromtimestamp(fire_at, ZoneInfo(zone))
        schedule = cron_schedule(f"{wall.minute} {wall.hour} * * *", zone)
        assert schedule.next_after(time.time()) == fire_at
        routine_id = uuid.uuid4().hex
        rows.append(
            Routine(
                id=routine_id,
                team_id=TEAM,
                agent_id=AGENT,
                created_by=uuid.uuid4().hex,
                name=routine_id,
                message="Go.",
                schedule=schedule.to_json(),
                thread_policy="new",
                thread_id=None,
                audience="creator",
                audience_members=(),
                approvers=(),
                approval_seconds=86_400,
                overlap="skip",
                missed="once",
                enabled=True,
                next_fire_at=fire_at,
                created_at=time.time(),
                updated_at=time.time(),
            )
        )
    return rows


async def phase(folder: Path, count: int, schedulers: int) -> dict[str, Any]:
    db = Database(f"sqlite+aiosqlite:///{folder / 'crewhost.db'}", pool_size=4)
    await db.migrate()
    starts = TurnStarts(count)
    services: list[RoutineService] = []
    loops: list[RoutineScheduler] = []
    signals = Signals()
    try:
        fire_at = next_minute()
        rows = routine_rows(count, fire_at)
        repo = RoutineRepository()
        async with db.write() as conn:
            for row in rows:
                await repo.add_routine(conn, row)
        for _ in range(schedulers):
            clock = SystemClock()
            service = RoutineService(db, clock, get_agent, starts, announce, signals)
            services.append(service)
            loops.append(RoutineScheduler(service, clock))
        for loop in loops:
            await loop.start()
        await asyncio.sleep(max(0.0, fire_at - time.time()))
        cpu_before = time.process_time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(starts.all_started.wait(), 60)
        # The process's CPU time (its database threads too) from the fire time to the last
        # start: what the firing costs whatever else the machine is doing.
        cpu = time.process_time() - cpu_before
        await asyncio.sleep(SETTLE_SECONDS)
        late = sorted(at - fire_at for _, at in starts.started)
        runs = Counter(routine for routine, _ in starts.started)
        return {
            "routines": count,
            "schedulers": schedulers,
            "fired": len(runs),
            "run_twice": sum(1 for n in runs.values() if n > 1),
            "cpu_s_to_last_start": round(cpu, 3),
            "lateness_s": {
                "p50": round(percentile(late, 0.5), 3),
                "p95": round(percentile(late, 0.95), 3),
                "max": round(late[-1], 3) if late else None,
            },
        }
    finally:
        for loop in loops:
            await loop.close()
        for service in services:
            await service.close()
        await signals.close()
        await db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--routines", type=int, default=1000)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "setup": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in os.getloadavg()],
        }
    }
    for name, count, schedulers in (
        ("baseline", 1, 1),
        ("one_scheduler", args.routines, 1),
        ("two_schedulers", args.routines, 2),
    ):
        with tempfile.TemporaryDirectory(prefix="crewhost-bench-routines-") as tmp:
            report[name] = asyncio.run(phase(Path(tmp), count, schedulers))
        print(name, json.dumps(report[name]), flush=True)
    report["setup"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    worst = max(report[n]["lateness_s"]["p95"] for n in ("one_scheduler", "two_schedulers"))
    twice = sum(report[n]["run_twice"] for n in ("one_scheduler", "two_schedulers"))
    missing = sum(
        report[n]["routines"] - report[n]["fired"] for n in ("one_scheduler", "two_schedulers")
    )
    report["goals"] = {
        "lateness_p95_s": {"value": worst, "goal": GOAL_LATENESS_P95_S, "met": worst <= 1.0},
        "run_twice": {"value": twice, "goal": 0, "met": twice == 0},
        "not_fired": {"value": missing, "goal": 0, "met": missing == 0},
    }
    print(json.dumps(report, indent=2))
    out = ROOT / "bench" / "results" / "routines.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(goal["met"] for goal in report["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

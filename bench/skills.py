"""Skills benchmark: the system prompt of an agent with 100 enabled skills, and how long
``load_skill`` takes.

Run from the repository root with the project venv::

    .venv/bin/python bench/skills.py

In this process, a fresh SQLite database (migrated as the host migrates it) and the host's
``SkillService``: ``--skills`` (100) skills, each with a description of 200 to 1,024
characters and a body of about 6,000 characters with three more files, all enabled for
one agent.

* ``prompt``: the system prompt a turn of that agent gets (no instructions of its own, no
  memories), in characters, beside the same prompt without skills; and the skills block
  for 20 skills (the issue's "a few hundred tokens").
* ``load_skill``: ``--calls`` (500) calls of the tool through the catalog's ``call_tool``
  (argument repair, validation, the result cap), cycling through the skills after 20 for
  warm-up, each timed from the call to its answer. Beside it, interleaved in the same
  loop, the baseline: the one row read of its ``SKILL.md`` alone.

Results are printed and written to ``bench/results/skills.json``. Goals: the prompt with
100 skills <= 6,000 characters; ``load_skill`` p95 <= 10 ms. The exit status is 1 when a
goal is missed.
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
from typing import Any, cast

from harness import percentile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_PROMPT_CHARS = 6_000
GOAL_LOAD_P95_MS = 10.0
WORDS = ["invoice", "expense", "travel", "report", "refund", "fare", "form", "receipt", "team"]


def summary(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(values[-1], 3),
    }


def words(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < chars:
        out.append(rng.choice(WORDS))
    return " ".join(out)[:chars].strip()


async def run(folder: Path, count: int, calls: int) -> dict[str, Any]:
    from server.common.clock import SystemClock
    from server.common.roles import Role
    from server.db.engine import Database
    from server.host.agents.prompt import system_prompt
    from server.host.browser.callers import Caller
    from server.host.services.skill_format import skill_md
    from server.host.services.skills import SkillService, skills_prompt
    from server.host.services.workspace import Member
    from server.host.storage.skills import SkillRepository
    from server.host.tools.catalog import call_tool
    from server.host.tools.context import ToolContext

    db = Database(f"sqlite+aiosqlite:///{folder / 'crewhost.db'}", pool_size=4)
    await db.migrate()
    try:
        team_id, agent_id = uuid.uuid4().hex, uuid.uuid4().hex
        rng = random.Random(7)

        async def any_agent(_team: str, _agent: str) -> object:
            return None

        skills = SkillService(db, SystemClock(), lambda _team, _event: None, any_agent)
        admin = Member(team_id, uuid.uuid4().hex, Role.ADMIN)
        names = [f"skill-{n:03d}-{rng.choice(WORDS)}" for n in range(count)]
        for name in names:
            files = {
                "SKILL.md": skill_md(
                    name, words(rng, rng.randint(200, 1024)), words(rng, 6_000)
                ).encode(),
                "references/notes.md": words(rng, 3_000).encode(),
                "templates/form.md": words(rng, 1_000).encode(),
                "scripts/fill.js": b"return await snapshot();",
            }
            await skills.create(admin, files)
            await skills.enable(admin, agent_id, name, enabled=True)

        block = await skills.prompt_block(team_id, agent_id)
        with_skills = system_prompt("", "", block)
        without = system_prompt("")
        twenty = skills_prompt((await skills.agent_skills(team_id, agent_id))[:20])
        prompt = {
            "skills": count,
            "system_prompt_chars": len(with_skills),
            "without_skills_chars": len(without),
            "skills_block_chars": len(block),
            "twenty_skills_block_chars": len(twenty),
        }

        context = ToolContext(
            engine=cast(Any, None),  # load_skill never touches the browser
            team_id=team_id,
            caller=Caller.agent(agent_id, uuid.uuid4().hex),
            skills=skills,
        )
        repo = SkillRepository()
        ids = {s.name: s.id for s, _ in await skills.list_skills(team_id)}
        loaded: list[float] = []
        baseline: list[float] = []
        for n in range(calls + 20):
            name = names[n % len(names)]
            started = time.perf_counter()
            result = await call_tool(context, "load_skill", {"name": name})
            spent = (time.perf_counter() - started) * 1000
            assert "instructions" in result, result
            started = time.perf_counter()
            async with db.read() as conn:
                await repo.get_file(conn, team_id, ids[name], 1, "SKILL.md")
            base = (time.perf_counter() - started) * 1000
            if n >= 20:
                loaded.append(spent)
                baseline.append(base)
        return {
            "prompt": prompt,
            "load_skill_ms": summary(loaded),
            "baseline_row_read_ms": summary(baseline),
        }
    finally:
        await db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-skills-") as tmp:
        report: dict[str, Any] = {
            "setup": {
                "cores": os.cpu_count(),
                "python": platform.python_version(),
                "load_average_before": [round(x, 2) for x in os.getloadavg()],
            }
        }
        report.update(asyncio.run(run(Path(tmp), args.skills, args.calls)))
        report["setup"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    goals = {
        "system_prompt_chars": (report["prompt"]["system_prompt_chars"], GOAL_PROMPT_CHARS),
        "load_skill_p95_ms": (report["load_skill_ms"]["p95"], GOAL_LOAD_P95_MS),
    }
    report["goals"] = {
        name: {"value": value, "goal": goal, "met": value <= goal}
        for name, (value, goal) in goals.items()
    }
    print(json.dumps(report, indent=2))
    out = ROOT / "bench" / "results" / "skills.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(goal["met"] for goal in report["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

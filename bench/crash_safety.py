"""Crash safety: rounds of ``crewhost serve`` killed with SIGKILL under a write load.

Prints rounds, writes acknowledged (through the HTTP API and through the Team API from
a real peer), tabs restored, writes lost (must be 0), and integrity, partial-row or
tab-restore problems found; writes the same as JSON with ``--json``. The test suite
runs a bounded share of this (tests/ops/test_crash_safety.py).

    .venv/bin/python bench/crash_safety.py --rounds 200 --seed 19
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.crash_rounds import Tally, crash_round


async def main(rounds: int, seed: int) -> dict[str, object]:
    tally = Tally()
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="crewhost-crash-") as folder:
        for _ in range(rounds):
            await crash_round(Path(folder), tally, rng)
            print(
                f"round {tally.rounds}: acknowledged {tally.acknowledged_http} (HTTP) + "
                f"{tally.acknowledged_team_api} (Team API), lost {len(tally.lost)}, "
                f"problems {len(tally.problems)}",
                file=sys.stderr,
                flush=True,
            )
    return {
        "rounds": tally.rounds,
        "seed": seed,
        "writes_acknowledged": tally.acknowledged,
        "writes_acknowledged_http": tally.acknowledged_http,
        "writes_acknowledged_team_api": tally.acknowledged_team_api,
        "team_api_agents_created": tally.agents_created,
        "tabs_opened_and_restored": len(tally.tabs),
        "writes_lost": len(tally.lost),
        "problems": tally.problems,
        "seconds": round(time.monotonic() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    result = asyncio.run(main(args.rounds, args.seed))
    for name, value in result.items():
        print(f"{name:20} {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    sys.exit(1 if result["writes_lost"] or result["problems"] else 0)

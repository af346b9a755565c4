"""Snapshot benchmark: time and size of the ``snapshot`` tool on generated pages.

Starts its own Chromium (through ``BrowserEngine``) and a local aiohttp site that
serves pages of 100, 1,000 and 5,000 elements (rows of a container, a text span,
a link, a text input and a button). For each size it measures, after warm-up:

* ``tool``: the whole ``snapshot`` tool through ``call_tool`` (bot-check read,
  settle, tree walk, result cap), as an agent calls it;
* ``tree``: the tree walk alone (one script per frame) inside the tab's queue;
* ``baseline``: Playwright's own ARIA snapshot of ``body``, side by side in the
  same run, for scale.

Latencies are n, p50, p95 and max in milliseconds; ``chars`` is the length of the
tool's JSON result. Results are printed and written to ``bench/results/snapshot.json``.

Goal: the tool's p50 <= 100 ms at 5,000 elements, and every result <= 20,000
characters. The exit status is 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web
from harness import percentile

from server.common.browser_address_policy import AddressPolicy
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext, TurnState
from server.host.tools.page.snapshots import read_tree
from server.host.tools.results import MAX_RESULT_CHARS

SIZES = (100, 1_000, 5_000)
GOAL_P50_MS = 100.0
GOAL_SIZE = 5_000
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "snapshot.json"
TEAM = "bench-team"
CALLER = Caller.agent("bench-agent", "bench-thread")


def generated_page(elements: int) -> str:
    """A page of ``elements`` elements inside ``body``: rows of five."""
    rows = []
    for i in range(elements // 5):
        rows.append(
            f"<div class=row><span>Row {i} of the generated list</span> "
            f"<a href='#r{i}'>Link {i}</a> <input aria-label='Field {i}'> "
            f"<button>Button {i}</button></div>"
        )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>generated</title>"
        "</head><body>" + "".join(rows) + "</body></html>"
    )


@asynccontextmanager
async def generated_site() -> AsyncIterator[str]:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=generated_page(int(request.query["n"])), content_type="text/html")

    app = web.Application()
    app.router.add_get("/page", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(percentile(ordered, 0.5) * 1000, 1),
        "p95_ms": round(percentile(ordered, 0.95) * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


async def timed_runs(runs: int, warmup: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def bench_size(
    context: ToolContext, base: str, elements: int, runs: int, warmup: int
) -> dict[str, Any]:
    engine = context.engine
    tab = await engine.open_tab(
        TEAM,
        Partition.shared(),
        url=f"{base}/page?n={elements}",
        owner_agent_id=CALLER.agent_id,
        owner_thread_id=CALLER.thread_id,
    )
    sizes: list[int] = []

    async def tool() -> None:
        fresh = dataclasses.replace(context, turn=TurnState())
        result = await call_tool(fresh, "snapshot", {"tabId": tab.id})
        if "error" in result:
            raise RuntimeError(result["error"]["code"])
        sizes.append(len(json.dumps(result, ensure_ascii=False)))

    async def tree() -> None:
        await engine.run(TEAM, tab.id, CALLER, lambda page: read_tree(tab, page))

    async def baseline() -> None:
        await engine.run(TEAM, tab.id, CALLER, lambda page: page.locator("body").aria_snapshot())

    report = {
        "elements": elements,
        "tool": stats(await timed_runs(runs, warmup, tool)),
        "tree": stats(await timed_runs(runs, warmup, tree)),
        "baseline": stats(await timed_runs(max(3, runs // 4), 1, baseline)),
        "chars": max(sizes),
    }
    await engine.close_tab(TEAM, tab.id, CALLER)
    return report


async def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as folder:
        async with (
            generated_site() as base,
            BrowserEngine(
                Path(folder), address_policy=AddressPolicy.from_entries(["127.0.0.1"])
            ) as engine,
        ):
            context = ToolContext(engine=engine, team_id=TEAM, caller=CALLER, turn=TurnState())
            reports = [
                await bench_size(context, base, size, args.runs, args.warmup) for size in SIZES
            ]
    print(
        f"{'elements':>8}  {'tool p50/p95':>14}  {'tree p50/p95':>14}  {'baseline p50':>12}  chars"
    )
    for r in reports:
        print(
            f"{r['elements']:>8}  {r['tool']['p50_ms']:>6} / {r['tool']['p95_ms']:<5}  "
            f"{r['tree']['p50_ms']:>6} / {r['tree']['p95_ms']:<5}  "
            f"{r['baseline']['p50_ms']:>12}  {r['chars']}"
        )
    largest = next(r for r in reports if r["elements"] == GOAL_SIZE)
    met = largest["tool"]["p50_ms"] <= GOAL_P50_MS and all(
        r["chars"] <= MAX_RESULT_CHARS for r in reports
    )
    print(
        f"goal (p50 <= {GOAL_P50_MS:g} ms at {GOAL_SIZE} elements, <= 20,000 chars): "
        + ("met" if met else "MISSED")
    )
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": sys.version.split()[0],
                "runs": args.runs,
                "results": reports,
                "goal_met": met,
            },
            indent=2,
        )
    )
    return 0 if met else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="measured snapshots per size")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured snapshots first")
    sys.exit(asyncio.run(main(parser.parse_args())))

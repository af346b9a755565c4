"""What one new tab costs Chromium itself, with neither Playwright nor the host in the way.

Run from the repository root with the project venv::

    .venv/bin/python bench/chromium_tab_cost.py [--tabs 30] [--chromium PATH] [--flag=--x ...]

It starts the Chromium the host finds (``--chromium`` for another) headless, with the
closed-network flags and ``--remote-debugging-port=0``, talks CDP to it over its
WebSocket (aiohttp), and ``--tabs`` times (after three warm-up tabs): creates a target
on ``about:blank``, attaches to it and enables Page, Runtime and Network as a driver
does, navigates it to a small fixture page served on ``127.0.0.1`` and waits for its
load event, keeping every tab open. It reports the two steps' latencies (n, p50, p95,
max in ms) and the CPU time (from ``/proc/<pid>/stat`` of every Chromium process and
of the browser process's threads) per tab, so one sees the floor a new tab has on this
machine: work in the browser process's main thread runs one tab after another,
whatever the driver does. ``--flag`` adds a Chromium flag (repeatable) to try one.
``--trace`` records the timed tabs with Chromium's own tracing and adds where the
browser process's main thread spends its time per tab (by trace event, its own time and
with what it called, the largest own times first): in the full browser about a quarter
goes to laying out and painting its window's tab strip and toolbar, which the headless
shell has not.
Results are printed and written to ``bench/results/chromium_tab_cost.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from browser_engine import CLOCK_TICK_MS, Stats, cpu_ticks, fixture_site

from server.config import load_settings
from server.host.chromium import CLOSED_NETWORK_FLAGS, find_chromium

WARM_UP = 3
DEVTOOLS_LINE = re.compile(r"DevTools listening on (ws://\S+)")
START_SECONDS = 30.0
TAB_SECONDS = 30.0
TRACE_CATEGORIES = [
    *("toplevel", "browser", "navigation", "content", "mojom", "loading", "ui", "views"),
    *("renderer_host", "devtools", "ipc", "cc", "viz"),
]
TRACE_ROWS = 12
T = TypeVar("T")
RESULTS_FILE = Path(__file__).parent / "results" / "chromium_tab_cost.json"


def chromium_cpu(root: int) -> Counter[str]:
    """CPU clock ticks by process type of ``root`` and its descendants, and by thread of
    ``root``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    totals: Counter[str] = Counter()
    pending = [root]
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, []))
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            kind = re.search(r"--type=([a-z-]+)", command)
            totals[kind.group(1) if kind else "browser"] += cpu_ticks(Path(f"/proc/{pid}/stat"))
        except OSError:
            continue
    for thread in Path(f"/proc/{root}/task").iterdir():
        with_name = (thread / "stat").read_text()
        name = with_name[with_name.index("(") + 1 : with_name.rindex(")")]
        totals[f"browser thread {name}"] += cpu_ticks(thread / "stat")
    return totals


class Cdp:
    """One CDP WebSocket: commands by id, events into a queue."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for message in self._socket:
            data = json.loads(message.data)
            if "id" in data:
                self._waiting.pop(data["id"]).set_result(data)
            else:
                self.events.put_nowait(data)

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        number = next(self._ids)
        answer = self._waiting[number] = asyncio.get_running_loop().create_future()
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self._socket.send_str(json.dumps(message))
        data = await answer
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        result: dict[str, Any] = data.get("result", {})
        return result

    async def load_event(self, session: str) -> None:
        while True:
            event = await self.events.get()
            if event.get("method") == "Page.loadEventFired" and event.get("sessionId") == session:
                return

    def close(self) -> None:
        self._reader.cancel()


async def new_tab(cdp: Cdp, url: str) -> tuple[float, float]:
    """Creates, attaches and enables a tab, then loads ``url``: the two steps' seconds."""
    started = time.perf_counter()
    target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
    attached = await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
    session = attached["sessionId"]
    await asyncio.gather(
        *(
            cdp.send(f"{domain}.enable", session=session)
            for domain in ("Page", "Runtime", "Network")
        )
    )
    made = time.perf_counter()
    loaded = asyncio.ensure_future(cdp.load_event(session))
    await cdp.send("Page.navigate", {"url": url}, session=session)
    await loaded
    return made - started, time.perf_counter() - made


async def traced(cdp: Cdp, work: Awaitable[T]) -> tuple[T, list[dict[str, Any]]]:
    """``work``'s result and the trace events Chromium recorded while it ran."""
    config = {"includedCategories": TRACE_CATEGORIES, "recordMode": "recordAsMuchAsPossible"}
    await cdp.send("Tracing.start", {"traceConfig": config, "transferMode": "ReportEvents"})
    value = await work
    await cdp.send("Tracing.end")
    events: list[dict[str, Any]] = []
    while True:
        event = await cdp.events.get()
        if event.get("method") == "Tracing.dataCollected":
            events += event["params"]["value"]
        elif event.get("method") == "Tracing.tracingComplete":
            return value, events


def main_thread_ms(events: list[dict[str, Any]], tabs: int) -> dict[str, list[float]]:
    """Per tab, the browser main thread's time by event name in ms, self and with what it
    called, the largest self times first; ``(busy in all)`` is its time in any event."""
    threads = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
        if e["args"].get("name") == "CrBrowserMain"
    }
    spans = sorted(
        (
            e
            for e in events
            if e.get("ph") == "X" and "dur" in e and (e["pid"], e["tid"]) in threads
        ),
        key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"]),
    )
    own: Counter[str] = Counter()
    whole: Counter[str] = Counter()
    busy = 0
    open_spans: list[dict[str, Any]] = []
    for span in spans:
        while open_spans and (
            (open_spans[-1]["pid"], open_spans[-1]["tid"]) != (span["pid"], span["tid"])
            or open_spans[-1]["ts"] + open_spans[-1]["dur"] <= span["ts"]
        ):
            open_spans.pop()
        if open_spans:
            own[open_spans[-1]["name"]] -= span["dur"]
        else:
            busy += span["dur"]
        own[span["name"]] += span["dur"]
        if all(outer["name"] != span["name"] for outer in open_spans):  # once if recursive
            whole[span["name"]] += span["dur"]
        open_spans.append(span)
    rows = {"(busy in all)": (busy, busy)} | {
        name: (us, whole[name]) for name, us in own.most_common(TRACE_ROWS)
    }
    return {name: [round(us / 1000 / tabs, 1) for us in pair] for name, pair in rows.items()}


async def within_limit(step: Awaitable[T]) -> T:
    """``step``'s result, or an error naming the limit (a Chromium that never answers)."""
    try:
        async with asyncio.timeout(TAB_SECONDS):
            return await step
    except TimeoutError:
        raise RuntimeError(f"a tab was not made and loaded within {TAB_SECONDS} s") from None


def launch(args: list[str]) -> subprocess.Popen[str]:
    """Chromium in a process group of its own: Debian's ``chromium-headless-shell`` is a
    script that runs the shell as its child, so stopping it stops the whole group."""
    return subprocess.Popen(  # noqa: S603
        args, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def stop(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    process.wait()


async def devtools_address(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        line = await asyncio.to_thread(process.stderr.readline)
        found = DEVTOOLS_LINE.search(line)
        if found:
            return found.group(1)
        if not line and process.poll() is not None:
            break
    raise RuntimeError("Chromium did not print its DevTools address")


async def timed_tabs(cdp: Cdp, url: str, tabs: int) -> tuple[list[float], list[float]]:
    """``tabs`` new tabs at ``url``, kept open: each one's make and load seconds."""
    made, loaded = [], []
    for _ in range(tabs):
        make_seconds, load_seconds = await within_limit(new_tab(cdp, url))
        made.append(make_seconds)
        loaded.append(load_seconds)
    return made, loaded


async def run(
    chromium: Path, tabs: int, flags: Sequence[str], *, trace: bool = False
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(
        prefix="crewhost-bench-", ignore_cleanup_errors=True
    ) as profile:
        args = [str(chromium), "--headless", *CLOSED_NETWORK_FLAGS, *flags]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        args += ["--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"]
        process = launch(args)
        try:
            address = await devtools_address(process)
            async with fixture_site() as site, aiohttp.ClientSession() as http:
                socket = await http.ws_connect(address, max_msg_size=0)
                cdp = Cdp(socket)
                for _ in range(WARM_UP):
                    await within_limit(new_tab(cdp, site.page))
                before = chromium_cpu(process.pid)
                events: list[dict[str, Any]] = []
                if trace:
                    (made, loaded), events = await traced(cdp, timed_tabs(cdp, site.page, tabs))
                else:
                    made, loaded = await timed_tabs(cdp, site.page, tabs)
                after = chromium_cpu(process.pid)
                cdp.close()
                await socket.close()
        finally:
            await asyncio.to_thread(stop, process)
    per_tab = {k: round((after[k] - before[k]) * CLOCK_TICK_MS / tabs, 1) for k in after}
    return {
        "chromium": str(chromium),
        "flags": list(flags),
        "tabs": tabs,
        "make_ms": asdict(Stats.of(made)),
        "load_ms": asdict(Stats.of(loaded)),
        "cpu_ms_per_tab": {k: v for k, v in sorted(per_tab.items()) if v > 0},
        "traced": trace,
        "browser_main_thread_ms_per_tab": main_thread_ms(events, tabs) if trace else {},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tabs", type=int, default=30)
    parser.add_argument("--chromium")
    parser.add_argument("--flag", action="append", default=[], help="a Chromium flag to add")
    parser.add_argument(
        "--trace", action="store_true", help="where the browser's main thread spends its time"
    )
    ns = parser.parse_args(argv)
    chromium = find_chromium(ns.chromium or load_settings().host.chromium)
    if chromium is None:
        parser.error("no Chromium found: run `make chromium` or pass --chromium")
    result = asyncio.run(run(chromium, ns.tabs, ns.flag, trace=ns.trace))
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['chromium']} {' '.join(result['flags'])}, {result['tabs']} tabs kept open")
    for name in ("make_ms", "load_ms"):
        stats = result[name]
        print(f"  {name:<10} p50 {stats['p50_ms']:6.1f}  p95 {stats['p95_ms']:6.1f}")
    print("  CPU ms per tab:")
    for name, value in result["cpu_ms_per_tab"].items():
        if value >= 1:
            print(f"    {name:<34} {value:6.1f}")
    total = sum(v for k, v in result["cpu_ms_per_tab"].items() if not k.startswith("browser "))
    print(f"    {'every Chromium process':<34} {total:6.1f}")
    if result["traced"]:
        print("  browser main thread per tab, ms (traced: tracing adds its own cost):")
        print(f"    {'trace event':<60} {'self':>6} {'whole':>6}")
        for name, (own, whole) in result["browser_main_thread_ms_per_tab"].items():
            print(f"    {name[:60]:<60} {own:6.1f} {whole:6.1f}")
    print(f"Wrote {RESULTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

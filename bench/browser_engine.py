"""Browser engine benchmark: start-up times, new-tab latency and memory of real Chromium.

Run from the repository root with the project venv::

    .venv/bin/python bench/browser_engine.py
    .venv/bin/python bench/browser_engine.py --tabs 100 --idle-tabs 20 --show-processes

It drives ``server.host.browser.engine.BrowserEngine`` in this process against
the Chromium the engine finds (Debian's ``/usr/bin/chromium`` here) and a small
fixture page served by an aiohttp server on ``127.0.0.1`` (port 0) in the same
process, so no network is needed. Every phase uses a fresh data folder and a
fresh team id. It measures:

* ``engine start``: entering ``BrowserEngine`` (Playwright driver + the Chromium
  that private partitions use; every persistent partition, the shared one too,
  launches a Chromium of its own later), ``--engine-starts`` times (default 5),
  each with a fresh data folder; the first shared-partition tab after it and the
  exit (shutdown) time are reported beside it.
* ``new partition``: the first ``open_tab`` (fixture URL) in a fresh named
  profile partition, which launches its own persistent Chromium, ``--partitions``
  times (default 5); then a second tab in the same, now warm, partition. A
  breakdown on other fresh partitions times the partition's context launch alone
  (the engine's context pool) and then the first tab in it.
* ``warm tab``: ``open_tab`` with the fixture URL in the warm shared partition,
  ``--tabs`` times (default 50), once closing each tab right away (``close_tab``
  is timed too) and once keeping all of them open; a breakdown of one warm tab's
  steps, each on its own (``new_page``, the identity override over CDP, ``goto``,
  the state file). ``open_tab`` itself takes the partition's spare page, made
  after the tab before it loaded and with the identity override and the page
  scripts already on it, and writes the state file after it answers, so a warm
  tab whose spare is ready waits for little more than ``goto``; tabs opened
  straight after one another (kept open) wait for the spare on its way. The CPU
  the kept-open tabs cost, per tab, is reported by group (this Python process, the
  Playwright driver, every Chromium process), from ``/proc/<pid>/stat``.
* ``warm tab during a partition launch``: a warm tab opened while another new
  partition is launching (the engine holds one lock over every context lookup).
* ``memory``: RSS, PSS and USS (private pages) from ``/proc/<pid>/smaps_rollup``
  (RSS from ``/proc/<pid>/status`` when that is unreadable) of this Python
  process, the Playwright driver and every Chromium process (browsers,
  renderers, GPU, utility, zygotes) found by walking ``/proc/*/stat`` parent ids
  down from this process, plus any process whose command line names one of those
  browsers' user-data folders and the crash handlers Chromium re-parents to init
  (matched by start time). Samples:
  engine started; one tab in the shared partition; ``--idle-tabs`` more idle tabs
  there (default 10) -> MB per idle tab; ``--memory-partitions`` new profile
  partitions with one tab each (default 5) -> MB per partition (with its tab).
  Each sample waits ``--settle`` seconds first and takes the median of three
  readings. PSS divides shared pages between the processes that map them, so
  its sum is the honest total; the RSS sum counts shared pages many times.

Latencies are reported as n, p50, p95 (nearest rank) and max in milliseconds.
``--chromium PATH`` drives another Chromium than the one the host finds (a headless
shell first, then the full browser), to compare the two.

Results are printed and written to ``bench/results/browser_engine.json``.

Goal: a new tab in a warm partition has p95 <= 120 ms; memory figures are reported.
The exit status is 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from harness import percentile

from server.common.browser_address_policy import AddressPolicy
from server.config import load_settings
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition, new_profile_id
from server.host.browser.state import SavedTab, write_state
from server.host.browser.tabs import Tab
from server.host.chromium import find_chromium

GOAL_WARM_TAB_P95_MS = 120.0
# The fixture site is on loopback, which the host's browsers are refused by default.
FIXTURE_ALLOWED = AddressPolicy.from_entries(["127.0.0.1"])
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "browser_engine.json"
CRASHPAD_WINDOW = 3.0  # seconds after its browser's start
CLOCK_TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
CALLER = Caller.agent("bench-agent", "bench-thread")
FIXTURE_PAGE = (
    "<!doctype html><html lang=en><head><meta charset=utf-8><title>bench fixture</title>"
    "<style>body{font-family:sans-serif;margin:2em}li{color:#345}</style></head><body>"
    "<h1>Fixture</h1><p>A small page for the browser engine benchmark.</p><ul>"
    + "".join(f"<li>item {i}</li>" for i in range(20))
    + "</ul><form><input name=q><button>go</button></form>"
    "<script>document.body.dataset.ready = String(Date.now());</script></body></html>"
)
T = TypeVar("T")


# --- the fixture site ---------------------------------------------------------------------


@dataclass
class Site:
    base: str = ""
    hits: int = 0

    @property
    def page(self) -> str:
        return self.base + "/fixture"


@asynccontextmanager
async def fixture_site() -> AsyncIterator[Site]:
    site = Site()

    async def handle(request: web.Request) -> web.Response:
        site.hits += 1
        if request.path != "/fixture":
            raise web.HTTPNotFound()
        return web.Response(text=FIXTURE_PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    site.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield site
    finally:
        await runner.cleanup()


# --- numbers ------------------------------------------------------------------------------


@dataclass
class Stats:
    n: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    min_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Stats:
        ms = sorted(s * 1000.0 for s in seconds)
        if not ms:
            return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return cls(
            n=len(ms),
            p50_ms=round(percentile(ms, 0.50), 1),
            p95_ms=round(percentile(ms, 0.95), 1),
            max_ms=round(ms[-1], 1),
            min_ms=round(ms[0], 1),
            mean_ms=round(statistics.fmean(ms), 1),
        )


async def timed(call: Awaitable[T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = await call
    return value, time.perf_counter() - start


def new_team() -> str:
    return uuid.uuid4().hex  # matches the engine's team-id pattern


# --- /proc --------------------------------------------------------------------------------


@dataclass
class Proc:
    pid: int
    ppid: int
    comm: str
    cmdline: str
    started: int  # clock ticks after boot


@dataclass
class ProcMemory:
    pid: int
    group: str  # python, driver or chromium
    kind: str  # python, driver, browser or the --type= of a Chromium child
    rss_kb: int
    pss_kb: int | None
    uss_kb: int | None  # private pages only: Private_Clean + Private_Dirty


def read_procs() -> dict[int, Proc]:
    procs: dict[int, Proc] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()  # fields 3.. of proc(5)
        cmdline = raw.replace(b"\0", b" ").decode(errors="replace")
        procs[pid] = Proc(pid, int(fields[1]), comm, cmdline, int(fields[19]))
    return procs


def descendants(procs: dict[int, Proc], root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for proc in procs.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def user_data_dir(cmdline: str) -> str | None:
    for part in cmdline.split():
        if part.startswith("--user-data-dir="):
            return part.split("=", 1)[1]
    return None


def memory_of(pid: int) -> tuple[int, int | None, int | None] | None:
    """(RSS, PSS, USS) in kB of ``pid`` (PSS, USS None if unreadable); None when it is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        rollup = ""
    values: dict[str, int] = {}
    for line in rollup.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
            values[key] = int(rest.split()[0])
    if "Rss" in values:
        uss = values.get("Private_Clean", 0) + values.get("Private_Dirty", 0)
        return values["Rss"], values.get("Pss"), uss if "Pss" in values else None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]), None, None
    return None


def classify(proc: Proc) -> tuple[str, str]:
    if "run-driver" in proc.cmdline:
        return "driver", "driver"
    if proc.comm.startswith("chrome_crashpad"):
        return "chromium", "crashpad"
    for part in proc.cmdline.split():
        if part.startswith("--type="):
            return "chromium", part.split("=", 1)[1]
    if "chrom" in proc.comm or "chrom" in proc.cmdline.split(" ", 1)[0]:
        return "chromium", "browser"
    return "other", proc.comm


def process_tree() -> tuple[list[ProcMemory], int]:
    """The memory of ``our_processes()``, and the number of other Chromium processes on
    the machine: they map the same library pages, so they lower our PSS (USS and RSS do
    not depend on them).
    """
    procs, pids = our_processes()
    me = os.getpid()
    out: list[ProcMemory] = []
    for pid in sorted(pids):
        memory = memory_of(pid)
        if memory is None:
            continue
        group, kind = ("python", "python") if pid == me else classify(procs[pid])
        out.append(ProcMemory(pid, group, kind, *memory))
    foreign = sum(1 for proc in procs.values() if proc.pid not in pids and "chrom" in proc.comm)
    return out, foreign


def cpu_by_group() -> Counter[str]:
    """CPU clock ticks (user and system) so far of ``our_processes()``, by group: python,
    driver, chromium."""
    procs, pids = our_processes()
    me = os.getpid()
    spent: Counter[str] = Counter()
    for pid in pids:
        try:
            ticks = cpu_ticks(Path(f"/proc/{pid}/stat"))
        except OSError:
            continue  # gone meanwhile
        spent["python" if pid == me else classify(procs[pid])[0]] += ticks
    return spent


def cpu_ticks(stat_path: Path) -> int:
    """utime + stime of one process or thread, in clock ticks."""
    fields = stat_path.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def our_processes() -> tuple[dict[int, Proc], set[int]]:
    """Every process, and which are ours: this process, its descendants, and strays that
    belong to their Chromiums.

    Strays: a process naming one of our browsers' user-data folders, and a crash
    handler re-parented to init that started within ``CRASHPAD_WINDOW`` of one of
    our browser processes (Chromium starts two per browser; their command line
    names no profile, so the start time is the only link).
    """
    procs = read_procs()
    me = os.getpid()
    pids = descendants(procs, me)
    folders = {d for pid in pids if (d := user_data_dir(procs[pid].cmdline)) is not None}
    browsers = [procs[pid].started for pid in pids if classify(procs[pid])[1] == "browser"]
    window = CRASHPAD_WINDOW * os.sysconf("SC_CLK_TCK")
    for proc in procs.values():
        if proc.pid == me or proc.pid in pids:
            continue
        named = any(f in proc.cmdline for f in folders)
        crashpad = proc.ppid == 1 and proc.comm.startswith("chrome_crashpad")
        if named or (crashpad and any(0 <= proc.started - b <= window for b in browsers)):
            pids |= {proc.pid} | descendants(procs, proc.pid)
    return procs, {me} | pids


@dataclass
class MemorySample:
    label: str
    processes: int
    renderers: int
    chromium_rss_mb: float
    chromium_pss_mb: float | None
    driver_rss_mb: float
    driver_pss_mb: float | None
    python_rss_mb: float
    python_pss_mb: float | None
    total_rss_mb: float
    total_pss_mb: float | None
    total_uss_mb: float | None
    other_chromium_processes: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)


def summarize(label: str, tree: list[ProcMemory]) -> MemorySample:
    def rss(group: str | None) -> float:
        return sum(p.rss_kb for p in tree if group is None or p.group == group) / 1024.0

    def pss(group: str | None) -> float | None:
        chosen = [p for p in tree if group is None or p.group == group]
        if any(p.pss_kb is None for p in chosen):
            return None
        return sum(p.pss_kb or 0 for p in chosen) / 1024.0

    def uss() -> float | None:
        if any(p.uss_kb is None for p in tree):
            return None
        return sum(p.uss_kb or 0 for p in tree) / 1024.0

    kinds: dict[str, int] = {}
    for p in tree:
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    return MemorySample(
        label=label,
        processes=len(tree),
        renderers=kinds.get("renderer", 0),
        chromium_rss_mb=rss("chromium"),
        chromium_pss_mb=pss("chromium"),
        driver_rss_mb=rss("driver"),
        driver_pss_mb=pss("driver"),
        python_rss_mb=rss("python"),
        python_pss_mb=pss("python"),
        total_rss_mb=rss(None),
        total_pss_mb=pss(None),
        total_uss_mb=uss(),
        by_kind=kinds,
    )


async def sample_memory(label: str, settle: float, show: bool) -> MemorySample:
    """Median (by total PSS, else RSS) of three readings after ``settle`` seconds."""
    await asyncio.sleep(settle)
    samples: list[MemorySample] = []
    trees: list[list[ProcMemory]] = []
    for index in range(3):
        if index:
            await asyncio.sleep(0.5)
        tree, foreign = await asyncio.to_thread(process_tree)
        trees.append(tree)
        samples.append(summarize(label, tree))
        samples[-1].other_chromium_processes = foreign
    order = sorted(range(3), key=lambda i: samples[i].total_pss_mb or samples[i].total_rss_mb)
    chosen = order[1]
    if show:
        print(f"  processes at {label!r}:")
        for p in trees[chosen]:
            pss = "-" if p.pss_kb is None else f"{p.pss_kb / 1024:.1f}"
            uss = "-" if p.uss_kb is None else f"{p.uss_kb / 1024:.1f}"
            print(
                f"    {p.pid:>7} {p.group:<8} {p.kind:<14} rss {p.rss_kb / 1024:7.1f}"
                f"  pss {pss:>6}  uss {uss:>6}"
            )
    return samples[chosen]


def diff(after: float | None, before: float | None, count: int) -> float | None:
    if after is None or before is None or count <= 0:
        return None
    return (after - before) / count


# --- phases -------------------------------------------------------------------------------


@dataclass
class Args:
    engine_starts: int
    partitions: int
    tabs: int
    idle_tabs: int
    memory_partitions: int
    settle: float
    show_processes: bool
    chromium: str


async def bench_engine_start(runs: int, site: Site, chromium: str) -> dict[str, Any]:
    starts: list[float] = []
    stops: list[float] = []
    first_tabs: list[float] = []
    version = ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder:
            engine = BrowserEngine(Path(folder), address_policy=FIXTURE_ALLOWED, chromium=chromium)
            _, started = await timed(engine.__aenter__())
            try:
                version = engine.identity.version
                _, first = await timed(
                    engine.open_tab(new_team(), Partition.shared(), url=site.page)
                )
                first_tabs.append(first)
            finally:
                _, stopped = await timed(engine.__aexit__(None, None, None))
            starts.append(started)
            stops.append(stopped)
    return {
        "chromium": chromium,
        "chromium_version": version,
        "start": asdict(Stats.of(starts)),
        "first_tab_shared_partition_after_start": asdict(Stats.of(first_tabs)),
        "stop": asdict(Stats.of(stops)),
    }


async def bench_partitions(engine: BrowserEngine, runs: int, site: Site) -> dict[str, Any]:
    team = new_team()
    first: list[float] = []
    second: list[float] = []
    launch_only: list[float] = []
    after_launch: list[float] = []
    for _ in range(runs):
        partition = Partition.profile(new_profile_id())
        _, took = await timed(engine.open_tab(team, partition, url=site.page))
        first.append(took)
        _, took = await timed(engine.open_tab(team, partition, url=site.page))
        second.append(took)
        await engine.close_partition(team, partition)

        # Breakdown: the persistent context's launch (the engine's own lookup), then a tab.
        other = Partition.profile(new_profile_id())
        _, took = await timed(engine._contexts.context(team, other))
        launch_only.append(took)
        _, took = await timed(engine.open_tab(team, other, url=site.page))
        after_launch.append(took)
        await engine.close_partition(team, other)
    return {
        "first_tab_in_new_partition": asdict(Stats.of(first)),
        "second_tab_same_partition": asdict(Stats.of(second)),
        "breakdown_context_launch": asdict(Stats.of(launch_only)),
        "breakdown_first_tab_after_launch": asdict(Stats.of(after_launch)),
    }


async def bench_warm_tabs(engine: BrowserEngine, count: int, site: Site) -> dict[str, Any]:
    team = new_team()
    shared = Partition.shared()
    warm = await engine.open_tab(team, shared, url=site.page)  # warms the partition
    for _ in range(3):  # and the page's first loads
        tab = await engine.open_tab(team, shared, url=site.page)
        await engine.close_tab(team, tab.id, CALLER)

    opened: list[float] = []
    closed: list[float] = []
    for _ in range(count):
        tab, took = await timed(engine.open_tab(team, shared, url=site.page))
        opened.append(took)
        _, took = await timed(engine.close_tab(team, tab.id, CALLER))
        closed.append(took)

    kept_times: list[float] = []
    kept: list[Tab] = []
    cpu_before = cpu_by_group()
    for _ in range(count):
        tab, took = await timed(engine.open_tab(team, shared, url=site.page))
        kept_times.append(took)
        kept.append(tab)
    cpu_spent = cpu_by_group() - cpu_before
    blank: list[float] = []
    for _ in range(min(count, 20)):
        tab, took = await timed(engine.open_tab(team, shared))
        blank.append(took)
        await engine.close_tab(team, tab.id, CALLER)
    for tab in kept:
        await engine.close_tab(team, tab.id, CALLER)

    steps = await warm_tab_steps(engine, team, shared, site, min(count, 20), saved=len(kept))
    await engine.close_tab(team, warm.id, CALLER)
    return {
        "open_then_close": asdict(Stats.of(opened)),
        "close": asdict(Stats.of(closed)),
        "open_kept": asdict(Stats.of(kept_times)),
        "open_kept_first_half": asdict(Stats.of(kept_times[: count // 2])),
        "open_kept_second_half": asdict(Stats.of(kept_times[count // 2 :])),
        "open_about_blank": asdict(Stats.of(blank)),
        "open_kept_cpu_ms_per_tab": {
            group: round(cpu_spent[group] * CLOCK_TICK_MS / count, 1)
            for group in ("python", "driver", "chromium")
        },
        "steps": steps,
    }


async def warm_tab_steps(
    engine: BrowserEngine, team: str, partition: Partition, site: Site, runs: int, saved: int
) -> dict[str, Any]:
    """The steps ``open_tab`` takes for one warm tab, each timed on its own."""
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-state-") as folder:
        return await _warm_tab_steps(engine, team, partition, site, runs, saved, Path(folder))


async def _warm_tab_steps(
    engine: BrowserEngine,
    team: str,
    partition: Partition,
    site: Site,
    runs: int,
    saved: int,
    folder: Path,
) -> dict[str, Any]:
    rows = [
        SavedTab(uuid.uuid4().hex, partition, site.page, "bench-agent", None) for _ in range(saved)
    ]
    times: dict[str, list[float]] = {
        k: [] for k in ("context", "new_page", "identity", "goto", "state_file", "close")
    }
    for _ in range(runs):
        context, took = await timed(engine._contexts.context(team, partition))
        times["context"].append(took)
        page, took = await timed(context.new_page())
        times["new_page"].append(took)
        _, took = await timed(engine.identity.apply(page))
        times["identity"].append(took)
        _, took = await timed(page.goto(site.page))
        times["goto"].append(took)
        _, took = await timed(asyncio.to_thread(write_state, folder, rows))
        times["state_file"].append(took)
        _, took = await timed(page.close())
        times["close"].append(took)
    return {name: asdict(Stats.of(values)) for name, values in times.items()}


async def bench_contention(engine: BrowserEngine, runs: int, site: Site) -> dict[str, Any]:
    """A warm tab opened while another partition launches (both in one engine)."""
    team = new_team()
    shared = Partition.shared()
    warm = await engine.open_tab(team, shared, url=site.page)
    during: list[float] = []
    launches: list[float] = []
    for _ in range(runs):
        other = Partition.profile(new_profile_id())
        launch = asyncio.ensure_future(timed(engine.open_tab(team, other, url=site.page)))
        await asyncio.sleep(0.05)  # the launch is under way
        tab, took = await timed(engine.open_tab(team, shared, url=site.page))
        during.append(took)
        _, launched = await launch
        launches.append(launched)
        await engine.close_tab(team, tab.id, CALLER)
        await engine.close_partition(team, other)
    await engine.close_tab(team, warm.id, CALLER)
    return {
        "warm_tab_during_launch": asdict(Stats.of(during)),
        "concurrent_new_partition_first_tab": asdict(Stats.of(launches)),
    }


async def bench_memory(args: Args, site: Site) -> dict[str, Any]:
    settle, show = args.settle, args.show_processes
    samples: list[MemorySample] = []
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder:
        engine = BrowserEngine(Path(folder), address_policy=FIXTURE_ALLOWED, chromium=args.chromium)
        async with engine:
            team = new_team()
            samples.append(await sample_memory("engine started", settle, show))
            await engine.open_tab(team, Partition.shared(), url=site.page)
            samples.append(await sample_memory("shared partition, 1 tab", settle, show))
            for _ in range(args.idle_tabs):
                await engine.open_tab(team, Partition.shared(), url=site.page)
            samples.append(
                await sample_memory(f"shared partition, {1 + args.idle_tabs} tabs", settle, show)
            )
            for _ in range(args.memory_partitions):
                partition = Partition.profile(new_profile_id())
                await engine.open_tab(team, partition, url=site.page)
            samples.append(
                await sample_memory(f"+ {args.memory_partitions} partitions x 1 tab", settle, show)
            )
    started, one, idle, parts = samples
    out: dict[str, Any] = {"samples": [asdict(s) for s in samples]}
    for metric in ("pss", "uss", "rss"):
        key = f"total_{metric}_mb"
        before, first = getattr(started, key), getattr(one, key)
        tabs, more = getattr(idle, key), getattr(parts, key)
        per_tab = diff(tabs, first, args.idle_tabs)
        per_partition = diff(more, tabs, args.memory_partitions)
        out[f"first_partition_with_tab_{metric}_mb"] = diff(first, before, 1)
        out[f"per_idle_tab_{metric}_mb"] = per_tab
        out[f"per_partition_with_tab_{metric}_mb"] = per_partition
        out[f"per_partition_without_tab_{metric}_mb"] = diff(per_partition, per_tab, 1)
    return out


# --- report -------------------------------------------------------------------------------


def fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def latency_row(name: str, stats: dict[str, Any]) -> str:
    return (
        f"  {name:<46} {stats['n']:>4} {stats['p50_ms']:>9.1f} {stats['p95_ms']:>9.1f}"
        f" {stats['max_ms']:>9.1f}"
    )


def print_report(result: dict[str, Any]) -> None:
    start, part = result["engine_start"], result["partitions"]
    warm, busy, memory = result["warm_tabs"], result["contention"], result["memory"]
    print()
    print(
        f"Chromium {start['chromium_version']} ({start['chromium']}), "
        f"{result['environment']['cpus']} CPUs"
    )
    print(f"  {'latency (ms)':<46} {'n':>4} {'p50':>9} {'p95':>9} {'max':>9}")
    rows: list[tuple[str, dict[str, Any]]] = [
        ("engine start (enter)", start["start"]),
        ("first shared tab after start", start["first_tab_shared_partition_after_start"]),
        ("engine stop (exit)", start["stop"]),
        ("first tab in new partition", part["first_tab_in_new_partition"]),
        ("  = context launch alone", part["breakdown_context_launch"]),
        ("  + first tab after launch", part["breakdown_first_tab_after_launch"]),
        ("second tab in that partition", part["second_tab_same_partition"]),
        ("warm tab, open (then closed)", warm["open_then_close"]),
        ("warm tab, close", warm["close"]),
        ("warm tab, open (kept open)", warm["open_kept"]),
        ("  first half of the kept tabs", warm["open_kept_first_half"]),
        ("  second half of the kept tabs", warm["open_kept_second_half"]),
        ("warm tab, about:blank", warm["open_about_blank"]),
        *((f"  step: {name}", stats) for name, stats in warm["steps"].items()),
        ("warm tab while a partition launches", busy["warm_tab_during_launch"]),
        ("  the concurrent partition's first tab", busy["concurrent_new_partition_first_tab"]),
    ]
    for name, stats in rows:
        print(latency_row(name, stats))
    cpu = warm["open_kept_cpu_ms_per_tab"]
    print(
        "  CPU per kept-open tab (ms): "
        + ", ".join(f"{group} {ms:.1f}" for group, ms in cpu.items())
        + f", all {sum(cpu.values()):.1f}"
    )
    print()
    print(
        f"  {'memory sample (MB)':<32} {'procs':>5} {'rend':>4} {'chr PSS':>8} {'chr RSS':>8}"
        f" {'drv PSS':>8} {'py PSS':>7} {'tot PSS':>8} {'tot USS':>8} {'tot RSS':>8} {'oth':>4}"
    )
    for s in memory["samples"]:
        print(
            f"  {s['label']:<32} {s['processes']:>5} {s['renderers']:>4}"
            f" {fmt(s['chromium_pss_mb']):>8} {s['chromium_rss_mb']:>8.1f}"
            f" {fmt(s['driver_pss_mb']):>8} {fmt(s['python_pss_mb']):>7}"
            f" {fmt(s['total_pss_mb']):>8} {fmt(s['total_uss_mb']):>8} {s['total_rss_mb']:>8.1f}"
            f" {s['other_chromium_processes']:>4}"
        )
    print("  (oth: Chromium processes outside this benchmark; they share, so lower, our PSS)")
    for label, stem in (
        ("first partition + its tab", "first_partition_with_tab"),
        ("per idle tab", "per_idle_tab"),
        ("per partition (+1 tab)", "per_partition_with_tab"),
        ("per partition (without tab)", "per_partition_without_tab"),
    ):
        print(
            f"  {label:<30} PSS {fmt(memory[f'{stem}_pss_mb']):>7} MB"
            f"  USS {fmt(memory[f'{stem}_uss_mb']):>7} MB"
            f"  RSS {fmt(memory[f'{stem}_rss_mb']):>7} MB"
        )
    goal = result["goal"]
    verdict = "MET" if goal["met"] else "MISSED"
    print()
    print(
        f"Goal: warm-partition new tab p95 <= {goal['warm_tab_p95_ms_max']:.0f} ms:"
        f" {verdict} (open-then-close p95 {goal['open_then_close_p95_ms']:.1f} ms,"
        f" kept-open p95 {goal['open_kept_p95_ms']:.1f} ms)"
    )
    env = result["environment"]
    print(f"Load average before {env['loadavg_before']}, after {env['loadavg_after']}")


# --- main ---------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--engine-starts", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=5, help="new-partition runs")
    parser.add_argument("--tabs", type=int, default=50, help="warm-tab runs per mode")
    parser.add_argument("--idle-tabs", type=int, default=10)
    parser.add_argument("--memory-partitions", type=int, default=5)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before a sample")
    parser.add_argument("--show-processes", action="store_true")
    parser.add_argument(
        "--chromium",
        help="the Chromium to drive (default: the one the host finds, a headless shell first)",
    )
    ns = parser.parse_args(argv)
    chromium = find_chromium(ns.chromium or load_settings().host.chromium)
    if chromium is None:
        parser.error("no Chromium found: run `make chromium` or pass --chromium")
    return Args(
        engine_starts=ns.engine_starts,
        partitions=ns.partitions,
        tabs=ns.tabs,
        idle_tabs=ns.idle_tabs,
        memory_partitions=ns.memory_partitions,
        settle=ns.settle,
        show_processes=ns.show_processes,
        chromium=str(chromium),
    )


async def phase(name: str, call: Callable[[], Awaitable[T]]) -> T:
    print(f"- {name} ...", flush=True)
    value, took = await timed(call())
    print(f"  done in {took:.1f} s", flush=True)
    return value


async def run(args: Args) -> dict[str, Any]:
    loadavg_before = os.getloadavg()
    async with fixture_site() as site:
        engine_start = await phase(
            "engine start", lambda: bench_engine_start(args.engine_starts, site, args.chromium)
        )
        with tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder:
            engine = BrowserEngine(
                Path(folder), address_policy=FIXTURE_ALLOWED, chromium=args.chromium
            )
            async with engine:
                partitions = await phase(
                    "new partitions", lambda: bench_partitions(engine, args.partitions, site)
                )
                warm = await phase("warm tabs", lambda: bench_warm_tabs(engine, args.tabs, site))
                contention = await phase(
                    "warm tab during a launch",
                    lambda: bench_contention(engine, min(args.partitions, 3), site),
                )
        memory = await phase("memory", lambda: bench_memory(args, site))
        hits = site.hits
    p95_close = warm["open_then_close"]["p95_ms"]
    p95_kept = warm["open_kept"]["p95_ms"]
    return {
        "benchmark": "browser_engine",
        "environment": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in loadavg_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "fixture_requests": hits,
        },
        "parameters": asdict(args),
        "engine_start": engine_start,
        "partitions": partitions,
        "warm_tabs": warm,
        "contention": contention,
        "memory": memory,
        "goal": {
            "warm_tab_p95_ms_max": GOAL_WARM_TAB_P95_MS,
            "open_then_close_p95_ms": p95_close,
            "open_kept_p95_ms": p95_kept,
            "met": max(p95_close, p95_kept) <= GOAL_WARM_TAB_P95_MS,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(run(args))
    print_report(result)
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(result, indent=2) + "\n")
    print(f"Wrote {RESULTS_FILE}")
    return 0 if result["goal"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())

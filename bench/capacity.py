"""Capacity of one host: many agents working at once while members watch and peers call.

Run from the repository root with the project venv::

    .venv/bin/python bench/capacity.py
    .venv/bin/python bench/capacity.py --database-url postgresql://postgres@127.0.0.1:5432/test
    .venv/bin/python bench/capacity.py --quick          # a small, fast run

It starts ``crewhost serve`` as its own process (``bench/watched_serve.py``: the real
command line with the event loop's stalls watched; SQLite in a fresh data folder, and
with ``--database-url`` a second server on a fresh PostgreSQL database
``crewhost_bench_<pid>`` dropped after the run), with ``host.team_running_turns``
raised so that N agents really run at once. This process serves a fixture site on
127.0.0.1 and the local fake Anthropic Messages API of the tests
(``tests/support/fakes/anthropic.py``, the real wire format; each reply starts after
``--model-ms``, 1000 on average, a fast model's time, each drawn anew up to
``--model-spread``, half of it, either side, as a model's time varies). The owner
configures the provider and ``max(--agents)`` agents (navigation and input
auto-approved; with ``--profiles`` K, K named profiles, each a Chromium of its own, the
agents given to them in turn). Then, for each N of ``--agents`` (5, 10, 20, 50), a window of
``--seconds`` (40) after a warm-up:

* N agents each run turns back to back in their own thread (a fresh thread every 5
  turns): text, then tool calls on the fixture site: ``open`` a page, ``snapshot`` it,
  ``click`` the button the snapshot showed (and ``close_tab``), then an answer;
* 3 members watch agent 1's tab (a page animating at 60 Hz) live, each on its own peer
  connection; one of them holds the tab and presses a key every 0.3 s, each press
  turning the page black or white (input to frame: to the first frame that shows it);
* 20 peers (one member's connections) call ``capabilities`` in a loop, each
  ``--peer-rate`` (5) times a second at evenly spaced times, one call in flight (a call
  that starts late because the one before it was slow counts from when it was due, so a
  stall is in the latencies however long it holds the peer): 100 calls a second, twice
  what the host lets one peer make and far more than a team's clients ask.
  ``--peer-rate 0`` calls back to back, as fast as the host answers: a load that takes
  whatever CPU the host is given, from the agents' browser first.

First, with no agent at work, the watched tab's and the peers' numbers alone: the floor
the rows stand on. Per N it reports turns per minute, turn time p50/p95 (send to ``turn-finished``),
failed turns, the host loop's worst stall and lag p99 (a heartbeat every 10 ms), the
members' own loop's lag p99 (this process's: the calls and frames it counts wait there
too), garbage collections (``gc.callbacks``) and where the stalls were (the loop thread's stack,
sampled while the heartbeat was overdue), the Team API p99, the watched tab's frames per
second (the slowest of the two watchers that only watch) and input to frame p95, host
RSS and Chromium's PSS, and CPU by process (percent of one core). On SQLite it then
compares garbage-collector settings at N = ``--gc-agents`` (20), one window each, in
the same server (``--gc-modes``); and runs the noisy-neighbour phase on a server with
the default per-team limit: another team's single agent's turn time alone, and while
the first team's ``max(--agents)`` agents are busy.

Then, on a server of its own, ``--tabs`` (200) tabs across ``--tab-agents`` (20) agents:
each turn of an agent opens a task page and keeps it. Half of them are opened, then left
idle under the tab-lifetime rules as the host has them but with their idle time
shortened to seconds (more than 3 idle tabs loaded: the least recently used sleep after
``--sleep-after`` seconds, 5) until no more of them sleep; then the other half, the
same. It reports the host's RSS and Chromium's PSS before, at the peak while opening,
and with the tabs asleep, and what one sleeping tab keeps: the growth between the two
sleeping states over the tabs that were added. Goals: a sleeping tab keeps at most 1 MB
of Chromium's memory, and the host's RSS stays under 400 MB with them all.

Goals with 20 agents at once: worst stall <= 50 ms, lag p99 <= 10 ms, Team API p99 <=
20 ms, watched tab >= 20 frames/s with input to frame p95 <= 100 ms, no failed turn.
The capacity is the largest N that meets every goal. Results are printed and written
to ``bench/results/capacity.json``; the exit status is 1 when a goal at N = 20 is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import itertools
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import agent_turn
from agent_turn import Subscriber, new_thread, stats
from aiohttp import web
from chromium_threads import HubThreadWindow, hub_line
from harness import (
    CREWHOST,
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
from hub_http import postgres_database
from live_view import (
    PAGE,
    CpuWindow,
    Shown,
    descendants,
    drain,
    press_and_wait,
    process_stats,
)
from loop_watch import GcPauses, LoopWatch, StallStacks
from peers import (
    TEAM_API_OVERRIDES,
    Member,
    builtin_host_id,
    call_loop,
    close_all,
    sign_in,
)

from peer.connection import HostConnection, TeamApiCallError, connect_to_host
from peer.live_view import LiveView, open_view

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents  # noqa: E402
from tests.support.fakes.server import RecordedRequest, StreamReply  # noqa: E402

RESULTS_FILE = Path(__file__).resolve().parent / "results" / "capacity.json"
WATCHED_SERVE = Path(__file__).resolve().parent / "watched_serve.py"
GOAL_AGENTS = 20
GOAL_STALL_MS = 50.0
GOAL_LAG_P99_MS = 10.0
GOAL_TEAM_API_P99_MS = 20.0
GOAL_FPS = 20.0
GOAL_SLEEPING_TAB_MB = 1.0
# Idle tabs a host keeps loaded before the least recently used sleep (its default).
LOADED_IDLE_TABS = 3
GOAL_HOST_RSS_MB = 400.0
GOAL_INPUT_P95_MS = 100.0
VIEWPORT = (1280, 800)
TURNS_PER_THREAD = 5
TURN_WAIT_SECONDS = 300.0
PRESS_EVERY_SECONDS = 0.3
PROBE_WAIT_SECONDS = 10.0
WATCH_PROMPT = "Open the watched page"
KEEP_PROMPT = "Open an order and keep it open"
MEMORY_REVIEW = "You keep the long-term memory of an assistant"
# Replies scripted per turn: its four, and spares for the memory reviews it may cause.
REPLIES_PER_TURN = 6
TASK_PAGE = """<!doctype html><title>Order {n}</title>
<main><h1>Order {n}</h1><p>Two boxes of green tea, shipped to the office.</p>
<label>Note <input name=note></label>
<button onclick="document.getElementById('d').hidden = false">Show details</button>
<div id=d hidden>Shipped on Monday by courier.</div></main>"""


# --- the fixture site and the model's replies -----------------------------------------


@asynccontextmanager
async def fixture_site() -> AsyncIterator[str]:
    """The task page and the animated page on a loopback port of this process; its origin."""

    async def task(request: web.Request) -> web.Response:
        return web.Response(
            text=TASK_PAGE.format(n=request.query.get("n", "1")), content_type="text/html"
        )

    async def animated(_request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/task", task)
    app.router.add_get("/animated", animated)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def call_id(kind: str) -> str:
    return f"toolu_{kind}_{uuid.uuid4().hex[:12]}"


class VaryingModel(FakeAnthropic):
    """The fake provider, each reply after a time drawn anew between ``spread`` below and
    above ``mean`` (seconds): a model's time varies, and agents whose replies all took
    the same second would open and close their tabs in step, in bursts a real team's
    agents do not make."""

    def __init__(self, mean: float, spread: float, seed: int = 20) -> None:
        self._mean, self._spread = mean, spread
        self._draws = random.Random(seed)
        super().__init__(latency=mean)

    @property
    def latency(self) -> float:
        return self._draws.uniform(self._mean * (1 - self._spread), self._mean * (1 + self._spread))

    @latency.setter
    def latency(self, mean: float) -> None:
        self._mean = mean


@dataclass
class AgentScript:
    """The model's replies, read off each request: the same for every agent and turn."""

    site: str
    watched_tabs: list[str] = field(default_factory=list)

    def reply(self) -> StreamReply:
        return StreamReply(self.body)

    def body(self, request: RecordedRequest) -> bytes:
        if str(request.body.get("system", "")).find(MEMORY_REVIEW) >= 0:
            # The host's review of a finished thread for memories: nothing to keep.
            return MessageEvents().text("Nothing new ", "to keep.").stop().body()
        content = request.messages()[-1]["content"]
        results = (
            [b for b in content if b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if not results:
            text = content if isinstance(content, str) else str(content[0].get("text", ""))
            events = MessageEvents().text("Let me ", "look at the order.")
            if text.startswith(WATCH_PROMPT):
                events.tool_use(call_id("watch"), "open", {"url": self.site + "/animated"})
            elif text.startswith(KEEP_PROMPT):  # opened, then answered: the tab stays
                events.tool_use(call_id("keep"), "open", {"url": f"{self.site}/task?n=0"})
            else:
                events.tool_use(call_id("open"), "open", {"url": f"{self.site}/task?n={len(text)}"})
            return events.stop("tool_use").body()
        last = results[-1]
        kind = str(last["tool_use_id"]).split("_")[1]
        try:
            result = json.loads(last["content"])
        except (TypeError, ValueError):
            result = {}
        tab_id = result.get("tabId")
        if kind == "watch" and tab_id:
            self.watched_tabs.append(tab_id)
        elif kind == "open" and tab_id:
            return (
                MessageEvents()
                .tool_use(call_id("snap"), "snapshot", {"tabId": tab_id})
                .stop("tool_use")
                .body()
            )
        elif kind == "snap" and tab_id:
            refs = [
                line.strip().split(" ", 1)[0]
                for line in str(result.get("tree", "")).splitlines()
                if '"Show details"' in line
            ]
            if refs:
                return (
                    MessageEvents()
                    .tool_use(
                        call_id("click"),
                        "click",
                        {"tabId": tab_id, "target": {"kind": "ref", "ref": refs[0]}},
                    )
                    .tool_use(call_id("close"), "close_tab", {"tabId": tab_id})
                    .stop("tool_use")
                    .body()
                )
        return MessageEvents().text("The order ", "was shipped on Monday.").stop().body()


# --- the server, its probe, its memory -------------------------------------------------


@dataclass
class WatchedServer:
    """A ``crewhost serve`` run by ``bench/watched_serve.py``, and its probe's files."""

    server: Server
    probe_file: Path
    gc_mode_file: Path

    @property
    def pid(self) -> int:
        return self.server.process.pid

    def start_window(self, gc_mode: str = "served") -> None:
        self.gc_mode_file.write_text(gc_mode)
        self.probe_file.unlink(missing_ok=True)
        os.kill(self.pid, signal.SIGUSR1)

    async def end_window(self) -> dict[str, Any]:
        os.kill(self.pid, signal.SIGUSR2)
        deadline = time.monotonic() + PROBE_WAIT_SECONDS
        while not self.probe_file.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the server's probe wrote no report")
            await asyncio.sleep(0.05)
        report: dict[str, Any] = json.loads(self.probe_file.read_text())
        return report


def start_watched(
    data_dir: Path, database_url: str | None, extra_env: dict[str, str]
) -> WatchedServer:
    env = {**os.environ, **TEAM_API_OVERRIDES, **extra_env}
    # The owner's one connection sends every agent's turns: up to one call per agent at once.
    env["CREWHOST_RTC_TEAM_API_IN_FLIGHT"] = "1000"
    # The fixture site is on loopback, which the host's browsers are refused by default.
    env["CREWHOST_HOST_BROWSER_ALLOWED_HOSTS"] = "127.0.0.1"
    if database_url is not None:
        env["CREWHOST_DATABASE_URL"] = database_url
    probe_file, gc_mode_file = data_dir / "probe.json", data_dir / "gc-mode"
    env["CAPACITY_PROBE_FILE"], env["CAPACITY_GC_MODE_FILE"] = str(probe_file), str(gc_mode_file)
    server = start_server(data_dir, env, program=(sys.executable, str(WATCHED_SERVE)))
    return WatchedServer(server, probe_file, gc_mode_file)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def pss_bytes(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def memory(server_pid: int) -> dict[str, Any]:
    """The host's RSS, and the PSS of Chromium's processes (the server's descendants but
    the Playwright driver) and of the driver."""
    found = process_stats()
    below = descendants(found, server_pid)
    driver = {pid for pid in below if found[pid].name.startswith("node")}
    renderers = 0
    for pid in below - driver:
        with contextlib.suppress(OSError):
            if "--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(
                errors="replace"
            ):
                renderers += 1
    mb = 1024 * 1024
    return {
        "host_rss_mb": round(rss_bytes(server_pid) / mb, 1),
        "chromium_pss_mb": round(sum(pss_bytes(pid) for pid in below - driver) / mb, 1),
        "driver_pss_mb": round(sum(pss_bytes(pid) for pid in driver) / mb, 1),
        "chromium_processes": len(below - driver),
        # Each Chromium the driver started: private tabs', each team's shared profile's and
        # each named profile's.
        "browsers": sum(1 for pid in below if found[pid].ppid in driver),
        "renderer_processes": renderers,
    }


def load_average() -> list[float]:
    return [round(load, 2) for load in os.getloadavg()]


# --- the members ------------------------------------------------------------------------


async def drain_events(connection: HostConnection) -> None:
    """A connection's events read and dropped (nobody here follows them)."""
    while True:
        await connection.events.get()


async def connect(member: Member, host_id: str) -> HostConnection:
    return await connect_to_host(
        member.hub, member.team_id, host_id, member.known_hosts, member.account_id, ice_servers=[]
    )


class MembersLoop:
    """This process's loop, where the members' calls and frames are counted: its lag, its
    garbage collections and, while it is late, what holds it."""

    def __init__(self) -> None:
        self.watch = LoopWatch(interval=0.010)
        self.gc = GcPauses()
        self.stacks = StallStacks(self.watch)
        self.stacks.start()
        self._heartbeat = asyncio.ensure_future(self.watch.run())

    def reset(self) -> None:
        self.watch.reset()
        self.gc.reset()
        self.stacks.reset()

    def summary(self) -> dict[str, Any]:
        return {**self.watch.summary(), "gc": self.gc.summary(), "stacks": self.stacks.summary()}

    def close(self) -> None:
        self._heartbeat.cancel()
        self.gc.stop()
        self.stacks.stop()


@dataclass
class Team:
    """The members of the run: the owner driving the agents, watchers, calling peers."""

    owner: Member
    host_id: str
    connection: HostConnection
    subscriber: Subscriber
    agent_ids: list[str]
    watchers: list[HostConnection]
    peers: list[HostConnection]
    members: list[Member]
    drains: list[asyncio.Task[None]]
    members_loop: MembersLoop = field(default_factory=MembersLoop)

    async def close(self) -> None:
        self.members_loop.close()
        for task in self.drains:
            task.cancel()
        await self.subscriber.close()
        await close_all([self.connection, *self.watchers, *self.peers])
        await asyncio.gather(*(member.hub.close() for member in self.members))


async def configure(
    connection: HostConnection, fake: FakeAnthropic, agents: int, profiles: int = 0
) -> list[str]:
    """The provider and ``agents`` agents; with ``profiles``, that many named profiles, the
    agents given to them in turn (each profile is a Chromium of its own)."""
    await connection.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.origin + "/v1"}
    )
    await connection.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
    permissions = {"browser-navigation": "auto-approve", "browser-input": "auto-approve"}
    agent_ids = [
        str(
            (
                await connection.call(
                    "agents-v1/create", {"name": f"Clerk {n + 1}", "permissions": permissions}
                )
            )["id"]
        )
        for n in range(agents)
    ]
    profile_ids = [
        str((await connection.call("browser-profiles-v1/create", {"name": f"Desk {n + 1}"}))["id"])
        for n in range(profiles)
    ]
    for n, agent_id in enumerate(agent_ids if profile_ids else ()):
        await connection.call(
            "browser-profiles-v1/assign",
            {"agentId": agent_id, "profile": profile_ids[n % len(profile_ids)]},
        )
    return agent_ids


async def join(server: Server, folder: Path, fake: FakeAnthropic, args: argparse.Namespace) -> Team:
    """Owner, three watchers and a calling member signed in and connected; agents made."""
    await wait_healthy(server)
    await create_accounts(server.base, await read_setup_code(server), args.watchers + 2)
    members = [
        await sign_in(server.base, member_email(n), folder) for n in range(args.watchers + 2)
    ]
    owner = members[0]
    host_id = await builtin_host_id(owner)
    connection = await connect(owner, host_id)
    watchers = [await connect(m, host_id) for m in members[1 : args.watchers + 1]]
    peers = [await connect(members[-1], host_id) for _ in range(args.peers)]
    drains = [asyncio.ensure_future(drain_events(c)) for c in (*watchers, *peers)]
    agent_ids = await configure(connection, fake, max(args.agents), args.profiles)
    return Team(
        owner,
        host_id,
        connection,
        Subscriber(connection),
        agent_ids,
        watchers,
        peers,
        members,
        drains,
    )


# --- the agents at work -------------------------------------------------------------------


@dataclass
class TurnLog:
    """Turns that ended: when, how long they took; and the ones that failed, why."""

    ended: list[tuple[float, float]] = field(default_factory=list)  # (end, seconds)
    failures: list[tuple[float, str]] = field(default_factory=list)

    def window(self, start: float, end: float) -> tuple[list[float], list[str]]:
        took = [seconds for at, seconds in self.ended if start <= at <= end]
        failed = [why for at, why in self.failures if start <= at <= end]
        return took, failed


async def agent_loop(
    connection: HostConnection,
    subscriber: Subscriber,
    agent_id: str,
    fake: FakeAnthropic,
    script: AgentScript,
    log: TurnLog,
    stop: asyncio.Event,
) -> None:
    thread_id = ""
    n = 0
    while not stop.is_set():
        fake.script(*(script.reply() for _ in range(REPLIES_PER_TURN)))
        started = time.perf_counter()
        try:
            if n % TURNS_PER_THREAD == 0:
                thread_id = await new_thread(connection, agent_id)
            n += 1
            turn = await subscriber.turn(thread_id, f"Check order {n} of {agent_id}")
        except (RuntimeError, TimeoutError, TeamApiCallError) as exc:
            log.failures.append((time.perf_counter(), str(exc)[:300] or type(exc).__name__))
            await asyncio.sleep(1.0)  # a failing host is not asked again at once
            continue
        log.ended.append((turn.ended_at or time.perf_counter(), (turn.ended_at or 0.0) - started))


@asynccontextmanager
async def agents_working(
    connection: HostConnection,
    subscriber: Subscriber,
    agent_ids: Sequence[str],
    fake: FakeAnthropic,
    script: AgentScript,
    log: TurnLog,
) -> AsyncIterator[None]:
    """The agents run turns back to back until the block ends; then their last turns end."""
    stop = asyncio.Event()
    loops = []
    for agent_id in agent_ids:
        loops.append(
            asyncio.ensure_future(
                agent_loop(connection, subscriber, agent_id, fake, script, log, stop)
            )
        )
        await asyncio.sleep(0.05)  # a ramp, not a thundering herd of first turns
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(*loops)


# --- the watchers and the peers -------------------------------------------------------------


async def count_frames(view: LiveView, until: float) -> int:
    loop = asyncio.get_running_loop()
    count = 0
    while (left := until - loop.time()) > 0:
        try:
            await view.next_frame(left)
        except TimeoutError:
            break
        count += 1
    return count


async def press_loop(view: LiveView, until: float) -> tuple[list[Shown], int]:
    """Keys pressed on the held tab until ``until``; what showed them, and the presses
    that showed nothing."""
    loop = asyncio.get_running_loop()
    shown: list[Shown] = []
    missed = 0
    keys = ("b", "w")
    n = 0
    while loop.time() < until:
        press = await press_and_wait(view, keys[n % 2])
        n += 1
        if press is None:
            missed += 1
        else:
            shown.append(press)
        await asyncio.sleep(PRESS_EVERY_SECONDS)
    return shown, missed


# --- one window -----------------------------------------------------------------------------


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def window(
    team: Team,
    watched: WatchedServer,
    views: Sequence[LiveView],
    seconds: float,
    peer_rate: float,
    gc_mode: str = "served",
) -> dict[str, Any]:
    """What the server and the members measured over ``seconds`` from now."""
    loop = asyncio.get_running_loop()
    for view in views:
        drain(view)
    cpu = CpuWindow(watched.pid)
    hubs = HubThreadWindow(watched.pid)
    watched.start_window(gc_mode)
    cpu.start()
    hubs.start()
    # The members' own loop: a call or a frame waits here too before it is counted. Its
    # garbage collector waits for the window's end: a full collection of what this process
    # holds (every connection, the agents' logs) took 250 ms here, a stall of the members'
    # side that the host's numbers would carry.
    gc.collect()
    gc.disable()
    team.members_loop.reset()
    started, start_clock = loop.time(), time.perf_counter()
    until = started + seconds
    try:
        calls, frames, presses = await asyncio.gather(
            asyncio.gather(
                *(
                    call_loop(peer, start_clock + seconds, peer_rate, i / len(team.peers))
                    for i, peer in enumerate(team.peers)
                )
            ),
            asyncio.gather(*(count_frames(view, until) for view in views[1:])),
            press_loop(views[0], until),
        )
    finally:
        gc.enable()
    elapsed = loop.time() - started
    members_loop = team.members_loop.summary()
    cpu_use = cpu.stop()
    hub_use = hubs.stop()
    probe = await watched.end_window()
    latencies = sorted(t for call, _ in calls for t in call)
    errors: Counter[str] = Counter()
    for _, counted in calls:
        errors.update(counted)
    pressed, missed = presses
    return {
        "seconds": round(elapsed, 1),
        "start_clock": start_clock,
        "team_api": {
            "calls": len(latencies),
            "calls_per_second": round(len(latencies) / elapsed, 1),
            "p50_ms": ms(percentile(latencies, 0.50)),
            "p99_ms": ms(percentile(latencies, 0.99)),
            "errors": dict(errors),
        },
        "watched_tab": {
            "fps_min": round(min(frames) / elapsed, 1) if frames else 0.0,
            "fps_mean": round(sum(frames) / len(frames) / elapsed, 1) if frames else 0.0,
            "presses": len(pressed) + missed,
            "missed": missed,
            "input_p50_ms": ms(percentile(sorted(p.seconds for p in pressed), 0.50)),
            "input_p95_ms": ms(percentile(sorted(p.seconds for p in pressed), 0.95)),
            # Of that, the time until Chromium captured the frame that showed the key; the
            # rest is the frame's way through the driver, the host and the data channel.
            "input_to_capture_p50_ms": ms(
                percentile(sorted(p.captured_after for p in pressed), 0.50)
            ),
            "input_to_capture_p95_ms": ms(
                percentile(sorted(p.captured_after for p in pressed), 0.95)
            ),
        },
        "loop": probe["loop"],
        "members_loop": members_loop,
        "gc": probe["gc"],
        "gc_mode": probe["gc_mode"],
        "gc_threshold": probe["gc_threshold"],
        "stall_stacks": probe["stall_stacks"],
        # After the window: what the host's full collections walk, and what most of it is.
        "heap": probe["heap"],
        # Each step of a key's way to the frame that showed it, from the host's times.
        "key_path": key_path(pressed, probe["key_path"]),
        "cpu_percent": asdict(cpu_use),
        # The threads every tab of a browser passes through: at work, and waiting for a CPU.
        "chromium_threads": hub_use,
        "memory": memory(watched.pid),
        "load_average": load_average(),
    }


# What the window with no agent at work keeps.
IDLE_KEPT = (
    "team_api",
    "watched_tab",
    "key_path",
    "loop",
    "cpu_percent",
    "chromium_threads",
    "memory",
)


# The steps of a key's way, each from one time stamp to the next (all by the wall clock).
KEY_STEPS = (
    "member_to_host",  # sent by the member, read off the channel by the host
    "host_to_chromium",  # read, and its keyDown sent to Chromium
    "chromium_answered",  # that command's answer: the renderer has the key
    "chromium_to_capture",  # the command sent, and the capture of the frame that shows it
    "capture_to_host",  # captured, and the frame read by the host
    "host_to_member",  # read by the host, and seen by the member
)
# A frame's capture time as the member reads it and as the host did, rounded apart.
SAME_FRAME_SECONDS = 0.002


def key_path(pressed: Sequence[Shown], times: dict[str, Any]) -> dict[str, Any]:
    """Each press's way split at the host's time stamps, p50 and p95 per step, over the
    presses whose every stamp was found."""
    received = sorted(times["received"])
    # Pairs, written as JSON lists.
    dispatched = sorted((sent, answered) for sent, answered in times["dispatched"])
    frames = sorted((captured, arrived) for captured, arrived in times["frames"])
    captures = [captured for captured, _ in frames]
    steps: list[tuple[float, ...]] = []
    for press in pressed:
        captured = press.sent_at + press.captured_after
        at = bisect.bisect_left(received, press.sent_at)
        sent_at = bisect.bisect_left(dispatched, (received[at],)) if at < len(received) else -1
        nearest = bisect.bisect_left(captures, captured - SAME_FRAME_SECONDS)
        if sent_at < 0 or sent_at >= len(dispatched) or nearest >= len(frames):
            continue
        frame_captured, arrived = frames[nearest]
        if abs(frame_captured - captured) > SAME_FRAME_SECONDS:
            continue
        host_read = received[at]
        to_chromium, answered = dispatched[sent_at]
        stamps = (press.sent_at, host_read, to_chromium, answered)
        steps.append(
            (
                *(b - a for a, b in itertools.pairwise(stamps)),
                captured - to_chromium,
                arrived - captured,
                press.sent_at + press.seconds - arrived,
            )
        )
    return {
        "presses": len(steps),
        **{
            name: {
                "p50_ms": ms(percentile(sorted(step[i] for step in steps), 0.50)),
                "p95_ms": ms(percentile(sorted(step[i] for step in steps), 0.95)),
            }
            for i, name in enumerate(KEY_STEPS)
        },
    }


def turn_numbers(log: TurnLog, start: float, seconds: float) -> dict[str, Any]:
    took, failed = log.window(start, start + seconds)
    return {
        "turns": len(took),
        "turns_per_minute": round(len(took) * 60 / seconds, 1),
        "turn": stats(took),
        "failed": len(failed),
        "failures": sorted(set(failed))[:5],
    }


async def phase(
    team: Team,
    watched: WatchedServer,
    views: Sequence[LiveView],
    fake: FakeAnthropic,
    script: AgentScript,
    agents: int,
    args: argparse.Namespace,
    gc_mode: str = "served",
) -> dict[str, Any]:
    """``agents`` agents at work: a warm-up, then one measured window."""
    log = TurnLog()
    async with agents_working(
        team.connection, team.subscriber, team.agent_ids[:agents], fake, script, log
    ):
        await asyncio.sleep(args.warmup)
        measured = await window(team, watched, views, args.seconds, args.peer_rate, gc_mode)
    fake.requests.clear()
    fake.drop_unplayed()
    start = measured.pop("start_clock")
    # A turn that failed after the window, while the agents finished, counts as failed too.
    late_failures = [why for at, why in log.failures if at > start + args.seconds]
    result = {"agents": agents, **turn_numbers(log, start, measured["seconds"]), **measured}
    result["failed"] += len(late_failures)
    result["failures"] = sorted({*result["failures"], *late_failures})[:5]
    result["goals"] = goals(result)
    print(summary_line(result), flush=True)
    return result


async def open_watched_views(
    team: Team, fake: FakeAnthropic, script: AgentScript
) -> list[LiveView]:
    """Agent 1 opens the animated page; every watcher opens its tab, the first holds it."""
    thread_id = await new_thread(team.connection, team.agent_ids[0])
    fake.script(script.reply(), script.reply())
    await team.subscriber.turn(thread_id, WATCH_PROMPT)
    tab_id = script.watched_tabs[-1]
    views = [await open_view(w, tab_id, viewport=VIEWPORT) for w in team.watchers]
    await views[0].next_frame()
    await views[0].take()
    return views


# --- goals ------------------------------------------------------------------------------------


def goals(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    loop, api, tab = result["loop"], result["team_api"], result["watched_tab"]

    def goal(measured: float, bound: str, met: bool) -> dict[str, Any]:
        return {"measured": measured, "goal": bound, "met": met}

    return {
        "worst_stall_ms": goal(
            loop["worst_stall_ms"], f"<= {GOAL_STALL_MS:g}", loop["worst_stall_ms"] <= GOAL_STALL_MS
        ),
        "lag_p99_ms": goal(
            loop["lag_p99_ms"], f"<= {GOAL_LAG_P99_MS:g}", loop["lag_p99_ms"] <= GOAL_LAG_P99_MS
        ),
        "team_api_p99_ms": goal(
            api["p99_ms"], f"<= {GOAL_TEAM_API_P99_MS:g}", api["p99_ms"] <= GOAL_TEAM_API_P99_MS
        ),
        "watched_fps": goal(tab["fps_min"], f">= {GOAL_FPS:g}", tab["fps_min"] >= GOAL_FPS),
        "input_to_frame_p95_ms": goal(
            tab["input_p95_ms"],
            f"<= {GOAL_INPUT_P95_MS:g}, none missed",
            tab["input_p95_ms"] <= GOAL_INPUT_P95_MS and not tab["missed"] and tab["presses"] > 0,
        ),
        "failed_turns": goal(result["failed"], "0", result["failed"] == 0 and result["turns"] > 0),
    }


def all_met(result: dict[str, Any]) -> bool:
    return all(g["met"] for g in result["goals"].values())


def capacity(phases: Sequence[dict[str, Any]]) -> int:
    """The largest N whose window met every goal (0 if none)."""
    return max((p["agents"] for p in phases if all_met(p)), default=0)


# --- the noisy neighbour ----------------------------------------------------------------------


async def second_team(
    server: Server, database_url: str | None, data_dir: Path, folder: Path
) -> Member:
    """Another team's owner, made as ``crewhost admin create-owner`` makes one, signed in."""
    email = "neighbour@example.com"
    env = {**os.environ}
    if database_url is not None:
        env["CREWHOST_DATABASE_URL"] = database_url
    await asyncio.to_thread(
        subprocess.run,
        [
            str(CREWHOST),
            "admin",
            "create-owner",
            "--data-dir",
            str(data_dir),
            "--email",
            email,
            "--name",
            "Neighbour",
            "--team",
            "Neighbour team",
            "--password-stdin",
        ],
        input=(PASSWORD + "\n").encode(),
        env=env,
        check=True,
        capture_output=True,
    )
    return await sign_in(server.base, email, folder)


async def lone_turns(
    connection: HostConnection,
    subscriber: Subscriber,
    agent_id: str,
    fake: FakeAnthropic,
    script: AgentScript,
    seconds: float,
) -> dict[str, Any]:
    """The other team's one agent, turns back to back for ``seconds``."""
    log = TurnLog()
    stop = asyncio.Event()
    task = asyncio.ensure_future(
        agent_loop(connection, subscriber, agent_id, fake, script, log, stop)
    )
    await asyncio.sleep(seconds)
    stop.set()
    await task
    took = [t for _, t in log.ended]
    return {"turn": stats(took), "failed": len(log.failures)}


async def noisy_neighbour(
    database_url: str | None,
    folder: Path,
    fake: FakeAnthropic,
    script: AgentScript,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """On a server with the default per-team limit: the other team's agent alone, then
    with the first team's agents busy."""
    data_dir = folder / "neighbour"
    data_dir.mkdir()
    watched = start_watched(data_dir, database_url, {})
    try:
        busy_args = argparse.Namespace(**{**vars(args), "watchers": 1, "peers": 0})
        team = await join(watched.server, folder / "neighbour-peers", fake, busy_args)
        neighbour = await second_team(watched.server, database_url, data_dir, folder)
        other = await connect(neighbour, team.host_id)
        other_subscriber = Subscriber(other)
        try:
            (agent_id,) = await configure(other, fake, 1)
            seconds = max(args.seconds / 2, 5.0)
            # One turn first, unmeasured: it starts the other team's browser partition.
            await lone_turns(other, other_subscriber, agent_id, fake, script, 0.0)
            alone = await lone_turns(other, other_subscriber, agent_id, fake, script, seconds)
            log = TurnLog()
            async with agents_working(
                team.connection, team.subscriber, team.agent_ids, fake, script, log
            ):
                await asyncio.sleep(args.warmup)
                beside = await lone_turns(other, other_subscriber, agent_id, fake, script, seconds)
        finally:
            await other_subscriber.close()
            await close_all([other])
            await neighbour.hub.close()
            await team.close()
    finally:
        stop_server(watched.server)
    return {
        "team_running_turns": "default",
        "busy_agents": len(team.agent_ids),
        "alone": alone,
        "beside_busy_team": beside,
        "busy_team_turns": len(log.ended),
        "busy_team_failed": len(log.failures),
    }


async def many_tabs(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``args.tabs`` tabs opened by ``args.tab_agents`` agents and left to sleep, on a
    server of its own (SQLite): half of them, then all; the memory each time they slept."""
    data_dir = folder / "tabs"
    data_dir.mkdir()
    watched = start_watched(
        data_dir,
        None,
        {
            "CREWHOST_HOST_BROWSER_LRU_IDLE": str(args.sleep_after),
            "CREWHOST_HOST_BROWSER_SWEEP_SECONDS": "1",
            "CREWHOST_HOST_TEAM_RUNNING_TURNS": str(args.tab_agents),
        },
    )
    try:
        async with fixture_site() as site, FakeAnthropic(latency=0.05) as fake:
            script = AgentScript(site)
            alone = argparse.Namespace(
                **{**vars(args), "watchers": 0, "peers": 0, "agents": [args.tab_agents]}
            )
            team = await join(watched.server, folder / "tabs-peers", fake, alone)
            try:
                before = memory(watched.pid)
                threads = [await new_thread(team.connection, a) for a in team.agent_ids]
                half = args.tabs // 2
                peaks: list[dict[str, Any]] = []
                started = time.monotonic()
                await tabs_kept(team, fake, script, threads, half, watched.pid, peaks)
                first = await until_asleep(watched.pid, args.sleep_after, args.settle)
                await tabs_kept(team, fake, script, threads, args.tabs - half, watched.pid, peaks)
                opened_seconds = time.monotonic() - started
                second = await until_asleep(watched.pid, args.sleep_after, args.settle)
                listed = len(
                    (await team.connection.call("browser-control-v1/list_tabs", {}))["tabs"]
                )
            finally:
                await team.close()
    finally:
        stop_server(watched.server)
    more = max(args.tabs - half, 1)
    per_sleeping = (second["chromium_pss_mb"] - first["chromium_pss_mb"]) / more
    peak = max(peaks or [second], key=lambda m: m["chromium_pss_mb"])
    return {
        "tabs": args.tabs,
        "agents": args.tab_agents,
        "listed": listed,
        "open_seconds": round(opened_seconds, 1),
        "before": before,
        "peak": peak,
        "half_asleep": first,
        "asleep": second,
        "chromium_mb_per_sleeping_tab": round(per_sleeping, 3),
        "host_kb_per_tab": round((second["host_rss_mb"] - first["host_rss_mb"]) * 1024 / more, 1),
        "goals": {
            "chromium_mb_per_sleeping_tab": {
                "measured": round(per_sleeping, 3),
                "goal": f"<= {GOAL_SLEEPING_TAB_MB}",
                "met": per_sleeping <= GOAL_SLEEPING_TAB_MB,
            },
            "host_rss_mb": {
                "measured": second["host_rss_mb"],
                "goal": f"<= {GOAL_HOST_RSS_MB}",
                "met": second["host_rss_mb"] <= GOAL_HOST_RSS_MB,
            },
        },
    }


async def tabs_kept(
    team: Team,
    fake: FakeAnthropic,
    script: AgentScript,
    threads: list[str],
    tabs: int,
    server_pid: int,
    peaks: list[dict[str, Any]],
) -> None:
    """``tabs`` more tabs, the agents taking turns at once: each turn opens one and keeps it."""
    pending = iter(range(tabs))

    async def agent(thread_id: str) -> None:
        for _ in pending:
            fake.script(*(script.reply() for _ in range(REPLIES_PER_TURN)))
            await team.subscriber.turn(thread_id, KEEP_PROMPT)

    async def sample() -> None:
        while True:
            await asyncio.sleep(1)
            peaks.append(memory(server_pid))

    sampler = asyncio.ensure_future(sample())
    try:
        await asyncio.gather(*(agent(t) for t in threads))
    finally:
        sampler.cancel()


async def until_asleep(server_pid: int, sleep_after: float, settle: float) -> dict[str, Any]:
    """The memory once the renderers stop going away: the idle tabs past the loaded few
    have slept (checked each second, from when the first could, for at most ``settle``
    seconds more)."""
    await asyncio.sleep(sleep_after + 1)
    last = memory(server_pid)
    steady = 0
    deadline = time.monotonic() + settle
    while steady < 3 and time.monotonic() < deadline:
        await asyncio.sleep(1)
        now = memory(server_pid)
        steady = steady + 1 if now["renderer_processes"] >= last["renderer_processes"] else 0
        last = now
    return last


# --- a database's run -------------------------------------------------------------------------


async def run_database(
    name: str, database_url: str | None, folder: Path, args: argparse.Namespace
) -> dict[str, Any]:
    data_dir = folder / f"{name}-server"
    data_dir.mkdir()
    print(f"\n{name}: starting the server", flush=True)
    watched = start_watched(
        data_dir, database_url, {"CREWHOST_HOST_TEAM_RUNNING_TURNS": str(max(args.agents))}
    )
    result: dict[str, Any] = {"server_pid": watched.pid}
    try:
        async with (
            fixture_site() as site,
            VaryingModel(args.model_ms / 1000, args.model_spread) as fake,
        ):
            script = AgentScript(site)
            team = await join(watched.server, folder / f"{name}-peers", fake, args)
            try:
                views = await open_watched_views(team, fake, script)
                # No agent at work: what the watchers and the peers alone see, the floor
                # every N's numbers stand on.
                idle = await window(team, watched, views, min(args.seconds, 10.0), args.peer_rate)
                idle.pop("start_clock")
                result["idle"] = {key: idle[key] for key in IDLE_KEPT}
                result["phases"] = [
                    await phase(team, watched, views, fake, script, n, args) for n in args.agents
                ]
                if name == "sqlite" and args.gc_modes:
                    gc_agents = min(args.gc_agents, max(args.agents))
                    result["gc_compare"] = [
                        await phase(team, watched, views, fake, script, gc_agents, args, mode)
                        for mode in args.gc_modes
                    ]
                for view in views:
                    view.close()
            finally:
                await team.close()
            if name == "sqlite" and args.neighbour:
                stop_server(watched.server)
                print(f"{name}: the noisy neighbour", flush=True)
                result["noisy_neighbour"] = await noisy_neighbour(
                    database_url, folder, fake, script, args
                )
    finally:
        stop_server(watched.server)
    result["capacity"] = capacity(result.get("phases", []))
    return result


# --- report -----------------------------------------------------------------------------------


def summary_line(p: dict[str, Any]) -> str:
    loop, api, tab, cpu, mem = (
        p["loop"],
        p["team_api"],
        p["watched_tab"],
        p["cpu_percent"],
        p["memory"],
    )
    return (
        f"{p['agents']:>4} {p['gc_mode']:<22} {p['turns_per_minute']:>7} "
        f"{p['turn']['p50_ms']:>8.0f} "
        f"{p['turn']['p95_ms']:>8.0f} {p['failed']:>4} {loop['worst_stall_ms']:>7.1f} "
        f"{loop['lag_p99_ms']:>6.1f} {p['gc']['worst_ms']:>6.1f} {api['p99_ms']:>7.1f} "
        f"{p['members_loop']['lag_p99_ms']:>6.1f} "
        f"{tab['fps_min']:>5.1f} {tab['input_p95_ms']:>7.1f} {mem['host_rss_mb']:>6.0f} "
        f"{mem['chromium_pss_mb']:>6.0f} {cpu['server']:>5.0f} {cpu['browser']:>5.0f} "
        f"{cpu['driver']:>5.0f} {cpu['client']:>5.0f} {cpu['others']:>5.0f} "
        + (
            "met"
            if all_met(p)
            else "MISSED: " + ", ".join(k for k, g in p["goals"].items() if not g["met"])
        )
    )


def key_way(way: dict[str, Any]) -> str:
    split = ", ".join(
        f"{name.replace('_', ' ')} {way[name]['p50_ms']}/{way[name]['p95_ms']}"
        for name in KEY_STEPS
    )
    return f"a key's way, p50/p95 ms ({way['presses']} presses): {split}"


def idle_line(idle: dict[str, Any]) -> str:
    """The window with no agent at work, the floor of every N's numbers."""
    tab, cpu = idle["watched_tab"], idle["cpu_percent"]
    return (
        f"no agent at work: Team API p99 {idle['team_api']['p99_ms']} ms, {tab['fps_min']} "
        f"frames/s, input to frame p50/p95 {tab['input_p50_ms']}/{tab['input_p95_ms']} ms; "
        f"CPU host {cpu['server']:.0f}, Chromium {cpu['browser']:.0f}, bench "
        f"{cpu['client']:.0f}\n  {key_way(idle['key_path'])}\n  "
        f"{hub_line(idle['chromium_threads'])}"
    )


HEADER = (
    f"{'N':>4} {'gc':<22} {'turns/m':>7} {'turn p50':>8} {'turn p95':>8} {'fail':>4} "
    f"{'stall':>7} {'lagp99':>6} {'gc max':>6} {'api p99':>7} {'memlag':>6} {'fps':>5} "
    f"{'input95':>7} "
    f"{'RSS MB':>6} {'PSS MB':>6} {'host%':>5} {'chr%':>5} {'drv%':>5} {'cli%':>5} "
    f"{'oth%':>5} goals"
)


def print_report(document: dict[str, Any]) -> None:
    setup = document["setup"]
    print(
        f"\nmachine: {setup['cores']} cores, Python {setup['python']}; model reply after "
        f"{setup['model_ms']} ms ± {setup['model_spread']:.0%}; {setup['seconds']} s windows; "
        f"{setup['peers']} peers, "
        f"{setup['watchers']} watchers"
    )
    print(
        f"load average (1, 5, 15 min): before {setup['load_before']}, after {setup['load_after']}"
    )
    for name, result in document["databases"].items():
        print(f"\n{name} (times in ms, CPU in percent of one core)")
        if "idle" in result:
            print(idle_line(result["idle"]))
        print(HEADER)
        for p in result.get("phases", []):
            print(summary_line(p))
        for p in result.get("phases", []):
            commonest = ", ".join(f"{kind} {n:,}" for kind, n in list(p["heap"]["top"].items())[:4])
            print(
                f"  N={p['agents']}: a full collection walks {p['heap']['tracked']:,} objects "
                f"({commonest}, ...)"
            )
            print(f"  N={p['agents']}: {key_way(p['key_path'])}")
            print(f"  N={p['agents']}: {hub_line(p['chromium_threads'])}")
        if result.get("gc_compare"):
            print("garbage collector compared at the same N:")
            for p in result["gc_compare"]:
                print(summary_line(p))
        if "noisy_neighbour" in result:
            n = result["noisy_neighbour"]
            print(
                f"noisy neighbour: the other team's one agent, turn p50/p95 ms alone "
                f"{n['alone']['turn']['p50_ms']}/{n['alone']['turn']['p95_ms']}, beside "
                f"{n['busy_agents']} busy agents of a team limited to its default places "
                f"{n['beside_busy_team']['turn']['p50_ms']}/{n['beside_busy_team']['turn']['p95_ms']}"
            )
        print(f"capacity (largest N meeting every goal): {result['capacity']}")
    if "many_tabs" in document:
        t = document["many_tabs"]
        print(
            f"\n{t['tabs']} tabs ({t['listed']} listed): Chromium PSS "
            f"{t['half_asleep']['chromium_pss_mb']} MB with half asleep, "
            f"{t['peak']['chromium_pss_mb']} MB at the peak "
            f"({t['peak']['renderer_processes']} renderers), {t['asleep']['chromium_pss_mb']} MB "
            f"asleep ({t['asleep']['renderer_processes']} renderers); "
            f"{t['chromium_mb_per_sleeping_tab']} MB per sleeping tab; host RSS "
            f"{t['before']['host_rss_mb']} -> {t['asleep']['host_rss_mb']} MB "
            f"({t['host_kb_per_tab']} KB per tab)"
        )
        for name, goal in t["goals"].items():
            verdict = "met" if goal["met"] else "MISSED"
            print(f"  {name}: {goal['measured']} (goal {goal['goal']}) {verdict}")


def describe_setup(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "server": "crewhost serve (hub and built-in host in one process, one event loop)",
        "agents": list(args.agents),
        "seconds": args.seconds,
        "warmup_seconds": args.warmup,
        "model_ms": args.model_ms,
        "model_spread": args.model_spread,
        "peers": args.peers,
        "peer_calls_per_second": args.peer_rate or "back to back",
        "watchers": args.watchers,
        "profiles": args.profiles,
        "load_before": load_average(),
    }


def run_all(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Each database's run in a loop of its own (the PostgreSQL database is made and dropped
    outside them); the report is written after each, so a later failure keeps it."""
    # Turns wait long when the machine is full; a failure is a turn's end, not a timeout here.
    agent_turn.TURN_WAIT_SECONDS = TURN_WAIT_SECONDS
    document: dict[str, Any] = {"setup": describe_setup(args), "databases": {}}
    databases = document["databases"]
    databases["sqlite"] = asyncio.run(run_database("sqlite", None, folder, args))
    write_results(document, args)
    if args.tabs:
        print(f"\nmany tabs: {args.tabs} across {args.tab_agents} agents, then asleep", flush=True)
        document["many_tabs"] = asyncio.run(many_tabs(folder, args))
        write_results(document, args)
    if args.database_url:
        with postgres_database(args.database_url) as url:
            databases["postgresql"] = asyncio.run(run_database("postgresql", url, folder, args))
    return document


def write_results(document: dict[str, Any], args: argparse.Namespace) -> None:
    document["setup"]["load_after"] = load_average()
    document["capacity"] = {name: r["capacity"] for name, r in document["databases"].items()}
    document["goals_met_at_20"] = goals_at(document, GOAL_AGENTS)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(document, indent=2, default=str) + "\n")


def goals_at(document: dict[str, Any], agents: int) -> bool:
    """Whether every window with ``agents`` agents met every goal (True when none ran)."""
    return all(
        all_met(p)
        for result in document["databases"].values()
        for p in result.get("phases", [])
        if p["agents"] == agents
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--agents", default="5,10,20,50", help="agent counts, comma separated")
    parser.add_argument("--seconds", type=float, default=40.0, help="length of each window")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before each window")
    parser.add_argument(
        "--model-ms", type=float, default=1000.0, help="ms before each reply, on average"
    )
    parser.add_argument(
        "--model-spread",
        type=float,
        default=0.5,
        help="how far a reply's time varies either side of --model-ms, as a fraction of it",
    )
    parser.add_argument("--peers", type=int, default=20, help="peers calling capabilities")
    parser.add_argument(
        "--peer-rate",
        type=float,
        default=5.0,
        help="capabilities calls a second of each peer (0: back to back)",
    )
    parser.add_argument("--watchers", type=int, default=3, help="members watching the tab")
    parser.add_argument(
        "--profiles",
        type=int,
        default=0,
        help="named profiles the agents are given to in turn, each a Chromium of its own "
        "(0: every agent in the shared browser)",
    )
    parser.add_argument("--gc-agents", type=int, default=GOAL_AGENTS, help="N of the gc windows")
    parser.add_argument(
        "--gc-modes",
        default="served;threshold:10000,50,100;unfrozen",
        help="garbage-collector modes compared after the phases (';' between modes; '' for none)",
    )
    parser.add_argument("--no-neighbour", dest="neighbour", action="store_false")
    parser.add_argument("--tabs", type=int, default=200, help="tabs opened to sleep (0: none)")
    parser.add_argument("--tab-agents", type=int, default=20, help="agents opening them")
    parser.add_argument(
        "--sleep-after", type=float, default=5.0, help="seconds idle before a tab sleeps"
    )
    parser.add_argument("--database-url", help="a PostgreSQL server for a second run")
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    parser.add_argument("--results", type=Path, default=RESULTS_FILE, help="where the JSON goes")
    args = parser.parse_args(argv)
    # The longest wait for tabs to sleep, once the first of them could.
    args.settle = 10.0 if args.quick else 60.0
    if args.quick:
        args.seconds, args.warmup, args.peers, args.model_ms = 3.0, 1.5, 4, 100.0
        if args.tabs == parser.get_default("tabs"):
            args.tabs, args.tab_agents, args.sleep_after = 4, 2, 1.0
        if args.agents == parser.get_default("agents"):
            args.agents = "2"
        args.gc_modes = ""
    args.agents = [int(n) for n in str(args.agents).split(",") if n]
    args.gc_modes = [m for m in str(args.gc_modes).split(";") if m]
    if args.watchers < 2 or not args.agents or min(args.agents) < 1:
        parser.error("--watchers must be at least 2 and every agent count positive")
    if args.peer_rate < 0 or args.profiles < 0:
        parser.error("--peer-rate and --profiles may not be negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crewhost-capacity-") as folder:
        document = run_all(args, Path(folder))
    write_results(document, args)
    print_report(document)
    print(f"results written to {args.results}")
    return 0 if document["goals_met_at_20"] else 1


if __name__ == "__main__":
    sys.exit(main())

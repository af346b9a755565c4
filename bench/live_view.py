"""Live-view benchmark of a real host: frame rate and size per viewer, input-to-frame latency.

Run from the repository root with the project venv (Pillow is needed to read frames)::

    .venv/bin/python bench/live_view.py --seconds 10

It starts ``crewhost serve`` as a separate process (hub and built-in host, one event
loop; see ``bench/peers.py``), signs up an owner and one member, and connects that
member ``--viewers`` (20) times, each an aiortc ``RTCPeerConnection`` of this process.
A fixture page served by this process on 127.0.0.1 fills the viewport with a block
whose hue changes every 16 ms; the member opens it in the team's shared profile
(``browser-control-v1/new_tab``). Every view asks for ``viewport=1280x800``.

* ``throughput``: 1, then 10, then 20 views of the tab, each on its own connection,
  read for ``--seconds`` after a second of warm-up: frames per second and bytes per
  frame per viewer, frames the host sent for the tab (the spread of sequence numbers),
  and the CPU of the server process, of its browser (every descendant process of the
  server, attributed through ``/proc/<pid>/stat`` parent ids), of this client and of
  the rest of the machine.
* ``input``: one viewer takes control and presses a key ``--presses`` (100) times;
  each press turns the page (all but an 8 px animated strip at the bottom, so frames
  keep flowing as they would on a busy page) black or white, alternately. The latency
  is from sending the key to the first frame whose centre pixel shows that colour
  (decoded with Pillow at 1/8 scale).

Frames are JPEG at ``live_view_quality``, at most ``live_view_max_fps`` per tab; both
can be set for the run with ``--quality`` and ``--max-fps`` (passed to the server as
``CREWHOST_HOST_LIVE_VIEW_QUALITY`` and ``CREWHOST_HOST_LIVE_VIEW_MAX_FPS``).
Results are printed and written to ``bench/results/live_view.json``.

Goals on loopback: >= 25 fps for 1 viewer; >= 15 fps each for 20 viewers; input to
frame p95 <= 60 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, NamedTuple

from aiohttp import web
from harness import (
    Server,
    create_accounts,
    member_email,
    percentile,
    read_setup_code,
    start_server,
    stop_server,
    wait_healthy,
)
from peers import CLOCK_TICKS, Member, builtin_host_id, close_all, machine_busy_seconds, sign_in
from PIL import Image

from peer.connection import HostConnection, connect_to_host
from peer.live_view import LiveView, open_view
from server.common.protocol.view import Frame
from server.config import HostSettings

VIEWPORT = (1280, 800)
VIEWER_COUNTS = (1, 10, 20)
WARM_UP_SECONDS = 1.0
PRESS_WAIT_SECONDS = 3.0
GOAL_FPS_ONE = 25.0
GOAL_FPS_EACH_OF_20 = 15.0
GOAL_INPUT_P95_MS = 60.0
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "live_view.json"
# The colour each key turns the page to; the animation never shows either.
KEY_COLOURS = {"b": (0, 0, 0), "w": (255, 255, 255)}
COLOUR_TOLERANCE = 40
PAGE = """<!doctype html><title>live view bench</title>
<style>body{margin:0;overflow:hidden} #box{width:100vw;height:100vh}
#cover{position:fixed;left:0;top:0;right:0;bottom:8px;display:none}</style>
<div id=box></div><div id=cover></div>
<script>
let n = 0;
const box = document.getElementById('box'), cover = document.getElementById('cover');
setInterval(() => { box.style.background = 'hsl(' + (n++ % 360) + ',70%,50%)'; }, 16);
const colours = {b: '#000', w: '#fff'};
addEventListener('keydown', (event) => {
  if (!(event.key in colours)) return;
  cover.style.background = colours[event.key];
  cover.style.display = 'block';
});
</script>"""


# --- the fixture page -------------------------------------------------------------------


@asynccontextmanager
async def fixture_site() -> AsyncIterator[str]:
    """The animated page on a loopback port of this process; its address."""

    async def page(_request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/animated", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/animated"
    finally:
        await runner.cleanup()


# --- CPU of the server and its browser --------------------------------------------------


class ProcStat(NamedTuple):
    """One process as ``/proc/<pid>/stat`` gives it."""

    ppid: int
    name: str
    cpu: float  # its own CPU seconds so far
    reaped: float  # the CPU seconds of its children that ended and that it waited for


def process_stats() -> dict[int, ProcStat]:
    """Every process: its parent id, name and CPU seconds so far."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat.rpartition(")")[2].split()
        stats[int(entry.name)] = ProcStat(
            ppid=int(fields[1]),
            name=name,
            cpu=(int(fields[11]) + int(fields[12])) / CLOCK_TICKS,
            reaped=(int(fields[13]) + int(fields[14])) / CLOCK_TICKS,
        )
    return stats


def descendants(stats: dict[int, ProcStat], root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(stat.ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@dataclass(frozen=True)
class CpuUse:
    """Percent of one core: the server process, its browser and driver, this client, others."""

    server: float
    browser: float  # Chromium's processes
    driver: float  # the Playwright driver (node) between the server and Chromium
    client: float
    others: float


def tree_cpu(
    before: dict[int, ProcStat], after: dict[int, ProcStat], alive: set[int], ended: set[int]
) -> float:
    """CPU seconds a tree of processes used between ``before`` and ``after``: those
    ``alive`` at the end, and those that ``ended`` meanwhile (a renderer of a tab closed in
    the window), whose whole time went to the parent that waited for them."""

    def lifetime(stat: ProcStat) -> float:
        return stat.cpu + stat.reaped

    used = sum(
        lifetime(after[pid]) - (lifetime(before[pid]) if pid in before else 0.0) for pid in alive
    )
    # The part of an ended process's time from before the window came to its parent too.
    return used - sum(lifetime(before[pid]) for pid in ended)


@dataclass
class CpuWindow:
    server_pid: int
    started: float = 0.0
    before: dict[int, ProcStat] | None = None
    machine: float = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()
        self.before = process_stats()
        self.machine = machine_busy_seconds()

    def stop(self) -> CpuUse:
        elapsed = time.perf_counter() - self.started
        after = process_stats()
        before = self.before or {}

        def used(pid: int) -> float:
            earlier = before[pid].cpu if pid in before else 0.0
            return after[pid].cpu - earlier if pid in after else 0.0

        server = used(self.server_pid)
        below = descendants(after, self.server_pid)
        drivers = {pid for pid in below if after[pid].name.startswith("node")}
        driver = sum(used(pid) for pid in drivers)
        ended = descendants(before, self.server_pid) - set(after)
        browser = tree_cpu(before, after, below, ended) - driver
        client = used(os.getpid())
        machine = machine_busy_seconds() - self.machine
        others = max(0.0, machine - server - browser - driver - client)
        values = (server, browser, driver, client, others)
        return CpuUse(*(round(100 * value / elapsed, 1) for value in values))


# --- phase 1: frames per viewer ---------------------------------------------------------


@dataclass
class ThroughputResult:
    viewers: int
    seconds: float
    fps_mean: float
    fps_min: float
    fps_max: float
    bytes_per_frame: int
    frame_size: str
    host_fps: float
    cpu_percent: CpuUse


async def read_frames(view: LiveView, deadline: float) -> list[Frame]:
    loop = asyncio.get_running_loop()
    frames = []
    while (left := deadline - loop.time()) > 0:
        try:
            frames.append(await view.next_frame(left))
        except TimeoutError:
            break
    return frames


def drain(view: LiveView) -> None:
    while not view.frames.empty():
        view.frames.get_nowait()


async def open_views(hosts: Sequence[HostConnection], tab_id: str) -> list[LiveView]:
    views = []
    for host in hosts:  # one after another: each open re-applies the viewport
        views.append(await open_view(host, tab_id, viewport=VIEWPORT))
    return views


async def close_views(views: Sequence[LiveView]) -> None:
    for view in views:
        view.close()
    await asyncio.gather(*(asyncio.wait_for(view.closed.wait(), 10) for view in views))
    await asyncio.sleep(0.5)  # let the host stop the screencast of the last view


async def throughput_phase(
    hosts: Sequence[HostConnection], tab_id: str, seconds: float, cpu: CpuWindow
) -> ThroughputResult:
    views = await open_views(hosts, tab_id)
    try:
        await asyncio.sleep(WARM_UP_SECONDS)
        for view in views:
            drain(view)
        loop = asyncio.get_running_loop()
        cpu.start()
        started = loop.time()
        per_view = await asyncio.gather(*(read_frames(view, started + seconds) for view in views))
        elapsed = loop.time() - started
        cpu_use = cpu.stop()
    finally:
        await close_views(views)
    rates = [len(frames) / elapsed for frames in per_view]
    sizes = [len(frame.jpeg) for frames in per_view for frame in frames]
    sequences = {frame.sequence for frames in per_view for frame in frames}
    return ThroughputResult(
        viewers=len(views),
        seconds=round(elapsed, 2),
        fps_mean=round(sum(rates) / len(rates), 1),
        fps_min=round(min(rates), 1),
        fps_max=round(max(rates), 1),
        bytes_per_frame=round(sum(sizes) / len(sizes)) if sizes else 0,
        frame_size=next(
            (f"{f.width}x{f.height}" for frames in per_view for f in frames), "no frame"
        ),
        host_fps=round((max(sequences) - min(sequences) + 1) / elapsed, 1) if sequences else 0.0,
        cpu_percent=cpu_use,
    )


# --- phase 2: input to frame ------------------------------------------------------------


@dataclass
class InputResult:
    presses: int
    missed: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    latencies_ms: list[float]


def centre_colour(jpeg: bytes) -> tuple[int, int, int]:
    """The centre pixel of a frame, decoded at 1/8 scale (enough for a solid page)."""
    with Image.open(io.BytesIO(jpeg)) as image:
        image.draft("RGB", (image.width // 8, image.height // 8))
        pixel = image.convert("RGB").getpixel((image.width // 2, image.height // 2))
    assert isinstance(pixel, tuple)
    return int(pixel[0]), int(pixel[1]), int(pixel[2])


def shows(jpeg: bytes, colour: tuple[int, int, int]) -> bool:
    found = centre_colour(jpeg)
    return all(abs(a - b) <= COLOUR_TOLERANCE for a, b in zip(found, colour, strict=True))


@dataclass(frozen=True)
class Shown:
    """A key press and the first frame that showed it."""

    seconds: float  # from sending the key to receiving that frame
    # From sending the key to Chromium's capture of that frame (the frame's own time; one
    # machine, one clock): the rest of ``seconds`` is the frame's way to the viewer.
    captured_after: float
    sent_at: float  # when the key was sent, by the wall clock


async def press_and_wait(view: LiveView, key: str) -> Shown | None:
    """``key`` sent, and the first frame showing its colour; None if none came."""
    drain(view)
    loop = asyncio.get_running_loop()
    sent, sent_wall = loop.time(), time.time()
    view.key("down", key, text=key)
    view.key("up", key)
    deadline = sent + PRESS_WAIT_SECONDS
    while (left := deadline - loop.time()) > 0:
        try:
            frame = await view.next_frame(left)
        except TimeoutError:
            return None
        if shows(frame.jpeg, KEY_COLOURS[key]):
            return Shown(loop.time() - sent, frame.captured_at_ms / 1000 - sent_wall, sent_wall)
    return None


async def input_phase(host: HostConnection, tab_id: str, presses: int) -> InputResult:
    view = await open_view(host, tab_id, viewport=VIEWPORT)
    latencies: list[float] = []
    try:
        await view.next_frame()
        await view.take()
        keys = list(KEY_COLOURS)
        for index in range(presses):
            shown = await press_and_wait(view, keys[index % len(keys)])
            if shown is not None:
                latencies.append(shown.seconds)
            await asyncio.sleep(0.05)  # a person's pace, and the page settles
    finally:
        await close_views([view])
    ordered = sorted(latencies)
    return InputResult(
        presses=presses,
        missed=presses - len(latencies),
        p50_ms=ms(percentile(ordered, 0.50)),
        p95_ms=ms(percentile(ordered, 0.95)),
        max_ms=ms(ordered[-1]) if ordered else 0.0,
        latencies_ms=[ms(value) for value in latencies],
    )


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


# --- the run ----------------------------------------------------------------------------


@dataclass
class Report:
    setup: dict[str, Any]
    throughput: list[ThroughputResult]
    input: InputResult


def live_view_settings(args: argparse.Namespace) -> dict[str, str]:
    """The live-view settings of this run, as the server's environment variables."""
    fields = HostSettings.model_fields
    quality = args.quality or fields["live_view_quality"].default
    max_fps = args.max_fps or fields["live_view_max_fps"].default
    return {
        "CREWHOST_HOST_LIVE_VIEW_QUALITY": str(quality),
        "CREWHOST_HOST_LIVE_VIEW_MAX_FPS": str(max_fps),
    }


async def connect_all(member: Member, host_id: str, count: int) -> list[HostConnection]:
    hosts: list[HostConnection] = []
    try:
        for _ in range(count):
            hosts.append(
                await connect_to_host(
                    member.hub, member.team_id, host_id, member.known_hosts, member.account_id
                )
            )
    except BaseException:
        await close_all(hosts)
        raise
    return hosts


async def measure(
    server: Server, args: argparse.Namespace, folder: Path
) -> tuple[list[ThroughputResult], InputResult]:
    await wait_healthy(server)
    await create_accounts(server.base, await read_setup_code(server), 2)
    member = await sign_in(server.base, member_email(1), folder)
    cpu = CpuWindow(server.process.pid)
    try:
        host_id = await builtin_host_id(member)
        hosts = await connect_all(member, host_id, max(args.viewers, 1))
        print(f"server {server.base} ready; {len(hosts)} connections to {host_id}", flush=True)
        try:
            async with fixture_site() as url:
                tab = await hosts[0].call("browser-control-v1/new_tab", {"url": url})
                throughput = []
                for count in (c for c in VIEWER_COUNTS if c <= len(hosts)):
                    throughput.append(
                        await throughput_phase(hosts[:count], tab["id"], args.seconds, cpu)
                    )
                    print(f"throughput with {count} viewer(s) measured", flush=True)
                presses = await input_phase(hosts[0], tab["id"], args.presses)
        finally:
            await close_all(hosts)
    finally:
        await member.hub.close()
    return throughput, presses


def describe_setup(args: argparse.Namespace, settings: dict[str, str]) -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "aiortc": version("aiortc"),
        "playwright": version("playwright"),
        "server": "crewhost serve (hub and built-in host in one process, one event loop)",
        "viewport": f"{VIEWPORT[0]}x{VIEWPORT[1]}",
        "live_view_settings": settings,
        "seconds_per_throughput_phase": args.seconds,
        "presses": args.presses,
        "load_average_before": [round(load, 2) for load in os.getloadavg()],
    }


def run_benchmark(args: argparse.Namespace, folder: Path) -> Report:
    settings = live_view_settings(args)
    setup = describe_setup(args, settings)
    data_dir, peers_dir = folder / "server", folder / "peers"
    data_dir.mkdir()
    peers_dir.mkdir()
    # The fixture page is on loopback, which the host's browsers are refused by default.
    allowed = {"CREWHOST_HOST_BROWSER_ALLOWED_HOSTS": "127.0.0.1"}
    server = start_server(data_dir, {**os.environ, **settings, **allowed})
    setup["server_pid"] = server.process.pid
    try:
        throughput, presses = asyncio.run(measure(server, args, peers_dir))
    finally:
        stop_server(server)
    setup["load_average_after"] = [round(load, 2) for load in os.getloadavg()]
    return Report(setup, throughput, presses)


# --- report -----------------------------------------------------------------------------


def goals(report: Report) -> dict[str, dict[str, Any]]:
    by_count = {result.viewers: result for result in report.throughput}
    one, twenty = by_count.get(1), by_count.get(20)
    return {
        "fps_one_viewer": {
            "measure": "fps, 1 viewer",
            "goal": f">= {GOAL_FPS_ONE:.0f}",
            "measured": one.fps_mean if one else None,
            "met": bool(one and one.fps_mean >= GOAL_FPS_ONE),
        },
        "fps_twenty_viewers": {
            "measure": "fps of the slowest of 20 viewers",
            "goal": f">= {GOAL_FPS_EACH_OF_20:.0f}",
            "measured": twenty.fps_min if twenty else None,
            "met": bool(twenty and twenty.fps_min >= GOAL_FPS_EACH_OF_20),
        },
        "input_to_frame": {
            "measure": "input to frame p95 ms, no press missed",
            "goal": f"<= {GOAL_INPUT_P95_MS:.0f}",
            "measured": report.input.p95_ms,
            "met": report.input.p95_ms <= GOAL_INPUT_P95_MS and not report.input.missed,
        },
    }


def print_report(report: Report) -> None:
    setup = report.setup
    print(
        f"\nmachine: {setup['cores']} cores, Python {setup['python']}, "
        f"aiortc {setup['aiortc']}, playwright {setup['playwright']}"
    )
    print(f"server: {setup['server']}; viewport {setup['viewport']}")
    for name, value in setup["live_view_settings"].items():
        print(f"setting {name}={value}")
    print(
        f"load average (1, 5, 15 min): before {setup['load_average_before']}, "
        f"after {setup['load_average_after']}"
    )
    print(
        f"\nthroughput: each viewer on its own connection, {setup['seconds_per_throughput_phase']}s"
    )
    print(
        f"{'viewers':>7} {'fps mean':>8} {'min':>5} {'max':>5} {'bytes/frame':>11} "
        f"{'size':>9} {'host fps':>8} {'CPU server':>10} {'browser':>8} {'driver':>7} "
        f"{'client':>7} {'others':>7}"
    )
    for r in report.throughput:
        c = r.cpu_percent
        print(
            f"{r.viewers:>7} {r.fps_mean:>8.1f} {r.fps_min:>5.1f} {r.fps_max:>5.1f} "
            f"{r.bytes_per_frame:>11} {r.frame_size:>9} {r.host_fps:>8.1f} {c.server:>9.1f}% "
            f"{c.browser:>7.1f}% {c.driver:>6.1f}% {c.client:>6.1f}% {c.others:>6.1f}%"
        )
    print(
        "(host fps: frames the host encoded for the tab, from sequence numbers; CPU in "
        "percent of one core; browser: Chromium's processes, driver: the Playwright driver, "
        "both descendants of the server)"
    )
    i = report.input
    print(
        f"\ninput to frame: {i.presses} presses, {i.missed} missed, p50 {i.p50_ms:.1f} ms, "
        f"p95 {i.p95_ms:.1f} ms, max {i.max_ms:.1f} ms\n"
    )
    for goal in goals(report).values():
        verdict = "MET" if goal["met"] else "NOT MET"
        print(f"goal {goal['measure']} {goal['goal']}: {goal['measured']}, {verdict}")


def write_results(report: Report) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "setup": report.setup,
        "goals": goals(report),
        "throughput": [asdict(result) for result in report.throughput],
        "input": asdict(report.input),
    }
    RESULTS_FILE.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results written to {RESULTS_FILE}")


# --- main -------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--viewers", type=int, default=20, help="most viewers at once")
    parser.add_argument("--presses", type=int, default=100, help="key presses timed")
    parser.add_argument("--quality", type=int, help="live_view_quality (default: the server's)")
    parser.add_argument("--max-fps", type=float, help="live_view_max_fps (default: the server's)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.viewers < 1 or args.presses < 1:
        parser.error("--seconds, --viewers and --presses must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder:
        report = run_benchmark(args, Path(folder))
    print_report(report)
    write_results(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())

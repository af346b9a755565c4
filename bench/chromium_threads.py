"""Chromium's two hub threads over a window: their time on a CPU, and their time waiting
for one.

Every frame of a watched tab and every key a person presses in it pass through two
threads that serve every tab of their browser: the browser process's main thread (the
key in, the captured frame out, every tab's DevTools traffic, tabs made and closed,
navigations committed) and the GPU process's compositor thread (each tab's frames drawn
and captured). ``/proc/<pid>/task/<tid>/schedstat`` gives a thread's time on a CPU and its
time runnable but waiting for one: a thread at work most of the window is too busy, one
that waits most of it has too little of the machine. Of each kind, the busiest thread in
the window is reported (the agents' browser, beside idle ones).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from live_view import descendants, process_stats

# A thread's name as /proc gives it (15 characters at most).
COMPOSITOR_THREAD = "VizCompositorTh"


@dataclass(frozen=True)
class Times:
    """A thread's seconds on a CPU and waiting for one, so far."""

    on_cpu: float
    waiting: float


def hub_threads(server_pid: int) -> dict[tuple[str, int], Times]:
    """Each hub thread of every Chromium below ``server_pid``, by kind and thread id."""
    stats = process_stats()
    below = descendants(stats, server_pid)
    drivers = {pid for pid in below if stats[pid].name.startswith("node")}
    found: dict[tuple[str, int], Times] = {}
    chromium: set[int] = set()
    for driver in drivers:
        chromium |= descendants(stats, driver)
    for pid in chromium:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # it ended
        if b"--type=" not in command:
            # A browser process: its main thread has its id. Debian's headless shell is
            # started through a launcher that stays as the browser's parent: both count,
            # and the launcher, idle, is never the busiest.
            _add(found, "browser_main", pid, pid)
        elif b"--type=gpu-process" in command:
            with contextlib.suppress(OSError):
                for task in Path(f"/proc/{pid}/task").iterdir():
                    if (task / "comm").read_text().strip() == COMPOSITOR_THREAD:
                        _add(found, "gpu_compositor", pid, int(task.name))
    return found


def _add(found: dict[tuple[str, int], Times], kind: str, pid: int, tid: int) -> None:
    try:
        fields = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
    except OSError:
        return  # it ended
    found[(kind, tid)] = Times(int(fields[0]) / 1e9, int(fields[1]) / 1e9)


@dataclass
class HubThreadWindow:
    """The hub threads' share of a window at work and waiting for a CPU, in percent."""

    server_pid: int
    started: float = 0.0
    before: dict[tuple[str, int], Times] = field(default_factory=dict)

    def start(self) -> None:
        self.started = time.perf_counter()
        self.before = hub_threads(self.server_pid)

    def stop(self) -> dict[str, dict[str, float]]:
        elapsed = time.perf_counter() - self.started
        after = hub_threads(self.server_pid)
        busiest: dict[str, tuple[float, float]] = {}
        for key, now in after.items():
            was = self.before.get(key)
            if was is None:
                continue  # started in the window: not the agents' long-lived threads
            used = (now.on_cpu - was.on_cpu, now.waiting - was.waiting)
            if used[0] >= busiest.get(key[0], (-1.0, 0.0))[0]:
                busiest[key[0]] = used
        return {
            kind: {
                "at_work_percent": round(100 * on_cpu / elapsed, 1),
                "waiting_percent": round(100 * waiting / elapsed, 1),
            }
            for kind, (on_cpu, waiting) in sorted(busiest.items())
        }


def hub_line(threads: dict[str, dict[str, float]]) -> str:
    """The report's line: each hub thread's share of the window at work and waiting."""
    names = {"browser_main": "browser main", "gpu_compositor": "GPU compositor"}
    split = ", ".join(
        f"{names.get(kind, kind)} {shares['at_work_percent']:.0f}/{shares['waiting_percent']:.0f}"
        for kind, shares in threads.items()
    )
    return f"Chromium's hub threads, % of the window at work / waiting for a CPU: {split}"

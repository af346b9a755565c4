"""``crewhost`` with the loop's stalls watched: the server process of ``bench/capacity.py``.

Run as ``python bench/watched_serve.py serve --port ...`` (the arguments of ``crewhost``).
It installs a ``LoopWatch`` heartbeat (every 10 ms), ``GcPauses`` and ``StallStacks``
(``bench/loop_watch.py``) on the server's loop, then runs the command as ``crewhost``
does. The benchmark talks to it with signals:

* ``SIGUSR1``: start a window: forget what was measured, and apply the garbage
  collector mode written in the file ``CAPACITY_GC_MODE_FILE`` names, if any;
* ``SIGUSR2``: end the window: write what was measured since ``SIGUSR1``, as JSON, to
  the file ``CAPACITY_PROBE_FILE`` names (written whole, then renamed into place).

Garbage collector modes: ``served`` (as the server runs itself), ``threshold:<a>,<b>,<c>``
(``gc.set_threshold``, on top of ``served``), ``unfrozen`` (start-up's objects given back
to the collector, ``gc.unfreeze()``; not undone, so the last of a comparison).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from loop_watch import GcPauses, LoopWatch, StallStacks

from server import cli, event_loop

PROBE_FILE = "CAPACITY_PROBE_FILE"
GC_MODE_FILE = "CAPACITY_GC_MODE_FILE"
INTERVAL_SECONDS = 0.010
SERVED_THRESHOLD = gc.get_threshold()


def apply_gc_mode(mode: str) -> None:
    if mode.startswith("threshold:"):
        a, b, c = (int(n) for n in mode.split(":", 1)[1].split(","))
        gc.set_threshold(a, b, c)
        return
    gc.set_threshold(*SERVED_THRESHOLD)
    if mode == "unfrozen":  # last of a comparison: start-up's objects are not frozen again
        gc.unfreeze()


def heap_census(top: int = 12) -> dict[str, Any]:
    """What a full collection walks, taken after the window: the objects the collector
    tracks outside the frozen start-up ones and the most common types among them; then
    what a full collection right away finds to free (cycles only the collector frees),
    and its most common types."""
    tracked = _by_type(gc.get_objects())
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        started = time.thread_time()
        gc.collect()
        took = time.thread_time() - started
        garbage = _by_type(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    started = time.thread_time()
    gc.collect()
    walk = time.thread_time() - started
    return {
        # Another full collection at once, with nothing to free: the walk alone.
        "walk_cpu_ms": round(walk * 1000, 1),
        "tracked": sum(tracked.values()),
        "top": dict(tracked.most_common(top)),
        "garbage": sum(garbage.values()),
        "collect_cpu_ms": round(took * 1000, 1),
        "garbage_top": dict(garbage.most_common(top)),
    }


def _by_type(objects: list[Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for obj in objects:
        kind = type(obj)
        counts[f"{kind.__module__}.{kind.__qualname__}"] += 1
    return counts


class Probe:
    def __init__(self) -> None:
        self.watch = LoopWatch(INTERVAL_SECONDS)
        self.gc = GcPauses()
        self.stacks = StallStacks(self.watch)
        self.mode = "served"

    def start_window(self) -> None:
        mode_file = os.environ.get(GC_MODE_FILE)
        if mode_file and Path(mode_file).exists():
            self.mode = Path(mode_file).read_text().strip() or "served"
            apply_gc_mode(self.mode)
        self.watch.reset()
        self.gc.reset()
        self.stacks.reset()

    def end_window(self) -> None:
        target = Path(os.environ[PROBE_FILE])
        report: dict[str, Any] = {
            "gc_mode": self.mode,
            "gc_threshold": list(gc.get_threshold()),
            "gc_frozen": gc.get_freeze_count(),
            "loop": self.watch.summary(),
            "gc": self.gc.summary(),
            "stall_stacks": self.stacks.summary(),
            "heap": heap_census(),
        }
        partial = target.with_suffix(".partial")
        partial.write_text(json.dumps(report))
        partial.rename(target)

    async def watching(self, main: Coroutine[Any, Any, Any]) -> Any:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, self.start_window)
        loop.add_signal_handler(signal.SIGUSR2, self.end_window)
        heartbeat = asyncio.ensure_future(self.watch.run())
        self.stacks.start()
        try:
            return await main
        finally:
            heartbeat.cancel()


def main() -> int:
    probe = Probe()
    run = event_loop.run

    def watched_run(main: Coroutine[Any, Any, Any], choice: Any) -> Any:
        return run(probe.watching(main), choice)

    event_loop.run = watched_run
    return cli.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())

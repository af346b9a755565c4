"""``crewhost`` with the loop's stalls watched: the server process of ``bench/capacity.py``.

Run as ``python bench/watched_serve.py serve --port ...`` (the arguments of ``crewhost``).
It installs a ``LoopWatch`` heartbeat (every 10 ms), ``GcPauses`` and ``StallStacks``
(``bench/loop_watch.py``) on the server's loop, then runs the command as ``crewhost``
does. The benchmark talks to it with signals:

* ``SIGUSR1``: start a window: forget what was measured, and apply the garbage
  collector mode written in the file ``CAPACITY_GC_MODE_FILE`` names, if any;
* ``SIGUSR2``: end the window: write what was measured since ``SIGUSR1``, as JSON, to
  the file ``CAPACITY_PROBE_FILE`` names (written whole, then renamed into place).

It also writes down, by the wall clock, when each live view's key press reached the
host, when its ``Input.dispatchKeyEvent`` went to Chromium and was answered, and when
each screencast frame reached the host with Chromium's capture time (``KeyPath``): the
bench splits a key's way to the frame that shows it with them.

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
from server.host.live.screencast import TabScreencast
from server.host.live.session import ViewSession

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


class KeyPath:
    """Wall-clock times of the watched tab's keys and frames in the host, in a window."""

    def __init__(self) -> None:
        self.received: list[float] = []  # a key press read off a view's channel
        self.dispatched: list[tuple[float, float]] = []  # its keyDown sent, and answered
        self.frames: list[tuple[float, float]] = []  # a frame's capture, and its arrival
        self._install()

    def reset(self) -> None:
        self.received.clear()
        self.dispatched.clear()
        self.frames.clear()

    def summary(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "dispatched": self.dispatched,
            "frames": self.frames,
        }

    def _install(self) -> None:
        path = self
        on_message, cdp = ViewSession.on_message, ViewSession._cdp
        on_frame = TabScreencast._on_frame

        def watched_message(session: ViewSession, raw: str | bytes) -> None:
            if isinstance(raw, str) and '"key"' in raw and '"down"' in raw:
                path.received.append(time.time())
            on_message(session, raw)

        async def watched_cdp(session: ViewSession, method: str, params: dict[str, Any]) -> None:
            sent = time.time()
            await cdp(session, method, params)
            if method == "Input.dispatchKeyEvent" and params.get("type") == "keyDown":
                path.dispatched.append((sent, time.time()))

        def watched_frame(screencast: TabScreencast, params: dict[str, Any]) -> None:
            captured = params.get("metadata", {}).get("timestamp")
            if captured is not None:
                path.frames.append((float(captured), time.time()))
            on_frame(screencast, params)

        ViewSession.on_message = watched_message  # type: ignore[method-assign,assignment]
        ViewSession._cdp = watched_cdp  # type: ignore[method-assign,assignment]
        TabScreencast._on_frame = watched_frame  # type: ignore[method-assign,assignment]


class Probe:
    def __init__(self) -> None:
        self.watch = LoopWatch(INTERVAL_SECONDS)
        self.gc = GcPauses()
        self.stacks = StallStacks(self.watch)
        self.keys = KeyPath()
        self.mode = "served"

    def start_window(self) -> None:
        mode_file = os.environ.get(GC_MODE_FILE)
        if mode_file and Path(mode_file).exists():
            self.mode = Path(mode_file).read_text().strip() or "served"
            apply_gc_mode(self.mode)
        self.watch.reset()
        self.gc.reset()
        self.stacks.reset()
        self.keys.reset()

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
            "key_path": self.keys.summary(),
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

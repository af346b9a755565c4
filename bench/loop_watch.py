"""How late an event loop runs and what holds it: shared by the benchmarks that measure stalls.

* ``LoopWatch``: a heartbeat on the loop it runs on; every lateness of a short sleep
  (the loop's lag), its worst, its 99th percentile, and the worst without the time the
  loop's thread waited for a CPU (``/proc/self/task/<id>/schedstat``: a busy machine's
  doing, not the loop's).
* ``GcPauses``: every garbage collection of the process through ``gc.callbacks``, by
  generation; a collection holds the GIL, so it stalls the loop whichever thread started it.
* ``StallStacks``: a watchdog thread that, while the heartbeat is overdue, samples the
  loop thread's stack; the innermost frames of the samples say what held the loop.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness import percentile

SERVER_PACKAGES = ("/server/", "/peer/")


def run_queue_wait(thread_id: int) -> float:
    """Seconds the thread has spent runnable but waiting for a CPU (0 if unknown)."""
    try:
        fields = Path(f"/proc/self/task/{thread_id}/schedstat").read_text().split()
    except OSError:
        return 0.0
    return int(fields[1]) / 1e9


class GcPauses:
    """The garbage collections of the process since the last reset."""

    def __init__(self) -> None:
        self.worst = 0.0
        # (generation, seconds, CPU seconds of the collecting thread, objects freed): on a
        # busy machine a collection also waits for a CPU, which the wall time counts and
        # the CPU time not.
        self.pauses: list[tuple[int, float, float, int]] = []
        self._started: float | None = None
        self._started_cpu = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started, self._started_cpu = time.perf_counter(), time.thread_time()
        elif self._started is not None:
            took = time.perf_counter() - self._started
            self.worst = max(self.worst, took)
            cpu = time.thread_time() - self._started_cpu
            self.pauses.append((info.get("generation", 0), took, cpu, info.get("collected", 0)))
            self._started = None

    def reset(self) -> None:
        self.worst = 0.0
        self.pauses = []

    def stop(self) -> None:
        gc.callbacks.remove(self._on_gc)

    def summary(self) -> dict[str, Any]:
        by_generation: dict[str, Any] = {}
        for generation in range(3):
            took = sorted(t for g, t, _, _ in self.pauses if g == generation)
            cpu = sorted(c for g, _, c, _ in self.pauses if g == generation)
            freed = [n for g, _, _, n in self.pauses if g == generation]
            by_generation[str(generation)] = {
                "count": len(took),
                "total_ms": round(sum(took) * 1000, 1),
                "worst_ms": round(took[-1] * 1000, 2) if took else 0.0,
                "worst_cpu_ms": round(cpu[-1] * 1000, 2) if cpu else 0.0,
                "most_freed": max(freed, default=0),
            }
        return {
            "worst_ms": round(self.worst * 1000, 2),
            "worst_cpu_ms": round(max((c for _, _, c, _ in self.pauses), default=0.0) * 1000, 2),
            "total_ms": round(sum(t for _, t, _, _ in self.pauses) * 1000, 1),
            "by_generation": by_generation,
        }


class LoopWatch:
    """The lateness of a heartbeat sleeping ``interval`` on its loop, since the last reset."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.worst = 0.0
        self.worst_own = 0.0
        self.lags: list[float] = []
        self.own_lags: list[float] = []
        self.last_tick = time.perf_counter()
        self.thread_ident: int | None = None
        self._reset_at = 0.0

    async def run(self) -> None:
        thread_id = threading.get_native_id()
        self.thread_ident = threading.get_ident()
        while True:
            asked, waited = time.perf_counter(), run_queue_wait(thread_id)
            await asyncio.sleep(self.interval)
            self.last_tick = time.perf_counter()
            if asked < self._reset_at:
                continue  # a beat that began before the reset is not this window's
            late = max(0.0, self.last_tick - asked - self.interval)
            own = max(0.0, late - (run_queue_wait(thread_id) - waited))
            self.lags.append(late)
            self.own_lags.append(own)
            self.worst = max(self.worst, late)
            self.worst_own = max(self.worst_own, own)

    def reset(self) -> None:
        self.worst = self.worst_own = 0.0
        self.lags = []
        self.own_lags = []
        self._reset_at = time.perf_counter()

    def summary(self) -> dict[str, Any]:
        ordered, own = sorted(self.lags), sorted(self.own_lags)
        return {
            "samples": len(ordered),
            "interval_ms": self.interval * 1000,
            "worst_stall_ms": round(self.worst * 1000, 2),
            "worst_stall_without_cpu_wait_ms": round(self.worst_own * 1000, 2),
            "lag_p50_ms": round(percentile(ordered, 0.50) * 1000, 2),
            "lag_p99_ms": round(percentile(ordered, 0.99) * 1000, 2),
            "lag_p99_without_cpu_wait_ms": round(percentile(own, 0.99) * 1000, 2),
            "stalls_over_50_ms": sum(1 for lag in ordered if lag > 0.050),
        }


def _where(frame: Any) -> str:
    code = frame.f_code
    return f"{Path(code.co_filename).name}:{frame.f_lineno} {code.co_name}"


def _own(frame: Any) -> bool:
    return any(package in frame.f_code.co_filename for package in SERVER_PACKAGES)


class StallStacks:
    """Samples the loop thread's stack every ``every`` seconds while its heartbeat is more
    than ``overdue`` seconds late; counts the samples by innermost frame, and by the
    innermost frame of the project's own code."""

    def __init__(self, watch: LoopWatch, overdue: float = 0.025, every: float = 0.005) -> None:
        self.watch = watch
        self.overdue = overdue
        self.every = every
        self.innermost: Counter[str] = Counter()
        self.own_code: Counter[str] = Counter()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="stall-stacks", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the sampling thread (within one sampling interval)."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def reset(self) -> None:
        self.innermost = Counter()
        self.own_code = Counter()

    def _sample(self) -> None:
        while not self._stopped.wait(self.every):
            ident = self.watch.thread_ident
            late = time.perf_counter() - self.watch.last_tick - self.watch.interval
            if ident is None or late < self.overdue:
                continue
            frame = sys._current_frames().get(ident)
            if frame is None:
                continue
            self.innermost[_where(frame)] += 1
            while frame is not None and not _own(frame):
                frame = frame.f_back
            if frame is not None:
                self.own_code[_where(frame)] += 1

    def summary(self, top: int = 12) -> dict[str, Any]:
        return {
            "sample_ms": self.every * 1000,
            "innermost": dict(self.innermost.most_common(top)),
            "project_code": dict(self.own_code.most_common(top)),
        }

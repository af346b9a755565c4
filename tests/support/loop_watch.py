"""Fails a test whose event loop stopped answering because something blocked it.

A heartbeat on the loop and a watchdog thread measure how long the loop went without a
beat while it was running. Not counted: time the loop was stopped (pytest runs it once
per fixture step and does its own work in between); time the loop thread spent waiting
for a CPU (the kernel's run-queue delay, from /proc, and the hypervisor's steal time of
a virtual machine's CPUs); the interpreter's garbage-collection pauses (a full
collection of a long test run's heap can take most of a second); time the loop thread
sat in its selector waiting for I/O or its next timer (when it was late to wake, another
thread held the interpreter or the machine was starved); and time it waited for a thread
it started to get a CPU, or for a process it started to exec; and time the whole process
was held, seen by the watchdog's own thread waking late while the loop thread did not run
(``_HeldWatch``: another thread kept the interpreter's lock, or the machine stood still):
none of it is the test's doing. A callback that blocks is seen
as it runs, in its own frame. The kernel counts a wait for a CPU only once the thread
runs again, so a late beat the watchdog sees is a suspect until the next beat (or the
loop's stop) says how much of it was such a wait.

Nor is the time the process's other threads waited for a CPU while the loop was late: a
thread that holds the interpreter's lock and is taken off its CPU keeps it until it runs
again, and the loop thread, back from any call that let the lock go (a socket's send, a
pipe's write), waits for it meanwhile. Every "block" the suite met on a full machine was
of this kind, in a non-blocking send on loopback or a pipe.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import traceback
from asyncio import selector_events
from collections.abc import AsyncIterator
from types import FrameType

import pytest_asyncio

# A blocking call (a sync sleep, a sync HTTP request, a lock held across threads) lasts
# longer than this; an ordinary callback is far shorter.
BLOCK_LIMIT_SECONDS = 0.5
# The heartbeat's period and the watchdog's: a block is measured from the last beat before
# it, so up to this much long, a tenth of the limit. (Every 20 ms, the watch took 3 % of
# a core for each watched loop, the whole suite long; every 50 ms, 1 %.)
BEAT_SECONDS = 0.05
# How late a beat is when the watchdog starts looking where the loop is: seen in a wait
# that is not the test's, the loop's time up to there is not counted.
LOOK_AFTER_SECONDS = 2 * BEAT_SECONDS


class _GcClock:
    """Seconds spent in garbage collection so far, the collection under way included."""

    def __init__(self) -> None:
        self._done = 0.0
        self._started: float | None = None
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.monotonic()
        elif self._started is not None:
            self._done += time.monotonic() - self._started
            self._started = None

    @property
    def total(self) -> float:
        started = self._started
        return self._done + (time.monotonic() - started if started is not None else 0.0)


_gc_clock = _GcClock()


class _ProcFiles:
    """Files of /proc kept open and read again from their start: the watch reads a few
    at every beat on every worker, and opening one costs twenty times what reading it
    does (opened anew each time, the reads took 2.6 % of a core more for each watched
    loop)."""

    def __init__(self) -> None:
        self._open: dict[str, int] = {}
        # The loop's thread and the watchdog's read, and a descriptor closed under one
        # thread's read could be another file's by then.
        self._lock = threading.Lock()

    def read(self, path: str) -> bytes:
        """The file's first 512 bytes as they are now; OSError once it is gone (a thread
        that ended)."""
        with self._lock:
            fd = self._open.get(path)
            if fd is None:
                fd = self._open[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                return os.pread(fd, 512, 0)
            except OSError:
                self._close(path)
                raise

    def close(self, path: str) -> None:
        with self._lock:
            self._close(path)

    def keep_only(self, paths: set[str]) -> None:
        """Closes the files of ``/proc/self/task`` but ``paths`` (threads come and go)."""
        with self._lock:
            for path in [p for p in self._open if p.startswith(_TASKS) and p not in paths]:
                self._close(path)

    def _close(self, path: str) -> None:
        fd = self._open.pop(path, None)
        if fd is not None:
            os.close(fd)


_TASKS = "/proc/self/task/"
_PROC = _ProcFiles()


def _schedstat_path(thread_id: int) -> str:
    return f"{_TASKS}{thread_id}/schedstat"


def _schedstat(thread_id: int, field: int) -> float:
    """One of the kernel's times of this thread, in seconds, or 0 if unknown: 0 on a CPU,
    1 runnable but waiting for one."""
    try:
        fields = _PROC.read(_schedstat_path(thread_id)).split()
    except OSError:
        return 0.0
    return int(fields[field]) / 1e9


def _run_queue_wait(thread_id: int) -> float:
    """Seconds this thread has spent runnable but waiting for a CPU, or 0 if unknown."""
    return _schedstat(thread_id, 1)


_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def _stolen() -> float:
    """Seconds the machine's CPUs, all together, were held by the hypervisor for others
    (steal time; 0 outside a virtual machine): no thread of the machine ran meanwhile."""
    try:
        fields = _PROC.read("/proc/stat").split(b"\n", 1)[0].split()
    except OSError:
        return 0.0
    return int(fields[8]) / _TICKS_PER_SECOND if len(fields) > 8 else 0.0


def _others_run_queue_wait(thread_id: int) -> float:
    """Seconds the process's threads but ``thread_id`` have waited for a CPU, together."""
    try:
        threads = [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return 0.0
    _PROC.keep_only({_schedstat_path(thread) for thread in threads})
    return sum(_run_queue_wait(other) for other in threads if other != thread_id)


def _on_cpu(thread_id: int) -> float:
    """Seconds this thread has run on a CPU, or 0 if unknown."""
    return _schedstat(thread_id, 0)


class _HeldWatch:
    """Time the whole process was held, the watchdog's thread with the loop's: seen by the
    watchdog waking late (beyond its own wait for a CPU) while the loop thread did not run
    either. Another thread kept the interpreter's lock (a call that holds it, or a thread
    that holds it stopped in a page fault), or the machine stood still under its hypervisor
    without counting it as stolen: the loop could not have beaten meanwhile, whatever it
    ran. A call of the loop's own that holds the lock runs on its CPU and is not excused."""

    # The watchdog's period, and how late it may wake before that counts.
    PERIOD = BEAT_SECONDS
    SLACK = 0.05

    def __init__(self, loop_thread: int) -> None:
        self.loop_thread = loop_thread
        self.held = 0.0
        self.watchdog_thread = 0
        self._last = (0.0, 0.0, 0.0)

    def start(self) -> None:
        """Called on the watchdog's thread before its first wait."""
        self.watchdog_thread = threading.get_native_id()
        self._last = self._now()

    def _now(self) -> tuple[float, float, float]:
        return time.monotonic(), _run_queue_wait(self.watchdog_thread), _on_cpu(self.loop_thread)

    def woke(self) -> None:
        """Called on the watchdog's thread each time it wakes."""
        now = self._now()
        (at, waited, ran), self._last = self._last, now
        late = now[0] - at - self.PERIOD - (now[1] - waited)
        if late > self.SLACK and now[2] - ran < late / 2:
            self.held += late


def _excused(thread_id: int) -> float:
    return _run_queue_wait(thread_id) + _gc_clock.total + _stolen()


def _within(frame: FrameType | None, names: tuple[str, ...], filename: str) -> bool:
    """Whether ``frame`` or one of its callers runs a function of ``names`` in ``filename``."""
    while frame is not None:
        if frame.f_code.co_name in names and frame.f_code.co_filename == filename:
            return True
        frame = frame.f_back
    return False


def _starting_a_thread(frame: FrameType | None) -> bool:
    """Whether the loop thread waits for a thread it started to run (an executor growing):
    an instant on a machine with a free CPU, the whole wait of the new thread for one when
    the machine is starved, and that wait is the kernel's, not the test's."""
    return _within(frame, ("start",), threading.__file__)


def _in_the_watch(frame: FrameType | None) -> bool:
    """Whether the loop thread is in the heartbeat's own reading of its clocks (a /proc
    read that a starved machine can hold up): the watch's time, not the test's."""
    names = ("_excused", "_schedstat", "_run_queue_wait", "_others_run_queue_wait", "_stolen")
    return _within(frame, names, __file__)


def _starting_a_process(frame: FrameType | None) -> bool:
    """Whether the loop thread waits in the kernel for a process it starts to exec (asyncio
    starts every process so, with no way around it): an instant on a machine with a free
    CPU, the new process's whole wait for one when the machine is starved."""
    return _within(frame, ("_execute_child",), subprocess.__file__)


def _in_a_socket_call(frame: FrameType | None) -> bool:
    """Whether the loop thread is in a call of one of asyncio's transports on its
    non-blocking socket (``send``, ``recv``): such a call never waits for the other end,
    and a late return from it is the kernel's or the interpreter lock's (another thread's
    turn), not a block of the test's (a send to the database held up half a second on a
    starved machine)."""
    return frame is not None and frame.f_code.co_filename == selector_events.__file__


def _waiting_in_selector(frame: FrameType | None) -> bool:
    """Whether the loop thread is inside its selector's wait (no callback of the loop runs)."""
    return (
        frame is not None
        and frame.f_code.co_name in ("select", "poll")
        and frame.f_code.co_filename.endswith("selectors.py")
    )


def _awaited_by(task: asyncio.Task[object]) -> list[str]:
    """Where ``task`` waits: its coroutine and each one it awaits, down to the last."""
    lines: list[str] = []
    awaited: object = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
        if frame is not None:
            lines.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
    return lines


def report_tasks(seconds: float) -> None:
    """Print where every task of the running loop waits: a test that hangs in an await
    shows only its loop's selector in the timeout's stacks of threads."""
    print(f"--- after {seconds:.0f} s, the loop's tasks wait in:", file=sys.stderr)
    for task in asyncio.all_tasks():
        print(f"{task!r}", *_awaited_by(task), sep="\n", file=sys.stderr)


async def watch_event_loop(hang_report_seconds: float | None = None) -> AsyncIterator[None]:
    """Watch the running loop while the caller's block runs; with
    ``hang_report_seconds``, say where its tasks wait once it has run that long."""
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    loop_thread = threading.get_native_id()
    loop_ident = threading.get_ident()
    held = _HeldWatch(loop_thread)

    def excused() -> float:
        return _excused(loop_thread) + held.held

    culprit = ""
    beat = (time.monotonic(), excused())
    worst = 0.0
    # A late beat the watchdog saw, (since, excused then, where the loop was, the other
    # threads' waits for a CPU then), confirmed or dropped by the next beat: the kernel
    # adds a wait for a CPU to a thread's run-queue delay only once the thread runs again,
    # so while the loop thread (or the thread holding the interpreter's lock) still waits
    # for one, the watchdog cannot tell that wait from a block. The beat after it can.
    # The other threads are read only then: reading them at every beat would cost more.
    suspect: tuple[float, float, str, float] | None = None
    stop = threading.Event()
    confirming = threading.Lock()

    def confirm(now: float, excused_now: float) -> None:
        nonlocal worst, culprit, suspect
        with confirming:
            if suspect is None:
                return
            since, excused_at, where, others_at = suspect
            suspect = None
        others = max(0.0, _others_run_queue_wait(loop_thread) - others_at)
        blocked = now - since - (excused_now - excused_at) - others
        if blocked > worst:
            worst, culprit = blocked, where

    async def heartbeat() -> None:
        nonlocal beat, hang_report_seconds
        while True:
            now, excused_now = time.monotonic(), excused()
            confirm(now, excused_now)
            if hang_report_seconds is not None and now - started > hang_report_seconds:
                report_tasks(now - started)
                hang_report_seconds = None
            beat = (now, excused_now)
            await asyncio.sleep(BEAT_SECONDS)

    def watchdog() -> None:
        nonlocal suspect
        idle = beat
        held.start()
        while not stop.wait(held.PERIOD):
            held.woke()
            if not loop.is_running():
                # Stopped (pytest's turn): a late beat seen before counts up to here.
                idle = (time.monotonic(), excused())
                confirm(*idle)
                continue
            beat_at, excused_at = max(beat, idle)
            late = time.monotonic() - beat_at
            if late < LOOK_AFTER_SECONDS:
                continue
            # Where the loop thread is right now: the blocking call, for the report.
            frame = sys._current_frames().get(loop_ident)
            if (
                _waiting_in_selector(frame)
                or _in_a_socket_call(frame)
                or _starting_a_thread(frame)
                or _starting_a_process(frame)
                or _in_the_watch(frame)
            ):
                # Not the test's time up to here: a late beat is measured from now on,
                # as the loop may move on and be seen elsewhere before its next beat.
                idle = (time.monotonic(), excused())
                continue
            if late < BLOCK_LIMIT_SECONDS:
                continue  # what is excused only shortens it
            blocked = late - (excused() - excused_at)
            if blocked < BLOCK_LIMIT_SECONDS or (suspect is not None and suspect[0] == beat_at):
                continue
            where = "".join(traceback.format_stack(frame)[-8:]) if frame else ""
            suspect = (beat_at, excused_at, where, _others_run_queue_wait(loop_thread))

    task = loop.create_task(heartbeat())
    thread = threading.Thread(target=watchdog, name="loop-watchdog", daemon=True)
    thread.start()
    yield
    if suspect is not None:
        await asyncio.sleep(0.05)  # a beat to confirm or drop it
    stop.set()
    thread.join()
    _PROC.close(_schedstat_path(held.watchdog_thread))
    task.cancel()
    confirm(time.monotonic(), excused())
    assert worst < BLOCK_LIMIT_SECONDS, (
        f"the event loop was blocked for {worst:.2f} s in:\n{culprit}"
    )


@pytest_asyncio.fixture(autouse=True, loop_scope="module", name="event_loop_watch")
async def module_loop_watch() -> AsyncIterator[None]:
    """The suite's watchdog on the module's loop, for a module whose tests all run in it
    (import it into the module; it takes the place of the suite's per-test one)."""
    async for _ in watch_event_loop():
        yield

"""Chromium's weight on the CPU: below the host's.

The host's event loop serves every person's calls and live views. With many agents at
work Chromium wants more CPU than the machine has, and at the host's own priority it
kept the loop waiting for a CPU for tens of milliseconds at a time (the capacity bench,
``docs/benchmarks.md``): every person waited with it. So the host lowers the Chromium
it starts, by a nice value (``host.browser_cpu_nice``), in both of the ways Linux
shares a CPU:

* Playwright starts each Chromium in a session of its own, and where Linux groups a
  session's processes for the scheduler (autogroup: the host is in no CPU cgroup of its
  own) it shares the CPU between the groups first, whatever their threads' nice values:
  Chromium's group gets the nice value (``/proc/<pid>/autogroup``). Each Chromium is a
  group, and k groups weigh k times one: with several browsers (the shared profile's, the
  private tabs', each named profile's in use) each group goes lower still, so that
  together they weigh what one group at the nice value would (``group_nice``), and back
  up as browsers stop;
* everywhere else (a systemd service, a container) threads compete one by one: every
  thread of every Chromium process gets the nice value, and the threads and processes
  Chromium starts later take it from the thread that starts them.

Chromium run as root raises its display and input threads to nice -8, above the host;
``keep_from_raising`` takes that right (``CAP_SYS_NICE``) from the processes the
calling thread starts from then on, so Chromium's threads stay where they were put.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import math
import os
from dataclasses import dataclass

from server.common.process_tree import PROC, children_by_parent, descendants

log = logging.getLogger(__name__)

_PR_CAPBSET_DROP = 24
_CAP_SYS_NICE = 23
# What Playwright's driver is started with: every process under it is a browser's.
_DRIVER_ARGUMENT = b"run-driver"


@dataclass(frozen=True, slots=True)
class Lowered:
    """What one call lowered: Chromium's threads, and its session groups."""

    threads: int
    groups: int


@dataclass(frozen=True, slots=True)
class ChromiumTree:
    """One Chromium that a Playwright driver of this process started."""

    browser: int
    # The browser process and every process under it (renderers, GPU, utilities, zygotes).
    processes: tuple[int, ...]


def keep_from_raising() -> bool:
    """Takes the right to raise a thread's priority from every process this thread starts
    from now on (the capability bounding set; the host itself keeps its rights). False
    where the host may not (not root: then its children cannot raise it anyway)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_NICE, 0, 0, 0) == 0:
        return True
    reason = ctypes.get_errno()
    if reason not in (errno.EPERM, errno.EINVAL):
        log.warning("could not keep Chromium from raising its priority: %s", os.strerror(reason))
    return False


def chromium_trees() -> list[ChromiumTree]:
    """Every Chromium this process's Playwright drivers started, as it is now."""
    children = children_by_parent()
    drivers = [pid for pid in descendants(os.getpid(), children) if _is_driver(pid)]
    return [
        ChromiumTree(browser, (browser, *descendants(browser, children)))
        for driver in drivers
        for browser in children[driver]
    ]


# Passes over the trees until one finds nothing left to lower.
_MOST_PASSES = 5
# The scheduler's weight falls by this factor with each step of nice (sched_prio_to_weight).
_WEIGHT_STEP = 1.25
_LOWEST = 19


def group_nice(nice: int, groups: int) -> int:
    """The nice value of each of ``groups`` session groups that together weigh what one
    group at ``nice`` weighs (at most 19, the lowest)."""
    if nice <= 0 or groups <= 1:
        return nice
    return min(_LOWEST, nice + round(math.log(groups) / math.log(_WEIGHT_STEP)))


def lower_chromium(nice: int) -> Lowered:
    """Lowers every Chromium this process started to ``nice`` (a thread already lower
    stays lower), and sets each Chromium's session group so that all of them together
    weigh one group at ``nice``; call it again after each launch and each stop.

    A Chromium just launched is still starting processes and threads, and one started by
    a thread this pass had not reached yet keeps its starter's value (a utility process
    launched meanwhile, say): the walk is made again until it lowers nothing more.
    """
    threads = 0
    grouped: set[int] = set()
    own_session = os.getsid(0)
    for _ in range(_MOST_PASSES):
        lowered = 0
        trees = chromium_trees()
        leaders = [t.browser for t in trees if _in_session_of_its_own(t.browser, own_session)]
        each = group_nice(nice, len(leaders))
        for browser in leaders:
            if _set_group_nice(browser, each):
                grouped.add(browser)
        for tree in trees:
            lowered += sum(_lower_threads(pid, nice) for pid in tree.processes)
        threads += lowered
        if not lowered:
            break
    return Lowered(threads, len(grouped))


def _is_driver(pid: int) -> bool:
    try:
        return _DRIVER_ARGUMENT in (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def _in_session_of_its_own(pid: int, own_session: int) -> bool:
    """Lowering the group of the host's own session would lower the host."""
    try:
        return os.getsid(pid) != own_session
    except OSError:
        return False


def _set_group_nice(pid: int, nice: int) -> bool:
    try:
        (PROC / str(pid) / "autogroup").write_text(str(nice))
    except OSError:
        return False  # no autogroup in this kernel, or the process ended
    return True


def _lower_threads(pid: int, nice: int) -> int:
    lowered = 0
    try:
        tids = [int(task) for task in os.listdir(f"{PROC}/{pid}/task")]
    except OSError:
        return 0
    for tid in tids:
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < nice:
                # On Linux this is the one thread's value, not the process's.
                os.setpriority(os.PRIO_PROCESS, tid, nice)
                lowered += 1
        except OSError:
            continue
    return lowered

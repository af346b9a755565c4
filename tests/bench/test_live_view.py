"""The bench's CPU by process counts the processes that ended in the window (the renderer
of a tab an agent closed): their time is in the parent that waited for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# The bench's scripts import each other by name, as they run from their folder.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from live_view import descendants, process_stats, tree_cpu

BURN_SECONDS = 0.5
# A child that uses half a second of CPU once told to, then ends; its parent waits for it
# and says so, and stays.
PARENT = f"""
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", '''
import sys, time
sys.stdin.readline()
start = time.process_time()
while time.process_time() - start < {BURN_SECONDS}:
    pass
'''], stdin=subprocess.PIPE)
print(child.pid, flush=True)
sys.stdin.readline()
child.communicate(b"go\\n")
print("waited", flush=True)
sys.stdin.readline()
"""


def test_a_process_that_ended_in_the_window_is_counted() -> None:
    with subprocess.Popen(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as parent:
        try:
            used, ended, child = _window_around_the_childs_work(parent)
        finally:
            parent.kill()
    assert ended == {child}
    assert BURN_SECONDS * 0.9 <= used < BURN_SECONDS + 1.0


def _window_around_the_childs_work(
    parent: subprocess.Popen[str],
) -> tuple[float, set[int], int]:
    assert parent.stdin is not None
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    before = process_stats()  # the child runs: its parent started it before saying so
    assert child in descendants(before, parent.pid)
    parent.stdin.write("\n")
    parent.stdin.flush()
    assert parent.stdout.readline().strip() == "waited"
    after = process_stats()
    tree = {parent.pid}
    alive = (tree | descendants(after, parent.pid)) & set(after)
    ended = (tree | descendants(before, parent.pid)) - set(after)
    return tree_cpu(before, after, alive, ended), ended, child

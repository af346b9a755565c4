"""The bench's loop watch: its stall sampler stops when asked, not with the process."""

from __future__ import annotations

import sys
from pathlib import Path

# The bench's scripts import each other by name, as they run from their folder.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from loop_watch import LoopWatch, StallStacks


def test_the_stall_sampler_stops_when_asked() -> None:
    stacks = StallStacks(LoopWatch(interval=0.010), every=0.001)
    stacks.start()
    assert stacks._thread.is_alive()
    stacks.stop()
    assert not stacks._thread.is_alive()
    stacks.stop()  # a second stop is harmless

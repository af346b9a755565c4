"""The machine's processes as a tree, read from ``/proc``: whose children are whose."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PROC = Path("/proc")
# More than a process's stat line holds: a 16-byte name and some fifty numbers.
_STAT_BYTES = 4096


def children_by_parent() -> dict[int, list[int]]:
    """Every process's children, by parent pid, as they are now.

    Read with bare system calls: a host lowers its Chromium after every launch, walking
    the whole machine's processes a few times (hundreds of them beside many browsers),
    and ``Path.read_text`` cost it more than twice the CPU.
    """
    tree: dict[int, list[int]] = {}
    proc = str(PROC)
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            stat = _read_stat(f"{proc}/{name}/stat")
        except OSError:
            continue  # it ended while we looked
        # The command name sits in parentheses and may hold spaces; the ppid follows it.
        parent = int(stat[stat.rindex(b")") + 2 :].split(None, 2)[1])
        tree.setdefault(parent, []).append(int(name))
    return tree


def _read_stat(path: str) -> bytes:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        return os.read(descriptor, _STAT_BYTES)
    finally:
        os.close(descriptor)


def descendants(pid: int, tree: Mapping[int, list[int]]) -> list[int]:
    """Every process below ``pid`` in ``tree``: children, theirs, and so on."""
    found: list[int] = []
    waiting = list(tree.get(pid, ()))
    while waiting:
        child = waiting.pop()
        found.append(child)
        waiting.extend(tree.get(child, ()))
    return found

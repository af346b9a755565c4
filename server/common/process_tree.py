"""The machine's processes as a tree, read from ``/proc``: whose children are whose."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

PROC = Path("/proc")


def children_by_parent() -> dict[int, list[int]]:
    """Every process's children, by parent pid, as they are now."""
    tree: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        # The command name sits in parentheses and may hold spaces; the ppid follows it.
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int, tree: Mapping[int, list[int]]) -> list[int]:
    """Every process below ``pid`` in ``tree``: children, theirs, and so on."""
    found: list[int] = []
    waiting = list(tree.get(pid, ()))
    while waiting:
        child = waiting.pop()
        found.append(child)
        waiting.extend(tree.get(child, ()))
    return found

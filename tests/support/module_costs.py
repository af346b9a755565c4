"""The suite's modules, costliest first: ``python -m tests.support.module_costs REPORT``.

``make test`` hands whole modules to its workers (``--dist loadfile``). In the order
pytest-xdist picks by default (most tests first), the browser walks and benches, few
tests each but the longest, were handed out last, and the run ended with one worker
finishing them while the others stood idle. Handed out costliest first, the short
modules fill in at the end. A module's cost is its seconds in a full run of the suite,
kept in ``tests/module_costs.json``; this command writes that file again from a run's
JUnit report (``test-output/junit.xml``). A module the file does not know yet is costed
by its number of tests.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

COSTS_FILE = Path(__file__).resolve().parents[1] / "module_costs.json"
# What a test of a module the file does not know yet costs: about a full run's mean.
SECONDS_PER_UNKNOWN_TEST = 0.5


def module_of(nodeid: str) -> str:
    """``tests/a/test_b.py::test_c[x]`` -> ``tests/a/test_b.py``."""
    return nodeid.split("::", 1)[0]


def costs_from_report(report: Path) -> dict[str, float]:
    """Each module's seconds in the run ``report`` (JUnit XML) tells of."""
    seconds: defaultdict[str, float] = defaultdict(float)
    root = ET.parse(report).getroot()  # noqa: S314 - the suite's own report
    for case in root.iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        # A class of a module adds its name after the module's.
        modules = [i for i, part in enumerate(parts) if part.startswith("test_")]
        if not modules:
            continue
        path = "/".join(parts[: modules[-1] + 1]) + ".py"
        seconds[path] += float(case.get("time") or 0.0)
    return {path: round(seconds[path], 1) for path in sorted(seconds, key=lambda p: -seconds[p])}


def load(path: Path = COSTS_FILE) -> dict[str, float]:
    try:
        costs = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {str(module): float(cost) for module, cost in costs.items()}


def costliest_first(items: Sequence[pytest.Item], costs: Mapping[str, float]) -> list[pytest.Item]:
    """``items`` with their modules costliest first, each module's tests in their order."""
    counts = Counter(module_of(item.nodeid) for item in items)

    def cost(module: str) -> float:
        return costs.get(module, counts[module] * SECONDS_PER_UNKNOWN_TEST)

    # A stable sort: the tests of one module stay together and in order.
    return sorted(items, key=lambda item: -cost(module_of(item.nodeid)))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.support.module_costs test-output/junit.xml")
        return 2
    costs = costs_from_report(Path(argv[0]))
    COSTS_FILE.write_text(json.dumps(costs, indent=1) + "\n")
    print(f"{len(costs)} modules' seconds written to {COSTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

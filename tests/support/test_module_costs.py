"""The suite's modules are handed to its workers costliest first, each module's tests
together and in their order."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.support.module_costs import COSTS_FILE, costliest_first, costs_from_report, load

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.e2e.test_walk" name="test_a_walk" time="40.5"/>
<testcase classname="tests.host.test_many" name="test_one[sqlite]" time="0.25"/>
<testcase classname="tests.host.test_many" name="test_one[postgresql]" time="0.5"/>
<testcase classname="tests.host.test_many.TestGroup" name="test_two" time="1.25"/>
</testsuite></testsuites>
"""


def items(*nodeids: str) -> list[pytest.Item]:
    return [cast(pytest.Item, SimpleNamespace(nodeid=nodeid)) for nodeid in nodeids]


def ids(ordered: list[Any]) -> list[str]:
    return [item.nodeid for item in ordered]


def test_a_reports_seconds_are_summed_per_module_classes_included(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(REPORT)
    assert costs_from_report(report) == {
        "tests/e2e/test_walk.py": 40.5,
        "tests/host/test_many.py": 2.0,
    }


def test_costly_modules_go_first_and_unknown_ones_are_costed_by_their_tests() -> None:
    collected = items(
        "tests/a/test_quick.py::test_1",
        "tests/a/test_quick.py::test_2",
        "tests/b/test_slow.py::test_1",
        "tests/c/test_new.py::test_1",
        "tests/c/test_new.py::test_2",
        "tests/c/test_new.py::test_3",
        "tests/d/test_medium.py::test_1",
    )
    costs = {
        "tests/a/test_quick.py": 0.2,
        "tests/b/test_slow.py": 90.0,
        "tests/d/test_medium.py": 1.0,
    }
    assert ids(costliest_first(collected, costs)) == [
        "tests/b/test_slow.py::test_1",
        "tests/c/test_new.py::test_1",  # three tests at half a second each
        "tests/c/test_new.py::test_2",
        "tests/c/test_new.py::test_3",
        "tests/d/test_medium.py::test_1",
        "tests/a/test_quick.py::test_1",
        "tests/a/test_quick.py::test_2",
    ]


def test_the_kept_costs_name_modules_of_the_suite() -> None:
    costs = load()
    assert costs, COSTS_FILE
    tests = Path(__file__).resolve().parents[2]
    assert [module for module in costs if not (tests / module).is_file()] == []
    assert load(COSTS_FILE.with_name("no-such-file.json")) == {}

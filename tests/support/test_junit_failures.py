"""A run's failed tests are named at the very end of ``make test``'s output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.junit_failures import failures

A_RUN = """
def test_passes():
    pass

def test_fails():
    assert 1 == 2, "one is not two"

def test_after_it():
    pass
"""


def test_the_failed_test_is_named_with_why(tmp_path: Path) -> None:
    (tmp_path / "test_a_run.py").write_text(A_RUN)
    report = tmp_path / "junit.xml"
    subprocess.run(  # noqa: S603 - our own interpreter
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"),
            *("--junitxml", str(report), "test_a_run.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    (line,) = failures(report)
    assert line.startswith("FAILURE test_a_run::test_fails: ")
    assert "one is not two" in line

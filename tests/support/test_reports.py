"""A failure quoting half a UTF-16 pair is reported, and its worker keeps running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HALF_PAIR_TEST = """
def test_quotes_half_a_pair():
    assert "\\\\ud83d" == "cut"

def test_after_it():
    pass
"""


def test_a_failure_quoting_half_a_pair_is_reported_and_the_worker_goes_on(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_half_pair.py").write_text(HALF_PAIR_TEST)
    # The suite's report hook over a module of its own, on one worker.
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [
            *(sys.executable, "-m", "pytest", "-q", "-n", "1"),
            *("-p", "no:cacheprovider", "-p", "tests.support.reports"),
            "test_half_pair.py",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout
    assert "\\\\ud83d" in done.stdout

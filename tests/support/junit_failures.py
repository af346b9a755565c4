"""The failed tests of a run, said last: ``python -m tests.support.junit_failures FILE``.

``make test`` prints the checks' log after the suite's own output, and a CI page that
keeps only a run's last lines would show the checks passing and not which test failed.
This reads the suite's JUnit XML report and prints each failed or erred test with the
first line of why, after everything else.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

_MOST = 20


def failures(report: Path) -> list[str]:
    """One line per failed or erred test of ``report``: its id, then why."""
    lines = []
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314 - our own report
        for outcome in ("failure", "error"):
            found = case.find(outcome)
            if found is None:
                continue
            where = f"{case.get('classname', '')}::{case.get('name', '')}"
            why = (found.get("message") or found.text or "").strip().splitlines()
            lines.append(f"{outcome.upper()} {where}: {why[0][:300] if why else ''}")
    return lines


def main(argv: list[str]) -> int:
    report = Path(argv[0])
    if not report.exists():
        print(f"make test: the suite wrote no report ({report})")
        return 1
    found = failures(report)
    if found:
        print(f"make test: what failed in the suite ({len(found)}):")
        print("\n".join(found[:_MOST]))
        if len(found) > _MOST:
            print(f"... and {len(found) - _MOST} more (above)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

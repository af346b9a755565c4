"""Test reports that always reach the run's summary.

A report travels from an xdist worker to the controller as UTF-8; a string with half a
UTF-16 pair in it (a page's text cut in the middle of an emoji, say) cannot be encoded,
and the worker dies with every test it had left. Such reports are written out with the
half pair escaped instead.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


def _encodable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def make_encodable(report: pytest.TestReport) -> None:
    """Rewrites the parts of ``report`` that UTF-8 cannot carry (only when there are any)."""
    if report.longrepr is not None:
        text = str(report.longrepr)
        escaped = _encodable(text)
        if escaped is not text:
            report.longrepr = escaped
    report.sections = [(title, _encodable(body)) for title, body in report.sections]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport() -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    make_encodable(report)
    return report

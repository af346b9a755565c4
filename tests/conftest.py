"""Fixtures shared by the whole suite."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.clock import FakeClock
from tests.support.databases import BACKENDS, ScratchDatabase, scratch_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every async test runs under the watchdog that fails it if the loop blocks.
    for item in items:
        function = getattr(item, "function", None)
        if function is not None and inspect.iscoroutinefunction(function):
            item.add_marker(pytest.mark.usefixtures("event_loop_watch"))


@pytest.fixture
async def event_loop_watch() -> AsyncIterator[None]:
    async for _ in watch_event_loop():
        yield


@pytest.fixture(params=BACKENDS)
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ScratchDatabase]:
    """A fresh database, once on SQLite and once on PostgreSQL."""
    async with scratch_database(request.param, tmp_path) as db:
        yield db


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """A hub on a loopback port, on each database backend, with a clock the test moves."""
    async with running_hub(hub_settings(tmp_path, database), database, clock=clock) as running:
        yield running

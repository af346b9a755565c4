"""Fixtures shared by the whole suite."""

from __future__ import annotations

import gc
import inspect
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp import web_app

from server.host.browser import contexts
from server.host.chromium import find_chromium
from tests.support.chromium import installed
from tests.support.clock import FakeClock
from tests.support.databases import BACKENDS, ScratchDatabase, scratch_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop
from tests.support.module_costs import costliest_first, load

# Every report can be sent from its worker, whatever text a failure quotes.
pytest_plugins = ["tests.support.reports"]

# The suite starts Playwright's driver (a Node.js process) some 280 times, in its workers
# and in every `crewhost serve` it starts: with Node's compile cache, each start after the
# first reads the driver's compiled code instead of compiling it again (a quarter less of a
# start's CPU). The cache is Node's own, checked against the sources it was made from.
os.environ.setdefault(
    "NODE_COMPILE_CACHE", str(Path(__file__).resolve().parents[1] / "test-output" / "node")
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``sqlite_only`` runs on SQLite alone: what it checks lives above the
    storage, whose every query runs on both backends in the tests written for it. The
    modules then run costliest first (``tests.support.module_costs``)."""
    dropped = [item for item in items if _sqlite_only(item) and _backend(item) == "postgresql"]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(dropped)
        items[:] = [item for item in items if item not in gone]
    items[:] = costliest_first(items, load())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Each worker keeps every module it imported and every test it collected until it
    ends: frozen, they are out of the collector's sight, and a full collection scans only
    what the tests made since (full collections were a fifth of a worker's CPU)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """aiohttp keeps the middleware chains it built for the last 1,024 (handler,
    application) pairs in one cache for the process: in a worker that starts a hub a test,
    it kept some fifty ended hubs alive, each with its host, and every full collection of
    the collector walked them (a second each by the end of a run). Freed sooner, what a
    test left open (a database connection) is reported sooner: in a later test of the same
    worker, where a full collection meets it."""
    web_app._cached_build_middleware.cache_clear()


def _sqlite_only(item: pytest.Item) -> bool:
    return item.get_closest_marker("sqlite_only") is not None


def _backend(item: pytest.Item) -> object:
    callspec = getattr(item, "callspec", None)
    return None if callspec is None else callspec.params.get("database")


@pytest.fixture(scope="session", autouse=True)
def hosts_run_the_headless_shell() -> Iterator[None]:
    """A host the suite starts in its own process runs Chromium's headless shell unless it is
    given a Chromium (``host.chromium``, ``BrowserEngine(chromium=...)``): the same tabs,
    pages and tools for a third of the full browser's CPU, which was a third of the suite's.
    The full browser, the product's default, runs where the two differ (the address guard's
    PAC script, a profile's proxy, WebRTC's flags: ``full_browser()``), and behind every web
    client walk (``crewhost serve`` started as its user starts it)."""
    shell = installed("chromium-headless-shell")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            contexts, "find_chromium", lambda configured: find_chromium(configured or shell)
        )
        yield


@pytest.fixture(autouse=True)
async def event_loop_watch(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Every async test fails if something blocks its event loop."""
    watched = request.node.get_closest_marker("allow_blocking") is None
    if not watched or not inspect.iscoroutinefunction(getattr(request, "function", None)):
        yield
        return
    # Before pytest-timeout ends the test, where its tasks wait (a hung await is not a block).
    marker = request.node.get_closest_marker("timeout")
    limit = float(marker.args[0] if marker and marker.args else request.config.getini("timeout"))
    async for _ in watch_event_loop(hang_report_seconds=limit - 5 if limit > 10 else None):
        yield


@pytest.fixture(params=BACKENDS)
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ScratchDatabase]:
    """A fresh database at the newest revision, once on SQLite and once on PostgreSQL."""
    async with scratch_database(request.param, tmp_path, migrated=True) as db:
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

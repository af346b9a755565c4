"""A real ``crewhost serve`` subprocess, real Chromium driven by Playwright, and a fixture site.

One server runs per test module (starting one takes seconds); each test makes its own team
on it, so tests share no members, invitations or tabs. The hub's setup code works only while
it has no account: the first test that needs an owner uses it (the sign-up test does so
through the web client; a test run on its own gets its owner through the API).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Generator, Iterator

import pytest
from aiohttp import web
from playwright.async_api import (
    Browser,
    async_playwright,
)

from tests.support.chromium import launch_chromium
from tests.support.commands import CREWHOST, DEVNULL, serve_arguments, start_in_background
from tests.support.sites import Site, pages_app, serving
from tests.support.web_client import (
    FAILED,
    ICON_SVG,
    LINKED,
    OUTPUT,
    PAGES,
    SETUP_LINK,
    Crewhost,
    HubApi,
    Screens,
    ensure_web_build,
    save_failed_pages,
    server_env,
    stop_server,
    wait_for_line,
)


@pytest.fixture(scope="module")
def crewhost(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Crewhost]:
    """``crewhost serve`` on a free loopback port with SQLite, up and its host linked."""
    ensure_web_build()
    data_dir = tmp_path_factory.mktemp("crewhost")
    logs = OUTPUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # One server per module and worker: a module split over workers starts one in each,
    # and each reads its own log for its setup link and host.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"{request.module.__name__.rpartition('.')[2]}-{worker}"
    out_file, log_file = logs / f"{name}.stdout.txt", logs / f"{name}.log"
    with out_file.open("wb") as out, log_file.open("wb") as err:
        process = start_in_background(
            CREWHOST,
            *serve_arguments(data_dir),
            "--bind",
            "127.0.0.1",
            env=server_env(),
            stdin=DEVNULL,
            stdout=out,
            stderr=err,
            new_session=True,
        )
    try:
        setup = wait_for_line(out_file, SETUP_LINK, process, log_file)
        linked = wait_for_line(log_file, LINKED, process, log_file)
        yield Crewhost(setup.group(1), setup.group(2), linked.group(1), log_file)
    finally:
        stop_server(process)


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async def icon(_request: web.Request) -> web.Response:
        return web.Response(text=ICON_SVG, content_type="image/svg+xml")

    async def pressed(_request: web.Request) -> web.Response:
        return web.Response(status=204)

    routes = {"/icon.svg": icon, "/pressed": pressed}
    async with serving(pages_app(PAGES, routes=routes)) as running:
        yield running


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Note whether the test itself failed, for the fixtures' teardown."""
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


@pytest.fixture
async def browser(request: pytest.FixtureRequest) -> AsyncIterator[Browser]:
    """A person's headless Chromium (the full browser for a test marked ``full_browser``);
    pages are saved if the test fails."""
    full = request.node.get_closest_marker("full_browser") is not None
    async with async_playwright() as playwright:
        launched = await launch_chromium(playwright, full=full)
        yield launched
        if request.node.stash.get(FAILED, False):
            await save_failed_pages(launched, request.node)
        await launched.close()


@pytest.fixture
def screens() -> Iterator[Screens]:
    saved = Screens()
    yield saved
    assert not saved.overflowing, f"screens scroll sideways: {saved.overflowing}"


@pytest.fixture
async def hub_api(crewhost: Crewhost) -> AsyncIterator[HubApi]:
    api = HubApi(crewhost)
    yield api
    await api.close()

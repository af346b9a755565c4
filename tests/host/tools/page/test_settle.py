"""The settle wait: a read after it sees the page a person would see, not its placeholders."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.page.isolated import evaluate_isolated
from server.host.tools.context import ToolSettings
from server.host.tools.page import settle as settle_module
from server.host.tools.page.settle import settle
from tests.host.tools.conftest import AGENT, TEAM
from tests.support.sites import Site

SETTINGS = ToolSettings()


async def _settled_text(engine: BrowserEngine, site: Site, path: str, selector: str) -> str:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url(path))

    async def read(page: Page) -> str:
        await settle(page, SETTINGS)
        return await page.inner_text(selector)

    result = await engine.run(TEAM, tab.id, AGENT, read)
    return str(result.value)


async def test_skeleton_rows_are_waited_out(engine: BrowserEngine, site: Site) -> None:
    assert await _settled_text(engine, site, "/skeleton.html", "#prices") == "Tea 3.20\nCake 4.50"


async def test_a_busy_region_is_waited_out(engine: BrowserEngine, site: Site) -> None:
    assert await _settled_text(engine, site, "/busy-region.html", "#orders") == "Order 17: shipped"


async def test_a_young_empty_document_is_given_its_first_view(
    engine: BrowserEngine, site: Site
) -> None:
    assert "The first view." in await _settled_text(engine, site, "/young-empty.html", "#app")


@pytest.fixture
def scripts_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The page scripts settle runs, in order: a probe, then a wait if it waits."""
    run: list[str] = []

    async def counting(page: Page, function: str, argument: object = None) -> object:
        run.append("probe" if argument is None else "wait")
        return await evaluate_isolated(page, function, argument)

    monkeypatch.setattr(settle_module, "evaluate_isolated", counting)
    return run


async def settle_twice(
    engine: BrowserEngine, site: Site, path: str, settings: ToolSettings, scripts: list[str]
) -> list[list[str]]:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url(path))
    reads: list[list[str]] = []

    async def read_twice(page: Page) -> None:
        for _ in range(2):
            before = len(scripts)
            await settle(page, settings)
            reads.append(scripts[before:])

    await engine.run(TEAM, tab.id, AGENT, read_twice)
    return reads


async def test_a_marker_that_outlasts_the_wait_is_not_waited_for_again(
    engine: BrowserEngine, site: Site, scripts_run: list[str]
) -> None:
    short = ToolSettings(settle_max=0.3)
    reads = await settle_twice(engine, site, "/skeleton-forever.html", short, scripts_run)
    assert reads == [["probe", "wait"], ["probe"]]


async def test_a_young_document_waits_for_its_first_change_once(
    engine: BrowserEngine, site: Site, scripts_run: list[str]
) -> None:
    # Windows wide enough that a busy machine's late first read still finds the document
    # young: it waits (for the change, or until the window ends), and only once.
    roomy = ToolSettings(young_document=3.0, young_after_load=3.0, young_document_age=10.0)
    reads = await settle_twice(engine, site, "/young-empty.html", roomy, scripts_run)
    assert reads == [["probe", "wait"], ["probe"]]


async def test_a_loaded_static_page_and_a_page_with_controls_do_not_wait(
    engine: BrowserEngine, site: Site, scripts_run: list[str]
) -> None:
    # No scripts (nothing can draw it later), and a page whose controls already show.
    for path in ("/behind-check.html", "/confirm-dialog.html"):
        reads = await settle_twice(engine, site, path, SETTINGS, scripts_run)
        assert reads == [["probe"], ["probe"]], path


async def test_no_wait_within_a_second_of_the_reads_own_limit(
    engine: BrowserEngine, site: Site, scripts_run: list[str]
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/skeleton.html"))

    async def read(page: Page) -> str:
        await settle(page, SETTINGS, read_limit=1.0)
        return await page.inner_text("#prices")

    await engine.run(TEAM, tab.id, AGENT, read)
    assert scripts_run == []

"""The browser engine against real Chromium and a local site."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.common.errors import CrewhostError
from server.host.browser.callers import Caller
from server.host.browser.contexts import IDLE_BROWSER_SECONDS
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition, new_profile_id
from server.host.browser.tab_pacing import browser_of
from server.host.browser.tabs import Tab
from tests.support.chromium import installed
from tests.support.clock import FakeClock
from tests.support.sites import SITES_ALLOWED, Site, pages_app, serving
from tests.support.waiting import eventually

TEAM = "team-a"
AGENT = Caller.agent("agent-1", "thread-1")
PERSON = Caller.person("account-1")


@pytest.fixture
async def engine(tmp_path: Path, clock: FakeClock) -> AsyncIterator[BrowserEngine]:
    async with BrowserEngine(tmp_path, clock=clock, address_policy=SITES_ALLOWED) as running:
        yield running


async def cookies(engine: BrowserEngine, team: str, tab: Tab) -> str:
    result = await engine.run(team, tab.id, AGENT, lambda p: p.evaluate("document.cookie"))
    return str(result.value)


def code_of(call: Callable[[], object]) -> str:
    try:
        call()
    except CrewhostError as exc:
        return exc.code
    return "no error"


async def async_code_of(call: Awaitable[object]) -> str:
    try:
        await call
    except CrewhostError as exc:
        return exc.code
    return "no error"


async def test_shared_cookie_survives_restart_private_does_not(tmp_path: Path, site: Site) -> None:
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        shared = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/set-cookie?v=s"))
        private = await engine.open_tab(TEAM, Partition.private(), url=site.url("/set-cookie?v=p"))
        assert await cookies(engine, TEAM, private) == "session=p"
        await engine.close_tab(TEAM, private.id, AGENT)
        again = await engine.open_tab(TEAM, Partition.private(), url=site.url("/cookies"))
        assert await cookies(engine, TEAM, again) == ""
        assert shared.partition.folder == "shared"
    assert (tmp_path / "browser" / TEAM / "shared").is_dir()
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
        assert await cookies(engine, TEAM, tab) == "session=s"
        # The private tab was never saved, so it does not come back.
        assert {t.partition.kind for t in engine.list_tabs(TEAM)} == {"shared"}


async def test_the_headless_shell_runs_behind_the_filtering_proxy(
    tmp_path: Path, site: Site
) -> None:
    shell = installed("chromium-headless-shell")
    async with BrowserEngine(tmp_path, chromium=shell, address_policy=SITES_ALLOWED) as engine:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
        title = await engine.run(TEAM, tab.id, AGENT, lambda page: page.title())
        assert (tab.url, title.value) == (site.url("/cookies"), "cookies")
    assert site.requests[0][0] == "/cookies"


async def test_a_configured_chromium_that_is_not_there_is_missing(tmp_path: Path) -> None:
    with pytest.raises(CrewhostError) as refused:
        async with BrowserEngine(tmp_path / "data", chromium=str(tmp_path / "none")):
            pass
    assert refused.value.code == "browserMissing"


async def test_teams_do_not_see_each_others_profiles(engine: BrowserEngine, site: Site) -> None:
    await engine.open_tab("team-a", Partition.shared(), url=site.url("/set-cookie?v=a"))
    other = await engine.open_tab("team-b", Partition.shared(), url=site.url("/cookies"))
    assert await cookies(engine, "team-b", other) == ""
    assert [t.team_id for t in engine.list_tabs("team-b")] == ["team-b"]
    tab_a = engine.list_tabs("team-a")[0]
    assert code_of(lambda: engine.get_tab("team-b", tab_a.id)) == "tabNotFound"


async def test_restore_keeps_partitions_and_drops_bad_entries(tmp_path: Path, site: Site) -> None:
    profile = new_profile_id()
    gone = new_profile_id()
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        kept = await engine.open_tab(
            TEAM,
            Partition.for_agent("agent-1"),
            url=site.url("/set-cookie?v=agent"),
            owner_agent_id="agent-1",
            owner_thread_id="thread-1",
        )
        in_profile = await engine.open_tab(TEAM, Partition.profile(profile), url=site.url("/"))
        await engine.open_tab(TEAM, Partition.profile(gone), url=site.url("/"))
    state = tmp_path / "browser" / TEAM / "tabs.json"
    saved = json.loads(state.read_text())
    saved["tabs"].append(
        {"id": "bad", "partition": {"kind": "agent", "key": "../shared"}, "url": site.url("/")}
    )
    state.write_text(json.dumps(saved))

    def exists(team_id: str, profile_id: str) -> bool:
        return team_id == TEAM and profile_id == profile

    async with BrowserEngine(
        tmp_path, profile_exists=exists, address_policy=SITES_ALLOWED
    ) as engine:
        tabs = {t.id: t for t in engine.list_tabs(TEAM)}
        assert set(tabs) == {kept.id, in_profile.id}
        restored = tabs[kept.id]
        assert restored.partition == Partition.for_agent("agent-1")
        assert restored.owner_agent_id == "agent-1"
        assert not restored.loaded
        # It loads on first use, in its own partition: the agent's cookie is there.
        assert await cookies(engine, TEAM, restored) == "session=agent"
        assert engine.get_tab(TEAM, kept.id).url == site.url("/set-cookie?v=agent")
        assert (
            await async_code_of(engine.open_tab(TEAM, Partition.profile(gone), url=site.url("/")))
            == "browserProfileMissing"
        )


def saved_ids(folder: Path) -> set[str]:
    state = folder / "browser" / TEAM / "tabs.json"
    if not state.exists():
        return set()
    return {entry["id"] for entry in json.loads(state.read_text())["tabs"]}


async def test_the_state_file_follows_new_and_closed_tabs_while_the_engine_runs(
    tmp_path: Path, engine: BrowserEngine, site: Site
) -> None:
    # Opened together, the tabs share writes; the file ends with every one of them.
    opened = await asyncio.gather(
        *(engine.open_tab(TEAM, Partition.shared(), url=site.url("/")) for _ in range(3))
    )
    ids = {tab.id for tab in opened}
    await eventually(lambda: saved_ids(tmp_path) == ids)
    await engine.close_tab(TEAM, opened[0].id, PERSON)
    await eventually(lambda: saved_ids(tmp_path) == ids - {opened[0].id})


async def test_a_tab_opened_just_before_the_engine_stops_is_saved(
    tmp_path: Path, site: Site
) -> None:
    async with BrowserEngine(tmp_path, address_policy=SITES_ALLOWED) as engine:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    assert saved_ids(tmp_path) == {tab.id}


async def first_tab_and_its_spare(engine: BrowserEngine, site: Site) -> tuple[Tab, Page]:
    """A tab in the shared partition, and the spare page the partition made after it."""
    first = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    assert first.page is not None
    context = first.page.context
    await eventually(lambda: len(context.pages) == 2)  # the tab's and the one made ready
    return first, next(page for page in context.pages if page is not first.page)


async def test_a_second_tab_takes_the_partitions_spare_page_with_the_identity_on_it(
    engine: BrowserEngine, site: Site
) -> None:
    first, spare = await first_tab_and_its_spare(engine, site)
    context = spare.context
    second = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
    assert second.page is spare
    assert "HeadlessChrome" not in site.headers_of("/child")["User-Agent"]
    assert "Sec-CH-UA" in site.headers_of("/child")
    await eventually(lambda: len(context.pages) == 3)
    assert len(engine.list_tabs(TEAM)) == 2  # a spare page is no tab
    await engine.close_tab(TEAM, second.id, PERSON)
    await engine.close_tab(TEAM, first.id, PERSON)
    assert len(context.pages) == 1


async def test_a_tab_on_the_spare_page_has_the_page_scripts_before_its_first_document(
    engine: BrowserEngine, site: Site
) -> None:
    _, spare = await first_tab_and_its_spare(engine, site)
    second = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/retitle"))
    assert second.page is spare
    await eventually(lambda: second.title == "after")  # reported by the page-facts script
    assert second.identity_session is not None


async def test_a_spare_page_whose_renderer_crashed_goes_to_no_tab(
    engine: BrowserEngine, site: Site
) -> None:
    _, spare = await first_tab_and_its_spare(engine, site)
    context = spare.context
    crashed = asyncio.Event()
    spare.once("crash", lambda _page: crashed.set())
    session = await context.new_cdp_session(spare)
    crash = asyncio.ensure_future(session.send("Page.crash"))
    await asyncio.wait_for(crashed.wait(), 20)
    crash.cancel()
    second = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
    assert second.page is not spare
    assert spare.is_closed()
    assert not second.crashed
    result = await engine.run(TEAM, second.id, AGENT, lambda p: p.title())
    assert result.value == "child"


async def test_a_partition_is_not_idle_while_a_tab_gets_its_first_page_there(
    engine: BrowserEngine, site: Site
) -> None:
    opening = asyncio.ensure_future(
        engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
    )
    # The browser of the partition runs, and its first tab has no page yet: the sweep
    # comes now, as it may at any moment.
    async with asyncio.timeout(60):
        while not engine.open_partitions(TEAM):  # noqa: ASYNC110 - no event for this state
            await asyncio.sleep(0)
    [tab] = engine.list_tabs(TEAM)
    assert not tab.loaded
    assert await engine.tick() == []
    assert await opening is tab
    assert engine.open_partitions(TEAM) == [Partition.shared()]
    assert (await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())).value == "child"


async def test_a_private_partition_keeps_no_spare_page(engine: BrowserEngine, site: Site) -> None:
    tab = await engine.open_tab(TEAM, Partition.private(), url=site.url("/"))
    assert tab.page is not None
    assert tab.page.context.pages == [tab.page]


def test_malformed_partition_keys_are_refused() -> None:
    assert code_of(lambda: Partition.parse("agent", "zz")) == "browserPartitionInvalid"
    assert code_of(lambda: Partition.parse("profile", "profile-../x")) == "browserPartitionInvalid"
    assert code_of(lambda: Partition.parse("team", "")) == "browserPartitionInvalid"
    assert (
        Partition.for_agent("a").key == Partition.parse("agent", Partition.for_agent("a").key).key
    )


async def test_idle_tabs_unload_and_reload(tmp_path: Path, clock: FakeClock, site: Site) -> None:
    low = False
    async with BrowserEngine(
        tmp_path, clock=clock, memory_low=lambda: low, address_policy=SITES_ALLOWED
    ) as engine:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
        clock.advance(14 * 60)
        assert await engine.tick() == []
        clock.advance(61)
        assert await engine.tick() == [tab.id]
        assert not tab.loaded
        result = await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())
        assert result.value == "child"
        assert engine.get_tab(TEAM, tab.id).loaded
        low = True
        clock.advance(5 * 60)
        assert await engine.tick() == [tab.id]


async def test_an_idle_partition_stops_and_starts_again_with_its_data(
    tmp_path: Path, clock: FakeClock, site: Site
) -> None:
    async with BrowserEngine(tmp_path, clock=clock, address_policy=SITES_ALLOWED) as engine:
        partition = Partition.profile(new_profile_id())
        tab = await engine.open_tab(TEAM, partition, url=site.url("/set-cookie?v=kept"))
        assert engine.open_partitions(TEAM) == [partition]
        clock.advance(16 * 60)
        assert await engine.tick() == [tab.id]
        assert engine.open_partitions(TEAM) == []
        assert await cookies(engine, TEAM, tab) == "session=kept"
        assert engine.open_partitions(TEAM) == [partition]


async def test_a_profile_whose_agent_opens_a_tab_each_turn_keeps_its_browser(
    tmp_path: Path, clock: FakeClock, site: Site
) -> None:
    async with BrowserEngine(tmp_path, clock=clock, address_policy=SITES_ALLOWED) as engine:
        partition = Partition.profile(new_profile_id())
        for _turn in range(2):
            tab = await engine.open_tab(TEAM, partition, url=site.url("/child"))
            await engine.close_tab(TEAM, tab.id, PERSON)
            # The sweep comes between two turns: the browser waits for the next one.
            clock.advance(IDLE_BROWSER_SECONDS / 2)
            await engine.tick()
            assert engine.open_partitions(TEAM) == [partition]
        # No turn for a minute: the browser stops.
        clock.advance(IDLE_BROWSER_SECONDS / 2)
        await engine.tick()
        assert engine.open_partitions(TEAM) == []


async def test_least_recently_used_tabs_beyond_three_sleep(
    engine: BrowserEngine, clock: FakeClock, site: Site
) -> None:
    tabs = []
    for _ in range(5):
        tabs.append(await engine.open_tab(TEAM, Partition.shared(), url=site.url("/")))
        clock.advance(1)
    engine.take_control(TEAM, tabs[0].id, "account-1")  # a held tab does not count
    clock.advance(60)
    assert await engine.tick() == []
    clock.advance(61)
    assert await engine.tick() == [tabs[1].id]
    assert [t.loaded for t in tabs] == [True, False, True, True, True]


async def test_crashed_renderer_reloads_with_stale_refs(engine: BrowserEngine, site: Site) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
    assert tab.page is not None
    session = await tab.page.context.new_cdp_session(tab.page)
    crash = asyncio.ensure_future(session.send("Page.crash"))
    await eventually(lambda: tab.crashed)
    crash.cancel()
    result = await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())
    assert result.value == "child"
    assert result.stale_refs
    again = await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())
    assert not again.stale_refs


async def test_person_holding_a_tab_blocks_every_agent_call(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    engine.take_control(TEAM, tab.id, "account-1")
    assert code_of(lambda: engine.take_control(TEAM, tab.id, "account-2")) == "tabHeld"
    for call in (
        engine.run(TEAM, tab.id, AGENT, lambda p: p.title()),
        engine.navigate(TEAM, tab.id, AGENT, site.url("/child")),
        engine.handle_dialog(TEAM, tab.id, True, caller=AGENT),
        engine.close_tab(TEAM, tab.id, AGENT),
    ):
        assert await async_code_of(call) == "tabHeldByPerson"
    assert (await engine.run(TEAM, tab.id, PERSON, lambda p: p.title())).value == "home"
    assert code_of(lambda: engine.release(TEAM, tab.id, "account-2")) == "tabNotHeld"
    engine.release(TEAM, tab.id, "account-1")
    engine.take_control(TEAM, tab.id, "account-2")
    engine.release(TEAM, tab.id, "account-2")
    await engine.close_tab(TEAM, tab.id, AGENT)
    assert engine.list_tabs(TEAM) == []


async def test_queue_runs_one_at_a_time_and_enforces_deadlines(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    order: list[str] = []

    def step(name: str, seconds: float) -> Callable[[Page], Awaitable[None]]:
        async def run(_page: Page) -> None:
            order.append(f"{name} start")
            await asyncio.sleep(seconds)
            order.append(f"{name} end")

        return run

    await asyncio.gather(
        engine.run(TEAM, tab.id, AGENT, step("a", 0.05)),
        engine.run(TEAM, tab.id, AGENT, step("b", 0)),
    )
    assert order == ["a start", "a end", "b start", "b end"]
    stuck = engine.run(TEAM, tab.id, AGENT, step("c", 10), deadline=0.2)
    assert await async_code_of(stuck) == "tabDeadline"
    assert (await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())).value == "home"


async def test_popups_are_adopted_with_their_opener(engine: BrowserEngine, site: Site) -> None:
    opener = await engine.open_tab(
        TEAM, Partition.shared(), url=site.url("/popups"), owner_agent_id="agent-1"
    )
    for link in ("#dep", "#free"):

        async def click(p: Page, link: str = link) -> None:
            await p.click(link)

        await engine.run(TEAM, opener.id, AGENT, click)
    await eventually(lambda: len(engine.list_tabs(TEAM)) == 3)
    popups = [t for t in engine.list_tabs(TEAM) if t.id != opener.id]
    assert {t.opener_tab_id for t in popups} == {opener.id}
    assert {t.owner_agent_id for t in popups} == {"agent-1"}
    await eventually(lambda: all(t.url.endswith("/child") for t in popups))
    await eventually(lambda: sorted(t.dependent for t in popups) == [False, True])
    dependent = next(t for t in popups if t.dependent)
    free = next(t for t in popups if not t.dependent)
    await engine.close_tab(TEAM, opener.id, AGENT)
    assert [t.id for t in engine.list_tabs(TEAM)] == [free.id]
    assert free.opener_tab_id is None
    assert dependent.page is None


async def test_dialog_of_an_agent_action_goes_to_that_agent(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/confirm"))
    result = await engine.run(TEAM, tab.id, AGENT, lambda p: p.click("#ask"), input_action=True)
    assert result.dialog is not None
    assert (result.dialog.type, result.dialog.message) == ("confirm", "Sure?")
    title = engine.run(TEAM, tab.id, AGENT, lambda p: p.title())
    assert await async_code_of(title) == "dialogOpen"
    other = Caller.agent("agent-2")
    assert await async_code_of(engine.handle_dialog(TEAM, tab.id, True, caller=other)) == (
        "dialogForPerson"
    )
    await engine.handle_dialog(TEAM, tab.id, True, caller=AGENT)
    assert (await engine.run(TEAM, tab.id, AGENT, lambda p: p.title())).value == "true"
    assert await async_code_of(engine.handle_dialog(TEAM, tab.id, True, caller=AGENT)) == (
        "dialogClosed"
    )
    # A dialog the agent's action opens still lets close_tab through.
    await engine.run(TEAM, tab.id, AGENT, lambda p: p.click("#ask"), input_action=True)
    await engine.close_tab(TEAM, tab.id, AGENT)
    assert engine.list_tabs(TEAM) == []


async def test_other_dialogs_wait_for_a_person(engine: BrowserEngine, site: Site) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/alert-on-load"))
    await eventually(lambda: tab.dialog is not None)
    assert tab.dialog is not None
    assert tab.dialog.agent_id is None
    assert tab.dialog.message == "hello person"
    assert await async_code_of(engine.handle_dialog(TEAM, tab.id, True, caller=AGENT)) == (
        "dialogForPerson"
    )
    assert await async_code_of(engine.run(TEAM, tab.id, AGENT, lambda p: p.title())) == "dialogOpen"
    await engine.handle_dialog(TEAM, tab.id, True, caller=PERSON)
    assert tab.dialog is None


async def test_identity_headers_match_the_page(engine: BrowserEngine, site: Site) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/child"))
    headers = site.headers_of("/child")
    major = engine.identity.major
    assert "HeadlessChrome" not in headers["User-Agent"]
    assert f"Chrome/{major}.0.0.0 " in headers["User-Agent"]
    assert headers["Accept-Language"] == "en-GB,en;q=0.9"
    page = await engine.run(
        TEAM,
        tab.id,
        AGENT,
        lambda p: p.evaluate(
            "[navigator.userAgent, navigator.userAgentData.brands, navigator.languages]"
        ),
    )
    assert page.value is not None
    user_agent, brands, languages = page.value
    assert user_agent == headers["User-Agent"]
    assert languages == ["en-GB", "en"]
    expected = ", ".join(f'"{b["brand"]}";v="{b["version"]}"' for b in brands)
    assert headers["Sec-CH-UA"] == expected
    assert f'"Chromium";v="{major}"' in expected


async def test_a_tab_closed_just_after_two_failed_loads_takes_its_page_out_of_chromium(
    engine: BrowserEngine,
) -> None:
    """Chromium drops a close asked while it commits an error page over another one: the
    page stayed open in the browser after the tab was gone (and the close waited 5 s)."""
    tab = await engine.open_tab(TEAM, Partition.shared(), owner_agent_id=AGENT.agent_id)
    for url in ("http://nowhere.invalid/a", "http://nowhere.invalid/b"):
        visit = await engine.visit(TEAM, tab.id, AGENT, url)
        assert visit.load_error == "ERR_NAME_NOT_RESOLVED"
    page = tab.page
    assert page is not None
    await engine.close_tab(TEAM, tab.id, AGENT)
    assert engine.list_tabs(TEAM) == []
    assert page.is_closed()
    assert page not in page.context.pages


async def test_while_a_person_watches_a_tab_its_browser_closes_pages_with_a_breath(
    engine: BrowserEngine, site: Site
) -> None:
    pacing = engine._pages.pacing
    breaths: list[tuple[object, bool]] = []
    watched_by = pacing._watched

    def watched(browser: object) -> bool:
        said = watched_by(browser)
        breaths.append((browser, said))
        return said

    async def no_wait(_seconds: float) -> None:
        return None

    # Each page made or closed asks whether its browser is watched; no breath is waited.
    pacing._watched, pacing._sleep = watched, no_wait
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
    assert tab.page is not None
    shared = browser_of(tab.page.context)
    other = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
    await engine.close_tab(TEAM, other.id, AGENT)
    assert (shared, False) in breaths  # nobody watches: one at a time, no breath

    tab.viewers += 1  # as a live view of it does
    breaths.clear()
    # A private tab lives in another browser, whose pages wait for nobody's frames.
    private = await engine.open_tab(TEAM, Partition.private(), url=site.url("/cookies"))
    assert private.page is not None
    elsewhere = browser_of(private.page.context)
    await engine.close_tab(TEAM, private.id, AGENT)
    other = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
    await engine.close_tab(TEAM, other.id, AGENT)
    assert (elsewhere, False) in breaths
    assert (shared, True) in breaths
    assert (shared, False) not in breaths


async def test_while_a_person_watches_a_tab_navigations_in_its_browser_take_turns(
    engine: BrowserEngine, site: Site
) -> None:
    pacing = engine._pages.pacing

    async def no_wait(_seconds: float) -> None:
        return None

    pacing._sleep = no_wait
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/cookies"))
    assert tab.page is not None
    context = tab.page.context
    busy, leave = asyncio.Event(), asyncio.Event()

    async def browser_busy() -> None:
        async with pacing.turn(context):  # a page being made there, say
            busy.set()
            await leave.wait()

    # Nobody watches: the navigation goes on while the browser makes a page.
    holder = asyncio.create_task(browser_busy())
    await busy.wait()
    result = await asyncio.wait_for(engine.navigate(TEAM, tab.id, AGENT, site.url("/child")), 10)
    assert str(result.value).endswith("/child")
    leave.set()
    await holder

    # Watched: the navigation starts in the browser's turn, after the page being made.
    tab.viewers += 1
    busy.clear()
    leave.clear()
    holder = asyncio.create_task(browser_busy())
    await busy.wait()
    navigation = asyncio.create_task(engine.navigate(TEAM, tab.id, AGENT, site.url("/cookies")))
    await asyncio.sleep(0.3)
    assert not navigation.done()
    assert tab.page.url.endswith("/child")  # not started yet
    leave.set()
    result = await asyncio.wait_for(navigation, 10)
    assert str(result.value).endswith("/cookies")
    await holder


async def test_a_download_a_page_starts_is_refused_and_not_written(engine: BrowserEngine) -> None:
    """A page (any team's) that answers with an attachment gets nothing kept: the browser
    ends the transfer as it starts, so the site cannot send the whole body."""
    sent: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    async def attachment(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "application/octet-stream",
                "Content-Disposition": 'attachment; filename="../../report.bin"',
            }
        )
        whole = False
        try:
            await response.prepare(request)
            for _ in range(64):
                await response.write(b"x" * (1 << 20))
            await response.write_eof()
            whole = True
        finally:
            if not sent.done():
                sent.set_result(whole)
        return response

    pages = {"/": "<!doctype html><title>home</title>"}
    async with serving(pages_app(pages, routes={"/report": attachment})) as site:
        tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
        with pytest.raises(PlaywrightError, match="Download is starting"):
            await engine.navigate(TEAM, tab.id, AGENT, site.url("/report"))
        async with asyncio.timeout(30):
            assert await sent is False  # the browser ended the transfer


async def test_a_call_that_waited_for_a_tab_closed_meanwhile_finds_it_gone(
    engine: BrowserEngine, site: Site
) -> None:
    tab = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/"))
    started, finish = asyncio.Event(), asyncio.Event()

    async def busy(_page: Page) -> None:
        started.set()
        await finish.wait()

    async def location(page: Page) -> str:
        return str(page.url)

    first = asyncio.create_task(engine.run(TEAM, tab.id, AGENT, busy))
    await started.wait()
    # A person closes the tab, and an agent's call queues after: both wait for the first.
    closing = asyncio.create_task(engine.close_tab(TEAM, tab.id, PERSON))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(engine.run(TEAM, tab.id, AGENT, location))
    await asyncio.sleep(0)
    finish.set()
    await first
    await closing
    assert await async_code_of(waiting) == "tabNotFound"
    assert engine.list_tabs(TEAM) == []
    assert tab.page is None

"""The tab registry: every change of a listed tab is announced once, and only a change is."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from server.common.errors import CrewhostError
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.tab_registry import TabRegistry, TabsChanged
from server.host.browser.tabs import Tab
from server.host.signals import Signals
from tests.support.clock import FakeClock
from tests.support.sites import SITES_ALLOWED, Site
from tests.support.waiting import eventually

TEAM = "team-a"
OTHER = "team-b"
AGENT = Caller.agent("agent-1", "thread-1")

Listing = list[tuple[str, str, str, str | None, str | None, str | None, bool]]


def listing(tabs: list[Tab]) -> Listing:
    """What peers see of a team's tabs."""
    return [
        (
            t.id,
            t.url,
            t.title,
            t.icon.digest if t.icon else None,
            t.opener_tab_id,
            t.held_by,
            t.loaded,
        )
        for t in tabs
    ]


def new_tab(
    clock: FakeClock, tab_id: str, *, team_id: str = TEAM, opener: str | None = None
) -> Tab:
    return Tab(
        id=tab_id,
        team_id=team_id,
        partition=Partition.shared(),
        owner_agent_id=None,
        owner_thread_id=None,
        opener_tab_id=opener,
        url=f"https://example.test/{tab_id}",
        last_used=clock.now(),
    )


class Announced:
    """The team ids announced, in order."""

    def __init__(self) -> None:
        self.teams: list[str] = []
        self.signals = Signals()
        self.signals.subscribe(TabsChanged, lambda s: self.teams.append(s.team_id))

    def take(self) -> list[str]:
        taken, self.teams = self.teams, []
        return taken


@pytest.fixture
def announced() -> Announced:
    return Announced()


@pytest.fixture
def registry(clock: FakeClock, announced: Announced) -> TabRegistry:
    tabs = TabRegistry(clock, announced.signals)
    tabs.add(new_tab(clock, "a"), new_tab(clock, "popup", opener="a"))
    tabs.add(new_tab(clock, "b", team_id=OTHER))
    announced.take()
    return tabs


def code_of(call: Callable[[], object]) -> str:
    try:
        call()
    except CrewhostError as exc:
        return exc.code
    return "no error"


def test_adding_tabs_is_one_change_per_team(clock: FakeClock, announced: Announced) -> None:
    tabs = TabRegistry(clock, announced.signals)
    tabs.add(new_tab(clock, "a"), new_tab(clock, "b"), new_tab(clock, "c", team_id=OTHER))
    assert announced.take() == [TEAM, OTHER]
    tabs.add()
    assert announced.take() == []
    assert [t.id for t in tabs.of_team(TEAM)] == ["a", "b"]


def test_forgetting_a_tab_unlinks_its_popups_in_the_same_change(
    registry: TabRegistry, announced: Announced
) -> None:
    tab = registry.get(TEAM, "a")
    assert registry.forget(tab) is None  # it slept: no page to close
    assert announced.take() == [TEAM]
    assert listing(registry.of_team(TEAM)) == [
        ("popup", "https://example.test/popup", "", None, None, None, False)
    ]
    assert registry.forget(tab) is None
    assert announced.take() == []  # forgetting twice changes nothing
    assert code_of(lambda: registry.get(TEAM, "a")) == "tabNotFound"


def test_an_address_is_announced_only_when_it_changes(
    registry: TabRegistry, announced: Announced
) -> None:
    tab = registry.get(TEAM, "a")
    registry.record_url(tab, "https://example.test/next")
    assert announced.take() == [TEAM]
    registry.record_url(tab, "https://example.test/next")
    assert announced.take() == []
    assert tab.url == "https://example.test/next"


def test_a_title_is_announced_only_when_it_changes(
    registry: TabRegistry, announced: Announced
) -> None:
    tab = registry.get(TEAM, "a")
    registry.record_title(tab, "Fares")
    assert announced.take() == [TEAM]
    registry.record_title(tab, "Fares")
    assert announced.take() == []
    assert tab.title == "Fares"


def test_taking_and_releasing_a_tab_are_one_change_each(
    registry: TabRegistry, announced: Announced
) -> None:
    registry.take_control(TEAM, "a", "account-1")
    assert announced.take() == [TEAM]
    registry.take_control(TEAM, "a", "account-1")  # already held by the same person
    assert announced.take() == []
    assert code_of(lambda: registry.take_control(TEAM, "a", "account-2")) == "tabHeld"
    assert code_of(lambda: registry.release(TEAM, "a", "account-2")) == "tabNotHeld"
    assert code_of(lambda: registry.take_control(OTHER, "a", "account-1")) == "tabNotFound"
    assert announced.take() == []
    registry.release(TEAM, "a", "account-1")
    assert announced.take() == [TEAM]
    assert registry.get(TEAM, "a").held_by is None


def test_handing_a_tab_over_is_one_change_and_only_the_holder_may(
    registry: TabRegistry, announced: Announced
) -> None:
    registry.take_control(TEAM, "a", "account-1")
    announced.take()
    assert code_of(lambda: registry.hand_over(TEAM, "a", "account-2", "account-3")) == "tabNotHeld"
    assert announced.take() == []
    registry.hand_over(TEAM, "a", "account-1", "account-2")
    assert announced.take() == [TEAM]
    assert registry.get(TEAM, "a").held_by == "account-2"


def test_the_registry_knows_which_views_a_holder_holds_a_tab_through(
    registry: TabRegistry, announced: Announced
) -> None:
    tab = registry.get(TEAM, "a")
    registry.take_control(TEAM, "a", "account-1", "view-1")
    registry.take_control(TEAM, "a", "account-1", "view-2")  # one person, a second view
    assert announced.take() == [TEAM]  # peers list the holder, not their views
    assert registry.holds(tab, "account-1", "view-1")
    assert registry.holds(tab, "account-1", "view-2")
    assert not registry.holds(tab, "account-2", "view-1")

    registry.hand_over(TEAM, "a", "account-1", "account-2", "view-3")
    assert [
        registry.holds(tab, a, v) for a, v in [("account-1", "view-1"), ("account-2", "view-3")]
    ] == [
        False,
        True,
    ]
    registry.release(TEAM, "a", "account-2")
    assert not registry.holds(tab, "account-2", "view-3")
    assert announced.take() == [TEAM, TEAM]


def test_a_forgotten_tab_changes_silently(registry: TabRegistry, announced: Announced) -> None:
    tab = registry.get(TEAM, "a")
    registry.forget(tab)
    announced.take()
    registry.record_url(tab, "https://example.test/elsewhere")
    assert registry.detach_page(tab) is None
    assert announced.take() == []


@pytest.mark.parametrize("field", ["url", "title", "icon", "opener_tab_id", "held_by", "page"])
def test_listed_fields_change_only_through_the_registry(clock: FakeClock, field: str) -> None:
    tab = new_tab(clock, "a")
    with pytest.raises(AttributeError):
        setattr(tab, field, None)


async def test_every_announcement_is_a_change_and_every_change_is_announced(
    tmp_path: Path, clock: FakeClock, site: Site
) -> None:
    seen: list[Listing] = []
    async with BrowserEngine(tmp_path, clock=clock, address_policy=SITES_ALLOWED) as engine:
        engine.signals.subscribe(
            TabsChanged, lambda s: seen.append(listing(engine.list_tabs(s.team_id)))
        )

        def settled() -> bool:
            return bool(seen) and seen[-1] == listing(engine.list_tabs(TEAM))

        opener = await engine.open_tab(TEAM, Partition.shared(), url=site.url("/popups"))
        assert settled()
        await engine.navigate(TEAM, opener.id, AGENT, site.url("/"))
        assert settled()
        await engine.run(TEAM, opener.id, AGENT, lambda p: p.go_back())
        assert settled()
        await engine.run(TEAM, opener.id, AGENT, lambda p: p.click("#free"))
        await eventually(lambda: len(engine.list_tabs(TEAM)) == 2 and settled())
        popup = next(t for t in engine.list_tabs(TEAM) if t.id != opener.id)
        # A noopener popup outlives its opener, once the page has said it is one.
        await eventually(lambda: popup.url.endswith("/child") and not popup.dependent)
        await eventually(lambda: popup.title == "child" and settled())
        engine.take_control(TEAM, opener.id, "account-1")
        assert settled()
        engine.release(TEAM, opener.id, "account-1")
        assert settled()
        clock.advance(16 * 60)
        assert sorted(await engine.tick()) == sorted([opener.id, popup.id])
        assert settled()
        await engine.run(TEAM, opener.id, AGENT, lambda p: p.title())  # it wakes
        assert settled()
        await engine.close_tab(TEAM, opener.id, AGENT)
        assert settled()
        assert listing(engine.list_tabs(TEAM)) == [
            (popup.id, popup.url, "child", None, None, None, False)
        ]
    assert seen
    assert all(before != after for before, after in itertools.pairwise(seen))

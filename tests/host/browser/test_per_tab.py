"""Per-tab state keys: each key keeps its own state on each tab, with the key's type."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from server.host.browser.partitions import Partition
from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab


@dataclass
class Visits:
    pages: list[str] = field(default_factory=list)


VISITS: PerTab[Visits] = PerTab("visits", Visits)
LAST_PAGE: PerTab[str] = PerTab("lastPage")


def a_tab(tab_id: str) -> Tab:
    return Tab(
        id=tab_id,
        team_id="team-a",
        partition=Partition.shared(),
        owner_agent_id=None,
        owner_thread_id=None,
        opener_tab_id=None,
        url="https://example.test/",
        last_used=0.0,
    )


def test_state_is_made_on_first_use_and_kept_with_the_tab() -> None:
    tab = a_tab("t1")
    assert VISITS.get(tab) is None
    VISITS.get_or_create(tab).pages.append("https://example.test/a")
    VISITS.get_or_create(tab).pages.append("https://example.test/b")
    assert VISITS.get(tab) == Visits(["https://example.test/a", "https://example.test/b"])


def test_each_tab_and_each_key_keeps_its_own_state() -> None:
    first, second = a_tab("t1"), a_tab("t2")
    same_name: PerTab[Visits] = PerTab("visits", Visits)
    VISITS.get_or_create(first).pages.append("https://example.test/a")
    LAST_PAGE.set(first, "https://example.test/a")
    assert VISITS.get(second) is None
    assert same_name.get(first) is None  # a key is its own identity, not its name
    assert LAST_PAGE.get(first) == "https://example.test/a"
    LAST_PAGE.set(first, "https://example.test/b")
    assert LAST_PAGE.get(first) == "https://example.test/b"


def test_a_key_without_a_default_is_only_set() -> None:
    with pytest.raises(TypeError, match="lastPage"):
        LAST_PAGE.get_or_create(a_tab("t1"))

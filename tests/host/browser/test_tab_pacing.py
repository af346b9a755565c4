"""Pages made and closed one at a time per browser, with a breath between them while a
person watches a tab."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import pytest
from playwright.async_api import BrowserContext

from server.host.browser.tab_pacing import BREATH_SECONDS, TabPacing, browser_of


@dataclass(eq=False)
class Browser:
    pass


@dataclass(eq=False)
class Context:
    browser: Any


def context_of(browser: Any) -> BrowserContext:
    return cast(BrowserContext, Context(browser))


class Breaths:
    """The sleeps a pacing asked for; each ends when the test lets it."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.go_on = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self.go_on.wait()


async def test_a_browser_makes_and_closes_one_page_at_a_time() -> None:
    pacing = TabPacing(lambda _browser: False)
    shared = Browser()
    first, second = context_of(shared), context_of(shared)
    inside: list[str] = []
    leave_first = asyncio.Event()

    async def turn(name: str, context: BrowserContext, leave: asyncio.Event | None) -> None:
        async with pacing.turn(context):
            inside.append(name)
            if leave is not None:
                await leave.wait()
            inside.remove(name)

    one = asyncio.create_task(turn("one", first, leave_first))
    await asyncio.sleep(0)
    other = asyncio.create_task(turn("other", second, None))
    for _ in range(5):
        await asyncio.sleep(0)
        assert inside == ["one"]  # the other context's page waits: the same browser
    leave_first.set()
    await asyncio.gather(one, other)
    assert inside == []


async def test_two_browsers_make_their_pages_at_once() -> None:
    pacing = TabPacing(lambda _browser: False)
    both_in = asyncio.Barrier(2)

    async def turn(context: BrowserContext) -> None:
        async with pacing.turn(context):
            await asyncio.wait_for(both_in.wait(), 5)

    # A persistent context is a browser of its own, beside the one non-persistent ones share.
    await asyncio.gather(turn(context_of(None)), turn(context_of(Browser())))


async def test_while_a_tab_is_watched_each_page_is_followed_by_a_breath() -> None:
    watched = [True]
    breaths = Breaths()
    browser = Browser()
    pacing = TabPacing(lambda of: of is browser and watched[0], sleep=breaths.sleep)
    context = context_of(browser)
    done: list[str] = []

    async def turn(name: str) -> None:
        async with pacing.turn(context):
            done.append(name)

    one = asyncio.create_task(turn("one"))
    other = asyncio.create_task(turn("other"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert done == ["one"]  # the next page waits out the breath
    assert breaths.asked == [BREATH_SECONDS]
    watched[0] = False  # nobody watches any more: no breath after the next one
    breaths.go_on.set()
    await asyncio.gather(one, other)
    assert done == ["one", "other"]
    assert breaths.asked == [BREATH_SECONDS]


async def test_a_failed_page_frees_the_browser_for_the_next() -> None:
    breaths = Breaths()
    breaths.go_on.set()
    pacing = TabPacing(lambda _browser: True, sleep=breaths.sleep)
    context = context_of(Browser())

    async def failing() -> None:
        async with pacing.turn(context):
            raise RuntimeError("the page crashed")

    with pytest.raises(RuntimeError):
        await failing()
    async with asyncio.timeout(5), pacing.turn(context):
        pass
    assert breaths.asked == [BREATH_SECONDS]  # after the page that was made, not the failed one


async def test_a_navigation_takes_the_browser_s_turn_only_while_a_tab_is_watched() -> None:
    watched = [False]
    breaths = Breaths()
    breaths.go_on.set()
    browser = Browser()
    pacing = TabPacing(lambda of: of is browser and watched[0], sleep=breaths.sleep)
    context = context_of(browser)
    making = asyncio.Event()
    leave = asyncio.Event()

    async def page_made() -> None:
        async with pacing.turn(context):
            making.set()
            await leave.wait()

    holder = asyncio.create_task(page_made())
    await making.wait()
    # Nobody watches: a navigation starts at once, beside the page being made.
    async with asyncio.timeout(5), pacing.watched_turn(context) as paced:
        assert not paced
    watched[0] = True
    navigation = asyncio.create_task(_navigate(pacing, context))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not navigation.done()  # watched: it waits for the page being made
    leave.set()
    assert await asyncio.wait_for(navigation, 5) is True
    await holder
    assert breaths.asked == [BREATH_SECONDS]  # after the page; a navigation takes none


async def _navigate(pacing: TabPacing, context: BrowserContext) -> bool:
    async with pacing.watched_turn(context) as paced:
        return paced


def test_the_browser_of_a_context() -> None:
    shared = Browser()
    persistent = context_of(None)
    assert browser_of(context_of(shared)) is shared
    assert browser_of(persistent) is persistent

"""The screencast's frame cap and the holder's faster frames, on a real Chromium page."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PIL import Image
from playwright.async_api import Page, async_playwright

from server.common.protocol.view import decode_frame
from server.host.live.screencast import (
    INPUT_BOOST_SECONDS,
    INPUT_SETTLE_SECONDS,
    RECAPTURE_AFTER_SECONDS,
    RECAPTURE_MOST_SECONDS,
    FrameWait,
    TabScreencast,
    Viewer,
)
from server.host.metrics import HostMetrics
from tests.support.chromium import launch_chromium
from tests.support.waiting import eventually

PAGE = (
    "<!doctype html><style>body{margin:0}</style>"
    "<div id=box style='width:100vw;height:100vh;background:#f00'></div><script>"
    "let n=0;setInterval(()=>{document.title=String(n++)},16);"
    "addEventListener('keydown',e=>{if(e.key==='b')box.style.background='#00f'})</script>"
)


class Channel:
    """An open data channel with room to spare that keeps what it was sent."""

    bufferedAmount = 0
    readyState = "open"

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        self.sent.append(data)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright)
        page = await browser.new_page(viewport={"width": 400, "height": 300})
        await page.set_content(PAGE)
        yield page
        await browser.close()


def frame_event(session_id: int, captured: float = 1.0) -> dict[str, Any]:
    """What Chromium sends with a frame (the bytes need not be a picture for the cap), and
    when it was captured (seconds of the wall clock)."""
    return {
        "sessionId": session_id,
        "data": base64.b64encode(b"\xff\xd8frame").decode(),
        "metadata": {"deviceWidth": 400, "deviceHeight": 300, "timestamp": captured},
    }


async def capped(page: Page, clock: Clock) -> tuple[TabScreencast, Channel]:
    """A screencast at 10 frames a second whose frames come from the test, not Chromium."""
    cast = TabScreencast(page, quality=70, max_fps=10, clock=clock)
    cast.session = await page.context.new_cdp_session(page)  # acks go to a real session
    channel = Channel()
    cast.viewers.add(Viewer(channel, HostMetrics().frame_counts))
    return cast, channel


async def test_a_frame_within_the_cap_waits_unless_the_holder_just_gave_input(page: Page) -> None:
    clock = Clock()
    cast, channel = await capped(page, clock)
    cast._on_frame(frame_event(1))
    clock.now += 0.06  # past half the interval of 0.1 s, within the whole of it
    cast._on_frame(frame_event(2))
    assert len(channel.sent) == 1  # held for the cap

    cast.input_given()
    clock.now += 0.001
    cast._on_frame(frame_event(3))  # the held frame's place is taken and it goes at once
    clock.now += 0.02
    cast._on_frame(frame_event(4))  # within half the interval: still capped
    assert [decode_frame(frame).sequence for frame in channel.sent] == [1, 2]

    clock.now += INPUT_BOOST_SECONDS + 0.06
    cast._on_frame(frame_event(5))  # the input was long ago: the whole interval again
    sent = len(channel.sent)
    clock.now += 0.06
    cast._on_frame(frame_event(6))
    assert len(channel.sent) == sent
    await cast.stop()


def centre(jpeg: bytes) -> tuple[int, int, int]:
    with Image.open(io.BytesIO(jpeg)) as image:
        pixel = image.convert("RGB").getpixel((image.width // 2, image.height // 2))
    assert isinstance(pixel, tuple)
    return int(pixel[0]), int(pixel[1]), int(pixel[2])


async def test_the_frame_after_the_holders_key_shows_what_it_did(page: Page) -> None:
    cast = TabScreencast(page, quality=70, max_fps=30)
    channel = Channel()
    await cast.add(Viewer(channel, HostMetrics().frame_counts))
    await eventually(lambda: bool(channel.sent))
    assert centre(decode_frame(channel.sent[-1]).jpeg)[0] > 200  # red
    assert cast.session is not None
    cast.input_given()
    await cast.session.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "b", "text": "b"})
    await eventually(lambda: centre(decode_frame(channel.sent[-1]).jpeg)[2] > 200)  # blue
    sequences = [decode_frame(frame).sequence for frame in channel.sent]
    assert sequences == list(range(1, len(sequences) + 1))
    await cast.stop()


async def test_a_viewer_joining_a_running_screencast_gets_the_last_frame_at_once(
    page: Page,
) -> None:
    clock = Clock()
    cast, first = await capped(page, clock)
    cast._on_frame(frame_event(1))
    assert len(first.sent) == 1
    # The page stands still: Chromium sends no frame after this one.
    second = Channel()
    await cast.add(Viewer(second, HostMetrics().frame_counts))
    assert second.sent == first.sent
    await cast.stop()
    third = Channel()
    cast.viewers.clear()
    await cast.add(Viewer(third, HostMetrics().frame_counts))  # a new screencast
    assert third.sent == []  # nothing stale from the one that stopped
    await cast.stop()


async def page_of(page: Page, html: str) -> Page:
    """Another page of the fixture's browser showing ``html`` (Chromium sends a page whose
    content was set a second time no more screencast frames after the first)."""
    browser = page.context.browser
    assert browser is not None
    other = await browser.new_page(viewport={"width": 400, "height": 300})
    await other.set_content(html)
    return other


ANIMATED = (
    "<!doctype html><style>body{margin:0}</style>"
    "<div id=box style='width:100vw;height:100vh'></div><script>"
    "let n=0;setInterval(()=>{box.style.background='hsl('+(n++%360)+',70%,50%)'},16)</script>"
)


async def test_a_page_that_paints_all_the_time_costs_chromium_only_the_frames_sent(
    page: Page,
) -> None:
    page = await page_of(page, ANIMATED)
    cast = TabScreencast(page, quality=70, max_fps=10)
    channel = Channel()
    await cast.add(Viewer(channel, HostMetrics().frame_counts))
    assert cast.session is not None
    captured: list[int] = []
    cast.session.on("Page.screencastFrame", lambda params: captured.append(params["sessionId"]))
    await eventually(lambda: len(channel.sent) >= 15)
    # The page paints 60 times a second and frames go at 10: had every frame been
    # acknowledged at once, Chromium would have captured and encoded six for each sent.
    # Acknowledged at the cap's rate, a few more than were sent: the frames waiting when
    # acknowledging began, and a frame that came while another waited for the cap and was
    # replaced by the next before it went (on a busy machine, 19 captured for 15 sent).
    assert len(captured) <= 2 * len(channel.sent)
    await cast.stop()


BURST = (
    "<!doctype html><style>body{margin:0}</style>"
    "<div id=box style='width:100vw;height:100vh;background:#f00'></div><script>"
    "function burst(){['#0f0','#ff0','#0ff','#f0f','#888','#0f0','#ff0','#0ff','#f0f','#00f']"
    ".forEach((c,i)=>setTimeout(()=>{box.style.background=c},40*(i+1)))}</script>"
)


def is_blue(pixel: tuple[int, int, int]) -> bool:
    red, green, blue = pixel
    return red < 50 and green < 50 and blue > 200


async def test_the_last_change_of_a_burst_is_shown_after_chromium_held_its_captures_back(
    page: Page,
) -> None:
    page = await page_of(page, BURST)
    cast = TabScreencast(page, quality=70, max_fps=2)  # acknowledgements every half second
    channel = Channel()
    await cast.add(Viewer(channel, HostMetrics().frame_counts))
    await eventually(lambda: bool(channel.sent))
    assert centre(decode_frame(channel.sent[-1]).jpeg)[0] > 200  # red
    await page.evaluate("burst()")  # ten changes in 0.4 s, then the page stands still
    # Three frames of the burst wait for their acknowledgements and Chromium captures none
    # of the rest, the blue that ends it among them: that frame is asked for again.
    await eventually(lambda: is_blue(centre(decode_frame(channel.sent[-1]).jpeg)))
    await cast.stop()


async def test_frames_on_their_way_count_as_chromium_s_so_a_lost_change_is_asked_for(
    page: Page,
) -> None:
    clock = Clock()
    cast, _channel = await capped(page, clock)
    asked = refreshes_of(cast)
    # Two frames wait here; the first is acknowledged. Chromium counts a third in flight,
    # still on its way: with three, it captures nothing more until an acknowledgement.
    cast._unacked.extend([1, 2])
    cast._acknowledge_oldest()
    acknowledged = time.time()
    assert not asks_again(cast)  # two waited here: Chromium could still capture
    cast._on_frame(frame_event(3, captured=acknowledged - 0.2))  # it comes now
    assert asks_again(cast)
    # No frame follows (the page stood still after a change Chromium did not capture):
    # the page's frame is asked for again.
    await eventually(lambda: len(asked) == 1)

    # A frame captured after the acknowledgement went shows the page as it was then.
    cast._forget_unacked()
    cast._unacked.extend([4, 5])
    cast._acknowledge_oldest()
    cast._on_frame(frame_event(6, captured=time.time() + 1))
    assert not asks_again(cast)
    await cast.stop()


async def test_once_the_holders_input_stops_its_frame_is_asked_for_whatever_came(
    page: Page,
) -> None:
    clock = Clock()
    cast, _channel = await capped(page, clock)
    asked = refreshes_of(cast)
    # Keys in a row, each reaching the page, and frames between them that may show the
    # page from before the last key: once the keys stop, the page's frame is asked for,
    # once, even though no frame was missing by the screencast's own count.
    for session_id in range(1, 4):
        cast.input_given()
        cast.input_delivered()
        last_input = time.monotonic()
        cast._on_frame(frame_event(session_id, captured=time.time() + 1))
    assert not asks_again(cast)
    await eventually(lambda: len(asked) == 1)
    assert asked[0] - last_input >= INPUT_SETTLE_SECONDS
    # A view that stops before its input settles asks for nothing more.
    cast.input_delivered()
    await cast.stop()
    assert cast._settle is None


def refreshes_of(cast: TabScreencast) -> list[float]:
    """When the screencast asks for the page's frame again, from now on (it asks nothing of
    Chromium: the test reads the times)."""
    asked: list[float] = []

    async def refresh() -> None:
        asked.append(time.monotonic())

    cast.refresh = refresh  # type: ignore[method-assign]
    return asked


def asks_again(cast: TabScreencast) -> bool:
    """Whether the screencast will ask for the page's frame again unless one comes."""
    return cast._recapture is not None


def test_a_frame_late_on_a_loaded_machine_is_waited_for_before_asking_again() -> None:
    wait = FrameWait()
    assert wait.recapture_after() == RECAPTURE_AFTER_SECONDS  # nothing seen yet
    wait.came_after(0.03)
    assert wait.recapture_after() == RECAPTURE_AFTER_SECONDS  # quick frames: the floor
    wait.came_after(0.3)  # a loaded machine: frames come late after Chromium may capture
    assert wait.recapture_after() == pytest.approx(0.6)
    wait.came_after(0.02)  # the next ones quick again: the late one counts for less
    assert RECAPTURE_AFTER_SECONDS < wait.recapture_after() < 0.6
    for _ in range(30):
        wait.came_after(0.02)
    assert wait.recapture_after() == RECAPTURE_AFTER_SECONDS
    wait.came_after(5.0)
    assert wait.recapture_after() == RECAPTURE_MOST_SECONDS  # never more than a second

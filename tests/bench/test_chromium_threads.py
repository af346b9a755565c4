"""The bench's hub threads: found in either Chromium the host runs, whatever starts it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from tests.support.chromium import launch_chromium

# The bench's scripts import each other by name, as they run from their folder.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from chromium_threads import HubThreadWindow

# A page that changes every few milliseconds: every frame of it passes both hub threads.
BUSY_PAGE = "<p id=n>0</p><script>setInterval(() => n.textContent = Math.random(), 4)</script>"


@pytest.mark.parametrize("full", [False, True], ids=["headless shell", "full browser"])
async def test_both_hub_threads_are_found_at_work_while_a_tab_is_watched(full: bool) -> None:
    # Debian's headless shell runs behind a launcher process that stays the driver's child
    # while the browser, its own child, does the work: the window once reported the idle
    # launcher's main thread (0 % at work) for the shell's browser.
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright, full=full)
        page = await browser.new_page()
        await page.set_content(BUSY_PAGE)
        session = await page.context.new_cdp_session(page)
        frames = 0
        thirty = asyncio.Event()

        async def acknowledge(event: dict[str, object]) -> None:
            nonlocal frames
            frames += 1
            if frames == 30:
                thirty.set()
            await session.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]})

        session.on("Page.screencastFrame", acknowledge)
        window = HubThreadWindow(os.getpid())
        window.start()
        await session.send("Page.startScreencast", {"format": "jpeg", "quality": 70})
        await thirty.wait()
        threads = window.stop()
        await browser.close()
    assert set(threads) == {"browser_main", "gpu_compositor"}
    # Thirty frames captured, encoded and sent: a percent of the window at the least.
    assert threads["browser_main"]["at_work_percent"] >= 1
    assert threads["gpu_compositor"]["at_work_percent"] >= 1

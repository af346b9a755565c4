"""Fails a test whose event loop stopped answering: something blocked it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

# Longer than a scheduling hiccup on a busy 2-core machine; a blocking call (a sync
# sleep, a sync HTTP request, a lock held across threads) lasts longer.
BLOCK_LIMIT_SECONDS = 1.0


async def watch_event_loop() -> AsyncIterator[None]:
    last_beat = time.monotonic()
    worst = 0.0
    stop = threading.Event()

    async def heartbeat() -> None:
        nonlocal last_beat
        while True:
            last_beat = time.monotonic()
            await asyncio.sleep(0.02)

    def watchdog() -> None:
        nonlocal worst
        while not stop.wait(0.02):
            worst = max(worst, time.monotonic() - last_beat)

    task = asyncio.get_running_loop().create_task(heartbeat())
    thread = threading.Thread(target=watchdog, name="loop-watchdog", daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()
    task.cancel()
    assert worst < BLOCK_LIMIT_SECONDS, f"the event loop was blocked for {worst:.2f} s"

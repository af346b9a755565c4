"""The watchdog that every async test runs under does fail a test that blocks the loop."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.loop_watch import BLOCK_LIMIT_SECONDS, watch_event_loop


async def _watched(body_seconds: float, *, blocking: bool) -> None:
    watch = watch_event_loop()
    await anext(watch)
    if blocking:
        time.sleep(body_seconds)  # noqa: ASYNC251 - the point of the test
    else:
        await asyncio.sleep(body_seconds)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


@pytest.mark.allow_blocking
async def test_a_blocking_call_fails_the_test() -> None:
    with pytest.raises(AssertionError, match="event loop was blocked"):
        await _watched(BLOCK_LIMIT_SECONDS + 0.25, blocking=True)


async def test_awaiting_is_fine() -> None:
    await _watched(BLOCK_LIMIT_SECONDS + 0.25, blocking=False)

"""Waiting for state that callbacks (aiortc, Playwright) change without an event to await."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def eventually(check: Callable[[], bool], seconds: float = 20.0) -> None:
    """Return once ``check()`` holds; fail after ``seconds`` (a bound, not a timing assertion)."""
    async with asyncio.timeout(seconds):
        while not check():  # noqa: ASYNC110 - there is no event for these states
            await asyncio.sleep(0.02)

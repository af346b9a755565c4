"""Closing a page that is no tab's any more, whatever state its renderer is in."""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

# Closing a page whose renderer is gone must not hang the caller.
_CLOSE_LIMIT = 5.0
# Chromium drops a close asked while it commits an error page over another one (a tab
# closed right after its second failed load): the page stayed open and the close waited
# out its limit. Past this, the close is asked again over the page's own DevTools session.
_ASK_AGAIN = 0.5


async def close_page(page: Page | None) -> None:
    """Closes ``page`` within a limit."""
    if page is None:
        return
    closing = asyncio.ensure_future(page.close())
    closing.add_done_callback(_retrieve)
    done, _ = await asyncio.wait({closing}, timeout=_ASK_AGAIN)
    if not done:
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(_CLOSE_LIMIT):
                session = await page.context.new_cdp_session(page)
                await session.send("Page.close")
        await asyncio.wait({closing}, timeout=_CLOSE_LIMIT)
    closing.cancel()  # nothing, once it is done


def _retrieve(closing: asyncio.Future[None]) -> None:
    """A close that failed (the page or its browser went first) is no error of the caller's."""
    if not closing.cancelled():
        closing.exception()

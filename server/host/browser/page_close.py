"""Closing a page that is no tab's any more, whatever state its renderer is in."""

from __future__ import annotations

import asyncio

from playwright.async_api import Page

# Closing a page whose renderer is gone must not hang the caller.
_CLOSE_LIMIT = 5.0
# Chromium drops a close asked while it commits an error page over another one (a tab
# closed right after its second failed load): the page stayed open and the close waited
# out its limit. Past this, the close is asked again over the page's own DevTools session,
# while the first close may still end it (on a busy machine a close can take this long).
_ASK_AGAIN = 1.0


async def close_page(page: Page | None) -> None:
    """Closes ``page`` within a limit, whatever state its renderer is in."""
    if page is None:
        return
    closing = asyncio.ensure_future(page.close())
    closing.add_done_callback(_retrieve)
    done, _ = await asyncio.wait({closing}, timeout=_ASK_AGAIN)
    if not done:
        again = asyncio.ensure_future(_close_over_devtools(page))
        again.add_done_callback(_retrieve)
        # The first close ending ends the wait: asking again must not hold the caller.
        await asyncio.wait({closing}, timeout=_CLOSE_LIMIT - _ASK_AGAIN)
        again.cancel()
    closing.cancel()  # nothing, once it is done


async def _close_over_devtools(page: Page) -> None:
    session = await page.context.new_cdp_session(page)
    await session.send("Page.close")


def _retrieve(task: asyncio.Future[None]) -> None:
    """A close that failed (the page or its browser went first) is no error of the caller's."""
    if not task.cancelled():
        task.exception()

"""What every tab's page has before its first document: the identity and the page scripts.

The identity override (user agent, languages, client hints) and the scripts every new
document gets (``page-facts.js`` in its own world, ``passkey-watch.js`` in the main one)
go to a page over one CDP session, which the tab keeps: detaching it drops what it set. A
page set up here has run no document of its own yet, so nothing a page loads in it runs
before them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass

from playwright.async_api import CDPSession, Page

from server.host.browser import page_facts, passkeys
from server.host.browser.identity import BrowserIdentity


@dataclass(frozen=True, slots=True)
class PreparedPage:
    """A blank page with the identity override and the page scripts on it, and the session
    that holds them (where the scripts' reports come)."""

    page: Page
    session: CDPSession


async def prepare(page: Page, identity: BrowserIdentity) -> PreparedPage:
    """Sets up a blank ``page``: the override and the scripts are sent at once, one wait."""
    session = await page.context.new_cdp_session(page)
    await _all(identity.override(session), install_scripts(session))
    return PreparedPage(page, session)


async def install_scripts(session: CDPSession) -> None:
    """Puts the facts and passkey scripts on every new document of the session's page."""
    await _all(page_facts.install(session), passkeys.install(session))


async def _all(*steps: Awaitable[None]) -> None:
    """Runs the steps together (one session answers in order) and raises the first failure,
    after every step ended."""
    for outcome in await asyncio.gather(*steps, return_exceptions=True):
        if isinstance(outcome, BaseException):
            raise outcome

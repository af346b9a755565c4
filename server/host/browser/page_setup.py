"""What every tab's page has before its first document: the identity and the page scripts.

The identity override (user agent, languages, client hints) and the scripts every new
document gets (``page-facts.js`` in its own world, ``passkey-watch.js`` in the main one)
go to a page over two CDP sessions, which the tab keeps: detaching one drops what it set.
They are sent side by side (one session runs its commands in turn; two were measured
quicker than one). A page set up here has run no document of its own yet, so nothing a
page loads in it runs before them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from playwright.async_api import CDPSession, Page

from server.host.browser import page_facts, passkeys
from server.host.browser.identity import BrowserIdentity

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PreparedPage:
    """A blank page with the identity override and the page scripts on it, and the sessions
    that hold them (the facts session is where the scripts' reports come)."""

    page: Page
    identity_session: CDPSession
    facts_session: CDPSession


async def prepare(page: Page, identity: BrowserIdentity) -> PreparedPage:
    """Sets up a blank ``page``: the override and the scripts go at once, neither waits for
    the other."""
    sessions = await _all(identity.apply(page), scripts_session(page))
    return PreparedPage(page, sessions[0], sessions[1])


async def scripts_session(page: Page) -> CDPSession:
    """A session of ``page`` that puts the facts and passkey scripts on its every new
    document, and where their bindings report."""
    session = await page.context.new_cdp_session(page)
    await _all(page_facts.install(session), passkeys.install(session))
    return session


async def _all(*steps: Awaitable[T]) -> list[T]:
    """Runs the steps together and raises the first failure, after every step ended."""
    outcomes = await asyncio.gather(*steps, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]

"""Running the tools' own page scripts in an isolated world of a page's main frame.

An isolated world shares the page's DOM but none of its JavaScript: a page that
replaces ``querySelectorAll``, ``MutationObserver`` or ``Element.prototype.click``
cannot change what these scripts see or do, and cannot see them. The world lasts
as long as the main frame's document, so what one call leaves there (a snapshot's
registry, a resolved target) the next one finds; a new document gets a new world.
Elements in the main frame's same-origin frames are reached from it as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from server.host.page.scripts import page_script, script_world

WORLD_NAME = "crewhost-tools"

S = TypeVar("S")


class IsolatedScriptError(Exception):
    """The script threw, or the page went away while it ran."""


@dataclass
class _World:
    """A page's CDP session (one per page: attaching per call cost more than the calls) and
    the tools' world in its current document: its context id and the token it was set up
    with, once made."""

    session: CDPSession
    current: tuple[int, str] | None = None
    making: asyncio.Lock = field(default_factory=asyncio.Lock)


_WORLDS: WeakKeyDictionary[Page, _World] = WeakKeyDictionary()


async def _world(page: Page, *, new_session: bool = False) -> _World:
    world = _WORLDS.get(page)
    if world is not None and new_session:
        _WORLDS.pop(page, None)
        with contextlib.suppress(PlaywrightError):
            await world.session.detach()
        world = None
    if world is None:
        session = await page.context.new_cdp_session(page)
        world = _WORLDS.get(page)  # another call may have attached meanwhile
        if world is not None:
            with contextlib.suppress(PlaywrightError):
                await session.detach()
            return world
        world = _World(session)
        _WORLDS[page] = world
    return world


async def _context(world: _World, stale: tuple[int, str] | None = None) -> tuple[int, str]:
    """The world's ``(context id, token)``; a new world when there is none yet or the one
    there is ``stale``. One call makes it (and sets it up) while the others wait."""
    async with world.making:
        if world.current is None or world.current == stale:
            tree = await world.session.send("Page.getFrameTree")
            created = await world.session.send(
                "Page.createIsolatedWorld",
                {"frameId": tree["frameTree"]["frame"]["id"], "worldName": WORLD_NAME},
            )
            context_id, token = int(created["executionContextId"]), secrets.token_hex(16)
            await _evaluate(
                world, context_id, f"({page_script('world-init')})({json.dumps(token)})"
            )
            world.current = (context_id, token)
        return world.current


async def _evaluate(world: _World, context_id: int, expression: str) -> dict[str, Any]:
    reply: dict[str, Any] = await world.session.send(
        "Runtime.evaluate",
        {
            "expression": expression,
            "contextId": context_id,
            "returnByValue": True,
            "awaitPromise": True,
        },
    )
    return reply


async def evaluate_isolated(page: Page, script: str, argument: Any = None) -> Any:
    """Calls the isolated-world page script ``script`` (``page/js/<script>.js``) with
    ``argument`` in the page's tools world; its JSON result. A returned promise is awaited.

    A world that is gone (its document went) or is not ours any more (its id names another
    context after a renderer swap) is made again, once; so is a session that ended.
    """
    if script_world(script) != "isolated":
        raise ValueError(f"{script}.js does not run in the isolated world")
    call = f"({page_script('world-call')})"
    source, given = page_script(script), json.dumps(argument)
    world = await _world(page)
    used: tuple[int, str] | None = None
    for attempt in range(2):
        try:
            used = await _context(world, stale=used)
        except PlaywrightError:
            world = await _world(page, new_session=True)  # the session ended with its target
            used = await _context(world)
        try:
            reply = await _evaluate(
                world, used[0], f"{call}({json.dumps(used[1])}, {source}, {given})"
            )
        except PlaywrightError:
            if attempt:
                raise
            continue
        value = reply.get("result", {}).get("value")
        if isinstance(value, dict) and value.get("lost"):
            if attempt:
                raise IsolatedScriptError("the page's tools world could not be made")
            continue
        details = reply.get("exceptionDetails")
        if details is not None:
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise IsolatedScriptError(str(text)[:300])
        return (value or {}).get("value")
    raise AssertionError("unreachable")


class PerDocument(Generic[S]):
    """State the tools keep about a page's current document, forgotten with the page.

    Keyed by the page and the document's time origin, on the Python side: it outlives
    the document's world, which goes when the document does.
    """

    def __init__(self, factory: type[S]) -> None:
        self._factory = factory
        self._states: WeakKeyDictionary[Page, tuple[float, S]] = WeakKeyDictionary()

    def get(self, page: Page, document_id: float) -> S:
        """The state of the document ``document_id`` of ``page``; fresh for a new document."""
        held = self._states.get(page)
        if held is None or held[0] != document_id:
            held = (document_id, self._factory())
            self._states[page] = held
        return held[1]

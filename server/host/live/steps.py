"""Steps a person takes while holding an agent's tab, as one line each.

Two kinds of step: a page load (its host, path and title; no query or hash; path parts
that look like credentials become ``:token``, those that look like codes ``:id``) and a
press on a control (its role and accessible name, read in an isolated world within
``READ_SECONDS``). Nothing is recorded for a press
outside a control, on a password field or a field whose ``autocomplete`` names a
password, a one-time code or a card value; a field gives its label, never its value;
key presses are never read. Tabs that record nothing: a private sign-in, a tab no agent
owns, a tab in secure entry (a secret being typed), a page that is not http(s).

Reading a press runs beside the input, never before it: the person's press goes to the
page at once, whether or not its step is read in time.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError

from server.common.redaction import redact, redact_path
from server.common.tasks import BackgroundTasks
from server.host.browser.access import holds_secret, is_private
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.signals import Signals

if TYPE_CHECKING:
    from playwright.async_api import Page

    from server.host.browser.tabs import Tab


# How long a press's control may take to read before the step is dropped. A host busy
# with many agents answered a read in over a second (a teaching test lost a step in a full
# run of the suite); a late step still arrives in its place, a dropped one never does.
READ_SECONDS = 5.0
MAX_TITLE_CHARS = 120
MAX_PATH_CHARS = 300

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_HEX = re.compile(r"^[0-9a-f]{12,}$", re.I)
_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{6,}$")


@dataclass(frozen=True, slots=True)
class Step:
    """One step in one agent's tab, by the person holding it."""

    team_id: str
    tab_id: str
    agent_id: str
    account_id: str
    line: str
    # "page" for a page load, "press" for a press on a control.
    kind: str
    # The thread that owns the tab (None: no thread's): a private thread's steps are its
    # member's.
    thread_id: str | None = None


# (page, x, y) -> what ``press-target.js`` found there, read in the isolated world.
ReadPress = Callable[["Page", float, float], Awaitable[Any]]


class ReadFailed(Exception):
    """The page could not be read (its tools world could not be made)."""


async def read_press(page: Page, x: float, y: float) -> Any:
    """The control under a person's press, read in the page's isolated tools world."""
    try:
        return await evaluate_isolated(page, "press-target", [x, y])
    except IsolatedScriptError as exc:
        raise ReadFailed(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class StepRecorded:
    """A step was recorded; the browsing memory and any teach recording on the tab hear it,
    in the order the person took the steps."""

    step: Step


# (team, tab, account): that person stopped holding that tab.
LetGo = Callable[[str, str, str], None]


def is_code(part: str) -> bool:
    """A path part that names one record rather than a place: digits, a UUID, a long hex
    string, or a token mixing letters with three or more digits."""
    if part.isdigit() or _UUID.match(part) or _HEX.match(part):
        return True
    return bool(_TOKEN.match(part)) and sum(c.isdigit() for c in part) >= 3


def page_line(url: str, title: str) -> str | None:
    """``opened <host><path> "<title>"``; None for anything but an http(s) page."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    path = "/".join(":id" if is_code(p) else p for p in redact_path(parts.path).split("/")) or "/"
    line = f"opened {parts.hostname}{path[:MAX_PATH_CHARS]}"
    title = redact(" ".join(title.split())[:MAX_TITLE_CHARS])
    return f'{line} "{title}"' if title else line


def press_line(found: Any) -> str | None:
    """``pressed <role> "<name>"`` from what ``press-target.js`` read; None for a press
    outside a control or on a secret field."""
    if not isinstance(found, dict) or found.get("secret"):
        return None
    role, name = found.get("role"), found.get("name")
    if not isinstance(role, str) or not role:
        return None
    name = " ".join(str(name or "").split())[:MAX_TITLE_CHARS]
    return f'pressed {role} "{name}"' if name else f"pressed {role}"


def recordable(tab: Tab, url: str) -> bool:
    """Whether steps in ``tab`` at ``url`` may be recorded at all."""
    return (
        tab.owner_agent_id is not None
        and not is_private(tab)
        and not holds_secret(tab)
        and urlsplit(url).scheme in ("http", "https")
    )


class StepRecorder:
    """Turns what a holding person does into steps and hands them to the listeners."""

    def __init__(self, read_press: ReadPress, signals: Signals) -> None:
        self._read_press = read_press
        self._signals = signals
        self._let_go: list[LetGo] = []
        self._tasks = BackgroundTasks("step recorder")
        self._reading: set[asyncio.Task[Any]] = set()
        # The newest step task of each tab: the next one tells after it.
        self._last: dict[tuple[str, str], asyncio.Task[Any]] = {}

    def on_let_go(self, listener: LetGo) -> None:
        self._let_go.append(listener)

    def let_go(self, team_id: str, tab_id: str, account_id: str) -> None:
        """The person no longer holds the tab (released, handed on, or their view closed)."""
        for listener in self._let_go:
            listener(team_id, tab_id, account_id)

    def pressed(self, tab: Tab, account_id: str, page: Page, x: float, y: float) -> None:
        """A holding person pressed at (x, y) in CSS pixels; read beside the input."""
        if recordable(tab, page.url):
            self._spawn(tab, account_id, "press", self._press(page, x, y))

    def loaded(self, tab: Tab, account_id: str, page: Page) -> None:
        """The page a person holds finished loading."""
        if recordable(tab, page.url):
            self._spawn(tab, account_id, "page", self._load(page))

    def _spawn(
        self, tab: Tab, account_id: str, kind: str, reading: Coroutine[Any, Any, str | None]
    ) -> None:
        key = (tab.team_id, tab.id)
        before = self._last.get(key)
        read = self._tasks.spawn(reading)
        task = self._tasks.spawn(self._in_order(tab, account_id, kind, read, before))
        self._last[key] = task
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)
        task.add_done_callback(lambda done: self._forget_last(key, done))

    def _forget_last(self, key: tuple[str, str], task: asyncio.Task[Any]) -> None:
        if self._last.get(key) is task:
            del self._last[key]

    async def _in_order(
        self,
        tab: Tab,
        account_id: str,
        kind: str,
        reading: asyncio.Task[Any],
        before: asyncio.Task[Any] | None,
    ) -> None:
        """Reads run at once, side by side; their steps reach the listeners in the order
        the person took them."""
        line: str | None = await reading
        if before is not None:
            await asyncio.wait({before})
        if line is not None:
            await self._tell(tab, account_id, line, kind)

    async def _press(self, page: Page, x: float, y: float) -> str | None:
        try:
            found = await asyncio.wait_for(self._read_press(page, x, y), READ_SECONDS)
        except (TimeoutError, PlaywrightError, ReadFailed):
            return None  # not read in time, or the page went: no step
        return press_line(found)

    async def _load(self, page: Page) -> str | None:
        url = page.url
        try:
            title = await asyncio.wait_for(page.title(), READ_SECONDS)
        except (TimeoutError, PlaywrightError):
            title = ""
        return page_line(url, title)

    async def _tell(self, tab: Tab, account_id: str, line: str, kind: str) -> None:
        assert tab.owner_agent_id is not None
        step = Step(
            tab.team_id, tab.id, tab.owner_agent_id, account_id, line, kind, tab.owner_thread_id
        )
        await self._signals.deliver(StepRecorded(step))

    async def caught_up(self, team_id: str, tab_id: str) -> None:
        """Until every step taken in the tab so far has reached the listeners: a press read
        beside its input may still be read when the person says they are done."""
        last = self._last.get((team_id, tab_id))
        if last is not None:
            await asyncio.wait({last})

    async def settled(self) -> None:
        """Until every step read so far has reached the listeners (tests)."""
        while self._reading:
            await asyncio.wait(set(self._reading))

    async def close(self) -> None:
        await self._tasks.close()

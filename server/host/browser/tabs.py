"""Tabs and their operation queue.

Every call on a tab passes through ``TabQueue.run``: it runs one operation at a
time, refuses agents while a person holds the tab or a dialog waits, and
bounds each operation by a deadline so one stuck call cannot stall the tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from playwright.async_api import CDPSession, Page

from server.common.errors import Unavailable
from server.host.browser.access import require_turn
from server.host.browser.callers import Caller
from server.host.browser.dialogs import PendingDialog
from server.host.browser.page_facts import TabIcon
from server.host.browser.partitions import Partition
from server.host.browser.per_tab import PerTab
from server.host.browser.protection_state import Protection

T = TypeVar("T")

# The address of a tab with nothing loaded.
BLANK = "about:blank"


class Tab:
    """One managed tab. ``page`` is None while the tab sleeps (its URL is kept).

    What peers list of a tab (its address, title, opener, holder and page) is read-only here:
    only ``TabRegistry`` changes it, and it announces each change, but for one case: secure
    entry narrows the kept address of a page that went while its address carried a secret
    to its site (``browser.protection.release``). The other fields are bookkeeping of the
    engine, the live view and the tools, which no peer sees.
    """

    def __init__(
        self,
        *,
        id: str,
        team_id: str,
        partition: Partition,
        owner_agent_id: str | None,
        owner_thread_id: str | None,
        opener_tab_id: str | None,
        url: str,
        last_used: float,
        dependent: bool = False,
        opened_by: str | None = None,
    ) -> None:
        self.id = id
        self.team_id = team_id
        # Off the list for good (closed, or its profile went): a call that waited its turn
        # finds it so instead of loading its page again.
        self.closed = False
        self.partition = partition
        self.owner_agent_id = owner_agent_id
        self.owner_thread_id = owner_thread_id
        # The account of the person who opened the tab (None for an agent's or a restored tab).
        self.opened_by = opened_by
        # Listed state, written by ``TabRegistry`` only.
        self._url = url
        self._title = ""
        self._icon: TabIcon | None = None
        self._opener_tab_id = opener_tab_id
        self._held_by: str | None = None
        # The live views the holder holds it through (none: held without a view).
        self._holding_views: frozenset[str] = frozenset()
        self._person_held = False
        self._page: Page | None = None
        # Secure entry's state, written by ``browser.protection`` only: the phase, and its
        # record of the entry under way (the CDP session, the release event).
        self._protection = Protection.NONE
        self._protection_record: Any = None
        self.last_used = last_used
        # A popup that closes with its opener (it was not opened ``noopener``).
        self.dependent = dependent
        # Live-view channels watching the tab: a shown tab never sleeps.
        self.viewers = 0
        self.crashed = False
        # The address of the main frame's last load that failed: Chromium's error page shows
        # it, while the page itself says chrome-error://.
        self.failed_url: str | None = None
        self.dialog: PendingDialog | None = None
        self.identity_session: CDPSession | None = None
        # The session the page reports its title and icon on, and the icon address last seen.
        self.facts_session: CDPSession | None = None
        self.icon_url = ""
        # The agent whose input action runs now: a dialog opened meanwhile is that agent's.
        self.input_agent_id: str | None = None
        self.dialog_opened: asyncio.Event | None = None
        # Set by every dialog: a load the dialog blocks stops waiting for it.
        self.any_dialog = asyncio.Event()
        # What the agent tools keep about this tab (snapshot revision and refs, per-document
        # checks), one ``PerTab`` key per kind (read and written only through the keys).
        self.tool_state: dict[PerTab[Any], Any] = {}
        self.queue = TabQueue(self)

    def __repr__(self) -> str:
        return f"Tab(id={self.id!r}, team_id={self.team_id!r}, url={self._url!r})"

    @property
    def url(self) -> str:
        return self._url

    @property
    def title(self) -> str:
        """The page's title as last read ("" until its document has one)."""
        return self._title

    @property
    def icon(self) -> TabIcon | None:
        """The page's icon, when it has a small one the browser could load."""
        return self._icon

    @property
    def opener_tab_id(self) -> str | None:
        return self._opener_tab_id

    @property
    def held_by(self) -> str | None:
        """The account of the person who took the tab; agents are refused while set."""
        return self._held_by

    @property
    def person_held(self) -> bool:
        """Whether a person has held the tab since it opened: their work may be on its page,
        which the host then never reloads on its own."""
        return self._person_held

    @property
    def page(self) -> Page | None:
        return self._page

    @property
    def protection(self) -> Protection:
        """Where the tab is in secure entry (``Protection.NONE``: it holds no secret)."""
        return self._protection

    @property
    def loaded(self) -> bool:
        return self._page is not None


@dataclass(frozen=True)
class TabResult(Generic[T]):
    """What a tab operation gave back, with what the caller must know about the tab."""

    value: T | None
    stale_refs: bool = False
    dialog: PendingDialog | None = None


class TabQueue:
    """Runs a tab's operations one at a time, each within its deadline."""

    def __init__(self, tab: Tab) -> None:
        self._tab = tab
        self._lock = asyncio.Lock()

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    def check(self, caller: Caller, *, dialog_ok: bool = False) -> None:
        """Refuses a caller whose turn it is not (see ``access.require_turn``)."""
        require_turn(self._tab, caller, dialog_ok=dialog_ok)

    async def run(
        self,
        caller: Caller,
        operation: Callable[[], Awaitable[T]],
        *,
        deadline: float,
        dialog_ok: bool = False,
    ) -> T:
        """Runs ``operation`` after the ones queued before it; ``tabDeadline`` if it overruns."""
        self.check(caller, dialog_ok=dialog_ok)
        limit = asyncio.timeout(deadline)
        try:
            async with limit, self._lock:
                # The tab may have changed hands while this call waited its turn.
                self.check(caller, dialog_ok=dialog_ok)
                return await operation()
        except TimeoutError:
            if not limit.expired():
                raise
            raise Unavailable(
                f"the tab operation took longer than {deadline:g} s", code="tabDeadline"
            ) from None

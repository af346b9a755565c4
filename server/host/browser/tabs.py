"""Tabs and their operation queue.

Every call on a tab passes through ``TabQueue.run``: it runs one operation at a
time, refuses agents while a person holds the tab or a dialog waits, and
bounds each operation by a deadline so one stuck call cannot stall the tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from playwright.async_api import CDPSession, Page

from server.common.errors import Unavailable
from server.host.browser.access import require_turn
from server.host.browser.callers import Caller
from server.host.browser.dialogs import PendingDialog
from server.host.browser.partitions import Partition

T = TypeVar("T")


@dataclass
class Tab:
    """One managed tab. ``page`` is None while the tab sleeps (its URL is kept)."""

    id: str
    team_id: str
    partition: Partition
    owner_agent_id: str | None
    owner_thread_id: str | None
    opener_tab_id: str | None
    page: Page | None
    url: str
    last_used: float
    dependent: bool = False
    held_by: str | None = None
    # Live-view channels watching the tab: a shown tab never sleeps.
    viewers: int = 0
    crashed: bool = False
    dialog: PendingDialog | None = None
    identity_session: CDPSession | None = None
    # The agent whose input action runs now: a dialog opened meanwhile is that agent's.
    input_agent_id: str | None = None
    dialog_opened: asyncio.Event | None = None
    # Set by every dialog: a load the dialog blocks stops waiting for it.
    any_dialog: asyncio.Event = field(default_factory=asyncio.Event)
    # What the agent tools keep about this tab (snapshot revision and refs, per-document
    # checks), keyed by tool module; it goes with the tab.
    tool_state: dict[str, Any] = field(default_factory=dict)
    queue: TabQueue = field(init=False)

    def __post_init__(self) -> None:
        self.queue = TabQueue(self)

    @property
    def loaded(self) -> bool:
        return self.page is not None

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "ownerAgentId": self.owner_agent_id,
            "ownerThreadId": self.owner_thread_id,
            "openerTabId": self.opener_tab_id,
            "partition": {"kind": self.partition.kind, "label": self.partition.label},
            "heldByPerson": self.held_by is not None,
            "loaded": self.loaded,
            "dialog": self.dialog.to_wire() if self.dialog else None,
        }


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

"""Requests for control: a member asks the person who holds a tab to pass it on.

The holder hears who asks (``browser-control-requested``, to the holder alone) and grants
the request, which hands control straight to the asker's live view, or dismisses it; the
asker may withdraw it. A request waits a minute at most, one per asker and tab, and only
while the person it asked still holds the tab; its end is announced to both
(``browser-control-request-resolved``).
Requests live in memory: holding a tab ends with the holder's view, and so do they.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from server.common.clock import Clock
from server.common.errors import Conflict, NotFound
from server.common.protocol.events import (
    BrowserControlRequested,
    BrowserControlRequestResolved,
    HostEvent,
)
from server.common.tokens import new_id
from server.host.browser.access import require_member_reach
from server.host.browser.runtime import BrowserRuntime
from server.host.live.views import LiveViews

# Sends an event to the team's peers whose account passes the filter.
Announce = Callable[[str, HostEvent, Callable[[str], bool]], None]
Outcome = Literal["granted", "dismissed", "withdrawn", "expired", "cancelled"]

CONTROL_REQUEST_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """One member's request for a tab, addressed to the person who held it then."""

    id: str
    team_id: str
    tab_id: str
    account_id: str  # who asks
    holder: str
    expires_at: float

    def sent_to(self, account_id: str) -> bool:
        return account_id in (self.account_id, self.holder)


class ControlRequestService:
    """Pending requests for control by id; each ends once, in one of four outcomes."""

    def __init__(
        self,
        browser: BrowserRuntime,
        live: LiveViews,
        clock: Clock,
        announce: Announce,
        *,
        seconds: float = CONTROL_REQUEST_SECONDS,
    ) -> None:
        self._browser = browser
        self._live = live
        self._clock = clock
        self._announce = announce
        self._seconds = seconds
        self._pending: dict[str, ControlRequest] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    async def request_control(self, team_id: str, account_id: str, tab_id: str) -> ControlRequest:
        """Ask the tab's holder for it; asking again while a request waits answers that one."""
        engine = await self._browser.engine()
        tab = engine.get_tab(team_id, tab_id)
        require_member_reach(tab, account_id)
        self.lapse(team_id)
        if tab.held_by is None:
            raise Conflict("nobody has control of this tab; take control instead", code="tabFree")
        if tab.held_by == account_id:
            raise Conflict("you have control of this tab already", code="controlAlreadyYours")
        for waiting in self._pending.values():
            if (waiting.team_id, waiting.tab_id, waiting.account_id) == (
                team_id,
                tab.id,
                account_id,
            ):
                return waiting
        now = self._clock.now()
        request = ControlRequest(
            new_id(), team_id, tab.id, account_id, tab.held_by, now + self._seconds
        )
        self._pending[request.id] = request
        # A host on the system clock says "expired" on time; a request is also checked
        # against the clock whenever requests are looked at.
        self._timers[request.id] = asyncio.get_running_loop().call_later(
            self._seconds, self.lapse, team_id
        )
        event = BrowserControlRequested(
            id=request.id,
            tab_id=tab.id,
            account_id=account_id,
            expires_at=request.expires_at,
            expires_in=self._seconds,
        )
        self._announce(team_id, event, lambda account: account == request.holder)
        return request

    async def grant(self, team_id: str, account_id: str, request_id: str) -> ControlRequest:
        """The holder passes the tab to the asker, whose live view holds it from now on."""
        request = self._answerable(team_id, account_id, request_id)
        # Out of the pending set while the tab changes hands, or that change would cancel it.
        del self._pending[request.id]
        try:
            await self._live.hand_over(team_id, request.tab_id, account_id, request.account_id)
        except BaseException:
            self._pending[request.id] = request
            raise
        self._pending[request.id] = request
        self._end(request, "granted")
        self.lapse(team_id)  # the others asked the previous holder
        return request

    def dismiss(self, team_id: str, account_id: str, request_id: str) -> ControlRequest:
        """The holder says no; the asker hears so."""
        request = self._answerable(team_id, account_id, request_id)
        self._end(request, "dismissed")
        return request

    def withdraw(self, team_id: str, account_id: str, request_id: str) -> ControlRequest:
        """The asker takes the request back; the holder's prompt goes away."""
        request = self._pending_for(team_id, account_id, request_id)
        if account_id != request.account_id:
            raise Conflict("only the member who asked can withdraw a request", code="notAsker")
        self._end(request, "withdrawn")
        return request

    def seconds_left(self, request: ControlRequest) -> float:
        """How long the request still waits for an answer (0 once it has ended)."""
        if request.id not in self._pending:
            return 0.0
        return max(0.0, request.expires_at - self._clock.now())

    def lapse(self, team_id: str) -> None:
        """End the team's requests that expired, or whose holder let go (or whose tab
        closed); runs whenever the team's tabs change."""
        now = self._clock.now()
        holders = {tab.id: tab.held_by for tab in self._browser.list_tabs(team_id)}
        for request in [r for r in self._pending.values() if r.team_id == team_id]:
            if request.expires_at <= now:
                self._end(request, "expired")
            elif holders.get(request.tab_id) != request.holder:
                self._end(request, "cancelled")

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._pending.clear()

    def _pending_for(self, team_id: str, account_id: str, request_id: str) -> ControlRequest:
        """A waiting request the member ``account_id`` takes part in (as asker or holder)."""
        self.lapse(team_id)
        request = self._pending.get(request_id)
        if request is None or request.team_id != team_id or not request.sent_to(account_id):
            raise NotFound(
                "no such request for control; it may have lapsed", code="controlRequestNotFound"
            )
        return request

    def _answerable(self, team_id: str, account_id: str, request_id: str) -> ControlRequest:
        request = self._pending_for(team_id, account_id, request_id)
        if account_id != request.holder:
            raise Conflict("only the person in control can answer", code="tabNotHeld")
        return request

    def _end(self, request: ControlRequest, outcome: Outcome) -> None:
        if self._pending.pop(request.id, None) is None:
            return
        timer = self._timers.pop(request.id, None)
        if timer is not None:
            timer.cancel()
        event = BrowserControlRequestResolved(
            id=request.id, tab_id=request.tab_id, account_id=request.account_id, outcome=outcome
        )
        self._announce(request.team_id, event, request.sent_to)

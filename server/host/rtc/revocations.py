"""What the hub revoked lately, so a ticket fetched before a revocation cannot be used after it.

A revocation closes the peers connected when it arrives; a ticket already
issued (valid for up to a minute) would otherwise open a new connection with
the old team and role. The host remembers every revocation for longer than a
ticket lives and refuses tickets the hub issued before it. Both times are the
hub's clock, so the host's own clock only decides when to forget.

Revocations sent while the link was down are never heard: a ticket issued
before the current link began is refused too (after a restart, that is every
ticket issued before the host came up).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from server.common.clock import Clock
from server.common.protocol.link import LinkRevoke
from server.common.tickets import TICKET_MAX_SECONDS, TicketRefused

# Kept past a ticket's lifetime by a margin for clock skew between hub and host.
KEEP_SECONDS = TICKET_MAX_SECONDS + 30


class Holder(Protocol):
    """Whom a revocation can name: a ticket's claims or a connected peer."""

    @property
    def account_id(self) -> str: ...
    @property
    def team_id(self) -> str: ...
    @property
    def session_hash(self) -> str: ...


def revocation_names(revoke: LinkRevoke, holder: Holder) -> bool:
    """Whether ``revoke`` ends the access of ``holder``."""
    if revoke.all_peers or holder.session_hash in revoke.session_hashes:
        return True
    return (
        revoke.team_id is not None
        and revoke.account_id is not None
        and (revoke.team_id, revoke.account_id) == (holder.team_id, holder.account_id)
    )


@dataclass(frozen=True, slots=True)
class MemberRemoved:
    """The hub said a member left a team or was removed from it: what the host keeps of
    them there (their email choices, their place among a routine's audience and
    approvers) goes. Published as the revocation arrives."""

    team_id: str
    account_id: str

    @classmethod
    def of(cls, revoke: LinkRevoke) -> MemberRemoved | None:
        """The removal a revocation says, if it says one."""
        if revoke.code != "removedFromTeam" or revoke.team_id is None:
            return None
        return None if revoke.account_id is None else cls(revoke.team_id, revoke.account_id)


class Revocations:
    """Recent revocations and the start of the current link, in the hub's time."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        # (when this host heard it, on its own clock; the revocation)
        self._recent: deque[tuple[float, LinkRevoke]] = deque()
        self._link_began: float | None = None

    def link_began(self, hub_time: float) -> None:
        """A link to the hub came up at ``hub_time``: earlier revocations may have been missed."""
        self._link_began = hub_time

    def record(self, revoke: LinkRevoke) -> None:
        now = self._clock.now()
        self._forget_old(now)
        self._recent.append((now, revoke))

    def check(self, holder: Holder, issued_at: float) -> None:
        """Raise ``ticketRevoked`` if access granted at ``issued_at`` was revoked since."""
        if self._link_began is None or issued_at < self._link_began:
            raise TicketRefused(
                "the ticket was issued before this host's link to the hub began; ask for a new one",
                code="ticketRevoked",
            )
        self._forget_old(self._clock.now())
        for _, revoke in self._recent:
            if issued_at <= revoke.revoked_at and revocation_names(revoke, holder):
                raise TicketRefused(
                    f"access ended after this ticket was issued ({revoke.reason})",
                    code="ticketRevoked",
                )

    def __len__(self) -> int:
        return len(self._recent)

    def _forget_old(self, now: float) -> None:
        while self._recent and self._recent[0][0] + KEEP_SECONDS < now:
            self._recent.popleft()


class RemovalsHeard:
    """Whether the host has heard of every member who left a team while its link was down.

    As a link begins the host asks its hub which of the members its data names left
    (``members-check``); until the hub has answered, work that would run as a member (a
    routine's run, a queued message's turn) waits, so none starts as someone who left. A
    hub that cannot be reached, or of an earlier release that never answers, holds the
    work back ``seconds`` at most. Heard by default: a host with no link has no hub to ask.
    """

    def __init__(self) -> None:
        self._heard = asyncio.Event()
        self._heard.set()
        self._timer: asyncio.TimerHandle | None = None

    def expect(self, seconds: float) -> None:
        """A link is about to ask: work waits for the answer, ``seconds`` at most."""
        self._heard.clear()
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(seconds, self.heard)

    def heard(self) -> None:
        """The hub answered (or the wait is over): the work goes on."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heard.set()

    @property
    def known(self) -> bool:
        """Whether the work may go now (the hub answered, or it was not asked)."""
        return self._heard.is_set()

    async def wait(self) -> None:
        await self._heard.wait()

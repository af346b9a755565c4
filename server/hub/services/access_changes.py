"""Changes of access, announced to every hub instance on the bus.

Two kinds: revocations (a session ended, a member's role changed or they were
removed, a host was removed), which every instance forwards down its host links
so the hosts close the matching peers; and membership changes, on which every
instance drops what it has cached about those accounts.

Access tokens that ended (revoked by hand, or their member left the team) are
announced as ``access-tokens-ended``: every instance drops its checked tokens and
ends the MCP sessions it relays for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from server.common.clock import Clock
from server.common.protocol.events import RevocationCode
from server.common.protocol.link import LinkRevoke
from server.hub.bus import Bus, BusHandler

# NOTIFY payloads are small: long lists go in slices.
_SLICE = 50


ACCESS_KINDS = frozenset({"revoke", "memberships"})
TOKENS_ENDED_KIND = "access-tokens-ended"


async def announce_tokens_ended(bus: Bus, token_ids: Iterable[str]) -> None:
    """Tell every instance, this one included, that these access tokens ended."""
    ids = list(token_ids)
    for start in range(0, len(ids), _SLICE):
        await bus.publish({"kind": TOKENS_ENDED_KIND, "token_ids": ids[start : start + _SLICE]})


class AccessChanges:
    """Applies a change here at once, then tells every other instance through the bus."""

    def __init__(self, bus: Bus, origin: str, clock: Clock) -> None:
        self._bus = bus
        self._clock = clock
        self.origin = origin
        self._apply: BusHandler | None = None

    def bind(self, apply: BusHandler) -> None:
        """What this instance does with a change (set once the services exist)."""
        self._apply = apply

    async def _announce(self, message: dict[str, Any]) -> None:
        message["origin"] = self.origin
        if self._apply is not None:
            await self._apply(message)
        await self._bus.publish(message)

    async def sessions_ended(self, token_hashes: Iterable[str], reason: str) -> None:
        hashes = list(token_hashes)
        for start in range(0, len(hashes), _SLICE):
            revoke = LinkRevoke(
                session_hashes=hashes[start : start + _SLICE],
                code="sessionEnded",
                reason=reason,
                revoked_at=self._clock.now(),
            )
            await self._revoke(revoke, None)

    async def role_changed(self, team_id: str, account_id: str) -> None:
        """Live connections carry the old role: end them; the member reconnects with the new."""
        await self._member_revoked(
            team_id, account_id, code="roleChanged", reason="the role changed"
        )

    async def member_removed(self, team_id: str, account_id: str) -> None:
        await self._member_revoked(
            team_id, account_id, code="removedFromTeam", reason="removed from the team"
        )

    async def _member_revoked(
        self, team_id: str, account_id: str, *, code: RevocationCode, reason: str
    ) -> None:
        await self.memberships_changed([account_id])
        revoke = LinkRevoke(
            team_id=team_id,
            account_id=account_id,
            code=code,
            reason=reason,
            revoked_at=self._clock.now(),
        )
        await self._revoke(revoke, None)

    async def access_tokens_ended(self, token_ids: Iterable[str]) -> None:
        """These access tokens were revoked (their member left the team)."""
        await announce_tokens_ended(self._bus, token_ids)

    async def memberships_changed(self, account_ids: Iterable[str] | None) -> None:
        """The teams or roles of these accounts changed (None: of anyone, e.g. a rename)."""
        if account_ids is None:
            await self._announce({"kind": "memberships", "account_ids": None})
            return
        ids = list(account_ids)
        for start in range(0, len(ids), _SLICE):
            await self._announce(
                {"kind": "memberships", "account_ids": ids[start : start + _SLICE]}
            )

    async def host_removed(self, host_id: str) -> None:
        revoke = LinkRevoke(
            all_peers=True,
            code="hostRemoved",
            reason="the host was removed",
            revoked_at=self._clock.now(),
        )
        await self._revoke(revoke, host_id)

    async def _revoke(self, revoke: LinkRevoke, host_id: str | None) -> None:
        await self._announce(
            {"kind": "revoke", "host_id": host_id, "revoke": revoke.model_dump(mode="json")}
        )

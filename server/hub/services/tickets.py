"""Connection tickets for members, signed with the hub's key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from server.common.clock import Clock
from server.common.keys import SigningKey
from server.common.roles import Role
from server.common.tickets import TicketClaims, TicketSigner
from server.hub.services.sessions import Principal


class TicketService:
    """Issues a ticket binding account, session, team, host, role and DTLS fingerprint."""

    def __init__(self, clock: Clock, load_key: Callable[[], Awaitable[SigningKey]]) -> None:
        self._clock = clock
        self._load_key = load_key
        self._signer: TicketSigner | None = None

    async def signer(self) -> TicketSigner:
        """The signer, its key read (or made) on first use, after migrations ran."""
        if self._signer is None:
            self._signer = TicketSigner(await self._load_key(), self._clock)
        return self._signer

    async def issue(
        self, principal: Principal, team_id: str, role: Role, host_id: str, fingerprint: str
    ) -> tuple[str, TicketClaims]:
        signer = await self.signer()
        return signer.issue(
            account_id=principal.account_id,
            session_hash=principal.token_hash,
            team_id=team_id,
            host_id=host_id,
            role=role.value,
            fingerprint=fingerprint.upper(),
        )

"""Connection tickets for members, signed with the hub's key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from server.common.clock import Clock
from server.common.errors import Forbidden
from server.common.keys import SigningKey
from server.common.roles import Role
from server.common.tickets import TicketClaims, TicketRefused, TicketSigner, read_ticket
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
        self,
        principal: Principal,
        team_id: str,
        role: Role,
        host_id: str,
        fingerprint: str,
        *,
        as_of: float | None = None,
    ) -> tuple[str, TicketClaims]:
        """A ticket for what the caller may do as of ``as_of`` (when their session and role
        were read): it says it was issued then, so a host that heard of a removal or a
        sign-out since refuses it, even if the request read the member's access just
        before the change."""
        signer = await self.signer()
        return signer.issue(
            account_id=principal.account_id,
            session_hash=principal.token_hash,
            team_id=team_id,
            host_id=host_id,
            role=role.value,
            fingerprint=fingerprint.upper(),
            as_of=as_of,
        )

    async def check_relay(
        self, principal: Principal, team_id: str, role: Role, host_id: str, ticket: str
    ) -> None:
        """Refuse to relay a ticket that is not the caller's own, for this team, role and host.

        The host checks a ticket alone; the hub also knows who relays it, so a
        ticket fetched by one account (or session, or before a role change)
        never travels through another's request.
        """
        signer = await self.signer()
        try:
            claims = read_ticket(ticket, signer.public_key)
        except TicketRefused as exc:  # 403 like the host's refusals: the caller is signed in
            raise Forbidden(exc.message, code=exc.code) from exc
        if (claims.account_id, claims.session_hash) != (principal.account_id, principal.token_hash):
            raise Forbidden("this ticket was issued to another session", code="ticketNotYours")
        if (claims.team_id, claims.host_id) != (team_id, host_id):
            raise Forbidden("this ticket is for another team or host", code="ticketNotYours")
        if claims.role != role.value:
            raise Forbidden(
                "your role changed since this ticket was issued; ask for a new one",
                code="ticketRevoked",
            )

"""Connection tickets: the hub's signed word that an account may connect to one host.

A ticket is ``<payload>.<signature>``: URL-safe base64 of the JSON claims and
the hub's Ed25519 signature over those bytes. The host checks the signature,
the audience (itself), the expiry and that the nonce was never seen before;
``issued_at`` (the hub's clock) lets a host refuse a ticket issued before a
revocation it heard of.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict

from pydantic import Field, ValidationError

from server.common.clock import Clock
from server.common.errors import Unauthenticated
from server.common.keys import SigningKey, b64decode, b64encode, verify_signature
from server.common.wire import WireModel

TICKET_MAX_SECONDS = 60


class TicketClaims(WireModel):
    account_id: str
    session_hash: str
    team_id: str
    host_id: str
    role: str
    fingerprint: str
    issued_at: float
    expires_at: float
    nonce: str = Field(min_length=16)


class TicketRefused(Unauthenticated):
    """A ticket the host will not accept; the code says why."""


def read_ticket(ticket: str, hub_key: str) -> TicketClaims:
    """The claims of a ticket signed with ``hub_key``; expiry and use are not checked here."""
    payload_part, _, signature = ticket.partition(".")
    try:
        payload = b64decode(payload_part)
    except ValueError as exc:
        raise TicketRefused("the ticket is malformed", code="ticketInvalid") from exc
    if not signature or not verify_signature(hub_key, payload, signature):
        raise TicketRefused("the ticket's signature is not the hub's", code="ticketInvalid")
    try:
        return TicketClaims.model_validate(json.loads(payload))
    except (ValueError, ValidationError) as exc:
        raise TicketRefused("the ticket is malformed", code="ticketInvalid") from exc


class TicketSigner:
    """The hub side: signs claims with the hub's ticket key."""

    def __init__(self, key: SigningKey, clock: Clock, lifetime: float = TICKET_MAX_SECONDS) -> None:
        self._key = key
        self._clock = clock
        self._lifetime = min(lifetime, TICKET_MAX_SECONDS)

    @property
    def public_key(self) -> str:
        return self._key.public_key

    def issue(
        self,
        *,
        account_id: str,
        session_hash: str,
        team_id: str,
        host_id: str,
        role: str,
        fingerprint: str,
        as_of: float | None = None,
    ) -> tuple[str, TicketClaims]:
        """A signed ticket; ``as_of``: the time the claims were true (issued then, not
        later than now), for a host to weigh against the revocations it heard."""
        now = self._clock.now()
        claims = TicketClaims(
            account_id=account_id,
            session_hash=session_hash,
            team_id=team_id,
            host_id=host_id,
            role=role,
            fingerprint=fingerprint,
            issued_at=now if as_of is None else min(as_of, now),
            expires_at=now + self._lifetime,
            nonce=secrets.token_urlsafe(18),
        )
        payload = claims.model_dump_json().encode()
        return f"{b64encode(payload)}.{self._key.sign(payload)}", claims


class TicketVerifier:
    """The host side: accepts each valid ticket for this host once, before it expires."""

    def __init__(self, host_id: str, hub_key: str, clock: Clock) -> None:
        self.host_id = host_id
        self.hub_key = hub_key
        self._clock = clock
        # Nonces are remembered until their ticket would have expired anyway.
        self._seen: OrderedDict[str, float] = OrderedDict()

    def verify(self, ticket: str) -> TicketClaims:
        claims = read_ticket(ticket, self.hub_key)
        now = self._clock.now()
        if claims.host_id != self.host_id:
            raise TicketRefused("the ticket is for another host", code="ticketWrongHost")
        if claims.expires_at <= now:
            raise TicketRefused("the ticket has expired", code="ticketExpired")
        if claims.expires_at > now + TICKET_MAX_SECONDS + 5:
            raise TicketRefused("the ticket lives too long", code="ticketInvalid")
        self._forget_expired(now)
        if claims.nonce in self._seen:
            raise TicketRefused("the ticket was used already", code="ticketReplayed")
        self._seen[claims.nonce] = claims.expires_at
        return claims

    def __len__(self) -> int:
        """How many used nonces are remembered."""
        return len(self._seen)

    def _forget_expired(self, now: float) -> None:
        while self._seen:
            nonce, expires_at = next(iter(self._seen.items()))
            if expires_at > now:
                break
            del self._seen[nonce]

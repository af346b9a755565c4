"""Signaling: what a peer sends the hub over HTTPS to reach a host, and what comes back."""

from __future__ import annotations

from pydantic import Field

from server.common.wire import InboundModel, WireModel

SDP_MAX = 64 * 1024


def answer_proof(answer_fingerprint: str, ticket_nonce: str) -> bytes:
    """What a host signs over its SDP answer, so a peer knows the hub did not swap it."""
    return f"crewhost-answer-v1:{answer_fingerprint}:{ticket_nonce}".encode()


class IceServerView(WireModel):
    urls: list[str]
    username: str | None = None
    credential: str | None = None


class RtcConfig(WireModel):
    """What a peer's RTCPeerConnection needs before it makes its offer."""

    ice_servers: list[IceServerView]


class TicketRequest(InboundModel):
    fingerprint: str = Field(pattern=r"^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$")


class TicketGrant(WireModel):
    ticket: str
    expires_at: float
    host_key: str


class ConnectRequest(InboundModel):
    ticket: str = Field(min_length=1, max_length=8192)
    sdp: str = Field(min_length=1, max_length=SDP_MAX)


class ConnectAnswer(WireModel):
    sdp: str
    signature: str
    host_key: str

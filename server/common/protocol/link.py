"""The host link: the websocket a host keeps to a hub, over which offers and revocations go."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel, ValidationError

from server.common.errors import InvalidArgument
from server.common.protocol.codec import PROTOCOL_VERSION, ErrorInfo
from server.common.protocol.events import RevocationCode
from server.common.protocol.ids import AccountId, HostId, TeamId
from server.common.protocol.signaling import SDP_MAX
from server.common.wire import InboundModel, invalid_argument_from

LINK_PATH = "/v1/hosts/link"
MAX_LINK_MESSAGE = 1024 * 1024


def link_proof(nonce: str, host_id: str) -> bytes:
    """What a host signs to prove its identity on the link."""
    return f"crewhost-link-v1:{nonce}:{host_id}".encode()


class LinkChallenge(InboundModel):
    type: Literal["challenge"] = "challenge"
    nonce: str
    hub_key: str


class LinkHello(InboundModel):
    type: Literal["hello"] = "hello"
    host_id: HostId
    signature: str = Field(max_length=256)
    protocol: int = PROTOCOL_VERSION


class LinkWelcome(InboundModel):
    type: Literal["welcome"] = "welcome"
    host_id: HostId
    # The hub's clock when the link began: revocations before it may have been missed.
    hub_time: float


class LinkOffer(InboundModel):
    type: Literal["offer"] = "offer"
    request_id: str
    ticket: str = Field(max_length=8192)
    sdp: str = Field(max_length=SDP_MAX)


class LinkAnswer(InboundModel):
    type: Literal["answer"] = "answer"
    request_id: str
    sdp: str = Field(max_length=SDP_MAX)
    signature: str


class LinkRefused(InboundModel):
    type: Literal["refused"] = "refused"
    request_id: str
    error: ErrorInfo


class LinkRevoke(InboundModel):
    """End the peers that match every given field (``all_peers`` ends every one)."""

    type: Literal["revoke"] = "revoke"
    session_hashes: list[str] = Field(default_factory=list)
    team_id: TeamId | None = None
    account_id: AccountId | None = None
    all_peers: bool = False
    # Why, for the peers' ``revoked`` event; ``reason`` is the same in words, for logs. A hub
    # of an earlier release sends no code: its revocation still ends the peers, said plainly.
    code: RevocationCode = "accessChanged"
    reason: str
    # The hub's clock when access ended; tickets issued before it are refused.
    revoked_at: float


LinkMessage = Annotated[
    LinkChallenge | LinkHello | LinkWelcome | LinkOffer | LinkAnswer | LinkRefused | LinkRevoke,
    Field(discriminator="type"),
]


class _AnyLinkMessage(RootModel[LinkMessage]):
    pass


def decode_link(raw: str | bytes) -> LinkMessage:
    if len(raw) > MAX_LINK_MESSAGE:
        raise InvalidArgument("link message too large", code="messageTooLarge")
    try:
        return _AnyLinkMessage.model_validate_json(raw).root
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc

"""The one codec for messages between hub, host and peers.

Three conversations share it: the host link (hub <-> host, a websocket), the
signaling bodies (peer -> hub over HTTPS) and the ``team-api`` data channel
(peer <-> host). Every message is JSON; the link's messages carry a ``type``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field, RootModel, ValidationError

from server.common.errors import CrewhostError, InvalidArgument
from server.common.wire import InboundModel, WireModel, invalid_argument_from

PROTOCOL_VERSION = 1
LINK_PATH = "/v1/hosts/link"
TEAM_API_LABEL = "team-api"
MAX_TEAM_API_MESSAGE = 256 * 1024
MAX_LINK_MESSAGE = 1024 * 1024
SDP_MAX = 64 * 1024


def utf8_size(raw: str | bytes) -> int:
    """How many bytes a message takes on the wire: size limits count these, not characters."""
    if isinstance(raw, bytes):
        return len(raw)
    # ASCII text is one byte a character, so only other text is encoded to be measured.
    return len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogatepass"))


def link_proof(nonce: str, host_id: str) -> bytes:
    """What a host signs to prove its identity on the link."""
    return f"crewhost-link-v1:{nonce}:{host_id}".encode()


def answer_proof(answer_fingerprint: str, ticket_nonce: str) -> bytes:
    """What a host signs over its SDP answer, so a peer knows the hub did not swap it."""
    return f"crewhost-answer-v1:{answer_fingerprint}:{ticket_nonce}".encode()


class ErrorInfo(WireModel):
    code: str
    message: str


def error_info(error: CrewhostError) -> ErrorInfo:
    return ErrorInfo(code=error.code, message=error.message)


# --- the host link -----------------------------------------------------------------


class LinkChallenge(InboundModel):
    type: Literal["challenge"] = "challenge"
    nonce: str
    hub_key: str


class LinkHello(InboundModel):
    type: Literal["hello"] = "hello"
    host_id: str = Field(max_length=64)
    signature: str = Field(max_length=256)
    protocol: int = PROTOCOL_VERSION


class LinkWelcome(InboundModel):
    type: Literal["welcome"] = "welcome"
    host_id: str
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
    team_id: str | None = None
    account_id: str | None = None
    all_peers: bool = False
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


def encode(message: WireModel) -> str:
    return message.model_dump_json()


# --- signaling bodies (peer -> hub) --------------------------------------------------


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


# --- the team-api data channel -------------------------------------------------------


RequestId = Annotated[int, Field(ge=0, le=2**53)] | Annotated[str, Field(max_length=64)]


class TeamApiRequest(InboundModel):
    id: RequestId
    route: str = Field(max_length=128)
    args: dict[str, Any] = Field(default_factory=dict)


class TeamApiResult(WireModel):
    id: RequestId | None
    result: Any


class TeamApiError(WireModel):
    id: RequestId | None
    error: ErrorInfo


class TeamApiEvent(WireModel):
    event: str
    data: Any


def decode_team_api_request(raw: str | bytes) -> TeamApiRequest:
    """A request from a peer; a bad one raises with the request's id when it can be read."""
    if utf8_size(raw) > MAX_TEAM_API_MESSAGE:
        raise InvalidArgument(
            f"a message may be at most {MAX_TEAM_API_MESSAGE} bytes", code="messageTooLarge"
        )
    try:
        return TeamApiRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc


def request_id_of(raw: str | bytes) -> int | str | None:
    """The ``id`` of a message that failed to decode, if it has a usable one."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, int) and not isinstance(found, bool) and 0 <= found <= 2**53:
            return found
        if isinstance(found, str) and len(found) <= 64:
            return found
    return None

"""The host link: the websocket a host keeps to a hub, over which offers and revocations go."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel, ValidationError

from server.common.errors import InvalidArgument
from server.common.protocol.codec import PROTOCOL_VERSION, ErrorInfo
from server.common.protocol.events import RevocationCode
from server.common.protocol.hooks import MAX_HOOK_BODY, HookFilters, HookSecret
from server.common.protocol.ids import (
    AccessTokenId,
    AccountId,
    HookDeliveryId,
    HookId,
    HostId,
    McpRequestId,
    RoutineId,
    TeamId,
)
from server.common.protocol.signaling import SDP_MAX
from server.common.roles import Role
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


# Peers listed in one ``peers-check`` message; a host that holds more sends several.
MAX_PEERS_CHECKED = 2000


class HeldPeer(InboundModel):
    """A peer a host holds, as its ticket named it."""

    session_hash: str = Field(max_length=128)
    team_id: TeamId
    account_id: AccountId
    role: Role


class LinkPeersCheck(InboundModel):
    """The peers this host holds as a link begins (host to hub). A revocation made while
    the link was down never reached the host: the hub answers a ``revoke`` for each peer
    whose session has ended or whose role in its team is no longer its ticket's."""

    type: Literal["peers-check"] = "peers-check"
    peers: list[HeldPeer] = Field(max_length=MAX_PEERS_CHECKED)


class NamedMember(InboundModel):
    """A member of a team that a host's data names (a routine's creator, approver or
    audience, someone's email choices)."""

    team_id: TeamId
    account_id: AccountId
    # The hub's clock, as the host reckons it from the link's welcome, when the host's data
    # first named them: one whose membership began later left and came back meanwhile, and
    # the data is their former membership's. A host of an earlier release sends none.
    named_since: float | None = None


class LinkMembersCheck(InboundModel):
    """The members this host's data names, as a link begins (host to hub). A removal made
    while the link was down reached no host; the hub answers a ``revoke``
    (``removedFromTeam``) for each who is no longer a member of a team this host serves."""

    type: Literal["members-check"] = "members-check"
    members: list[NamedMember] = Field(max_length=MAX_PEERS_CHECKED)


class LinkMembersChecked(InboundModel):
    """A ``members-check`` is answered (hub to host): the removals it found went before."""

    type: Literal["members-checked"] = "members-checked"


class HookRegistration(InboundModel):
    """A hook as the hub keeps it: whose, its secrets (the previous one while it lasts) and
    its filters."""

    hook_id: HookId
    team_id: TeamId
    routine_id: RoutineId
    secrets: list[HookSecret] = Field(min_length=1, max_length=2)
    filters: HookFilters = Field(default_factory=HookFilters)
    enabled: bool = True


class LinkHookSync(InboundModel):
    """Every hook this host has, by id: the hub forgets this host's others. The host sends
    it when it links, then a ``hook-register`` for each."""

    type: Literal["hook-sync"] = "hook-sync"
    hook_ids: list[HookId] = Field(max_length=20_000)


class LinkHookRegister(InboundModel):
    """Add or replace one hook (host to hub)."""

    type: Literal["hook-register"] = "hook-register"
    hook: HookRegistration


class LinkHookRemove(InboundModel):
    """Forget one hook (host to hub); its pending deliveries stay until acknowledged."""

    type: Literal["hook-remove"] = "hook-remove"
    hook_id: HookId
    team_id: TeamId


class LinkHookDelivery(InboundModel):
    """A delivery the hub accepted (hub to host), sent until the host acknowledges it.
    ``body`` is base64: the sender's bytes, unchanged."""

    type: Literal["hook-delivery"] = "hook-delivery"
    delivery_id: HookDeliveryId
    hook_id: HookId
    team_id: TeamId
    routine_id: RoutineId
    body: str = Field(max_length=(MAX_HOOK_BODY // 3 + 1) * 4)
    received_at: float


class LinkHookDeliveryAck(InboundModel):
    """The host has taken a delivery (host to hub): the hub stops sending it."""

    type: Literal["hook-delivery-ack"] = "hook-delivery-ack"
    delivery_id: HookDeliveryId


MCP_PATH = "/v1/mcp"
# The largest request body the MCP endpoint takes, and the largest piece of an answer a
# link message carries (an answer is sent in as many pieces as it needs).
MAX_MCP_BODY = 128 * 1024
MAX_MCP_PIECE = 128 * 1024
McpScope = Literal["browser", "browser+agents"]


class McpCaller(InboundModel):
    """Whose MCP request it is: the personal access token the hub checked, and its member."""

    token_id: AccessTokenId
    team_id: TeamId
    account_id: AccountId
    # The member's role in the team when the hub checked the token.
    role: Role
    scope: McpScope


class LinkMcpRequest(InboundModel):
    """One HTTP request to the MCP endpoint (hub to host), its bearer already checked and
    taken out; the host serves it and answers with ``mcp-response-*`` of the same id."""

    type: Literal["mcp-request"] = "mcp-request"
    request_id: McpRequestId
    caller: McpCaller
    method: Literal["GET", "POST", "DELETE"]
    headers: dict[str, str] = Field(max_length=32)
    body: str = Field(max_length=MAX_MCP_BODY)
    # The hub's address as the caller reached it (scheme and host): where the links a
    # tool gives point when the hub has no public URL configured.
    origin: str = Field(default="", max_length=2048)


class LinkMcpResponseStart(InboundModel):
    """The status and headers of an MCP answer (host to hub)."""

    type: Literal["mcp-response-start"] = "mcp-response-start"
    request_id: McpRequestId
    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(max_length=32)


class LinkMcpResponse(InboundModel):
    """A whole MCP answer in one message (host to hub): a JSON answer that fits a piece."""

    type: Literal["mcp-response"] = "mcp-response"
    request_id: McpRequestId
    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(max_length=32)
    data: str = Field(max_length=MAX_MCP_PIECE)


class LinkMcpResponseBody(InboundModel):
    """A piece of an MCP answer's body (host to hub), in order; ``more`` is False on the last."""

    type: Literal["mcp-response-body"] = "mcp-response-body"
    request_id: McpRequestId
    data: str = Field(max_length=MAX_MCP_PIECE)
    more: bool


class LinkMcpCancel(InboundModel):
    """The client of an MCP request went away, or its token ended (hub to host): stop it."""

    type: Literal["mcp-cancel"] = "mcp-cancel"
    request_id: McpRequestId


class LinkMcpEnd(InboundModel):
    """End every MCP session opened with these tokens (hub to host): revoked or expired."""

    type: Literal["mcp-end"] = "mcp-end"
    token_ids: list[AccessTokenId] = Field(max_length=1000)


class LinkMcpToolUsed(InboundModel):
    """A tool call made with a token ended (host to hub), for the token's audit list."""

    type: Literal["mcp-tool-used"] = "mcp-tool-used"
    token_id: AccessTokenId
    team_id: TeamId
    tool: str = Field(max_length=100)
    outcome: Literal["ok", "error", "refused"]


LinkMessage = Annotated[
    LinkChallenge
    | LinkHello
    | LinkWelcome
    | LinkOffer
    | LinkAnswer
    | LinkRefused
    | LinkRevoke
    | LinkPeersCheck
    | LinkMembersCheck
    | LinkMembersChecked
    | LinkHookSync
    | LinkHookRegister
    | LinkHookRemove
    | LinkHookDelivery
    | LinkHookDeliveryAck
    | LinkMcpRequest
    | LinkMcpResponseStart
    | LinkMcpResponseBody
    | LinkMcpResponse
    | LinkMcpCancel
    | LinkMcpEnd
    | LinkMcpToolUsed,
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

"""The format of every identifier the hub and hosts mint, declared once.

Each type accepts exactly what the system itself creates (see how each id is minted,
named beside it) and refuses the rest, so a malformed id is an ``invalidArgument`` at
the edge rather than a lookup that finds nothing. Route, event and link models use
these types; no other module declares an id's format.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field, StringConstraints

HEX_ID_PATTERN: Final = r"^[0-9a-f]{32}$"
"""``server.common.tokens.new_id`` and ``uuid.uuid4().hex``: 128 random bits as 32 hex."""

TAB_ID_PATTERN: Final = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
"""``str(uuid.uuid4())``: a tab's id, as the browser engine opens or adopts it."""

PROFILE_PREFIX: Final = "profile-"
PROXY_PREFIX: Final = "proxy-"
CUSTOM_PROVIDER_PREFIX: Final = "custom-"
PROFILE_ID_PATTERN: Final = rf"^{PROFILE_PREFIX}[0-9a-f]{{32}}$"
PROXY_ID_PATTERN: Final = rf"^{PROXY_PREFIX}[0-9a-f]{{32}}$"

MAX_SEARCH_ENGINE_ID_LENGTH: Final = 200

_HexId = StringConstraints(pattern=HEX_ID_PATTERN)

# Minted by the hub (``new_id``).
TeamId = Annotated[str, _HexId]
AccountId = Annotated[str, _HexId]
HostId = Annotated[str, _HexId]

# Minted by a host (``uuid.uuid4().hex`` or ``secrets.token_hex(16)``).
AgentId = Annotated[str, _HexId]
ThreadId = Annotated[str, _HexId]
TurnId = Annotated[str, _HexId]
MemoryId = Annotated[str, _HexId]
RoutineId = Annotated[str, _HexId]
HookId = Annotated[str, _HexId]
HookDeliveryId = Annotated[str, _HexId]
VaultItemId = Annotated[str, _HexId]
RecordingId = Annotated[str, _HexId]
UploadId = Annotated[str, _HexId]
RequestId = Annotated[str, _HexId]
"""A pending request a person answers: attention, a secret hand-off, a control request."""

TeamWebhookId = Annotated[str, _HexId]
"""One of a team's outbound webhooks."""

McpServerId = Annotated[str, _HexId]
"""One of a team's MCP servers."""

# A member's personal access token, and one request relayed to the host on its MCP session.
AccessTokenId = Annotated[str, _HexId]
McpRequestId = Annotated[str, _HexId]

McpSignInId = Annotated[str, _HexId]
"""A running OAuth sign-in to one of a team's MCP servers."""

BudgetTargetId = Annotated[str, _HexId]
"""What a budget limits besides the whole team: an agent, a member or a routine."""

SubAgentId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]
"""``uuid.uuid4().hex[:16]``: one sub-agent run inside a turn."""

TabId = Annotated[str, StringConstraints(pattern=TAB_ID_PATTERN)]

ProfileId = Annotated[str, StringConstraints(pattern=PROFILE_ID_PATTERN)]
"""A named browser profile: ``profile-`` and 32 hex."""

ProxyId = Annotated[str, StringConstraints(pattern=PROXY_ID_PATTERN)]
"""A team's browser proxy: ``proxy-`` and 32 hex."""

ProviderId = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$"),
    Field(description="'anthropic', 'openai', 'openrouter' or a custom provider's id"),
]
"""A built-in provider's name (``anthropic``) or ``custom-`` and 32 hex; the service says
whether one by that id exists."""

# Ids given by others, which the system only stores: bounded, never parsed.
SearchEngineId = Annotated[str, StringConstraints(max_length=MAX_SEARCH_ENGINE_ID_LENGTH)]
"""Google Programmable Search's engine id (``cx``)."""

ApiCallId = Annotated[int, Field(ge=0, le=2**53)] | Annotated[str, Field(max_length=64)]
"""The id a Team API caller puts on a request to match the answer; the caller's choice."""

OAuthClientId = Annotated[str, StringConstraints(max_length=255)]
"""An OAuth client's id, as the MCP server's authorization server issued it to the team
(entered by an admin; the empty string clears it)."""

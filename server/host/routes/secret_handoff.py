"""``browser-secret-handoff-v1``: a member gives the secret an agent's tab asks for.

The only way a secret reaches secure entry from a person: never a chat message, never a
tool argument. The answer says only that it was handed over.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import RequestId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.secret_handoff import MAX_SECRET_LENGTH
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("browser-secret-handoff-v1")

SecretValue = Annotated[str, StringConstraints(max_length=MAX_SECRET_LENGTH)]
SecretValues = Annotated[list[SecretValue], Field(min_length=1, max_length=8)]


class SubmitSecret(InboundModel):
    id: RequestId
    values: SecretValues = Field(description="One value per field the request lists, in order.")


class DeclineRequest(InboundModel):
    id: RequestId
    kind: Literal["secret", "vaultItem"] = "secret"


class HandedOver(WireModel):
    id: str
    handed_over: bool


@routes.route("browser-secret-handoff-v1/submit", args=SubmitSecret, least_role=Role.MEMBER)
async def submit(call: HostCall, args: SubmitSecret) -> HandedOver:
    """Give the secret (one value per field) to the waiting entry; it is not kept."""
    call.host.secret_handoff.submit(call.peer.team_id, call.peer.account_id, args.id, args.values)
    return HandedOver(id=args.id, handed_over=True)


@routes.route("browser-secret-handoff-v1/decline", args=DeclineRequest, least_role=Role.MEMBER)
async def decline(call: HostCall, args: DeclineRequest) -> HandedOver:
    """Decline a request for a secret or a vault item."""
    peer = call.peer
    call.host.secret_handoff.decline(peer.team_id, peer.account_id, args.id, args.kind)
    return HandedOver(id=args.id, handed_over=False)

"""``mcp-sign-in-v1``: an owner or admin signs in to an HTTP MCP server that asks for OAuth.

``start`` opens the server's authorization page in a private tab (only the caller sees
it, through live view) and answers its ``tabId``; the outcome is the server's
``mcp-server-status`` event (``connected``, or ``signIn``/``error`` with the reason).
``cancel`` ends a running sign-in. Tokens are never answered.
"""

from __future__ import annotations

from pydantic import Field

from server.common.protocol.ids import McpServerId, McpSignInId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("mcp-sign-in-v1")


class StartSignIn(InboundModel):
    server_id: McpServerId


class SignInStartedView(WireModel):
    sign_in_id: str
    tab_id: str = Field(description="the private tab to finish it in, through live view")


class SignInRef(InboundModel):
    sign_in_id: McpSignInId


class SignInCancelled(WireModel):
    cancelled: bool


@routes.route("mcp-sign-in-v1/start", args=StartSignIn, least_role=Role.ADMIN)
async def start_sign_in(call: HostCall, args: StartSignIn) -> SignInStartedView:
    """Start a sign-in to the server: its authorization page opens in a private tab."""
    started = await call.host.mcp_sign_ins.start(
        call.peer.team_id, call.peer.account_id, args.server_id
    )
    return SignInStartedView(sign_in_id=started.sign_in_id, tab_id=started.tab_id)


@routes.route("mcp-sign-in-v1/cancel", args=SignInRef, least_role=Role.ADMIN)
async def cancel_sign_in(call: HostCall, args: SignInRef) -> SignInCancelled:
    """End a running sign-in: its tab closes and the server still asks for one."""
    await call.host.mcp_sign_ins.cancel(call.peer.team_id, args.sign_in_id)
    return SignInCancelled(cancelled=True)

"""``GET|POST|DELETE /v1/mcp``: the MCP endpoint (Streamable HTTP), relayed to a host.

Not a route of the table: its caller is an outside agent holding a personal access token
(``Authorization: Bearer crh_pat_...``), not a session; there is no cookie, so no CSRF
check. The body is read up to the limit and no further.
"""

from __future__ import annotations

from aiohttp import hdrs, web

from server.common.errors import Unauthenticated
from server.common.protocol.link import MAX_MCP_BODY
from server.hub.container import HUB_KEY
from server.hub.http.cookies import request_origin
from server.hub.http.middleware import error_response
from server.hub.routes.hooks import read_limited


def bearer_of(request: web.Request) -> str:
    scheme, _, value = request.headers.get(hdrs.AUTHORIZATION, "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthenticated(
            "send a personal access token: Authorization: Bearer crh_pat_...",
            code="accessTokenInvalid",
        )
    return value.strip()


async def serve_mcp(request: web.Request) -> web.StreamResponse:
    """Check the token, then let its host answer."""
    hub = request.app[HUB_KEY]
    try:
        holder = await hub.access_tokens.authenticate(bearer_of(request))
    except Unauthenticated as exc:
        # A 401 that says, as HTTP clients expect, that a bearer token is what it takes.
        response = error_response(exc)
        response.headers[hdrs.WWW_AUTHENTICATE] = 'Bearer realm="crewhost"'
        return response
    body = await read_limited(request, MAX_MCP_BODY) if request.method == "POST" else b""
    origin = request_origin(request, hub.settings.hub)
    return await hub.mcp.relay(request, holder, body, origin=origin)

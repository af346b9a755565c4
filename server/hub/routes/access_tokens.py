"""Personal access tokens: a member's own, the team's for owners and admins, and the
audit list of their use."""

from __future__ import annotations

from server.common.roles import Role
from server.hub.http.routing import Call, RouteTable
from server.hub.routes.views import access_token_use_view, access_token_view
from server.hub.schemas import (
    AccessTokenCreated,
    AccessTokenList,
    AccessTokenUseList,
    CreateAccessToken,
)

routes = RouteTable()


@routes.post(
    "/v1/teams/{team_id}/access-tokens",
    access=Role.MEMBER,
    body=CreateAccessToken,
    reply=AccessTokenCreated,
    status=201,
)
async def create_access_token(call: Call[CreateAccessToken]) -> AccessTokenCreated:
    """A new token of the caller's for the MCP endpoint; its secret is shown this once."""
    new = await call.hub.access_tokens.create(
        call.team.team_id,
        call.principal.account_id,
        name=call.body.name,
        host_id=call.body.host_id,
        scope=call.body.scope,
        expires_in_days=call.body.expires_in_days,
    )
    now = call.hub.clock.now()
    return AccessTokenCreated(token=access_token_view(new.token, now), secret=new.secret)


@routes.get("/v1/teams/{team_id}/access-tokens", access=Role.MEMBER, reply=AccessTokenList)
async def list_access_tokens(call: Call[None]) -> AccessTokenList:
    """The caller's own tokens in the team, newest first."""
    tokens = await call.hub.access_tokens.list_tokens(call.team.team_id, call.principal.account_id)
    now = call.hub.clock.now()
    return AccessTokenList(tokens=[access_token_view(t, now) for t in tokens])


@routes.get("/v1/teams/{team_id}/access-tokens/all", access=Role.ADMIN, reply=AccessTokenList)
async def list_team_access_tokens(call: Call[None]) -> AccessTokenList:
    """Every member's tokens in the team (owners and admins)."""
    tokens = await call.hub.access_tokens.list_tokens(call.team.team_id, None)
    now = call.hub.clock.now()
    return AccessTokenList(tokens=[access_token_view(t, now) for t in tokens])


@routes.delete("/v1/teams/{team_id}/access-tokens/{token_id}", access=Role.MEMBER)
async def revoke_access_token(call: Call[None]) -> None:
    """Revoke a token (one's own; owners and admins any); its MCP sessions end at once."""
    await call.hub.access_tokens.revoke(
        call.team.team_id, call.principal.account_id, call.team.role, call.path_id("token_id")
    )


@routes.get("/v1/teams/{team_id}/access-token-uses", access=Role.MEMBER, reply=AccessTokenUseList)
async def list_access_token_uses(call: Call[None]) -> AccessTokenUseList:
    """The audit list of the caller's own tokens: each tool call, when, and how it ended."""
    uses = await call.hub.access_tokens.list_uses(call.team.team_id, call.principal.account_id)
    return AccessTokenUseList(uses=[access_token_use_view(u) for u in uses])


@routes.get(
    "/v1/teams/{team_id}/access-token-uses/all", access=Role.ADMIN, reply=AccessTokenUseList
)
async def list_team_access_token_uses(call: Call[None]) -> AccessTokenUseList:
    """The audit list of every member's tokens (owners and admins)."""
    uses = await call.hub.access_tokens.list_uses(call.team.team_id, None)
    return AccessTokenUseList(uses=[access_token_use_view(u) for u in uses])

"""The MCP endpoint's hub half: each HTTP request to ``/v1/mcp``, its bearer checked, is
relayed over the link to the token's host, which serves it; the answer (JSON, or a
server-sent event stream) comes back in pieces and is written out as it arrives.

The hub runs no tool and keeps no MCP state but which tokens have requests open here:
when one is revoked (``access-tokens-ended`` on the bus) or expires, its open answers end
at once and its host is told to end the token's sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from aiohttp import web

from server.common.clock import Clock
from server.common.errors import Unavailable
from server.common.protocol.link import (
    LinkMcpCancel,
    LinkMcpEnd,
    LinkMcpRequest,
    LinkMcpResponseBody,
    LinkMcpResponseStart,
    McpCaller,
)
from server.common.tasks import BackgroundTasks
from server.common.tokens import new_id
from server.hub.links import HostLinks, McpReply
from server.hub.services.access_tokens import AccessTokenService, TokenHolder
from server.hub.services.hosts import HostService
from server.hub.storage.access_tokens import AccessToken

log = logging.getLogger(__name__)

# What of a client's request the host needs, and what of the host's answer goes back.
FORWARDED_REQUEST_HEADERS = (
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
)
FORWARDED_RESPONSE_HEADERS = (
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "cache-control",
    "allow",
)
START_SECONDS = 30.0
# How often open requests are checked against their tokens' expiry.
EXPIRY_TICK = 0.25


@dataclass(eq=False)
class _OpenRequest:
    token: AccessToken
    host_id: str
    replies: asyncio.Queue[McpReply | None] = field(default_factory=asyncio.Queue)


class McpRelay:
    """Relays ``/v1/mcp`` requests to hosts and ends those of tokens that end."""

    def __init__(
        self, links: HostLinks, hosts: HostService, tokens: AccessTokenService, clock: Clock
    ) -> None:
        self._links = links
        self._hosts = hosts
        self._tokens = tokens
        self._clock = clock
        self._open: dict[str, _OpenRequest] = {}
        # Tokens whose sessions this instance relayed, by id, with the host they reach.
        self._sessions: dict[str, tuple[AccessToken, str]] = {}
        self._tasks = BackgroundTasks("mcp relay")

    def start(self) -> None:
        self._tasks.start(self._expire_forever())

    async def close(self) -> None:
        await self._tasks.close()
        for request in list(self._open.values()):
            request.replies.put_nowait(None)

    async def relay(
        self, request: web.Request, holder: TokenHolder, body: bytes
    ) -> web.StreamResponse:
        """Send one request to the token's host and stream its answer back."""
        token = holder.token
        # A host linked here is live and the team's (a removed host's link is closed): no
        # read of its row on the way.
        if not self._links.is_linked_here(token.host_id):
            host = await self._hosts.get_team_host(token.team_id, token.host_id)
            self._links.require_reachable(host)
            raise Unavailable("the host is linked to another hub instance", code="hostOffline")
        host_id = token.host_id
        request_id = new_id()
        message = LinkMcpRequest(
            request_id=request_id,
            caller=McpCaller(
                token_id=token.id,
                team_id=token.team_id,
                account_id=token.account_id,
                role=holder.role,
                scope="browser+agents" if token.scope == "browser+agents" else "browser",
            ),
            method="POST" if request.method == "POST" else request.method,  # type: ignore[arg-type]
            headers={
                name: request.headers[name][:1024]
                for name in FORWARDED_REQUEST_HEADERS
                if name in request.headers
            },
            body=body.decode("utf-8", errors="replace"),
        )
        open_request = _OpenRequest(token, host_id)
        self._open[request_id] = open_request
        self._sessions[token.id] = (token, host_id)
        self._links.expect_mcp_replies(request_id, host_id, open_request.replies)
        finished = False
        try:
            await self._links.send_to_host(host_id, message)
            start = await self._first_reply(open_request)
            response = web.StreamResponse(
                status=start.status,
                headers={
                    name: value
                    for name, value in start.headers.items()
                    if name.lower() in FORWARDED_RESPONSE_HEADERS
                },
            )
            await response.prepare(request)
            while True:
                piece = await open_request.replies.get()
                if not isinstance(piece, LinkMcpResponseBody):
                    break  # the token ended, or the link did: the answer ends here
                if piece.data:
                    await response.write(piece.data.encode("utf-8"))
                if not piece.more:
                    finished = True
                    break
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
            return response
        finally:
            self._open.pop(request_id, None)
            self._links.forget_mcp_replies(request_id)
            if not finished:
                with contextlib.suppress(ConnectionError, Unavailable):
                    await self._links.send_to_host(host_id, LinkMcpCancel(request_id=request_id))

    async def _first_reply(self, open_request: _OpenRequest) -> LinkMcpResponseStart:
        try:
            reply = await asyncio.wait_for(open_request.replies.get(), START_SECONDS)
        except TimeoutError as exc:
            raise Unavailable("the host did not answer in time", code="hostTimeout") from exc
        if not isinstance(reply, LinkMcpResponseStart):
            raise Unavailable("the host's link ended", code="hostOffline")
        return reply

    async def end_tokens(self, token_ids: list[str]) -> None:
        """End the open requests of these tokens here, and their sessions on their hosts."""
        ended = set(token_ids)
        for request in list(self._open.values()):
            if request.token.id in ended:
                request.replies.put_nowait(None)
        by_host: dict[str, list[str]] = {}
        for token_id in ended:
            known = self._sessions.pop(token_id, None)
            if known is not None:
                by_host.setdefault(known[1], []).append(token_id)
        for host_id, ids in by_host.items():
            with contextlib.suppress(ConnectionError, Unavailable):
                await self._links.send_to_host(host_id, LinkMcpEnd(token_ids=ids))
        if by_host:
            log.info("ended the MCP sessions of ended tokens", extra={"tokens": len(ended)})

    async def _expire_forever(self) -> None:
        while True:
            await asyncio.sleep(EXPIRY_TICK)
            now = self._clock.now()
            expired = [t.id for t, _ in self._sessions.values() if now >= t.expires_at]
            if expired:
                try:
                    await self.end_tokens(expired)
                except Exception:  # a closing link: the next round tries again
                    log.exception("ending expired MCP sessions failed")

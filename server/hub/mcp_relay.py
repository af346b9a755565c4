"""The MCP endpoint's hub half: each HTTP request to ``/v1/mcp``, its bearer checked, is
relayed over the link to the token's host, which serves it; the answer (JSON, or a
server-sent event stream) comes back in pieces and is written out as it arrives.

A host linked to another hub instance is reached through the bus, as an offer is: the
request goes out as ``mcp-request`` pieces (NOTIFY carries 7,900 bytes at most), the
instance holding the link relays it down its link and sends each piece of the answer
back as ``mcp-reply``, and a client that goes away is told as ``mcp-cancel``.

The hub runs no tool and keeps no MCP state but which tokens have requests open here:
when one is revoked (``access-tokens-ended`` on the bus), expires, or its member leaves
the team or changes role (a revocation on the bus), its open answers end at once and its
host is told to end the token's sessions.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from server.common.clock import Clock
from server.common.errors import CrewhostError, Unavailable
from server.common.protocol.codec import encode
from server.common.protocol.link import (
    LinkMcpCancel,
    LinkMcpEnd,
    LinkMcpRequest,
    LinkMcpResponse,
    LinkMcpResponseBody,
    LinkMcpResponseStart,
    McpCaller,
    decode_link,
)
from server.common.tasks import BackgroundTasks
from server.common.tokens import new_id
from server.hub.bus import Bus
from server.hub.links import HostLinks, McpReply
from server.hub.services.access_tokens import AccessTokenService, TokenHolder
from server.hub.services.hosts import HostService

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
# How often open requests are checked against their tokens' expiry, and for a client gone
# (aiohttp tells a handler of that only by its transport): the host then ends the answer,
# and a client that reconnects resumes the stream it left.
EXPIRY_TICK = 0.25
# The bus messages of a request relayed between instances.
REQUEST_KIND, REPLY_KIND, CANCEL_KIND = "mcp-request", "mcp-reply", "mcp-cancel"
BUS_KINDS = frozenset({REQUEST_KIND, REPLY_KIND, CANCEL_KIND})
# A link message's bytes per bus message, before base64 (4/3) and the envelope: under
# the bus's 7,900 bytes.
BUS_PIECE = 5400
# The most bus pieces one link message may take (a 128 KiB body and its envelope).
MAX_BUS_PIECES = 64


@dataclass(frozen=True, slots=True)
class _Relayed:
    """A token whose sessions this instance relayed (to its own link or another's)."""

    token_id: str
    team_id: str
    account_id: str
    host_id: str
    expires_at: float


@dataclass(eq=False)
class _OpenRequest:
    client: web.Request
    token_id: str
    host_id: str
    # Through another instance, whose replies come on the bus.
    remote: bool
    replies: asyncio.Queue[McpReply | None] = field(default_factory=asyncio.Queue)


@dataclass(eq=False)
class _Pieces:
    """A link message arriving in bus pieces, in order."""

    next_seq: int = 0
    parts: list[bytes] = field(default_factory=list)

    def add(self, message: dict[str, Any]) -> bytes | None:
        """The whole message once its last piece is here; raises ``ValueError`` on a gap."""
        if message.get("seq") != self.next_seq or len(self.parts) >= MAX_BUS_PIECES:
            raise ValueError("a piece of a relayed MCP message went missing")
        self.next_seq += 1
        self.parts.append(base64.b64decode(str(message.get("piece", ""))))
        if message.get("more"):
            return None
        whole = b"".join(self.parts)
        self.next_seq, self.parts = 0, []
        return whole


class McpRelay:
    """Relays ``/v1/mcp`` requests to hosts and ends those of tokens that end."""

    def __init__(
        self,
        links: HostLinks,
        hosts: HostService,
        tokens: AccessTokenService,
        clock: Clock,
        bus: Bus,
    ) -> None:
        self._links = links
        self._hosts = hosts
        self._tokens = tokens
        self._clock = clock
        self._bus = bus
        self._open: dict[str, _OpenRequest] = {}
        self._relayed: dict[str, _Relayed] = {}
        # Replies arriving on the bus for requests of this instance, piece by piece.
        self._reply_pieces: dict[str, _Pieces] = {}
        # Requests of other instances for hosts linked here: arriving, then being served.
        self._request_pieces: dict[str, _Pieces] = {}
        self._served: dict[str, asyncio.Task[None]] = {}
        self._tasks = BackgroundTasks("mcp relay")

    @property
    def _instance_id(self) -> str:
        return self._links.instance_id

    def start(self) -> None:
        self._tasks.start(self._expire_forever())

    async def close(self) -> None:
        await self._tasks.close()
        for request in list(self._open.values()):
            request.replies.put_nowait(None)

    async def relay(
        self, request: web.Request, holder: TokenHolder, body: bytes, *, origin: str
    ) -> web.StreamResponse:
        """Send one request to the token's host and stream its answer back; ``origin`` is
        the hub's address as the caller reached it."""
        token = holder.token
        host_id = token.host_id
        # A host linked here is live and the team's (a removed host's link is closed): no
        # read of its row on the way. Else the row says whether another instance holds it.
        remote = not self._links.is_linked_here(host_id)
        if remote:
            self._links.require_reachable(await self._hosts.get_team_host(token.team_id, host_id))
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
            origin=origin,
        )
        open_request = _OpenRequest(request, token.id, host_id, remote)
        self._open[request_id] = open_request
        self._remember(message.caller, host_id, token.expires_at)
        finished = False
        try:
            if remote:
                await self._publish_pieces(
                    {
                        "kind": REQUEST_KIND,
                        "host_id": host_id,
                        "from": self._instance_id,
                        "request_id": request_id,
                        "expires_at": token.expires_at,
                    },
                    encode(message),
                )
            else:
                self._links.expect_mcp_replies(request_id, host_id, open_request.replies)
                await self._links.send_to_host(host_id, message)
            start = await self._first_reply(open_request)
            headers = {
                name: value
                for name, value in start.headers.items()
                if name.lower() in FORWARDED_RESPONSE_HEADERS
            }
            if isinstance(start, LinkMcpResponse):  # a whole answer: written at once
                finished = True
                return web.Response(
                    status=start.status, headers=headers, body=start.data.encode("utf-8")
                )
            streamed = headers.get("content-type", "").startswith("text/event-stream")
            if not streamed:
                # An answer of one JSON object (or none): written whole, once it is here.
                piece = await open_request.replies.get()
                if isinstance(piece, LinkMcpResponseBody) and not piece.more:
                    finished = True
                    return web.Response(
                        status=start.status, headers=headers, body=piece.data.encode("utf-8")
                    )
            response = web.StreamResponse(status=start.status, headers=headers)
            await response.prepare(request)
            if streamed:
                piece = await open_request.replies.get()
            while isinstance(piece, LinkMcpResponseBody):
                # Until the token, the link or the client ends, or the answer does.
                if piece.data:
                    await response.write(piece.data.encode("utf-8"))
                if not piece.more:
                    finished = True
                    break
                piece = await open_request.replies.get()
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
            return response
        finally:
            self._open.pop(request_id, None)
            self._reply_pieces.pop(request_id, None)
            self._links.forget_mcp_replies(request_id)
            if not finished:
                with contextlib.suppress(ConnectionError, Unavailable, OSError):
                    await self._cancel(open_request, request_id)

    async def _cancel(self, open_request: _OpenRequest, request_id: str) -> None:
        if open_request.remote:
            await self._bus.publish(
                {"kind": CANCEL_KIND, "host_id": open_request.host_id, "request_id": request_id}
            )
        else:
            await self._links.send_to_host(
                open_request.host_id, LinkMcpCancel(request_id=request_id)
            )

    def _remember(self, caller: McpCaller, host_id: str, expires_at: float) -> None:
        self._relayed[caller.token_id] = _Relayed(
            caller.token_id, caller.team_id, caller.account_id, host_id, expires_at
        )

    async def _first_reply(
        self, open_request: _OpenRequest
    ) -> LinkMcpResponseStart | LinkMcpResponse:
        try:
            async with asyncio.timeout(START_SECONDS):
                reply = await open_request.replies.get()
        except TimeoutError as exc:
            if open_request.remote:  # no instance took it: the link is gone
                raise Unavailable("the host is not connected", code="hostOffline") from exc
            raise Unavailable("the host did not answer in time", code="hostTimeout") from exc
        if not isinstance(reply, LinkMcpResponseStart | LinkMcpResponse):
            raise Unavailable("the host's link ended", code="hostOffline")
        return reply

    # --- ending sessions ------------------------------------------------------------

    async def end_tokens(self, token_ids: list[str]) -> None:
        """End the open requests of these tokens here, and their sessions on their hosts
        (those this instance holds the link of; each instance hears of the end)."""
        ended = set(token_ids)
        for request in list(self._open.values()):
            if request.token_id in ended:
                request.replies.put_nowait(None)
        by_host: dict[str, list[str]] = {}
        for token_id in ended:
            known = self._relayed.pop(token_id, None)
            if known is not None:
                by_host.setdefault(known.host_id, []).append(token_id)
        for host_id, ids in by_host.items():
            if self._links.is_linked_here(host_id):
                with contextlib.suppress(ConnectionError, Unavailable):
                    await self._links.send_to_host(host_id, LinkMcpEnd(token_ids=ids))
        if by_host:
            log.info("ended the MCP sessions of ended tokens", extra={"tokens": len(ended)})

    async def end_member(self, team_id: str, account_id: str) -> None:
        """A member left the team or changed role: end the sessions of their tokens in it
        (a session carries the role it was opened with; the client opens a new one)."""
        await self.end_tokens(
            [
                t.token_id
                for t in self._relayed.values()
                if t.team_id == team_id and t.account_id == account_id
            ]
        )

    async def _expire_forever(self) -> None:
        while True:
            await asyncio.sleep(EXPIRY_TICK)
            for request in self._open.values():
                transport = request.client.transport
                if transport is None or transport.is_closing():
                    request.replies.put_nowait(None)
            now = self._clock.now()
            expired = [t.token_id for t in self._relayed.values() if now >= t.expires_at]
            if expired:
                try:
                    await self.end_tokens(expired)
                except Exception:  # a closing link: the next round tries again
                    log.exception("ending expired MCP sessions failed")

    # --- between hub instances ------------------------------------------------------

    def resync(self) -> None:
        """The bus listener was away: pieces may be lost, so answers relayed through other
        instances end here (their clients ask again)."""
        for request in self._open.values():
            if request.remote:
                request.replies.put_nowait(None)

    async def _publish_pieces(self, envelope: dict[str, Any], encoded: str) -> None:
        """Publish a link message in bus-sized pieces, in order."""
        data = encoded.encode("utf-8")
        starts = range(0, max(len(data), 1), BUS_PIECE)
        for seq, start in enumerate(starts):
            piece = base64.b64encode(data[start : start + BUS_PIECE]).decode("ascii")
            more = start + BUS_PIECE < len(data)
            await self._bus.publish({**envelope, "seq": seq, "more": more, "piece": piece})

    async def on_bus(self, message: dict[str, Any]) -> None:
        """An ``mcp-*`` message from any instance. Pieces are taken in the order they were
        published: nothing here waits before a piece is in place."""
        kind, request_id = message.get("kind"), str(message.get("request_id"))
        if kind == REPLY_KIND and message.get("to") == self._instance_id:
            self._take_reply(request_id, message)
        elif kind == REQUEST_KIND and self._links.is_linked_here(str(message.get("host_id"))):
            self._take_request(request_id, message)
        elif kind == CANCEL_KIND and self._links.is_linked_here(str(message.get("host_id"))):
            serving = self._served.pop(request_id, None)
            if serving is not None:
                serving.cancel()

    def _take_reply(self, request_id: str, message: dict[str, Any]) -> None:
        open_request = self._open.get(request_id)
        if open_request is None or not open_request.remote:
            return
        reply: McpReply | None = None
        try:
            if not message.get("ended"):
                pieces = self._reply_pieces.setdefault(request_id, _Pieces())
                whole = pieces.add(message)
                if whole is None:
                    return
                decoded = decode_link(whole)
                if not isinstance(
                    decoded, LinkMcpResponseStart | LinkMcpResponseBody | LinkMcpResponse
                ):
                    raise ValueError("not a piece of an answer")
                reply = decoded
        except (ValueError, CrewhostError):
            log.warning("dropped a relayed MCP answer that arrived broken")
        open_request.replies.put_nowait(reply)

    def _take_request(self, request_id: str, message: dict[str, Any]) -> None:
        origin = str(message.get("from"))
        try:
            whole = self._request_pieces.setdefault(request_id, _Pieces()).add(message)
            if whole is None:
                return
            del self._request_pieces[request_id]
            request = decode_link(whole)
            if not isinstance(request, LinkMcpRequest) or request.request_id != request_id:
                raise ValueError("not an MCP request")
            expires_at = float(message["expires_at"])
        except (ValueError, KeyError, TypeError, CrewhostError):
            self._request_pieces.pop(request_id, None)
            log.warning("dropped a relayed MCP request that arrived broken")
            return
        host_id = str(message["host_id"])
        self._remember(request.caller, host_id, expires_at)
        self._served[request_id] = self._tasks.spawn(self._serve_for(origin, host_id, request))

    async def _serve_for(self, origin: str, host_id: str, request: LinkMcpRequest) -> None:
        """Relay another instance's request down the link held here, and its answer back
        on the bus; its client going away (``mcp-cancel``) ends it."""
        request_id = request.request_id
        replies: asyncio.Queue[McpReply | None] = asyncio.Queue()
        self._links.expect_mcp_replies(request_id, host_id, replies)
        envelope = {"kind": REPLY_KIND, "to": origin, "request_id": request_id}
        finished = False
        try:
            await self._links.send_to_host(host_id, request)
            while True:
                reply = await replies.get()
                if reply is None:
                    break
                await self._publish_pieces(envelope, encode(reply))
                if isinstance(reply, LinkMcpResponse) or (
                    isinstance(reply, LinkMcpResponseBody) and not reply.more
                ):
                    finished = True
                    break
        except Unavailable:
            pass
        finally:
            self._served.pop(request_id, None)
            self._links.forget_mcp_replies(request_id)
            if not finished:
                with contextlib.suppress(ConnectionError, Unavailable, OSError):
                    await self._links.send_to_host(host_id, LinkMcpCancel(request_id=request_id))
                with contextlib.suppress(Exception):  # the asker times out all the same
                    await self._bus.publish({**envelope, "ended": True})

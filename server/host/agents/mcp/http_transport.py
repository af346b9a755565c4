"""The HTTP transports of an MCP session, dialed under the public-only address policy: the
server's host name is resolved once, every address judged, and each connection goes to the
judged address (TLS still names the host).

Streamable HTTP first; a server that refuses its first POST with 400, 404 or 405 speaks
the older HTTP+SSE transport, which is tried next (the specification's compatibility rule).

An answer is read to at most ``MAX_LINE_BYTES`` (as a stdio server's message): a body
whole, once decoded, and a session's event stream one event at a time (a sign-in's
requests, which read every answer whole, cap an event stream whole too). A longer one
fails the request it answers (``AnswerTooLarge``); the session goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from yarl import URL

from server.common.browser_address_policy import IPAddress, normalize_host
from server.common.public_addresses import PublicOnlyPolicy, Resolver, resolve_pinned
from server.host.agents.mcp.stdio_transport import MAX_LINE_BYTES

CONNECT_SECONDS = 30.0
# A server may hold a response stream open while a tool runs: the call's own timeout ends it.
READ_SECONDS = 3600.0
_EVENT_STREAM = "text/event-stream"


class AnswerTooLarge(httpx2.StreamError):
    """An answer's body is longer than ``MAX_LINE_BYTES``. A stream error: the SDK answers
    the request it was reading with an error, and its session goes on."""


class _CappedBody(httpx2.AsyncByteStream):
    """A body decoded as it is read, ended with ``AnswerTooLarge`` past the cap."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._response.aiter_bytes():
            read += len(chunk)
            if read > MAX_LINE_BYTES:
                raise AnswerTooLarge(f"the server's answer is longer than {MAX_LINE_BYTES} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._response.aclose()


class _CappedTransport(httpx2.AsyncBaseTransport):
    """Caps each answer's body: counted as decoded (a small compressed body may inflate),
    so the answer goes on without its ``Content-Encoding``. A session's event stream is
    left whole (``streams``): it may last as long as the session, and the SDK caps each of
    its events. Any other client reads an event stream whole too, and caps it."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, streams: bool) -> None:
        self._inner = inner
        self._streams = streams

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if self._streams and content_type == _EVENT_STREAM:
            return response
        raw = httpx2.Response(
            response.status_code, headers=response.headers, stream=response.stream, request=request
        )
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length")
        ]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_CappedBody(raw),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects to ``address`` for ``host`` only; any other host is refused."""

    def __init__(self, host: str, address: IPAddress) -> None:
        self._host = host
        self._address = address
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if normalize_host(host) != self._host:
            raise httpcore2.ConnectError(f"{host} is not the MCP server's host")
        return await self._inner.connect_tcp(
            str(self._address),
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("an MCP server is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def judge_url(url: str, policy: PublicOnlyPolicy, resolver: Resolver) -> IPAddress:
    """The address ``url``'s host resolves to, judged by ``policy``; raises
    ``NonPublicAddress`` or ``NameNotResolved``."""
    parsed = URL(url)
    host = normalize_host(parsed.raw_host or "")
    port = parsed.explicit_port or (443 if parsed.scheme == "https" else 80)
    return await resolve_pinned(host, port, policy, resolver=resolver)


# What a first POST answered that marks a server of the older HTTP+SSE transport.
_OLDER_TRANSPORT = frozenset({400, 404, 405})


@dataclass(frozen=True)
class HttpDial:
    """Where an HTTP session goes, with what, under which policy; ``auth`` adds a signed-in
    server's bearer token to each request (and refreshes it)."""

    url: str
    headers: dict[str, str] = field(repr=False)
    policy: PublicOnlyPolicy
    resolver: Resolver
    auth: httpx2.Auth | None = field(default=None, repr=False)


@dataclass
class HttpReplies:
    """What the server answered: whether it refused the first POST as an older server."""

    answered: bool = False
    refused_post: bool = False
    # The server's WWW-Authenticate when it answered 401: it needs a sign-in.
    unauthorized: str | None = None

    async def heard(self, response: httpx2.Response) -> None:
        if response.status_code == 401:
            self.unauthorized = response.headers.get("WWW-Authenticate", "")
        elif response.status_code < 400:
            self.unauthorized = None
        if not self.answered:
            self.answered = True
            self.refused_post = (
                response.request.method == "POST" and response.status_code in _OLDER_TRANSPORT
            )


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The host's one TLS client context for MCP servers (and their sign-ins)."""
    return httpx2.create_ssl_context(trust_env=False)


async def pinned_client(
    dial: HttpDial, replies: HttpReplies | None, *, streams: bool = True
) -> httpx2.AsyncClient:
    """A client for ``dial.url``'s host only, connecting to the address judged by the
    policy. With ``streams`` (an MCP session's) an event stream's body is not capped: the
    SDK reads it one capped event at a time."""
    address = await judge_url(dial.url, dial.policy, dial.resolver)
    # Reading the system's certificates takes a while: once, off the event loop.
    ssl_context = await asyncio.to_thread(_ssl_context)
    transport = httpx2.AsyncHTTPTransport(verify=ssl_context, trust_env=False)
    # The one pool of the transport, given the pinned backend.
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=ssl_context,
        network_backend=PinnedBackend(normalize_host(URL(dial.url).raw_host or ""), address),
    )
    hooks = {"response": [replies.heard]} if replies is not None else {}
    return httpx2.AsyncClient(
        headers=dial.headers,
        timeout=httpx2.Timeout(CONNECT_SECONDS, read=READ_SECONDS),
        transport=_CappedTransport(transport, streams=streams),
        trust_env=False,
        event_hooks=hooks,
        auth=dial.auth,
    )


@contextlib.asynccontextmanager
async def http_transport(dial: HttpDial, replies: HttpReplies) -> AsyncIterator[TransportStreams]:
    """The SDK's Streamable HTTP client over a connection pinned to the judged address."""
    client = await pinned_client(dial, replies)
    async with (
        client,
        streamable_http_client(
            dial.url, http_client=client, max_sse_event_size=MAX_LINE_BYTES
        ) as streams,
    ):
        yield streams


@contextlib.asynccontextmanager
async def sse_transport(dial: HttpDial) -> AsyncIterator[TransportStreams]:
    """The SDK's HTTP+SSE client over a connection pinned to the judged address."""
    client = await pinned_client(dial, None)

    def made(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return client  # the SDK enters and closes it

    async with sse_client(dial.url, httpx_client_factory=made) as streams:
        yield streams

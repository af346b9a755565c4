"""The one way out of a sandboxed stdio MCP server's network: an HTTP proxy the host serves
on a listening socket made inside the sandbox.

With ``host.mcp_stdio_network`` at ``proxied`` the sandbox has a network namespace of its
own, with nothing in it but its own loopback. Before the server's command starts, the
sandbox opens a listening socket on that loopback (``PROXY_PORT``) and hands it to the host
(``StdioSandbox.handoff_command``); the command then runs with ``HTTP_PROXY`` and its kin
pointing there (``proxy_environment``). Every connection made to that socket is served
here, on the host's side of the namespace: one proxy request, either ``CONNECT host:port``
(a tunnel, for TLS) or a plain HTTP request with an absolute ``http://`` URL, then the
bytes both ways. The target is dialled only where the MCP servers' address policy allows
(public addresses, and what ``host.mcp_allowed_hosts`` adds): its name is resolved once
and the connection goes to the address that was vetted. The host's loopback (its database,
its cache), the LAN and cloud metadata answer 403; a name that does not resolve or a
target that does not answer, 502.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    resolve_pinned,
)

log = logging.getLogger(__name__)

# The proxy's port on the sandbox's own loopback: the namespace holds nothing else.
PROXY_PORT = 3128
# A request's head (its line and headers) is at most this, and comes within this.
HEAD_LIMIT = 16 * 1024
HEAD_SECONDS = 10.0
CONNECT_SECONDS = 15.0
# What makes a Node.js before release 24 use the proxy variables, and where the sandbox
# shows it (read-only).
NODE_PRELOAD = Path(__file__).with_name("node_proxy.cjs")
NODE_PRELOAD_IN_SANDBOX = "/run/crewhost/node-proxy.cjs"
# How long the sandbox has to hand its listening socket over once started.
HANDOFF_SECONDS = 10.0
# How long a refused client's further bytes are read before its connection closes.
LINGER_SECONDS = 2.0
# Connections one server may hold open through the proxy at once.
MAX_CONNECTIONS = 64
_CHUNK = 64 * 1024
# Headers for the proxy alone, never passed on to the target.
_HOP_HEADERS = frozenset({"connection", "keep-alive", "proxy-authorization", "proxy-connection"})


def proxy_environment(
    port: int = PROXY_PORT, *, node_preload: str = NODE_PRELOAD_IN_SANDBOX, node_options: str = ""
) -> dict[str, str]:
    """The variables that point a server's HTTP clients at the proxy (on ``port`` of the
    loopback); its own loopback is reached directly. Node.js reads them itself with
    ``NODE_USE_ENV_PROXY`` from release 24; before, ``node_preload`` (put before what
    ``node_options`` already asks of it) makes its ``fetch`` and its default agents use
    them."""
    url = f"http://127.0.0.1:{port}"
    local = "localhost,127.0.0.1,::1"
    preload = f'"{node_preload}"' if " " in node_preload else node_preload
    return {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "http_proxy": url,
        "https_proxy": url,
        "NO_PROXY": local,
        "no_proxy": local,
        "NODE_USE_ENV_PROXY": "1",
        "NODE_OPTIONS": f"--require={preload} {node_options}".strip(),
    }


class HandoffFailed(Exception):
    """The sandbox handed no listening socket over; the message says why, for a person."""


async def receive_listener(channel: socket.socket) -> socket.socket:
    """The listening socket the sandbox sends over ``channel`` (the host's end of the pair
    whose other end the sandbox inherited, closed here already)."""
    loop = asyncio.get_running_loop()
    channel.setblocking(False)
    readable = loop.create_future()

    def ready() -> None:
        if not readable.done():
            readable.set_result(None)

    loop.add_reader(channel.fileno(), ready)
    try:
        async with asyncio.timeout(HANDOFF_SECONDS):
            await readable
    except TimeoutError:
        raise HandoffFailed("the sandbox did not open its network's proxy in time") from None
    finally:
        loop.remove_reader(channel.fileno())
    try:
        _message, descriptors, _flags, _address = socket.recv_fds(channel, 1, 1)
    except OSError as exc:
        raise HandoffFailed(f"the sandbox's network proxy failed ({exc.strerror})") from None
    if len(descriptors) != 1:
        for extra in descriptors:
            os.close(extra)
        raise HandoffFailed("the sandbox ended before it opened its network's proxy")
    listener = socket.socket(fileno=descriptors[0])
    if listener.type != socket.SOCK_STREAM or listener.family != socket.AF_INET:
        listener.close()
        raise HandoffFailed("the sandbox handed over something that is not its proxy")
    return listener


class ProxyAnswer(Exception):
    """A request the proxy answers itself, and then closes."""

    def __init__(self, status: int, reason: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.reason = reason
        self.text = text

    def bytes(self) -> bytes:
        body = f"{self.text}\n".encode()
        head = (
            f"HTTP/1.1 {self.status} {self.reason}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        )
        return head.encode("latin-1") + body


def _bad(text: str) -> ProxyAnswer:
    return ProxyAnswer(400, "Bad Request", text)


@dataclass(frozen=True, slots=True)
class ProxyRequest:
    """Where one request goes: ``head`` is what the target is sent first (nothing for a
    tunnel, the request made relative for a plain one)."""

    host: str
    port: int
    head: bytes = b""

    @property
    def tunnel(self) -> bool:
        return not self.head


def parse_request(head: bytes) -> ProxyRequest:
    """The request whose head (up to and with its blank line) is ``head``; ``ProxyAnswer`` 400
    for anything but a ``CONNECT`` or a plain request with an absolute ``http://`` URL."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _bad("not an HTTP/1 request line")
    method, target, version = parts
    headers = [line for line in lines[1:] if line]
    if any(":" not in line or line[0] in " \t" for line in headers):
        raise _bad("a header line is malformed")
    if method == "CONNECT":
        host, port = _authority(target, default=None)
        return ProxyRequest(host, port)
    if not target.lower().startswith("http://"):
        raise _bad("the proxy takes CONNECT host:port, or a request for an absolute http:// URL")
    try:
        split = urlsplit(target)
    except ValueError:
        raise _bad(f"{target!r} is not a URL") from None
    host, port = _authority(split.netloc, default=80)
    path = (split.path or "/") + (f"?{split.query}" if split.query else "")
    kept = [line for line in headers if line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    if not any(line.split(":", 1)[0].strip().lower() == "host" for line in kept):
        kept.insert(0, f"Host: {split.netloc}")
    forwarded = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
    return ProxyRequest(host, port, forwarded.encode("latin-1"))


def _authority(text: str, *, default: int | None) -> tuple[str, int]:
    if "@" in text:
        raise _bad("a target with a user name is refused")
    try:
        split = urlsplit(f"//{text}")
        host, port = split.hostname, split.port
    except ValueError:
        raise _bad(f"{text!r} is not a host and port") from None
    port = default if port is None else port
    if not host or port is None or not 0 < port < 65536:
        raise _bad(f"{text!r} is not a host and port")
    return host, port


class EgressProxy:
    """The proxy of one server's session, on the host's event loop; an async context
    manager that serves ``listener`` (the socket the sandbox handed over) while open."""

    def __init__(
        self,
        listener: socket.socket,
        policy: PublicOnlyPolicy,
        resolver: Resolver,
        server_name: str,
        *,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self._listener = listener
        self._max_connections = max_connections
        self._policy = policy
        self._resolver = resolver
        self._server_name = server_name
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> EgressProxy:
        self._listener.setblocking(False)
        self._server = await asyncio.start_server(
            self._serve, sock=self._listener, limit=HEAD_LIMIT
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._open):
            task.cancel()
        await asyncio.gather(*self._open, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._open.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await _head(reader)
            if len(self._open) > self._max_connections:
                raise ProxyAnswer(503, "Service Unavailable", "too many connections at once")
            request = parse_request(head)
            up_reader, upstream = await self._dial(request)
            if request.tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.write(request.head)
            await _splice(reader, writer, up_reader, upstream)
        except ProxyAnswer as answer:
            with contextlib.suppress(OSError):
                await _answer_and_linger(answer, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only the proxy's own close cancels a connection: it ends here, quietly.
            pass
        finally:
            self._open.discard(task)
            for side in (writer, upstream):
                if side is not None:
                    side.close()

    async def _dial(
        self, request: ProxyRequest
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        target = f"{request.host}:{request.port}"
        try:
            address = await resolve_pinned(
                request.host, request.port, self._policy, resolver=self._resolver
            )
        except NonPublicAddress as refused:
            log.info(
                "mcp server %s: refused a connection to %s (%s)",
                self._server_name,
                target,
                refused.block,
            )
            raise ProxyAnswer(
                403,
                "Forbidden",
                f"{target} is refused: {refused.address} is {refused.block}, not a public "
                "address (the host's operator may allow it in host.mcp_allowed_hosts)",
            ) from None
        except NameNotResolved:
            raise ProxyAnswer(502, "Bad Gateway", f"{request.host} could not be resolved") from None
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                return await asyncio.open_connection(str(address), request.port)
        except (OSError, TimeoutError):
            raise ProxyAnswer(502, "Bad Gateway", f"{target} did not answer") from None


async def _answer_and_linger(
    answer: ProxyAnswer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer, end the sending side, and read what the client still sends for a moment:
    a socket closed with unread bytes is reset, and the answer lost with it."""
    writer.write(answer.bytes())
    await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LINGER_SECONDS):
            while await reader.read(_CHUNK):
                pass


async def _head(reader: asyncio.StreamReader) -> bytes:
    try:
        async with asyncio.timeout(HEAD_SECONDS):
            return await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise _bad(f"the request's head is longer than {HEAD_LIMIT} bytes") from None
    except TimeoutError:
        raise ProxyAnswer(408, "Request Timeout", "no request head came") from None


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
) -> None:
    """Bytes both ways until both sides have ended; one side's end is passed on as such, a
    failure on either side ends both."""

    def end_both() -> None:
        writer.close()
        upstream.close()

    await asyncio.gather(_pump(reader, upstream, end_both), _pump(up_reader, writer, end_both))


async def _pump(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, end_both: Callable[[], None]
) -> None:
    try:
        while data := await source.read(_CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        end_both()

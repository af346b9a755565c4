"""The loopback relay: an HTTP proxy on a random 127.0.0.1 port, with a random sign-in,
that sends each browser connection through an exit (a SOCKS5 proxy with a sign-in, which
Chromium cannot do itself, or a member's computer).

Chromium is launched with the relay as its only proxy, so nothing goes direct. One
browser connection is one exit connection: a ``CONNECT`` is piped both ways once the exit
connects; a plain ``http`` request goes out in origin form with ``Connection: close`` and
its connection closes after the answer. When the exit refuses or stays silent the relay
answers 502 and remembers why (``last_refusal``, and ``last_cause`` for a refused target;
the answer says both, ``X-Proxy-Refusal`` and ``X-Proxy-Refusal-Cause``), so the page
error and the proxy's mark name the cause. At most ``max_connections`` connections are
served at once (each holds an exit connection and two buffers); one past that is
answered 503 and closed, so a page that opens connections without end cannot exhaust
the host. Nothing is logged about a target.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import secrets
from collections.abc import Callable
from types import TracebackType

from server.host.proxies.exits import Exit, ExitRefused, TargetCause, Upstream, Why

_LISTEN = "127.0.0.1"
_HEAD_LIMIT = 32 * 1024
_HEAD_SECONDS = 30.0
_CHUNK = 64 * 1024
_HOP_HEADERS = frozenset({"proxy-authorization", "proxy-connection", "connection", "keep-alive"})
# Connections one relay serves at once (Chromium keeps at most 256 per proxy itself).
MAX_CONNECTIONS = 256
# How long a connection past the limit is given to send its request before its 503.
_REFUSED_READ_SECONDS = 2.0


class LoopbackRelay:
    """One relay for one partition's browser; an async context manager."""

    def __init__(
        self,
        exit_: Exit,
        refused: Callable[[Why], None] = lambda _why: None,
        *,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self._exit = exit_
        self._max_connections = max_connections
        self._refused = refused
        self.username = "relay-" + secrets.token_hex(8)
        self.password = secrets.token_urlsafe(24)
        self._expected = "Basic " + base64.b64encode(
            f"{self.username}:{self.password}".encode()
        ).decode("ascii")
        self._server: asyncio.Server | None = None
        # Each browser connection's work; stopping cancels these, never the server's own
        # connection tasks (asyncio reports a cancelled one as an error).
        self._connections: set[asyncio.Future[None]] = set()
        self.port = 0
        self.last_refusal: Why | None = None
        self.last_cause: TargetCause | None = None

    @property
    def server(self) -> str:
        """The relay as Chromium's proxy setting names it."""
        return f"http://{_LISTEN}:{self.port}"

    async def __aenter__(self) -> LoopbackRelay:
        self._server = await asyncio.start_server(self._serve, _LISTEN, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Stops listening and ends every connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= self._max_connections:
            # The request is read first: a socket closed with unread bytes is reset, and the
            # browser would see a broken connection instead of the answer.
            with contextlib.suppress(
                OSError, TimeoutError, asyncio.LimitOverrunError, asyncio.IncompleteReadError
            ):
                await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _REFUSED_READ_SECONDS)
                await _answer(writer, 503, "Service Unavailable")
            writer.close()
            return
        work = asyncio.ensure_future(self._relay(reader, writer))
        self._connections.add(work)
        try:
            await asyncio.wait([work])
        finally:
            self._connections.discard(work)
            if not work.cancelled() and work.exception() is not None:
                exception = work.exception()
                if not isinstance(exception, OSError | asyncio.IncompleteReadError):
                    raise exception  # type: ignore[misc]
            writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_SECONDS)
        except (TimeoutError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
            return
        if len(head) > _HEAD_LIMIT:
            await _answer(writer, 431, "Request Header Fields Too Large")
            return
        lines = head.decode("latin-1").split("\r\n")
        request, headers = lines[0], [line for line in lines[1:] if line]
        if not self._signed_in(headers):
            await _answer(
                writer,
                407,
                "Proxy Authentication Required",
                'Proxy-Authenticate: Basic realm="relay"',
            )
            return
        parts = request.split(" ")
        if len(parts) != 3:
            await _answer(writer, 400, "Bad Request")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            named = _split_authority(target, 443)
            if named is None:
                await _answer(writer, 400, "Bad Request")
                return
            upstream = await self._open(writer, *named)
            if upstream is None:
                return
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
            await _pipe(reader, writer, upstream, b"")
            return
        if not target.lower().startswith("http://"):
            await _answer(writer, 400, "Bad Request")
            return
        authority, _, path = target[len("http://") :].partition("/")
        named = _split_authority(authority, 80)
        if named is None:
            await _answer(writer, 400, "Bad Request")
            return
        upstream = await self._open(writer, *named)
        if upstream is None:
            return
        kept = [h for h in headers if h.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
        outgoing = "\r\n".join([f"{method} /{path} {version}", *kept, "Connection: close"])
        await _pipe(reader, writer, upstream, (outgoing + "\r\n\r\n").encode("latin-1"))

    def _signed_in(self, headers: list[str]) -> bool:
        for header in headers:
            name, _, value = header.partition(":")
            if name.strip().lower() == "proxy-authorization":
                return hmac.compare_digest(value.strip().encode(), self._expected.encode())
        return False

    async def _open(self, writer: asyncio.StreamWriter, host: str, port: int) -> Upstream | None:
        try:
            upstream = await self._exit.open(host, port)
        except ExitRefused as refused:
            self.last_refusal, self.last_cause = refused.why, refused.cause
            self._refused(refused.why)
            said = [f"X-Proxy-Refusal: {refused.why}"]
            if refused.cause is not None:
                said.append(f"X-Proxy-Refusal-Cause: {refused.cause}")
            await _answer(writer, 502, "Bad Gateway", *said)
            return None
        self.last_refusal = self.last_cause = None
        return upstream


def _split_authority(authority: str, default_port: int) -> tuple[str, int] | None:
    """The host and port a request names; None when it names no address a connection
    could be opened to (a port out of range, a host name no DNS label can spell)."""
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = authority.partition(":")
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        return None
    port = int(port_text) if port_text else default_port
    if not host or not 0 < port < 65536:
        return None
    try:
        host.encode("idna")
    except UnicodeError:
        return None
    return host, port


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str, *extra: str) -> None:
    body = f"{status} {reason}\n".encode()
    head = [f"HTTP/1.1 {status} {reason}", *extra, "Content-Type: text/plain"]
    head += [f"Content-Length: {len(body)}", "Connection: close"]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    with contextlib.suppress(OSError, ConnectionError):
        await writer.drain()


async def _pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: Upstream, first: bytes
) -> None:
    """Copies both ways until either side ends; the other direction ends with it."""

    async def outward() -> None:
        if first:
            await upstream.write(first)
        while data := await reader.read(_CHUNK):
            await upstream.write(data)

    async def inward() -> None:
        while data := await upstream.read(_CHUNK):
            writer.write(data)
            await writer.drain()

    tasks = [asyncio.ensure_future(outward()), asyncio.ensure_future(inward())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        # The browser finished sending: the answer may still be coming.
        if tasks[0].done() and not tasks[1].done() and tasks[0].exception() is None:
            await asyncio.wait([tasks[1]])
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await upstream.close()

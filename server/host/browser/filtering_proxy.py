"""The address guard's filtering proxy: a SOCKS5 server (RFC 1928, no sign-in) on
127.0.0.1 that is the only way out of a Chromium which takes no PAC script.

Chromium's headless shell ignores ``--proxy-pac-url`` but honours ``--proxy-server``;
with ``socks5://`` it hands every connection's host name and port to the proxy
(navigations, redirect hops, subresources, workers, WebSockets) and resolves nothing
itself. For each one the proxy asks its ``judge`` once: the judge resolves the name,
checks every address, and gives either the addresses to dial or the rule that refuses
it. The proxy then connects to an address that was judged, never to a name, so a name
cannot answer one way for the check and another for the connection.

A refused connection is not reset: it is accepted, and its first bytes are answered by
``refusal`` (the refusal page for HTTP, nothing for TLS), so that the tab shows why.
After the handshake both directions are spliced transport to transport, with each side's
write buffer pausing the other's reads; no task runs per connection once it is open.
The proxy runs an event loop on a thread of its own, so that pages' traffic neither
waits behind the host's loop nor holds it up (the judge runs there too). Nothing is
logged about a target.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import struct
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, TypeVar

from server.common.browser_address_policy import IPAddress, Rule, ip_literal, normalize_host

log = logging.getLogger(__name__)

_LISTEN = "127.0.0.1"
_VERSION = 5
_NO_SIGN_IN = 0
_NO_METHOD = 0xFF
_CONNECT = 1
_IPV4, _NAME, _IPV6 = 1, 3, 4
# Reply codes of RFC 1928 section 6.
SUCCEEDED = 0
GENERAL_FAILURE = 1
HOST_UNREACHABLE = 4
CONNECTION_REFUSED = 5
COMMAND_NOT_SUPPORTED = 7
ADDRESS_NOT_SUPPORTED = 8

# A handshake (or a refused request's head) is this small, and comes at once.
_HEAD_LIMIT = 16 * 1024
_HANDSHAKE_SECONDS = 10.0
_CONNECT_SECONDS = 15.0
# An address that does not answer within this gives way to the next one a name has.
_NEXT_ADDRESS_SECONDS = 3.0
_TLS_HANDSHAKE = 0x16
# Connections open at once; one past that is closed unanswered (Chromium keeps fewer: 256
# at most, as it does without a proxy).
MAX_CONNECTIONS = 1024
# Refusals and failures remembered, for the engine to name the rule of a page it got or
# the cause of a load that failed.
_REMEMBERED = 256
# Chromium reports every SOCKS reply but success as ERR_SOCKS_CONNECTION_FAILED; the proxy
# keeps what Chromium would have said had it connected itself.
NAME_NOT_RESOLVED = "ERR_NAME_NOT_RESOLVED"
_DIAL_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "ERR_CONNECTION_REFUSED"),
    (TimeoutError, "ERR_CONNECTION_TIMED_OUT"),
    (ConnectionResetError, "ERR_CONNECTION_RESET"),
    (OSError, "ERR_ADDRESS_UNREACHABLE"),
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judge's answer for one host: the rule that refuses it, or the addresses to
    connect to (none: the name did not resolve)."""

    rule: Rule | None
    addresses: Sequence[IPAddress] = ()


T = TypeVar("T")
Judge = Callable[[str], Awaitable[Verdict]]
Refusal = Callable[[Rule, bytes], bytes]


class FilteringProxy:
    """The SOCKS5 server; an async context manager.

    ``judge`` takes a host as Chromium sent it (a name or an address literal);
    ``refusal`` gives the answer to a refused connection's request head.
    """

    def __init__(
        self, judge: Judge, refusal: Refusal, *, max_connections: int = MAX_CONNECTIONS
    ) -> None:
        self._shared = _Shared(judge, refusal, max_connections)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def server(self) -> str:
        """The proxy as Chromium's ``--proxy-server`` names it."""
        return f"socks5://{_LISTEN}:{self.port}"

    async def __aenter__(self) -> FilteringProxy:
        self._loop = loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=loop.run_forever, name="crewhost-filtering-proxy", daemon=True
        )
        self._thread.start()
        try:
            await _on(loop, self._listen())
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Stops listening, ends every connection and the proxy's thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = self._thread = None
        await _on(loop, self._shut())
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join)
        loop.close()

    async def _listen(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Client(self._shared), _LISTEN, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shut(self) -> None:
        if self._server is not None:
            self._server.close()
        for client in list(self._shared.clients):
            client.abort()
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    @property
    def running(self) -> bool:
        return self._loop is not None

    @property
    def connections(self) -> int:
        """Connections open now (a handshake under way counts)."""
        return len(self._shared.clients)

    def refused_rule(self, host: str, port: int) -> Rule | None:
        """The rule of a recent refusal of ``host``:``port``."""
        return self._shared.refused.get(host, port)

    def failure(self, host: str, port: int) -> str | None:
        """Why the last connection to ``host``:``port`` failed, in Chromium's words
        (``ERR_NAME_NOT_RESOLVED``, ``ERR_CONNECTION_REFUSED``, …), if it did."""
        return self._shared.failed.get(host, port)


class _Recent(Generic[T]):
    """The last few things said of host and port pairs, oldest forgotten first; written on
    the proxy's thread, read on the host's (each a single dict operation)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, int], T] = OrderedDict()

    def get(self, host: str, port: int) -> T | None:
        return self._items.get((_host_key(host), port))

    def put(self, host: str, port: int, value: T | None) -> None:
        key = (_host_key(host), port)
        if value is None:
            self._items.pop(key, None)
            return
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > _REMEMBERED:
            self._items.popitem(last=False)


@dataclass(slots=True)
class _Shared:
    """What every connection of one proxy uses: the judge, the refusal, the open
    connections and what was recently refused or failed."""

    judge: Judge
    refusal: Refusal
    max_connections: int
    clients: set[_Client] = field(default_factory=set)
    refused: _Recent[Rule] = field(default_factory=_Recent)
    failed: _Recent[str] = field(default_factory=_Recent)


async def _on(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, None]) -> None:
    """Runs ``work`` on the proxy's ``loop`` and waits for it from the caller's."""
    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))


def _host_key(host: str) -> str:
    """One spelling of a host, whether from a URL or a SOCKS request."""
    name = normalize_host(host)
    literal = ip_literal(name)
    return name if literal is None else str(literal)


def _reply(code: int) -> bytes:
    """A reply with the all-zero bound address (Chromium reads and ignores it)."""
    return bytes((_VERSION, code, 0, _IPV4)) + b"\0" * 6


class _Client(asyncio.Protocol):
    """One browser connection: the handshake, then a refusal or a splice to the target."""

    def __init__(self, shared: _Shared) -> None:
        self._shared = shared
        self._loop = asyncio.get_running_loop()
        self._buffer = bytearray()
        self._step: Callable[[], bool] = self._greeting
        self._transport: asyncio.Transport | None = None
        self._upstream: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._rule: Rule | None = None
        self._ended = {"client": False, "upstream": False}

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        if len(self._shared.clients) >= self._shared.max_connections:
            transport.abort()
            return
        self._shared.clients.add(self)
        self._timer = self._loop.call_later(_HANDSHAKE_SECONDS, self.abort)

    def data_received(self, data: bytes) -> None:
        if self._upstream is not None:
            self._upstream.write(data)
            return
        self._buffer += data
        if len(self._buffer) > _HEAD_LIMIT:
            self.abort()
            return
        while self._buffer and self._step():
            pass

    def eof_received(self) -> bool:
        if self._upstream is None:
            return False  # a handshake cut short: close
        self._ended["client"] = True
        if self._upstream.can_write_eof():
            self._upstream.write_eof()
        return self._half_open()

    def connection_lost(self, exc: Exception | None) -> None:
        self._shared.clients.discard(self)
        if self._timer is not None:
            self._timer.cancel()
        if self._connecting is not None:
            self._connecting.cancel()
        if self._upstream is not None:
            self._upstream.close()

    def pause_writing(self) -> None:
        if self._upstream is not None:
            self._upstream.pause_reading()

    def resume_writing(self) -> None:
        if self._upstream is not None:
            self._upstream.resume_reading()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()
        if self._upstream is not None:
            self._upstream.abort()

    # -- the handshake: each step takes what it needs from the buffer, or waits ----------

    def _greeting(self) -> bool:
        if len(self._buffer) < 2 or len(self._buffer) < 2 + self._buffer[1]:
            return False
        version, count = self._buffer[0], self._buffer[1]
        methods = self._buffer[2 : 2 + count]
        del self._buffer[: 2 + count]
        if version != _VERSION or _NO_SIGN_IN not in methods:
            self._finish(bytes((_VERSION, _NO_METHOD)))
            return False
        self._send(bytes((_VERSION, _NO_SIGN_IN)))
        self._step = self._request
        return True

    def _request(self) -> bool:
        buffer = self._buffer
        if len(buffer) < 5:
            return False
        version, command, _, kind = buffer[:4]
        if version != _VERSION:
            self._finish(_reply(GENERAL_FAILURE))
            return False
        if kind == _IPV4:
            size = 4
        elif kind == _IPV6:
            size = 16
        elif kind == _NAME:
            size = 1 + buffer[4]
        else:
            self._finish(_reply(ADDRESS_NOT_SUPPORTED))
            return False
        if len(buffer) < 4 + size + 2:
            return False
        raw = bytes(buffer[4 : 4 + size])
        (port,) = struct.unpack("!H", buffer[4 + size : 6 + size])
        del buffer[: 6 + size]
        if command != _CONNECT:
            self._finish(_reply(COMMAND_NOT_SUPPORTED))
            return False
        if kind == _NAME:
            host = raw[1:].decode("ascii", "replace")
        else:
            host = str(ipaddress.ip_address(raw))
        self._step = self._held
        assert self._transport is not None
        self._transport.pause_reading()
        if self._timer is not None:
            self._timer.cancel()  # the judge and the dial have limits of their own
            self._timer = None
        self._connecting = self._loop.create_task(self._connect(host, port))
        return False

    def _held(self) -> bool:
        return False  # bytes sent before the reply wait for the connection

    def _refused_head(self) -> bool:
        """The first bytes of a refused connection: TLS is closed, HTTP gets the page."""
        assert self._rule is not None
        if self._buffer[0] == _TLS_HANDSHAKE:
            self._finish(b"")
            return False
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        self._finish(self._shared.refusal(self._rule, bytes(self._buffer[: end + 4])))
        return False

    # -- the connection -----------------------------------------------------------------

    async def _connect(self, host: str, port: int) -> None:
        try:
            verdict = await self._shared.judge(host)
        except Exception:
            log.exception("the filtering proxy could not judge a connection")
            self._finish(_reply(GENERAL_FAILURE))
            return
        if verdict.rule is None and not verdict.addresses:
            self._shared.failed.put(host, port, NAME_NOT_RESOLVED)
            self._finish(_reply(HOST_UNREACHABLE))
            return
        if verdict.rule is not None:
            self._shared.refused.put(host, port, verdict.rule)
            self._rule = verdict.rule
            self._step = self._refused_head
            self._timer = self._loop.call_later(_HANDSHAKE_SECONDS, self.abort)
            self._ready()
            return
        upstream, failure = await self._dial(verdict.addresses, port)
        self._shared.failed.put(host, port, failure)
        if upstream is None:
            self._finish(_reply(CONNECTION_REFUSED))
            return
        self._upstream = upstream
        self._ready()

    async def _dial(
        self, addresses: Sequence[IPAddress], port: int
    ) -> tuple[asyncio.Transport | None, str | None]:
        """A connection to the first judged address that answers, or why none did. An
        address gives way to the next after a few seconds (a name's IPv6 address on a
        machine without IPv6 routes must not cost the whole wait)."""
        failure = "ERR_CONNECTION_FAILED"
        for index, address in enumerate(addresses):
            last = index == len(addresses) - 1
            try:
                async with asyncio.timeout(_CONNECT_SECONDS if last else _NEXT_ADDRESS_SECONDS):
                    transport, _ = await self._loop.create_connection(
                        lambda: _Upstream(self), str(address), port
                    )
            except (OSError, TimeoutError) as exc:
                failure = next(name for kind, name in _DIAL_ERRORS if isinstance(exc, kind))
                continue
            assert isinstance(transport, asyncio.Transport)
            return transport, None
        return None, failure

    def _ready(self) -> None:
        """The reply is sent and the client read again; what it sent early goes on."""
        self._connecting = None
        self._send(_reply(SUCCEEDED))
        assert self._transport is not None
        if self._transport.is_closing():
            return
        self._transport.resume_reading()
        if self._buffer:
            early, self._buffer = bytes(self._buffer), bytearray()
            self.data_received(early)

    def _send(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _finish(self, last: bytes) -> None:
        """Sends ``last`` and closes, once it is written."""
        self._send(last)
        if self._transport is not None:
            self._transport.close()

    # -- the splice, seen from the target ------------------------------------------------

    def upstream_data(self, data: bytes) -> None:
        self._send(data)

    def upstream_ended(self) -> bool:
        self._ended["upstream"] = True
        if self._transport is not None and self._transport.can_write_eof():
            self._transport.write_eof()
        return self._half_open()

    def upstream_lost(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def upstream_paused(self, paused: bool) -> None:
        if self._transport is None:
            return
        if paused:
            self._transport.pause_reading()
        else:
            self._transport.resume_reading()

    def _half_open(self) -> bool:
        """Whether a connection that one side ended stays open for the other."""
        if all(self._ended.values()):
            self.upstream_lost()
            if self._upstream is not None:
                self._upstream.close()
            return False
        return True


class _Upstream(asyncio.Protocol):
    """The target's side of a splice: everything goes to the browser's connection."""

    def __init__(self, client: _Client) -> None:
        self._client = client

    def data_received(self, data: bytes) -> None:
        self._client.upstream_data(data)

    def eof_received(self) -> bool:
        return self._client.upstream_ended()

    def connection_lost(self, exc: Exception | None) -> None:
        self._client.upstream_lost()

    def pause_writing(self) -> None:
        self._client.upstream_paused(True)

    def resume_writing(self) -> None:
        self._client.upstream_paused(False)

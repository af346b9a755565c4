"""Where the loopback relay sends a browser connection: an upstream SOCKS5 proxy (RFC 1928
with the RFC 1929 sign-in), an HTTPS proxy (a ``CONNECT`` tunnel over TLS), or a member's
computer over its egress channel.

A proxy's own address is judged at every connection (``ProxyAddressJudge``: resolved
once, every address judged) and the judged address is dialled, never the name.

An exit either gives a connected ``Upstream`` or raises ``ExitRefused`` saying why, so
that the relay answers 502 and the proxy gets its status mark.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import logging
import ssl
import struct
from typing import Literal, Protocol

from server.common.browser_address_policy import IPAddress
from server.common.public_addresses import NameNotResolved
from server.host.proxies.addresses import ProxyAddress
from server.host.proxies.judge import ProxyAddressJudge, ProxyAddressRefused

log = logging.getLogger(__name__)

Why = Literal["unreachable", "signIn", "target", "offline"]
# Why a member's computer refused a target: not a public address, the name did not
# resolve there, the address did not answer there, too many connections at once.
TargetCause = Literal["policy", "unresolved", "unreachable", "busy"]
TARGET_CAUSES: frozenset[str] = frozenset(("policy", "unresolved", "unreachable", "busy"))

_SOCKS_VERSION = 5
_NO_SIGN_IN = 0
_USER_PASSWORD = 2
_NO_METHOD = 0xFF
_CONNECT = 1


class ExitRefused(Exception):
    """The exit did not connect: ``unreachable`` (no answer, or a broken one), ``signIn``
    (the sign-in was refused), ``target`` (the proxy could not reach the site), or
    ``offline`` (the member's computer is not sharing). ``cause`` says why a target was
    refused, where the exit said (a member's computer does)."""

    def __init__(self, why: Why, cause: TargetCause | None = None) -> None:
        super().__init__(why)
        self.why: Why = why
        self.cause = cause


class Upstream(Protocol):
    """A connected byte stream to the target, through the exit."""

    async def read(self, limit: int) -> bytes:
        """Up to ``limit`` bytes; b"" at the end."""
        ...

    async def write(self, data: bytes) -> None:
        """Sends ``data``, waiting while the other side is behind."""
        ...

    async def close(self) -> None: ...


class Exit(Protocol):
    async def open(self, host: str, port: int) -> Upstream: ...


class TcpUpstream:
    """An ``Upstream`` over an asyncio stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, limit: int) -> bytes:
        return await self._reader.read(limit)

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await self._writer.wait_closed()


async def dial_proxy(
    proxy: ProxyAddress,
    judge: ProxyAddressJudge,
    seconds: float,
    tls: ssl.SSLContext | None = None,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to ``proxy`` at the address its judge pinned (over TLS for https, the
    certificate checked against the proxy's name); ``ExitRefused`` when refused or dead."""
    try:
        dialled: IPAddress = await judge.pinned(proxy)
    except ProxyAddressRefused as refused:
        log.warning("a proxy's address is refused at connect: %s", refused.block)
        raise ExitRefused("unreachable") from None
    except NameNotResolved:
        raise ExitRefused("unreachable") from None
    if proxy.scheme != "https":
        tls = None
    elif tls is None:
        tls = ssl.create_default_context()
    try:
        async with asyncio.timeout(seconds):
            return await asyncio.open_connection(
                str(dialled),
                proxy.port,
                ssl=tls,
                server_hostname=proxy.host if tls is not None else None,
            )
    except (OSError, TimeoutError):
        raise ExitRefused("unreachable") from None


class Socks5Exit:
    """Opens one SOCKS5 connection per browser connection; the proxy resolves the name."""

    def __init__(self, proxy: ProxyAddress, *, timeout: float, judge: ProxyAddressJudge) -> None:
        self._proxy = proxy
        self._timeout = timeout
        self._judge = judge

    async def open(self, host: str, port: int) -> Upstream:
        reader, writer = await dial_proxy(self._proxy, self._judge, self._timeout)
        upstream = TcpUpstream(reader, writer)
        connected = False
        try:
            await asyncio.wait_for(self._handshake(reader, writer, host, port), self._timeout)
            connected = True
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            raise ExitRefused("unreachable") from None
        finally:
            if not connected:
                writer.close()  # refused, silent, or the relay is stopping
        return upstream

    async def _handshake(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        proxy = self._proxy
        method = _USER_PASSWORD if proxy.username is not None else _NO_SIGN_IN
        writer.write(bytes((_SOCKS_VERSION, 1, method)))
        version, chosen = await reader.readexactly(2)
        if version != _SOCKS_VERSION:
            raise ExitRefused("unreachable")
        if chosen == _NO_METHOD or chosen != method:
            raise ExitRefused("signIn" if method == _USER_PASSWORD else "unreachable")
        if method == _USER_PASSWORD:
            user = (proxy.username or "").encode("utf-8")
            password = (proxy.password or "").encode("utf-8")
            writer.write(bytes((1, len(user))) + user + bytes((len(password),)) + password)
            _, status = await reader.readexactly(2)
            if status != 0:
                raise ExitRefused("signIn")
        writer.write(bytes((_SOCKS_VERSION, _CONNECT, 0)) + _target(host) + struct.pack("!H", port))
        version, reply, _, kind = await reader.readexactly(4)
        if version != _SOCKS_VERSION:
            raise ExitRefused("unreachable")
        if reply != 0:
            raise ExitRefused("target")
        if kind == 1:
            await reader.readexactly(4 + 2)
        elif kind == 4:
            await reader.readexactly(16 + 2)
        elif kind == 3:
            (length,) = await reader.readexactly(1)
            await reader.readexactly(length + 2)
        else:
            raise ExitRefused("unreachable")


class HttpsProxyExit:
    """Opens one ``CONNECT`` tunnel through an HTTPS proxy per browser connection (plain
    http included: the relay sends it through the tunnel in origin form). ``tls`` is the
    context the proxy's certificate is checked with (the system's trust by default)."""

    def __init__(
        self,
        proxy: ProxyAddress,
        *,
        timeout: float,
        judge: ProxyAddressJudge,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._proxy = proxy
        self._timeout = timeout
        self._judge = judge
        self._tls = tls

    async def open(self, host: str, port: int) -> Upstream:
        return await connect_tunnel(
            self._proxy, self._judge, self._timeout, host, port, tls=self._tls
        )


async def connect_tunnel(
    proxy: ProxyAddress,
    judge: ProxyAddressJudge,
    seconds: float,
    host: str,
    port: int,
    *,
    tls: ssl.SSLContext | None = None,
) -> TcpUpstream:
    """A ``CONNECT`` tunnel to ``host:port`` through an http(s) proxy, signed in with the
    proxy's user and password if it has them. A refused sign-in is ``signIn`` whether the
    proxy answers 407 or, as tinyproxy does for wrong credentials, 401."""
    reader, writer = await dial_proxy(proxy, judge, seconds, tls)
    upstream = TcpUpstream(reader, writer)
    try:
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        head = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
        if proxy.username is not None:
            sign_in = f"{proxy.username}:{proxy.password or ''}".encode()
            head.append("Proxy-Authorization: Basic " + base64.b64encode(sign_in).decode())
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("utf-8"))
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), seconds)
    except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        await upstream.close()
        raise ExitRefused("unreachable") from None
    status = answer.split(b" ", 2)[1:2]
    if status != [b"200"]:
        await upstream.close()
        raise ExitRefused("signIn" if status in ([b"407"], [b"401"]) else "target")
    return upstream


async def refuses_sign_in(
    proxy: ProxyAddress, judge: ProxyAddressJudge, seconds: float, host: str, port: int
) -> bool:
    """Whether the proxy refuses its own user and password, asked with a ``CONNECT`` to
    ``host:port`` that is closed before anything is sent through it: what tells a proxy's
    refusal from a site's own request for a sign-in, which reads the same in a browser."""
    try:
        tunnel = await connect_tunnel(proxy, judge, seconds, host, port)
    except ExitRefused as refused:
        return refused.why == "signIn"
    await tunnel.close()
    return False


def _target(host: str) -> bytes:
    """The SOCKS5 address of ``host``: a literal as itself, a name for the proxy to resolve."""
    with contextlib.suppress(ValueError):
        literal = ipaddress.ip_address(host.strip("[]"))
        return (b"\x01" if literal.version == 4 else b"\x04") + literal.packed
    name = host.encode("idna")
    return bytes((3, len(name))) + name

"""The browser address policy, enforced inside Chromium's own network stack.

Launch flags, so that nothing a page does escapes the policy: not a redirect hop, a
subresource, a worker's or service worker's fetch, a WebSocket, nor a name that resolves
to loopback. Every connection leaves through the guard's filtering proxy (SOCKS5, see
``filtering_proxy``), which resolves each name once, judges every address, and connects
to an address it judged: a name that answers one way when checked and another when
dialled (DNS rebinding) gets nowhere.

* The full browser: ``--proxy-pac-url``, a PAC script (``address_guard.pac.js``) that
  Chromium asks about every request's host, a second guard in front of the proxy. It
  resolves a name with Chromium's own resolver (``dnsResolveEx``), and sends a request
  for a refused address to a refusal listener as its proxy; every other request goes to
  the filtering proxy. And ``--host-resolver-rules``: Chromium never asks a PAC script
  about loopback and link-local literals or ``localhost`` names (its implicit proxy
  bypass), so those are mapped straight to the refusal listener, allowed ones excluded.
* The headless shell, which ignores a PAC script: ``--proxy-server`` naming the
  filtering proxy with the implicit bypass turned off (``<-loopback>``).

Each rule in force has a listener on 127.0.0.1. It answers plain HTTP with a small 403
page naming the rule, a CONNECT (https, wss through the PAC script) with a bare 403,
and TLS (https to a mapped literal) by closing; the engine then names the rule itself.
The filtering proxy answers a refused connection the same way.

Playwright's request interception (``context.route``) was tried and left out: Playwright
continues every redirect hop itself, unseen by the route, and interception turns the
HTTP cache off (a page with 30 cached images loaded three times slower). The PAC script
costs nothing measurable; the filtering proxy runs on a thread of its own.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import html
import ipaddress
import itertools
import json
import logging
import math
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from importlib import resources
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from server.common.browser_address_policy import (
    AddressPolicy,
    IPAddress,
    IPNetwork,
    Rule,
    block_of,
    ip_literal,
    is_localhost_name,
    normalize_host,
    refusal_message,
)
from server.common.public_addresses import NameNotResolved, system_resolve
from server.common.tasks import BackgroundTasks
from server.host.browser.filtering_proxy import FilteringProxy, Verdict

log = logging.getLogger(__name__)

_LISTEN = "127.0.0.1"
# The PAC script names the listeners by a name that a rule below maps to _LISTEN: a proxy
# at a loopback literal would itself be caught by the loopback rules (and .invalid never
# resolves anywhere else).
_PROXY_NAME = "refusal.crewhost.invalid"
_HEAD_LIMIT = 16 * 1024
# A refused request sends its head at once; a client that does not is let go.
_READ_SECONDS = 5.0
_RESOLVE_SECONDS = 2.0
# The filtering proxy's lookups connect, and wait as long as a browser's would.
_PROXY_RESOLVE_SECONDS = 10.0
_TLS_HANDSHAKE = b"\x16"
_WEB_SCHEMES = frozenset({"http", "https", "ws", "wss"})
_POLICY_MARK = "/*POLICY*/ null"


def _ipv4_literals(*leading: str) -> tuple[str, ...]:
    """Host patterns of the IPv4 literals that start with the ``leading`` octets: each other
    octet is one to three characters, so that a name like 127.example.com matches none."""
    rest = itertools.product(("?", "??", "???"), repeat=4 - len(leading))
    return tuple(".".join((*leading, *octets)) for octets in rest)


@dataclass(frozen=True)
class _Patterns:
    """Host patterns of one network's literals in Chromium's host-resolver-rules, where a
    URL's host is canonical (127.1 is 127.0.0.1, ::ffff:127.0.0.1 is ::ffff:7f00:1). A MAP
    pattern is matched against the host and "host:port" (IPv6 in brackets there), an
    EXCLUDE pattern against the bare host."""

    mapped: tuple[str, ...]
    excluded: tuple[str, ...]


# The literals Chromium never asks a PAC script about (its implicit proxy bypass).
_BYPASSED: Mapping[IPNetwork, _Patterns] = {
    ipaddress.ip_network("127.0.0.0/8"): _Patterns(
        (*_ipv4_literals("127"), "[::ffff:7f*"), (*_ipv4_literals("127"), "::ffff:7f*")
    ),
    ipaddress.ip_network("::1/128"): _Patterns(("[::1]*",), ("::1",)),
    ipaddress.ip_network("169.254.0.0/16"): _Patterns(
        (*_ipv4_literals("169", "254"), "[::ffff:a9fe:*"),
        (*_ipv4_literals("169", "254"), "::ffff:a9fe:*"),
    ),
    ipaddress.ip_network("fe80::/10"): _Patterns(
        ("[fe8*", "[fe9*", "[fea*", "[feb*"), ("fe8*:*", "fe9*:*", "fea*:*", "feb*:*")
    ),
}
_LOCALHOST_PATTERNS = ("localhost", "localhost.", "*.localhost", "*.localhost.")
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class AddressGuard:
    """The launch flags that make Chromium keep to an ``AddressPolicy``, and the refusal
    listeners and filtering proxy they point at; an async context manager the engine
    holds while it runs.

    ``host_map`` maps names to addresses, as DNS would (tests): in Chromium's resolver
    for the PAC script, and in the filtering proxy's.
    """

    def __init__(self, policy: AddressPolicy, host_map: Mapping[str, str] | None = None) -> None:
        self.policy = policy
        self._host_map = {name.lower(): address for name, address in (host_map or {}).items()}
        self._servers: list[asyncio.Server] = []
        self._ports: dict[Rule, int] = {}
        self._rules_by_port: dict[int, Rule] = {}
        self._answering = BackgroundTasks("address guard")
        self._proxy = FilteringProxy(self._judge, _response)

    async def __aenter__(self) -> AddressGuard:
        try:
            for rule in self.policy.rules:
                server = await asyncio.start_server(
                    partial(self._answer, rule), _LISTEN, 0, limit=_HEAD_LIMIT
                )
                self._servers.append(server)
                port = server.sockets[0].getsockname()[1]
                self._ports[rule] = port
                self._rules_by_port[port] = rule
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close()

    async def _close(self) -> None:
        await self._proxy.close()
        for server in self._servers:
            server.close()
        self._answering.cancel()
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        self._ports.clear()
        self._rules_by_port.clear()

    @property
    def ports(self) -> Mapping[Rule, int]:
        """The port on 127.0.0.1 where each rule in force is answered, while running."""
        return dict(self._ports)

    # -- launch flags -------------------------------------------------------------------

    @property
    def proxy(self) -> FilteringProxy:
        """The filtering proxy every browser connection leaves through."""
        return self._proxy

    async def start_proxy(self) -> None:
        """Starts the filtering proxy, unless it runs; it stops with the guard."""
        if not self._proxy.running:
            await self._proxy.__aenter__()

    def chromium_args(self, *, pac: bool = True) -> list[str]:
        """The flags of every Chromium the engine launches: the filtering proxy as the only
        way out, with ``pac`` behind the PAC script and resolver rules."""
        if not self._ports:
            raise RuntimeError("the address guard is not running")
        if not self._proxy.running:
            raise RuntimeError("the address guard's filtering proxy is not running")
        if not pac:
            return [f"--proxy-server={self._proxy.server}", "--proxy-bypass-list=<-loopback>"]
        script = base64.b64encode(self._pac_script().encode()).decode()
        return [
            f"--proxy-pac-url=data:application/x-ns-proxy-autoconfig;base64,{script}",
            f"--host-resolver-rules={', '.join(self._resolver_rules())}",
        ]

    def _pac_script(self) -> str:
        source = (
            resources.files("server.host.browser")
            .joinpath("address_guard.pac.js")
            .read_text(encoding="utf-8")
        )
        return source.replace(_POLICY_MARK, json.dumps(self.pac_policy()))

    def pac_policy(self) -> dict[str, Any]:
        """What the PAC script is given: the policy's own rows, in its order (first match
        decides, as ``isInNetEx`` matches), each with the listener of its rule or none."""
        return {
            "names": sorted(self.policy.allowed_names),
            "rows": [
                [
                    str(row.network),
                    None if row.rule is None else f"{_PROXY_NAME}:{self._ports[row.rule]}",
                ]
                for row in self.policy.rows
            ],
            "localhost": f"{_PROXY_NAME}:{self._ports['loopback']}",
            "connect": f"SOCKS5 {_PROXY_NAME}:{self._proxy.port}",
        }

    def _resolver_rules(self) -> list[str]:
        rules = [f"MAP {_PROXY_NAME} {_LISTEN}"]
        for network, patterns in _BYPASSED.items():
            listener = f"{_LISTEN}:{self._ports[_rule_of(network)]}"
            rules += [f"MAP {pattern} {listener}" for pattern in patterns.mapped]
        loopback = f"{_LISTEN}:{self._ports['loopback']}"
        rules += [f"MAP {pattern} {loopback}" for pattern in _LOCALHOST_PATTERNS]
        rules += [f"MAP {name} {address}" for name, address in self._host_map.items()]
        return rules + [f"EXCLUDE {pattern}" for pattern in self._allowed_patterns()]

    def _allowed_patterns(self) -> Iterator[str]:
        """Host patterns of the allowed names and literals that a MAP rule would catch."""
        for name in sorted(self.policy.allowed_names):
            if is_localhost_name(name):
                yield from (name, name + ".")
        for allowed in self.policy.allowed_networks:
            for refused, patterns in _BYPASSED.items():
                if allowed.version != refused.version or not allowed.overlaps(refused):
                    continue
                if allowed.supernet_of(refused):  # type: ignore[arg-type]
                    yield from patterns.excluded
                elif isinstance(allowed, ipaddress.IPv4Network):
                    yield from _ipv4_patterns(allowed)
                elif allowed.num_addresses == 1:
                    yield allowed.network_address.compressed
                else:
                    log.warning(
                        "browser_allowed_hosts: %s stays refused as a literal; Chromium's "
                        "rules take single IPv6 link-local addresses only",
                        allowed,
                    )

    # -- refusals -----------------------------------------------------------------------

    def rule_of(
        self, url: str, server_address: Mapping[str, Any] | None, headers: Mapping[str, str]
    ) -> Rule | None:
        """The rule whose refusal answered a load of ``url``: the listener that answered
        it (the PAC script's way), or the filtering proxy's refusal of its host (an answer
        that says it is a refusal, since the proxy's own address is every answer's)."""
        if server_address and server_address.get("ipAddress") == _LISTEN:
            rule = self._rules_by_port.get(int(server_address.get("port") or 0))
            if rule is not None:
                return rule
        endpoint = _endpoint(url)
        if endpoint is None or "x-crewhost-refused" not in {name.lower() for name in headers}:
            return None
        return self._proxy.refused_rule(*endpoint)

    def load_error(self, url: str, reported: str) -> str:
        """Chromium's name for a failed load of ``url``: behind the filtering proxy, every
        connection the proxy could not make is ``ERR_SOCKS_CONNECTION_FAILED`` to Chromium,
        so the proxy's own cause (``ERR_NAME_NOT_RESOLVED``, ``ERR_CONNECTION_REFUSED``, …)
        takes its place."""
        endpoint = _endpoint(url)
        if reported != "ERR_SOCKS_CONNECTION_FAILED" or endpoint is None:
            return reported
        return self._proxy.failure(*endpoint) or reported

    async def _judge(self, host: str) -> Verdict:
        """The filtering proxy's question: may a browser connect to ``host``, and where."""
        name = normalize_host(host)
        literal = ip_literal(name)
        if literal is not None:
            # Judged as written; ``host_map`` may still send it elsewhere, as Chromium's
            # resolver rules do.
            dialled = self._host_map.get(name)
            target = literal if dialled is None else ipaddress.ip_address(dialled)
            return Verdict(self.policy.check_address(literal), (target,))
        if not self.policy.needs_resolving(name):
            rule = self.policy.check_host(name)  # a localhost name, or an allowed one
            if rule is not None:
                return Verdict(rule)
        addresses = await self._addresses(name)
        return Verdict(self.policy.check_host(name, addresses), addresses)

    async def _addresses(self, name: str) -> list[IPAddress]:
        mapped = self._host_map.get(name)
        if mapped is not None:
            return [ipaddress.ip_address(mapped)]
        try:
            async with asyncio.timeout(_PROXY_RESOLVE_SECONDS):
                return await system_resolve(name, 0)
        except (NameNotResolved, TimeoutError):
            return []

    async def explain(self, url: str) -> Rule | None:
        """The rule that refuses ``url``, judged here (for a load that failed: https to a
        refused address ends without a page)."""
        parts = urlsplit(url)
        host = parts.hostname
        if parts.scheme.lower() not in _WEB_SCHEMES or not host:
            return None
        addresses: list[str] = []
        if self.policy.needs_resolving(host):
            mapped = self._host_map.get(host.lower())
            addresses = [mapped] if mapped is not None else await _resolve(host)
        return self.policy.check_host(host, addresses)

    async def _answer(
        self, rule: Rule, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._answering.adopt(task)
        try:
            async with asyncio.timeout(_READ_SECONDS):
                first = await reader.read(1)
                if not first or first == _TLS_HANDSHAKE:
                    return
                head = first + await reader.readuntil(b"\r\n\r\n")
            writer.write(_response(rule, head))
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            return
        finally:
            writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()


def _endpoint(url: str) -> tuple[str, int] | None:
    """The host and port a web URL connects to."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if parts.hostname is None or scheme not in _DEFAULT_PORTS:
        return None
    try:
        return parts.hostname, parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:  # a port out of range
        return None


def _rule_of(network: IPNetwork) -> Rule:
    """The rule of a network Chromium bypasses a PAC script for (loopback, link-local)."""
    block = block_of(network.network_address)
    assert block is not None
    assert block.rule is not None
    return block.rule


def _ipv4_patterns(network: ipaddress.IPv4Network) -> Iterator[str]:
    """``network`` as host patterns, split at the next whole octet (at most 128 parts)."""
    octets = math.ceil(network.prefixlen / 8)
    for subnet in network.subnets(new_prefix=octets * 8):
        yield from _ipv4_literals(*str(subnet.network_address).split(".")[:octets])


async def _resolve(host: str) -> list[str]:
    """Every address ``host`` resolves to here, or none; off the event loop."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(_RESOLVE_SECONDS):
            found = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, TimeoutError, UnicodeError):
        return []
    return [str(info[4][0]) for info in found]


def _response(rule: Rule, head: bytes) -> bytes:
    """The answer to a refused request: its head in, a 403 out (a page unless CONNECT)."""
    lines = head.decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.rpartition(" ")[0] or rest
    if method.upper() == "CONNECT":
        return b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    host = next(
        (line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("host:")), ""
    )
    # Through the PAC script the target is the whole URL; mapped, it is the path.
    url = target if target.lower().startswith("http://") else f"http://{host}{target}"
    message = html.escape(refusal_message(url[:2000], rule))
    body = (
        "<!doctype html><html lang=en><meta charset=utf-8><title>Refused by Crewhost</title>"
        "<style>body{font:16px/1.5 sans-serif;margin:3em auto;max-width:40em;padding:0 1em}"
        f"</style><h1>Refused by Crewhost</h1><p>{message}.</p></html>"
    ).encode()
    headers = (
        "HTTP/1.1 403 Forbidden\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"X-Crewhost-Refused: {rule}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return headers if method.upper() == "HEAD" else headers + body
